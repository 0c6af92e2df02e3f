//===- spconv-opt.cpp - SpConv optimizer driver ---------------------------===//
//
// Part of the spconv-mlir project.
//
// mlir-opt with the spconv dialect, the upstream dialects its pipelines
// produce, every upstream pass, and the translations that serialise GPU
// kernels.
//
//===----------------------------------------------------------------------===//

#include "SpConv/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::spconv::registerEverything(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "spconv-mlir optimizer driver\n", registry));
}
