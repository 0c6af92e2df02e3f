//===- GemmKernel.h - Shared parts of the GPU's tiled convs ----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The SIMT (ImplicitGemm.cpp) and tensor-core (TensorCoreGemm.cpp) forms of
// the implicit-GEMM convolution differ only in how a staged slice is
// multiplied and how the accumulators reach memory; the launch, the walk
// over the tiles and the guarded gathers that stage a slice are these. The
// tiled weight gradient (TiledWeightGrad.cpp) shares the launch and the
// walk over its tiles.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_GEMMKERNEL_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_GEMMKERNEL_H

#include "GPU/ImplicitGemm.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::spconv::lowering::gemm {

/// A `shape` x `type` buffer in workgroup memory.
MemRefType workgroupType(MLIRContext *context, ArrayRef<int64_t> shape,
                         Type type);

/// for (e = thread; e < count; e += threads) body(e): the block's threads
/// share `count` items; `unrolled`, straight-line code where every thread
/// has the same number (unrollsItems).
bool unrollsItems(int64_t threads, int64_t count, bool unrolled);
void forEachItemOfBlock(OpBuilder &b, Location loc, Value thread,
                        int64_t threads, int64_t count,
                        function_ref<void(OpBuilder &, Location, Value)> body,
                        bool unrolled = false);

/// `condition ? load() : zero` of type `type`; the load happens only where
/// `condition` holds.
Value guardedLoad(OpBuilder &b, Location loc, Value condition, Type type,
                  function_ref<Value(OpBuilder &, Location)> load);

/// Whether `memref`'s first element (its offset included) lies at a
/// multiple of `bytes` in memory (i1).
Value isFirstElementAligned(OpBuilder &b, Location loc, Value memref,
                            int64_t bytes);

/// A vector of `type` from `memref` at `indices`: one access of the
/// vector's bytes where `aligned` holds, else the accesses LLVM splits an
/// access of the element's alignment into.
Value loadAlignedOrSplit(OpBuilder &b, Location loc, Value aligned,
                         VectorType type, Value memref, ValueRange indices);

/// The output row in tile slot `slot` (< rows): the schedule's order.
Value rowOfSlot(OpBuilder &b, Location loc,
                const ImplicitGemmOperands &operands, Value slot);

/// result[row, column] = epilogue(value (+ bias[column], added in value's
/// type), rounded once to the result's element type): the one store.
void storeOutput(OpBuilder &b, Location loc,
                 const ImplicitGemmOperands &operands, Value row, Value column,
                 Value value);

/// How the epilogue writes a tile (GemmEpilogue.cpp): `width` consecutive
/// channels of one row per store, the most of 16 bytes' worth and the
/// caller's limit where the rows of the result, the bias and the epilogue's
/// operands are unit-stride runs starting at multiples of it and the
/// channel count and the tile's columns are multiples of it; else fewer, 1
/// at the least (storeOutput). A chunk's store and its reads of the bias and
/// the operands are one access each where `aligned` (i1) holds: all of them
/// start at a multiple of their chunk's bytes.
struct OutputChunks {
  int64_t width = 1;
  Value aligned;
};

/// The chunks of the result a tile of `cols` columns writes, `limit`
/// channels at most (a power of two).
OutputChunks chooseOutputChunks(OpBuilder &b, Location loc,
                                const ImplicitGemmOperands &operands,
                                int64_t cols, int64_t limit);

/// storeOutput of `chunks.width` consecutive channels from `column` on
/// (`values`, a vector of the accumulator's type): bias added and rounding
/// as there, element by element.
void storeOutputChunk(OpBuilder &b, Location loc,
                      const ImplicitGemmOperands &operands,
                      const OutputChunks &chunks, Value row, Value column,
                      Value values);

/// A block's view of one tile in a grid-stride loop over tiles.
struct GridStrideLoop {
  gpu::LaunchOp launch;
  OpBuilder body; ///< inside the loop, before its terminator
  Value thread;   ///< thread id in the block (x)
  Value tile;     ///< the tile's index
};

/// The skeleton of every tiled GPU kernel: the `gpu.launch` of `threads`
/// threads and one block per tile of `tileCount`, tagged with `role`;
/// `allocate` builds its workgroup buffers where the kernel starts, then the
/// grid-stride loop over the tiles begins (so any grid covers them).
GridStrideLoop beginGridStrideLoop(OpBuilder &b, Location loc, Value tileCount,
                                   int64_t threads, StringRef role,
                                   function_ref<void(OpBuilder &)> allocate);

/// The block's view of one tile in the grid-stride loop over the tiles.
struct TileLoop {
  OpBuilder body;   ///< inside the loop, before its terminator
  Value thread;     ///< thread id in the block (x)
  Value row0, col0; ///< first slot of the schedule and channel of the tile
  /// Workgroup i32[stages x rows]: each slot's input row at the offset each
  /// stage stages (forEachSlice), or -1.
  Value sourceRows;
  /// Workgroup i32[offsets] of a pipelined tile: 1 where a row of the tile
  /// has a neighbour at the offset; null when unpipelined.
  Value visited;
};

/// The implicit GEMM's grid-stride loop (beginGridStrideLoop) over its tiles
/// of `tiles.rows` schedule slots x `tiles.cols` output channels, the launch
/// tagged with `tiles` too.
TileLoop beginTileLoop(OpBuilder &b, Location loc,
                       const ImplicitGemmOperands &operands,
                       const GemmTiles &tiles, StringRef role,
                       function_ref<void(OpBuilder &)> allocate);

/// What staged elements become in workgroup memory: `store(b, loc, i, j,
/// value)` with `value` a vector of consecutive elements along the source's
/// innermost dimension, starting at (i, j) = (row, channel) for inputs,
/// (channel, column) for weights: 16 bytes of the source where its channel
/// counts and alignment allow, else one element.
using StageFn = function_ref<void(OpBuilder &, Location, Value, Value, Value)>;

/// Stores staged `values` (a StageFn's) into the workgroup `buffer` at
/// `indices`, as one 16-byte-aligned store when wider than one element:
/// the staging buffers start 16-byte aligned and their rows are whole
/// 16-byte units, and a chunk starts at a multiple of its width.
void storeStaged(OpBuilder &b, Location loc, Value values, Value buffer,
                 ValueRange indices);

/// `stage * extent + i`: row i of stage `stage` of a workgroup buffer that
/// stages `extent` rows per stage (folded at stage 0).
Value stagedRow(OpBuilder &b, Location loc, Value stage, int64_t extent,
                Value i);

/// Updates the accumulators from the slice staged in stage `stage` (index)
/// and returns them: rows from stagedRow(stage, tiles.rows) on of the staged
/// inputs, from stagedRow(stage, tiles.depth) on of the staged weights.
using MultiplyFn =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange, Value)>;

/// Workgroup buffers a form stages into as plain copies: the source's
/// element type, row-major at (i, j) as StageFn numbers them. forEachSlice
/// fills them by cp.async where the source is 16-byte aligned and its
/// chunks are 16 bytes; null where the form converts, rounds or transposes.
struct StagingBuffers {
  Value input, weight;
};

/// The tile's loops over the kernel offsets its rows have neighbours at
/// (the schedule's groups say which; the condition is the same for the whole
/// block) and the slices of `tiles.depth` input channels, carrying the
/// accumulators from `initial`. Per offset the block reads each slot's input
/// row once into `tile.sourceRows`, then a barrier. Per slice the block's
/// threads stage the gathered input rows (`tiles.rows` x `tiles.depth`
/// elements as `type`, zero for a missing neighbour or a channel past Cin;
/// consecutive threads read consecutive channels of one row) through
/// `storeInput` and the weights (`tiles.depth` x `tiles.cols`; consecutive
/// threads on consecutive output channels) through `storeWeight`, or by
/// cp.async into `direct`'s buffers (then a wait for the thread's copies);
/// a barrier; `multiply`; a barrier before the next slice overwrites the
/// staged one. Returns the final accumulators.
///
/// With `tiles.stages` > 1 (`direct` then holds both buffers, `stages`
/// deep) and both sources 16-byte aligned, the slices are one pipeline
/// instead: each step waits for its slice's copies, passes one barrier,
/// issues the copies of the slice `stages - 1` steps ahead, loads the input
/// rows of the slice `stages` ahead, multiplies its own slice and stores
/// those rows (ImplicitGemm.cpp says why this order is race-free). Unaligned
/// sources take the loops above, through registers, at stage 0.
SmallVector<Value>
forEachSlice(Location loc, const ImplicitGemmOperands &operands,
             const GemmTiles &tiles, TileLoop &tile, ValueRange initial,
             Type type, StageFn storeInput, StageFn storeWeight,
             MultiplyFn multiply, StagingBuffers direct = {});

} // namespace mlir::spconv::lowering::gemm

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_GEMMKERNEL_H
