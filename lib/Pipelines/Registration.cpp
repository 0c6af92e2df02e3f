//===- Registration.cpp - Everything spconv registers ---------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/InitAll.h"

#include "SpConv/Conversion/Passes.h"
#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/Pipelines/Pipelines.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include <mutex>

void mlir::spconv::registerAllDialects(DialectRegistry &registry) {
  registry.insert<SpConvDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  // gpu-module-to-binary (spconv-to-cuda) translates kernels to LLVM IR.
  registerAllGPUToLLVMIRTranslations(registry);
}

void mlir::spconv::registerAllPasses() {
  // The pass registry rejects a second registration of a pipeline name, and
  // an embedder may reach this from more than one place (its own main and
  // the C API, say).
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::registerAllPasses();
    registerSpConvPasses();
    registerSpConvConversionPasses();
    registerSpConvPipelines();
  });
}

void mlir::spconv::registerEverything(DialectRegistry &registry) {
  spconv::registerAllDialects(registry);
  spconv::registerAllPasses();
}
