//===- KernelModules.h - Compile kernels on their own -----------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// After spconv-to-cpu's front end, each distinct layer of a module is a
// kernel function (spconv-outline-kernels) whose code depends on its text
// alone. A tool that caches compiled kernels splits the module there: each
// kernel into a module of its own, compiled once and kept in the kernel
// store under a key made from its text, and the rest, whose kernels become
// declarations, linked against them.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_PIPELINES_KERNELMODULES_H
#define SPCONV_PIPELINES_KERNELMODULES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace mlir::spconv {

/// The kernels of `module` with a body, in module order.
SmallVector<func::FuncOp> getKernels(ModuleOp module);

/// What a kernel's code depends on in the IR: its text, without locations
/// (the caller adds the options, the target and the compiler's identity).
std::string kernelText(func::FuncOp kernel);

/// A new module holding a copy of `kernel`, public, to be lowered and
/// compiled on its own (buildSpConvToCPUBackEnd).
OwningOpRef<ModuleOp> extractKernel(func::FuncOp kernel);

/// Makes every kernel of `module` a declaration: its code is linked in.
void declareKernels(ModuleOp module);

} // namespace mlir::spconv

#endif // SPCONV_PIPELINES_KERNELMODULES_H
