//===- RowUpdate.cpp - Register-blocked row updates -----------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/RowUpdate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::spconv;

void spconv::emitVectorRowUpdates(
    OpBuilder &b, Location loc, const VectorRegisters &registers,
    int64_t chunkRegisters, Value acc, ValueRange dsts, ValueRange srcs,
    Value depth, int64_t columns, WeightChunkLoader loadWeights,
    InputScalarLoader loadInput, Value firstColumn) {
  Type accType = cast<MemRefType>(acc.getType()).getElementType();
  SmallVector<int64_t> chunks = rowChunks(
      columns, registers, accType.getIntOrFloatBitWidth(), chunkRegisters);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  int64_t start = 0;
  for (int64_t width : chunks) {
    auto accVector = VectorType::get({width}, accType);
    Value column = arith::ConstantIndexOp::create(b, loc, start);
    if (firstColumn)
      column = arith::AddIOp::create(b, loc, firstColumn, column);
    start += width;
    SmallVector<Value> initial;
    for (Value dst : dsts)
      initial.push_back(vector::LoadOp::create(b, loc, accVector, acc,
                                               ValueRange{dst, column}));
    auto sums = scf::ForOp::create(
        b, loc, zero, depth, one, initial,
        [&](OpBuilder &fb, Location floc, Value k, ValueRange partial) {
          Value w = loadWeights(fb, floc, k, column, width);
          SmallVector<Value> next;
          for (auto [src, sum] : llvm::zip_equal(srcs, partial)) {
            Value x = vector::BroadcastOp::create(fb, floc, accVector,
                                                  loadInput(fb, floc, src, k));
            next.push_back(vector::FMAOp::create(fb, floc, x, w, sum));
          }
          scf::YieldOp::create(fb, floc, next);
        });
    for (auto [dst, sum] : llvm::zip_equal(dsts, sums.getResults()))
      vector::StoreOp::create(b, loc, sum, acc, ValueRange{dst, column});
  }
}
