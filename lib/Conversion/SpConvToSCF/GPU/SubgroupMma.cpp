//===- SubgroupMma.cpp - A warp's fragments as gpu.subgroup_mma ops -------===//
//
// Part of the spconv-mlir project.
//
// Upstream's gpu.subgroup_mma_* ops (WMMA in NVVM): 16x16 fragments loaded
// from the staged tiles (m16n16k16 for f16, m16n16k8 for tf32), one
// accumulator fragment per 16x16 of the warp's tile, stored whole to the
// sum tile. The fragments' lane layout is the hardware's, unknown here:
// every load computes its lanes' addresses again.
//
//===----------------------------------------------------------------------===//

#include "GPU/GemmKernel.h"
#include "GPU/WarpMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;
using namespace mlir::spconv::lowering::gemm;

namespace {

class SubgroupMma : public WarpMma {
public:
  explicit SubgroupMma(const WarpTile &warp) : warp(warp) {
    MLIRContext *context = warp.fragElement.getContext();
    Type f32 = Float32Type::get(context);
    int64_t depth = warp.tiles->fragDepth();
    sumType = gpu::MMAMatrixType::get({16, 16}, f32, "COp");
    inputType = gpu::MMAMatrixType::get({16, depth}, warp.fragElement, "AOp");
    weightType = gpu::MMAMatrixType::get({depth, 16}, warp.fragElement, "BOp");
  }

  SmallVector<Value> zeroAccumulators(OpBuilder &b, Location loc) override {
    Value zero = gpu::SubgroupMmaConstantMatrixOp::create(
        b, loc, sumType,
        arith::ConstantOp::create(b, loc, b.getZeroAttr(b.getF32Type())));
    return SmallVector<Value>(warp.tiles->fragRows * warp.tiles->fragCols,
                              zero);
  }

  SmallVector<Value> multiply(OpBuilder &b, Location loc, ValueRange acc,
                              Value stage) override {
    const GemmTiles &tiles = *warp.tiles;
    SmallVector<Value> next(acc);
    // This stage's rows of the staged inputs and weights.
    Value warpRow = stagedRow(b, loc, stage, tiles.rows, warp.warpRow0);
    for (int64_t k0 = 0; k0 < tiles.depth; k0 += tiles.fragDepth()) {
      Value k = stagedRow(b, loc, stage, tiles.depth, indexConst(b, loc, k0));
      Value kIn = indexConst(b, loc, k0);
      // The weights first, then one input fragment at a time, so that the
      // IR keeps one input fragment live. (ptxas schedules the loads its own
      // way: what bounds a 4 x 2 warp tile's registers is
      // GemmTiles::maxRegisters.)
      SmallVector<Value> weights;
      for (int64_t j = 0; j < tiles.fragCols; ++j)
        weights.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
            b, loc, weightType, warp.weightTile,
            ValueRange{k, fragIndex(b, loc, warp.warpCol0, j)},
            b.getIndexAttr(tiles.weightStride()), UnitAttr()));
      for (int64_t i = 0; i < tiles.fragRows; ++i) {
        Value input = gpu::SubgroupMmaLoadMatrixOp::create(
            b, loc, inputType, warp.inputTile,
            ValueRange{fragIndex(b, loc, warpRow, i), kIn},
            b.getIndexAttr(tiles.inputStride()), UnitAttr());
        for (int64_t j = 0; j < tiles.fragCols; ++j) {
          Value &sum = next[i * tiles.fragCols + j];
          sum = gpu::SubgroupMmaComputeOp::create(
              b, loc, sumType, input, weights[j], sum, UnitAttr(), UnitAttr());
        }
      }
    }
    return next;
  }

  void storeFragmentRow(OpBuilder &b, Location loc, ValueRange acc,
                        int64_t i) override {
    const GemmTiles &tiles = *warp.tiles;
    Value warpRowOfSums =
        arith::MulIOp::create(b, loc, warp.rowOfWarps, indexConst(b, loc, 16));
    for (int64_t j = 0; j < tiles.fragCols; ++j)
      gpu::SubgroupMmaStoreMatrixOp::create(
          b, loc, acc[i * tiles.fragCols + j], warp.sumTile,
          ValueRange{warpRowOfSums, fragIndex(b, loc, warp.warpCol0, j)},
          b.getIndexAttr(tiles.sumStride()), UnitAttr());
  }

private:
  /// base + 16 i: the i-th 16x16 fragment from base on.
  static Value fragIndex(OpBuilder &b, Location loc, Value base, int64_t i) {
    return arith::AddIOp::create(b, loc, base, indexConst(b, loc, 16 * i));
  }

  WarpTile warp;
  gpu::MMAMatrixType sumType, inputType, weightType;
};

} // namespace

std::unique_ptr<WarpMma> gemm::createSubgroupMma(OpBuilder &, Location,
                                                 const WarpTile &warp) {
  return std::make_unique<SubgroupMma>(warp);
}
