//===- RulebookAccess.cpp - The buffers of rulebooks and hash tables ------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Utils/RulebookAccess.h"

#include "Utils/Builders.h"
#include "spconv-rt/HashTableLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

SmallVector<Type> RulebookBuffers::getTypes(RulebookType type) {
  MLIRContext *context = type.getContext();
  auto index = IndexType::get(context);
  auto pairs =
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 32));
  auto offsets =
      MemRefType::get({type.getGeometry().getKernelVolume() + 1}, index);
  return {index, index, pairs, pairs, offsets};
}

RulebookBuffers RulebookBuffers::fromValues(ValueRange values) {
  assert(values.size() == 5 && "a rulebook is five values");
  return {values[0], values[1], values[2], values[3], values[4]};
}

SmallVector<Type> HashTableBuffers::getTypes(MLIRContext *context) {
  return {
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 64)),
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 32))};
}

HashTableBuffers HashTableBuffers::fromValues(ValueRange values) {
  assert(values.size() == 2 && "a hash table is two values");
  return {values[0], values[1]};
}

Value lowering::hashHomeSlot(OpBuilder &b, Location loc, Value key,
                             Value mask) {
  // spconv_ht_home_slot: home = splitmix64(key) & (capacity - 1); the search
  // then probes linearly and stops at the key or at an empty (-1) slot.
  auto shr = [&](Value v, int64_t bits) {
    return arith::ShRUIOp::create(b, loc, v, i64Const(b, loc, bits))
        .getResult();
  };
  auto mix = [&](Value z, int64_t shift, int64_t multiplier) {
    Value x = arith::XOrIOp::create(b, loc, z, shr(z, shift));
    return arith::MulIOp::create(b, loc, x, i64Const(b, loc, multiplier))
        .getResult();
  };
  Value z = mix(key, SPCONV_HT_MIX_SHIFT_1,
                static_cast<int64_t>(SPCONV_HT_MIX_MULTIPLIER_1));
  z = mix(z, SPCONV_HT_MIX_SHIFT_2,
          static_cast<int64_t>(SPCONV_HT_MIX_MULTIPLIER_2));
  z = arith::XOrIOp::create(b, loc, z, shr(z, SPCONV_HT_MIX_SHIFT_3));
  return arith::AndIOp::create(b, loc, z, mask);
}

SmallVector<Value> lowering::kernelIndices(OpBuilder &b, Location loc,
                                           ArrayRef<int64_t> kernel,
                                           Value offset) {
  Value rest = b.createOrFold<arith::IndexCastOp>(loc, b.getI64Type(), offset);
  SmallVector<Value> j(kernel.size());
  for (int d = kernel.size() - 1; d >= 0; --d) {
    Value extent = i64Const(b, loc, kernel[d]);
    j[d] = b.createOrFold<arith::RemSIOp>(loc, rest, extent);
    rest = b.createOrFold<arith::DivSIOp>(loc, rest, extent);
  }
  return j;
}

Value lowering::linearKey(OpBuilder &b, Location loc, Value batch,
                          ArrayRef<Value> spatial, ArrayRef<int64_t> shape) {
  Value key = batch;
  for (auto [coordinate, extent] : llvm::zip_equal(spatial, shape)) {
    key = arith::MulIOp::create(b, loc, key, i64Const(b, loc, extent));
    key = arith::AddIOp::create(b, loc, key, coordinate);
  }
  return key;
}

int64_t lowering::effectiveBatchSize(GridAttr grid, ArrayRef<int64_t> volumes) {
  if (grid.hasStaticBatch())
    return grid.getBatch();
  int64_t largest = 1;
  for (int64_t volume : volumes)
    largest = std::max(largest, volume);
  // Batch indices are int32 coordinates, so the batch is at most 2^31 - 1.
  return std::min<int64_t>(std::numeric_limits<int64_t>::max() / largest,
                           std::numeric_limits<int32_t>::max());
}

std::pair<Value, Value> lowering::pairRows(OpBuilder &b, Location loc,
                                           const RulebookBuffers &rulebook,
                                           bool inverse, Value pair) {
  Type index = b.getIndexType();
  Value in = loadAs(b, loc, rulebook.pairIn, pair, index);
  Value out = loadAs(b, loc, rulebook.pairOut, pair, index);
  if (inverse)
    std::swap(in, out);
  return {in, out};
}

void lowering::forEachOffset(
    OpBuilder &b, Location loc, const RulebookBuffers &rulebook, int64_t volume,
    function_ref<void(OpBuilder &, Location, Value, Value, Value)> body) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  scf::ForOp::create(
      b, loc, zero, indexConst(b, loc, volume), one, ValueRange{},
      [&](OpBuilder &ob, Location oloc, Value offset, ValueRange) {
        Value begin =
            memref::LoadOp::create(ob, oloc, rulebook.offsets, offset);
        Value end = memref::LoadOp::create(
            ob, oloc, rulebook.offsets,
            ValueRange{arith::AddIOp::create(ob, oloc, offset, one)});
        body(ob, oloc, offset, begin, end);
        scf::YieldOp::create(ob, oloc);
      });
}
