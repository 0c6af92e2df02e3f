//===- Epilogue.cpp - A rulebook conv's epilogue, on scalars or vectors ---===//
//
// Part of the spconv-mlir project.
//
// The epilogue's block holds element-wise ops and constants only (the
// verifier says so), so the same block applies to one element or to a
// vector of consecutive channels of a row: each op is cloned with vector
// results, each constant broadcast.
//
//===----------------------------------------------------------------------===//

#include "Compute/Epilogue.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

Value lowering::checkEpilogueOperands(LoweringContext &ctx, OpBuilder &b,
                                      Location loc,
                                      const EpilogueBuffers &epilogue,
                                      Value rows, Value channels) {
  Value ok;
  for (Value operand : epilogue.operands) {
    int64_t rank = cast<MemRefType>(operand.getType()).getRank();
    if (rank == 2)
      ok = checkSizeIf(ctx, b, loc, ok,
                       memref::DimOp::create(b, loc, operand, 0), rows,
                       SizeCheck::EpilogueRows);
    ok = checkSizeIf(ctx, b, loc, ok,
                     memref::DimOp::create(b, loc, operand, rank - 1), channels,
                     SizeCheck::EpilogueChannels);
  }
  return ok ? ok : arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
}

Value lowering::applyEpilogue(OpBuilder &b, Location loc,
                              const EpilogueBuffers &epilogue, Value value,
                              Value row, Value column,
                              VectorLoadFn loadVector) {
  auto vectorType = dyn_cast<VectorType>(value.getType());
  // A scalar type as `value` is: itself, or a vector of as many lanes.
  auto shaped = [&](Type scalar) -> Type {
    return vectorType ? VectorType::get(vectorType.getShape(), scalar) : scalar;
  };
  IRMapping mapping;
  mapping.map(epilogue.body->getArgument(0), value);
  for (auto [operand, arg] : llvm::zip_equal(
           epilogue.operands, epilogue.body->getArguments().drop_front())) {
    SmallVector<Value> indices;
    if (cast<MemRefType>(operand.getType()).getRank() == 2)
      indices.push_back(row);
    indices.push_back(column);
    Value element;
    if (!vectorType)
      element = memref::LoadOp::create(b, loc, operand, indices);
    else if (auto type = cast<VectorType>(shaped(arg.getType())); loadVector)
      element = loadVector(b, loc, type, operand, indices);
    else
      element = vector::LoadOp::create(b, loc, type, operand, indices);
    mapping.map(arg, element);
  }
  for (Operation &op : epilogue.body->without_terminator()) {
    Operation *clone = b.clone(op, mapping);
    if (!vectorType)
      continue;
    if (op.hasTrait<OpTrait::ConstantLike>()) {
      // Constants stay scalars, broadcast to the lanes.
      for (auto [result, cloned] :
           llvm::zip_equal(op.getResults(), clone->getResults()))
        mapping.map(
            result,
            vector::BroadcastOp::create(
                b, loc, cast<VectorType>(shaped(cloned.getType())), cloned));
      continue;
    }
    for (Value result : clone->getResults())
      result.setType(shaped(result.getType()));
  }
  return mapping.lookup(epilogue.body->getTerminator()->getOperand(0));
}
