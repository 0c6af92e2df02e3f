//===- CHeader.h - The C header of compiled entry points --------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TOOLS_SPCONVCOMPILE_CHEADER_H
#define SPCONV_TOOLS_SPCONVCOMPILE_CHEADER_H

#include "EntryPoints.h"

#include "llvm/Support/raw_ostream.h"

namespace spconv::compile {

/// What the header says besides the entry points.
struct HeaderInfo {
  /// The .mlir file, for the banner.
  std::string sourceName;
  /// Include-guard macro.
  std::string guard;
  /// How the code was compiled ("target cpu, openmp"), for the banner.
  std::string compiledWith;
  /// Arguments and results are GPU memory (--target cuda).
  bool gpuMemory = false;
  /// Libraries the object calls into.
  std::vector<std::string> libraries;
  /// Operation labels by profile id, when compiled with --profile.
  std::vector<std::string> profileLabels;
};

/// Include-guard macro for a header written to `path`: SPCONV_AOT_<NAME>_H.
std::string guardForPath(llvm::StringRef path);

/// Writes a C header (valid C99 and C++) declaring `entries`.
void writeCHeader(llvm::raw_ostream &os, const HeaderInfo &info,
                  llvm::ArrayRef<EntryPoint> entries);

} // namespace spconv::compile

#endif // SPCONV_TOOLS_SPCONVCOMPILE_CHEADER_H
