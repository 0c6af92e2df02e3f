//===- KeepEntries.h - Compile only the exported functions ------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// A module can hold several public functions: a training module holds the
// loss, its backward, both together and an SGD step, and each of them holds
// the whole network once inlined. A tool that exports some of them lowers and
// code-generates only what those reach.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_PIPELINES_KEEPENTRIES_H
#define SPCONV_PIPELINES_KEEPENTRIES_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace mlir::spconv {

/// Erases the functions that the functions `entries` names do not reach
/// (by a call or any other symbol reference, or as the forward a reached
/// backward is generated from) and makes the reached ones that are not
/// entries, nor forwards, private. The caller checks that `entries` exist.
void keepOnlyEntries(ModuleOp module, ArrayRef<std::string> entries);

} // namespace mlir::spconv

#endif // SPCONV_PIPELINES_KEEPENTRIES_H
