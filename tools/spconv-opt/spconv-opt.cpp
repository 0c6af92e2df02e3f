//===- spconv-opt.cpp - SpConv optimizer driver ---------------------------===//
//
// Part of the spconv-mlir project.
//
// mlir-opt with the spconv dialect, the upstream dialects its pipelines
// produce, every upstream pass, and the translations that serialise GPU
// kernels.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Conversion/Passes.h"
#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/Pipelines/Pipelines.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::spconv::registerSpConvPasses();
  mlir::spconv::registerSpConvConversionPasses();
  mlir::spconv::registerSpConvPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::spconv::SpConvDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary (spconv-to-cuda) translates kernels to LLVM IR.
  mlir::registerAllGPUToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "spconv-mlir optimizer driver\n", registry));
}
