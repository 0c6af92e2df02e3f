//===- RuntimeDeclarations.h - Runtime functions a pass calls ---*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_TRANSFORMS_RUNTIMEDECLARATIONS_H
#define SPCONV_LIB_TRANSFORMS_RUNTIMEDECLARATIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::spconv {

/// The runtime function `name` of `type`, declared private in `module` once
/// (with `llvm.emit_c_interface` where `cInterface`: memref arguments).
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    FunctionType type, bool cInterface);

} // namespace mlir::spconv

#endif // SPCONV_LIB_TRANSFORMS_RUNTIMEDECLARATIONS_H
