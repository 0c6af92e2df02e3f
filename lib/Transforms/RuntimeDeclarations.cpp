//===- RuntimeDeclarations.cpp - Runtime functions a pass calls -----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/RuntimeDeclarations.h"

using namespace mlir;

func::FuncOp spconv::declareRuntimeFunction(ModuleOp module, StringRef name,
                                            FunctionType type,
                                            bool cInterface) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto function = func::FuncOp::create(b, module.getLoc(), name, type);
  function.setPrivate();
  if (cInterface)
    function->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return function;
}
