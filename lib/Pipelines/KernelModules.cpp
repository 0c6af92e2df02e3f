//===- KernelModules.cpp - Compile kernels on their own -------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Pipelines/KernelModules.h"
#include "SpConv/IR/SourceLines.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::spconv;

SmallVector<func::FuncOp> mlir::spconv::getKernels(ModuleOp module) {
  SmallVector<func::FuncOp> kernels;
  for (auto function : module.getOps<func::FuncOp>())
    if (sourceLineArgument(function))
      kernels.push_back(function);
  return kernels;
}

std::string mlir::spconv::kernelText(func::FuncOp kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Numbered within the kernel, not the module around it.
  kernel->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  return text;
}

OwningOpRef<ModuleOp> mlir::spconv::extractKernel(func::FuncOp kernel) {
  ModuleOp source = kernel->getParentOfType<ModuleOp>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(source.getLoc());
  OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
  auto copy = cast<func::FuncOp>(builder.clone(*kernel));
  copy.setPublic();
  return module;
}

void mlir::spconv::declareKernels(ModuleOp module) {
  for (func::FuncOp kernel : getKernels(module)) {
    kernel.eraseBody();
    kernel.setPrivate();
  }
}
