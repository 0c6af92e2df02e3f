//===- MmaSync.cpp - A warp's fragments as nvgpu.ldmatrix + mma.sync ------===//
//
// Part of the spconv-mlir project.
//
// nvgpu.mma.sync over 16 x 8 output fragments, two per 16x16 of the warp's
// tile: m16n8k16 for f16, m16n8k8 for tf32. The lane layouts are PTX's
// (docs: "Warp-level matrix fragments for mma.m16n8k16 / .m16n8k8"), so
// every lane's offsets into the staged tiles are computed once per tile and
// a fragment load adds only the stage and the fragment's corner.
//
// With g = lane / 4, t = lane % 4:
//  * A (16 x k, row-major in the input tile): one ldmatrix x4; lane l gives
//    the address of row l % 8 + 8 ((l / 8) % 2), 16 bytes (l / 16) in;
//  * B (k x 16, row-major in the weight tile): f16 by one ldmatrix x4
//    .trans per 16 columns (lane l gives row l % 8 + 8 ((l / 8) % 2),
//    8 (l / 16) columns in; registers 0-1 are the first 8 columns'
//    fragment, 2-3 the next 8's); tf32, which ldmatrix cannot transpose,
//    by two scalar loads per 8 columns, B(t, g) and B(t + 4, g), on 32
//    distinct banks thanks to the weight rows' padding of 8 elements;
//  * C: lane l holds (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1),
//    stored to the sum tile as two 8-byte vectors.
//
//===----------------------------------------------------------------------===//

#include "GPU/GemmKernel.h"
#include "GPU/WarpMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;
using namespace mlir::spconv::lowering::gemm;

namespace {

class MmaSync : public WarpMma {
public:
  MmaSync(OpBuilder &b, Location loc, const WarpTile &warp) : warp(warp) {
    const GemmTiles &tiles = *warp.tiles;
    tf32 = tiles.math == GemmMath::TF32MMA;
    // Elements of the fragments per 32-bit register.
    int64_t width = tf32 ? 1 : 2;
    Type element = warp.fragElement;
    inputType = VectorType::get({4, width}, element);
    weightType = VectorType::get({2, width}, element);
    sumType = VectorType::get({2, 2}, b.getF32Type());
    auto arith = [&](auto op, Value lhs, int64_t rhs) -> Value {
      return decltype(op)::create(b, loc, lhs, indexConst(b, loc, rhs));
    };
    Value lane = arith(arith::RemUIOp(), warp.thread, 32);
    // The row and the 16-byte column whose address this lane gives to an
    // ldmatrix x4 of four 8x8 matrices (rows 0-7, 8-15, then again 16
    // bytes on).
    addressRow = arith::AddIOp::create(
        b, loc, arith(arith::RemUIOp(), lane, 8),
        arith(arith::MulIOp(),
              arith(arith::RemUIOp(), arith(arith::DivUIOp(), lane, 8), 2), 8));
    Value half = arith(arith::DivUIOp(), lane, 16);
    addressColumn = arith(arith::MulIOp(), half, 4 * width);
  }

  SmallVector<Value> zeroAccumulators(OpBuilder &b, Location loc) override {
    Value zero =
        arith::ConstantOp::create(b, loc, sumType, b.getZeroAttr(sumType));
    return SmallVector<Value>(numAccumulators(), zero);
  }

  SmallVector<Value> multiply(OpBuilder &b, Location loc, ValueRange acc,
                              Value stage) override {
    const GemmTiles &tiles = *warp.tiles;
    int64_t depth = tiles.fragDepth();
    int64_t blocks = 2 * tiles.fragCols;
    SmallVector<Value> next(acc);
    Value warpRow = stagedRow(b, loc, stage, tiles.rows, warp.warpRow0);
    auto add = [&](Value lhs, Value rhs) -> Value {
      return arith::AddIOp::create(b, loc, lhs, rhs);
    };
    auto plus = [&](Value lhs, int64_t rhs) -> Value {
      return rhs == 0 ? lhs : add(lhs, indexConst(b, loc, rhs));
    };
    for (int64_t k0 = 0; k0 < tiles.depth; k0 += depth) {
      Value k = stagedRow(b, loc, stage, tiles.depth, indexConst(b, loc, k0));
      SmallVector<Value> weights = loadWeights(b, loc, k, blocks);
      for (int64_t i = 0; i < tiles.fragRows; ++i) {
        Value input = nvgpu::LdMatrixOp::create(
            b, loc, inputType, warp.inputTile,
            ValueRange{add(plus(warpRow, 16 * i), addressRow),
                       plus(addressColumn, k0)},
            /*transpose=*/false, /*numTiles=*/4);
        for (int64_t n = 0; n < blocks; ++n) {
          Value &sum = next[i * blocks + n];
          sum = nvgpu::MmaSyncOp::create(b, loc, input, weights[n], sum,
                                         ArrayRef<int64_t>{16, 8, depth}, tf32);
        }
      }
    }
    return next;
  }

  void storeFragmentRow(OpBuilder &b, Location loc, ValueRange acc,
                        int64_t i) override {
    int64_t blocks = 2 * warp.tiles->fragCols;
    auto [g, t] = groupAndThread(b, loc);
    Value row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, warp.rowOfWarps, indexConst(b, loc, 16)),
        g);
    Value column = arith::AddIOp::create(
        b, loc, warp.warpCol0,
        arith::MulIOp::create(b, loc, t, indexConst(b, loc, 2)));
    for (int64_t n = 0; n < blocks; ++n)
      for (int64_t h = 0; h < 2; ++h) {
        Value pair = vector::ExtractOp::create(b, loc, acc[i * blocks + n],
                                               ArrayRef<int64_t>{h});
        vector::StoreOp::create(
            b, loc, pair, warp.sumTile,
            ValueRange{
                arith::AddIOp::create(b, loc, row, indexConst(b, loc, 8 * h)),
                arith::AddIOp::create(b, loc, column,
                                      indexConst(b, loc, 8 * n))});
      }
  }

private:
  /// This lane's g = lane / 4 and t = lane % 4, computed where used: kept
  /// from the tile's start, they would hold two more registers through the
  /// tile, which the 4 x 2 warp tiles at their 128-register budget cannot
  /// spare.
  std::pair<Value, Value> groupAndThread(OpBuilder &b, Location loc) const {
    Value lane =
        arith::RemUIOp::create(b, loc, warp.thread, indexConst(b, loc, 32));
    return {arith::DivUIOp::create(b, loc, lane, indexConst(b, loc, 4)),
            arith::RemUIOp::create(b, loc, lane, indexConst(b, loc, 4))};
  }

  int64_t numAccumulators() const {
    return warp.tiles->fragRows * 2 * warp.tiles->fragCols;
  }

  /// The B fragments of `blocks` 8-column blocks of the warp's columns, from
  /// weight row `k` on.
  SmallVector<Value> loadWeights(OpBuilder &b, Location loc, Value k,
                                 int64_t blocks) {
    SmallVector<Value> weights;
    if (!tf32) {
      Value row = arith::AddIOp::create(b, loc, k, addressRow);
      // Lanes 16-31 give the second 8 columns' rows: addressColumn is 8
      // elements (16 bytes) for them.
      for (int64_t n = 0; n < blocks; n += 2) {
        Value column = arith::AddIOp::create(
            b, loc, warp.warpCol0,
            arith::AddIOp::create(b, loc, addressColumn,
                                  indexConst(b, loc, 8 * n)));
        Value pair = nvgpu::LdMatrixOp::create(
            b, loc, VectorType::get({4, 2}, warp.fragElement), warp.weightTile,
            ValueRange{row, column}, /*transpose=*/true, /*numTiles=*/4);
        for (int64_t h = 0; h < 2; ++h)
          weights.push_back(vector::ExtractStridedSliceOp::create(
              b, loc, pair, ArrayRef<int64_t>{2 * h, 0},
              ArrayRef<int64_t>{2, 2}, ArrayRef<int64_t>{1, 1}));
      }
      return weights;
    }
    auto [g, t] = groupAndThread(b, loc);
    Value first = arith::AddIOp::create(b, loc, k, t);
    Value second = arith::AddIOp::create(b, loc, first, indexConst(b, loc, 4));
    Value zero = arith::ConstantOp::create(b, loc, weightType,
                                           b.getZeroAttr(weightType));
    for (int64_t n = 0; n < blocks; ++n) {
      Value column = arith::AddIOp::create(
          b, loc, warp.warpCol0,
          arith::AddIOp::create(b, loc, g, indexConst(b, loc, 8 * n)));
      Value fragment = zero;
      Value rows[] = {first, second};
      for (int64_t r = 0; r < 2; ++r) {
        Value value = memref::LoadOp::create(b, loc, warp.weightTile,
                                             ValueRange{rows[r], column});
        fragment = vector::InsertOp::create(b, loc, value, fragment,
                                            ArrayRef<int64_t>{r, 0});
      }
      weights.push_back(fragment);
    }
    return weights;
  }

  WarpTile warp;
  bool tf32 = false;
  VectorType inputType, weightType, sumType;
  /// Per lane: its ldmatrix row and column offsets.
  Value addressRow, addressColumn;
};

} // namespace

std::unique_ptr<WarpMma> gemm::createMmaSync(OpBuilder &b, Location loc,
                                             const WarpTile &warp) {
  return std::make_unique<MmaSync>(b, loc, warp);
}
