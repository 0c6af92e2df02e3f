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

/// Calls (creating it once per geometry) the specialised builder.
FailureOr<RulebookBuffers> lowerBuildRulebook(LoweringContext &ctx,
                                              OpBuilder &b, BuildRulebookOp op,
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

/// Runtime primitives. Each returns its result buffers.
SmallVector<Value> lowerPrimitive(LoweringContext &ctx, OpBuilder &b,
                                  Operation *op, ArrayRef<Value> operands);

/// Dense unfold, fold and segment max. Each returns its result buffers.
SmallVector<Value> lowerDense(LoweringContext &ctx, OpBuilder &b, Operation *op,
                              ArrayRef<Value> operands);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_SPCONVTOSCF_H
