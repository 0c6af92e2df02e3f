//===- Manifest.h - Machine-readable description of an object ---*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The JSON twin of the C header: what a binder that cannot read C (ctypes,
// another language's FFI, a deployment script) needs to call the entries.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TOOLS_SPCONVCOMPILE_MANIFEST_H
#define SPCONV_TOOLS_SPCONVCOMPILE_MANIFEST_H

#include "CHeader.h"

#include "llvm/Support/raw_ostream.h"

namespace spconv::compile {

/// Writes the manifest of `entries`: format "spconv-compile-manifest/1",
/// the banner's facts of `info` and, per entry, its C symbol and the rank
/// and element of each argument and result (docs/Compiler.md).
void writeManifest(llvm::raw_ostream &os, const HeaderInfo &info,
                   llvm::StringRef target, llvm::ArrayRef<EntryPoint> entries);

} // namespace spconv::compile

#endif // SPCONV_TOOLS_SPCONVCOMPILE_MANIFEST_H
