//===- ImplicitGemm.h - The GPU's tiled convolution -------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The implicit GEMM of the GPU target: its tiles, the neighbour table and
// tile schedule it reads the rulebook through, and its SIMT (ImplicitGemm.cpp)
// and tensor-core (TensorCoreGemm.cpp) kernels.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_IMPLICITGEMM_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_IMPLICITGEMM_H

#include "Compute/Epilogue.h"
#include "SpConv/Transforms/SharedMemory.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

namespace mlir::spconv::lowering {

/// How a GPU implicit-GEMM tile multiplies.
enum class GemmMath {
  FMA,     ///< SIMT: each thread a register tile of fused multiply-adds
  F16MMA,  ///< tensor cores, f16 fragments (k16), f32 accumulation
  BF16MMA, ///< tensor cores, bf16 fragments (k16; mma.sync only), f32 sums
  TF32MMA  ///< tensor cores, tf32 fragments (k8), f32 accumulation
};

/// The name of `math` in `spconv.tile` and tile tables (`fma`, `mma-f16`,
/// `mma-bf16`, `mma-tf32`), and the math of a name.
llvm::StringRef gemmMathName(GemmMath math);
std::optional<GemmMath> parseGemmMath(llvm::StringRef name);

/// The tile sizes of the GPU's implicit-GEMM convolution, chosen per channel
/// counts and element type at compile time: a block computes `rows` output
/// rows x `cols` output channels, staging `depth` input channels at a time.
/// With FMA each thread owns `threadRows` x `threadCols` outputs; with tensor
/// cores each warp owns `fragRows` x `fragCols` 16x16 fragments.
///
/// `stages` slices are staged at once: 1 stages a slice, multiplies it and
/// stages the next; more copy each slice by cp.async `stages - 1` steps
/// ahead of its multiply (choosePipeline). A pipelined tile records which
/// of the conv's `offsets` kernel offsets it visits (0 when unpipelined).
/// A tile table's `stages` pins the count (`pinnedStages`; 0: the compiler
/// chooses).
struct GemmTiles {
  GemmMath math = GemmMath::FMA;
  int64_t rows = 0, cols = 0, depth = 0;
  int64_t threadRows = 0, threadCols = 0;
  int64_t fragRows = 0, fragCols = 0;
  int64_t stages = 1, offsets = 0;
  int64_t pinnedStages = 0;

  bool usesTensorCores() const { return math != GemmMath::FMA; }
  /// Fragments of 16-bit elements (f16, bf16): staged as they are, by
  /// cp.async where the rows allow.
  bool halfFragments() const {
    return math == GemmMath::F16MMA || math == GemmMath::BF16MMA;
  }
  /// The depth of one fragment multiply (16 for f16 and bf16, 8 for tf32).
  int64_t fragDepth() const { return halfFragments() ? 16 : 8; }
  int64_t warpsPerRow() const { return cols / (16 * fragCols); }
  int64_t threads() const;
  /// Tensor-core warp tiles of 64 accumulator registers or more, at 256
  /// threads: registers per thread that leave room for two blocks per SM
  /// (ptxas would take more and fit one, which leaves nothing to run while
  /// a block waits on its gathers). Any tile of more than 256 threads: the
  /// most that lets one block fit an SM. 0 for no budget.
  int64_t maxRegisters() const;

  /// Tensor cores: the workgroup buffers. Per stage, staged input rows
  /// (rows x inputStride) and weights (depth x weightStride) in the
  /// fragments' type, input rows padded by 16 bytes, weight rows by 8
  /// elements (16 bytes of f16; 32 of TF32, whose B fragment's lanes read
  /// 4 consecutive rows of 8 columns: a stride of 8 mod 32 words puts them
  /// on 32 banks, one of 4 mod 32 on 16); the f32 sums of one epilogue pass
  /// (sumRows x sumStride), padded by 16 bytes too unless that would pass
  /// sharedLimit().
  int64_t fragElementBytes() const { return halfFragments() ? 2 : 4; }
  int64_t inputStride() const { return depth + 16 / fragElementBytes(); }
  int64_t weightStride() const { return cols + 8; }
  /// The epilogue writes the tile in `fragRows` passes, one fragment row of
  /// every warp each: 16 rows per row of warps.
  int64_t sumRows() const { return rows / fragRows; }
  int64_t sumStride() const;
  /// The i32 input row of every slot at the offset each stage stages, and
  /// the i32 visit flag of each offset.
  int64_t sourceRowBytes() const { return (stages * rows + offsets) * 4; }
  int64_t sharedBytes() const;
  /// What a pipelined tile may take (dynamic shared memory,
  /// spconv-gpu-dynamic-shared-memory): two blocks per SM on sm_80 (164 KiB
  /// of shared memory, 1 KiB of it reserved per block).
  static constexpr int64_t kPipelinedSharedBytes = 164 * 1024 / 2 - 1024;
  int64_t sharedLimit() const {
    return stages > 1 ? kPipelinedSharedBytes : kMaxStaticSharedMemoryBytes;
  }

  /// `elementType` is the convolution's; `matmul` and `mmaOps` the pass's
  /// choices (bf16 multiplies as bf16 on mma.sync, as tf32 on WMMA, whose
  /// fragments hold no bf16).
  static GemmTiles choose(int64_t channelsIn, int64_t channelsOut,
                          Type elementType, GPUMatmul matmul, GPUMmaOps mmaOps);
};

/// The rows of a conv's tiles in slot order, grouped, and the offsets each
/// group of rows visits (TileSchedule.cpp).
struct TileSchedule {
  /// memref<?xi32>: the output row in each slot; rows with the same offset
  /// mask are neighbours.
  Value order;
  /// memref<?xKxi8>: 1 where a row of the group of kScheduleGroupRows slots
  /// has a neighbour at the offset.
  Value groupOffsets;
};
/// Rows per group of a TileSchedule: a tile's rows are whole groups.
constexpr int64_t kScheduleGroupRows = 32;

/// The schedule of a neighbour table (`rows` x `volume`): two launches and a
/// stable sort of the rows by offset mask.
TileSchedule buildTileSchedule(LoweringContext &ctx, OpBuilder &b, Location loc,
                               Value table, int64_t volume, Value rows);

/// What the implicit-GEMM convolution reads and writes (buffers).
struct ImplicitGemmOperands {
  Value table; ///< memref<?xKxi32>: neighbour table (buildNeighbourTable)
  TileSchedule schedule; ///< the order of the rows, the offsets of each group
  Value rows;            ///< index: output rows
  Value features;        ///< memref<?xCin x T>
  Value weight;          ///< memref<K x Cin x Cout x T>
  Value bias;            ///< memref<Cout x T> or null
  EpilogueBuffers epilogue; ///< applied to each element before its store
  Value result;             ///< memref<rows x Cout x T>, written whole
  int64_t volume, channelsIn, channelsOut;
  Type accType;
  /// f32 features and weights already rounded to TF32 values
  /// (roundInputsToTF32): tensor cores may then read them as they are.
  bool inputsRoundedToTF32 = false;
};

/// The output-major neighbour table of a rulebook: `rows x volume` i32, for
/// each output row (the input side with `inverse`) and kernel offset the
/// input row, or -1. Two kernels: fill with -1, then one thread per pair.
Value buildNeighbourTable(OpBuilder &b, Location loc,
                          const RulebookBuffers &rulebook, int64_t volume,
                          bool inverse, Value rows);

/// Pipelines `tiles` where the staging is all 16-byte cp.async copies: f16
/// tensor-core tiles whose features and weights have rows of whole 16-byte
/// chunks; as many stages (at most 3) as kPipelinedSharedBytes holds, or
/// the `pinnedStages` of a tile table (checked there: GPUTileTable), and
/// `offsets` the conv's volume. Others keep one stage.
void choosePipeline(GemmTiles &tiles, const ImplicitGemmOperands &operands);

/// Replaces the f32 features and weights of `operands` by copies rounded to
/// the nearest TF32 value, ties away from zero (one kernel each, before the
/// conv's launch), and marks them so, as emitTensorCoreConv requires of
/// TF32 f32 inputs. The conv then copies its slices as they are (cp.async),
/// and the tensor cores' truncation of the 13 low mantissa bits drops only
/// zeros. Costs a buffer the size of the features (and one of
/// the weights) for the conv's duration.
void roundInputsToTF32(OpBuilder &b, Location loc,
                       ImplicitGemmOperands &operands);

/// One `gpu.launch` computing the whole convolution: result[o, :] = bias +
/// sum over offsets k with table[o, k] = i >= 0 of features[i, :] @
/// weight[k], tiled as `tiles` says (a block per tile of output rows x output
/// channels, in a grid-stride loop over the tiles, so any grid covers them).
/// It carries `role` (kKernelRoleAttrName) and its tiles (kTileAttrName).
void emitImplicitGemmConv(OpBuilder &b, Location loc,
                          const ImplicitGemmOperands &operands,
                          const GemmTiles &tiles, StringRef role);

/// The same convolution on tensor cores (TensorCoreGemm.cpp): each warp
/// multiplies fragments staged in workgroup memory with `ops` and
/// accumulates in f32; the epilogue goes through workgroup memory so that
/// consecutive threads write consecutive channels. `tiles.math` must be a
/// tensor-core one.
void emitTensorCoreConv(OpBuilder &b, Location loc,
                        const ImplicitGemmOperands &operands,
                        const GemmTiles &tiles, GPUMmaOps ops, StringRef role);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_IMPLICITGEMM_H
