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

/// Gather, GEMM per offset and scatter-add; returns the result buffer.
Value lowerRulebookConv(LoweringContext &ctx, OpBuilder &b, RulebookConvOp op,
                        const RulebookBuffers &rulebook, Value features,
                        Value weight, Value bias);

/// Max or average pooling over a rulebook; returns the result buffer.
/// The tile sizes of the GPU's implicit-GEMM convolution, chosen per channel
/// counts at compile time: a block of `threads()` threads computes `rows`
/// output rows x `cols` output channels, staging `depth` input channels at a
/// time; each thread owns `threadRows` x `threadCols` outputs.
struct GemmTiles {
  int64_t rows, cols, depth, threadRows, threadCols;
  int64_t threads() const { return (rows / threadRows) * (cols / threadCols); }
  static GemmTiles choose(int64_t channelsIn, int64_t channelsOut);
};

/// What the implicit-GEMM convolution reads and writes (buffers).
struct ImplicitGemmOperands {
  Value table;    ///< memref<?xKxi32>: neighbour table (buildNeighbourTable)
  Value rows;     ///< index: output rows
  Value features; ///< memref<?xCin x T>
  Value weight;   ///< memref<K x Cin x Cout x T>
  Value bias;     ///< memref<Cout x T> or null
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
