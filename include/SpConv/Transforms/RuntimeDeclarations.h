//===- RuntimeDeclarations.h - Runtime functions a pass calls ---*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// How every pass and the conversion declare the runtime's entry points
// (docs/Runtime.md) they call.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TRANSFORMS_RUNTIMEDECLARATIONS_H
#define SPCONV_TRANSFORMS_RUNTIMEDECLARATIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::spconv {

/// The runtime function `name` of `type`, declared private in `module` once
/// (with `llvm.emit_c_interface` where `cInterface`: memref arguments).
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    FunctionType type, bool cInterface);

} // namespace mlir::spconv

#endif // SPCONV_TRANSFORMS_RUNTIMEDECLARATIONS_H
