//===- Registration.cpp - What the spconv tools load ----------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::spconv::registerSpConvToolDialects(DialectRegistry &registry) {
  registry.insert<SpConvDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  // gpu-module-to-binary (spconv-to-cuda) translates kernels to LLVM IR.
  registerAllGPUToLLVMIRTranslations(registry);
}
