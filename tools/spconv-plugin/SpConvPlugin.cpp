//===- SpConvPlugin.cpp - spconv as a plugin of upstream mlir-opt ---------===//
//
// Part of the spconv-mlir project.
//
// One shared object that is both a dialect and a pass plugin:
//
//   mlir-opt-22 --load-dialect-plugin=SpConvPlugin.so \
//               --load-pass-plugin=SpConvPlugin.so \
//               --pass-pipeline='builtin.module(spconv-to-cpu)' in.mlir
//
// It registers what spconv-opt has (SpConv/InitAll.h). It links the same
// libMLIR.so as Debian's mlir-opt, so the process holds one copy of MLIR.
//
//===----------------------------------------------------------------------===//

#include "SpConv/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "SpConv", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::spconv::registerAllDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "SpConv", LLVM_VERSION_STRING,
          [] { mlir::spconv::registerAllPasses(); }};
}
