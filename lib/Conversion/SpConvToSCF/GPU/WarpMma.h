//===- WarpMma.h - How a warp multiplies its fragments ----------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The tensor-core conv (TensorCoreGemm.cpp) stages slices into workgroup
// memory and writes the sums out through a workgroup tile; between the two,
// each warp multiplies its `fragRows` x `fragCols` 16x16 fragments of the
// tile. That middle part has one implementation per family of ops:
//
//  * SubgroupMma.cpp: upstream's gpu.subgroup_mma_* (WMMA in NVVM), whose
//    fragments are opaque;
//  * MmaSync.cpp: nvgpu.ldmatrix and nvgpu.mma.sync (m16n8k16 f16,
//    m16n8k8 tf32), whose per-lane layouts PTX fixes, so each lane's
//    addresses are computed once per tile, not per fragment load.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_WARPMMA_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_WARPMMA_H

#include "GPU/ImplicitGemm.h"

#include "mlir/IR/Builders.h"

#include <memory>

namespace mlir::spconv::lowering::gemm {

/// Where a warp's fragments are in the tile, and the buffers they use.
struct WarpTile {
  const GemmTiles *tiles = nullptr;
  /// The fragments' element type in the staged buffers (f16, or f32 for
  /// tf32).
  Type fragElement;
  /// Workgroup buffers: staged inputs (stages * rows x inputStride) and
  /// weights (stages * depth x weightStride), both row-major; the f32 sums
  /// of one epilogue pass (sumRows x sumStride).
  Value inputTile, weightTile, sumTile;
  Value thread;
  /// This warp's first row and column of the tile, and its row of warps.
  Value warpRow0, warpCol0, rowOfWarps;
};

/// A warp's fragments, multiplied by one family of tensor-core ops. Values
/// a form computes once per tile (lane offsets) are built by `create`, at
/// the tile's body.
class WarpMma {
public:
  virtual ~WarpMma() = default;
  /// Zero accumulators, as many as the form keeps per warp.
  virtual SmallVector<Value> zeroAccumulators(OpBuilder &b, Location loc) = 0;
  /// `acc` plus the product of the slice staged in stage `stage`.
  virtual SmallVector<Value> multiply(OpBuilder &b, Location loc,
                                      ValueRange acc, Value stage) = 0;
  /// Stores the accumulators of fragment row `i` (16 rows of every warp) to
  /// the sum tile: warp row r's at rows 16 r .. 16 r + 15, its columns at
  /// warpCol0 on.
  virtual void storeFragmentRow(OpBuilder &b, Location loc, ValueRange acc,
                                int64_t i) = 0;
};

std::unique_ptr<WarpMma> createSubgroupMma(OpBuilder &b, Location loc,
                                           const WarpTile &warp);
std::unique_ptr<WarpMma> createMmaSync(OpBuilder &b, Location loc,
                                       const WarpTile &warp);

} // namespace mlir::spconv::lowering::gemm

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_WARPMMA_H
