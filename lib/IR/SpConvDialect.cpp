//===- SpConvDialect.cpp - SpConv dialect ---------------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/IR/SpConvOps.h"

using namespace mlir;
using namespace mlir::spconv;

#include "SpConv/IR/SpConvOpsDialect.cpp.inc"

void SpConvDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "SpConv/IR/SpConvOps.cpp.inc"
      >();
}
