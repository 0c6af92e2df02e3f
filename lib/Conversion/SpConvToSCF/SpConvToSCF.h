//===- SpConvToSCF.h - Op lowerings of convert-spconv-to-scf ----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// Each function lowers one op family. Tensor operands arrive as buffers
// (`bufferization.to_buffer`); results are returned as buffers that the
// driver wraps back into tensors.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_SPCONVTOSCF_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_SPCONVTOSCF_H

#include "LoweringUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::spconv::lowering {

/// What `spconv.build_rulebook` lowers to.
struct BuiltRulebook {
  RulebookBuffers rulebook;
  /// memref<?x(1+D)xi32>: the output sites; null for subm, whose output
  /// sites are its input sites.
  Value outCoords;
};

/// Calls (creating it once per geometry) the specialised builder.
FailureOr<BuiltRulebook> lowerBuildRulebook(LoweringContext &ctx, OpBuilder &b,
                                            BuildRulebookOp op,
                                            Value coordsBuffer);

/// Creates the subm builder `name` that finds neighbours by merging the
/// sorted site keys (see SortedSubm.cpp).
func::FuncOp createSortedSubmBuilder(LoweringContext &ctx, RulebookType type,
                                     StringRef name);

/// The epilogue of a rulebook conv (Epilogue.cpp), its operands as buffers.
struct EpilogueBuffers {
  Block *body = nullptr;       ///< the op's epilogue block, or null
  SmallVector<Value> operands; ///< memref<rows x C> or memref<C> each
  explicit operator bool() const { return body != nullptr; }
};

/// Checks (reporting through the runtime) that every row operand has `rows`
/// rows and every operand `channels` in its last dimension; returns the i1
/// that all do. Nothing may read the operands where it is false.
Value checkEpilogueOperands(LoweringContext &ctx, OpBuilder &b, Location loc,
                            const EpilogueBuffers &epilogue, Value rows,
                            Value channels);

/// The epilogue applied to `value` of row `row`: one element of channel
/// `column`, or a vector of the channels from `column` on.
Value applyEpilogue(OpBuilder &b, Location loc, const EpilogueBuffers &epilogue,
                    Value value, Value row, Value column);

/// Whether `op` lowers to the implicit GEMM (ImplicitGemm.cpp), which reads
/// its rulebook only through the neighbour table and tile schedule.
bool lowersToImplicitGemm(const LoweringContext &ctx, RulebookConvOp op);

/// Gather, GEMM per offset and scatter-add, then the epilogue; returns the
/// result buffer: `destination` where given (a view of the conv's rows in a
/// concatenation's buffer, concatDestination), else a buffer of its own.
Value lowerRulebookConv(LoweringContext &ctx, OpBuilder &b, RulebookConvOp op,
                        const RulebookBuffers &rulebook, Value features,
                        Value weight, Value bias,
                        const EpilogueBuffers &epilogue, Value destination);

/// The gradient of pooling over a rulebook (PoolGrad.cpp): one row per
/// input site.
Value lowerRulebookPoolGrad(LoweringContext &ctx, OpBuilder &b,
                            RulebookPoolGradOp op,
                            const RulebookBuffers &rulebook, Value features,
                            Value outGrad);

/// The weight gradient of a rulebook conv (WeightGrad.cpp): a `K x Cin x
/// Cout` buffer, each element summed over its offset's pairs by one thread.
Value lowerRulebookWeightGrad(LoweringContext &ctx, OpBuilder &b,
                              RulebookWeightGradOp op,
                              const RulebookBuffers &rulebook, Value features,
                              Value outGrad);

/// Records (Concat.cpp) the concatenations of rank-2 features along their
/// channels (dynamic rows, static channels), whose buffers the lowering
/// allocates, and each rulebook conv whose only user is one of them, in its
/// block: it will write its rows into the concatenation's buffer.
void planConcatDestinations(LoweringContext &ctx);

/// The view of its concatenation's buffer that `op` (with `rows` output
/// rows, index) writes its result into, creating the buffer for the first
/// such conv; null where `op` writes a buffer of its own.
Value concatDestination(LoweringContext &ctx, OpBuilder &b, Location loc,
                        RulebookConvOp op, Value rows);

/// Whether `op` is a concatenation that lowerConcat lowers.
bool lowersConcat(LoweringContext &ctx, tensor::ConcatOp op);

/// The buffer of `op` (allocated here if no conv wrote into it) with the
/// operands that no conv wrote in place copied into their columns, each
/// checked to have the buffer's rows (`operands`: its operands as buffers).
Value lowerConcat(LoweringContext &ctx, OpBuilder &b, tensor::ConcatOp op,
                  ValueRange operands);

/// Max or average pooling over a rulebook; returns the result buffer.
/// How a GPU implicit-GEMM tile multiplies.
enum class GemmMath {
  FMA,    ///< SIMT: each thread a register tile of fused multiply-adds
  F16MMA, ///< tensor cores, f16 fragments (m16n16k16), f32 accumulation
  TF32MMA ///< tensor cores, tf32 fragments (m16n16k8), f32 accumulation
};

/// The tile sizes of the GPU's implicit-GEMM convolution, chosen per channel
/// counts and element type at compile time: a block computes `rows` output
/// rows x `cols` output channels, staging `depth` input channels at a time.
/// With FMA each thread owns `threadRows` x `threadCols` outputs; with tensor
/// cores each warp owns `fragRows` x `fragCols` 16x16 fragments.
struct GemmTiles {
  GemmMath math = GemmMath::FMA;
  int64_t rows = 0, cols = 0, depth = 0;
  int64_t threadRows = 0, threadCols = 0;
  int64_t fragRows = 0, fragCols = 0;

  bool usesTensorCores() const { return math != GemmMath::FMA; }
  /// The depth of one fragment multiply (16 for f16, 8 for tf32).
  int64_t fragDepth() const { return math == GemmMath::F16MMA ? 16 : 8; }
  int64_t warpsPerRow() const { return cols / (16 * fragCols); }
  int64_t threads() const;
  /// Tensor-core warp tiles of 64 accumulator registers or more, at 256
  /// threads: registers per thread that leave room for two blocks per SM
  /// (ptxas would take more and fit one, which leaves nothing to run while
  /// a block waits on its gathers). Any tile of more than 256 threads: the
  /// most that lets one block fit an SM. 0 for no budget.
  int64_t maxRegisters() const;

  /// Tensor cores: the workgroup buffers. Staged input rows (rows x
  /// inputStride) and weights (depth x weightStride) in the fragments' type,
  /// rows padded by 16 bytes; the f32 sums of one epilogue pass (sumRows x
  /// sumStride), padded by 16 bytes too unless that would pass
  /// kMaxStaticSharedBytes.
  int64_t fragElementBytes() const { return math == GemmMath::F16MMA ? 2 : 4; }
  int64_t inputStride() const { return depth + 16 / fragElementBytes(); }
  int64_t weightStride() const { return cols + 16 / fragElementBytes(); }
  /// The epilogue writes the tile in `fragRows` passes, one fragment row of
  /// every warp each: 16 rows per row of warps.
  int64_t sumRows() const { return rows / fragRows; }
  int64_t sumStride() const;
  int64_t sharedBytes() const;
  /// What CUDA allows a kernel in static shared memory.
  static constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

  /// `elementType` is the convolution's; `matmul` the pass's choice.
  static GemmTiles choose(int64_t channelsIn, int64_t channelsOut,
                          Type elementType, GPUMatmul matmul);
};

/// What the implicit-GEMM convolution reads and writes (buffers).
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

struct ImplicitGemmOperands {
  Value table;    ///< memref<?xKxi32>: neighbour table (buildNeighbourTable)
  TileSchedule schedule; ///< the order of the rows, the offsets of each group
  Value rows;     ///< index: output rows
  Value features; ///< memref<?xCin x T>
  Value weight;   ///< memref<K x Cin x Cout x T>
  Value bias;     ///< memref<Cout x T> or null
  EpilogueBuffers epilogue; ///< applied to each element before its store
  Value result;   ///< memref<rows x Cout x T>, written whole
  int64_t volume, channelsIn, channelsOut;
  Type accType;
};

/// The output-major neighbour table of a rulebook: `rows x volume` i32, for
/// each output row (the input side with `inverse`) and kernel offset the
/// input row, or -1. Two kernels: fill with -1, then one thread per pair.
Value buildNeighbourTable(OpBuilder &b, Location loc,
                          const RulebookBuffers &rulebook, int64_t volume,
                          bool inverse, Value rows);

/// One `gpu.launch` computing the whole convolution: result[o, :] = bias +
/// sum over offsets k with table[o, k] = i >= 0 of features[i, :] @
/// weight[k], tiled as `tiles` says (a block per tile of output rows x output
/// channels, in a grid-stride loop over the tiles, so any grid covers them).
/// It carries `role` (kKernelRoleAttrName) and its tiles (kTileAttrName).
void emitImplicitGemmConv(OpBuilder &b, Location loc,
                          const ImplicitGemmOperands &operands,
                          const GemmTiles &tiles, StringRef role);

/// The same convolution on tensor cores (TensorCoreGemm.cpp): each warp
/// multiplies `gpu.subgroup_mma` fragments staged in workgroup memory and
/// accumulates in f32; the epilogue goes through workgroup memory so that
/// consecutive threads write consecutive channels. `tiles.math` must be a
/// tensor-core one.
void emitTensorCoreConv(OpBuilder &b, Location loc,
                        const ImplicitGemmOperands &operands,
                        const GemmTiles &tiles, StringRef role);

Value lowerRulebookPool(LoweringContext &ctx, OpBuilder &b, RulebookPoolOp op,
                        const RulebookBuffers &rulebook, Value features);

/// Builds the runtime hash table of `keys` (a buffer).
HashTableBuffers lowerHashBuild(LoweringContext &ctx, OpBuilder &b,
                                HashBuildOp op, Value keys);

/// Looks `queries` (a buffer) up in `table`; returns the rows buffer.
Value lowerHashLookup(LoweringContext &ctx, OpBuilder &b, HashLookupOp op,
                      const HashTableBuffers &table, Value queries);

/// The other runtime primitives (keys, sort/unique, gather), whose operands
/// and results are all tensors. Each returns its result buffers.
SmallVector<Value> lowerPrimitive(LoweringContext &ctx, OpBuilder &b,
                                  Operation *op, ArrayRef<Value> operands);

/// Dense unfold, fold and segment max. Each returns its result buffers.
SmallVector<Value> lowerDense(LoweringContext &ctx, OpBuilder &b, Operation *op,
                              ArrayRef<Value> operands);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_SPCONVTOSCF_H
