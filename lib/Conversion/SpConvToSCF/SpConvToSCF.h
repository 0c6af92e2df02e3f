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
