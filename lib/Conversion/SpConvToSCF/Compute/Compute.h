//===- Compute.h - Convs, pools and their gradients -------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The compute ops over a rulebook (conv, pool, their gradients) and the
// concatenations their results are written into, as loops: the CPU's forms
// of the conv and its weight gradient (the GPU's are in GPU/), and the
// forms every target shares. Tensor operands arrive as buffers; results
// are returned as buffers.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_COMPUTE_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_COMPUTE_H

#include "Compute/Conv.h"
#include "Compute/Epilogue.h"
#include "Compute/WeightGrad.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::spconv::lowering {

/// The CPU's form of the conv (Compute.cpp): gather, register-blocked GEMM
/// per offset and scatter-add, then the epilogue; returns the result buffer.
Value lowerConvLoops(LoweringContext &ctx, OpBuilder &b, RulebookConvOp op,
                     const ConvBuffers &buffers);

/// The gradient of pooling over a rulebook (PoolGrad.cpp): one row per
/// input site.
Value lowerRulebookPoolGrad(LoweringContext &ctx, OpBuilder &b,
                            RulebookPoolGradOp op,
                            const RulebookBuffers &rulebook, Value features,
                            Value outGrad);

/// The CPU's form of the weight gradient (WeightGrad.cpp).
void lowerWeightGradLoops(LoweringContext &ctx, OpBuilder &b, Location loc,
                          const WeightGradBuffers &buffers);

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
Value lowerRulebookPool(LoweringContext &ctx, OpBuilder &b, RulebookPoolOp op,
                        const RulebookBuffers &rulebook, Value features);

/// The patterns of the ops every target lowers to the same loops (pools,
/// their gradients, concatenations), sharing `ctx`.
void populateComputePatterns(const TypeConverter &converter,
                             LoweringContext &ctx, RewritePatternSet &patterns);

/// The CPU's forms of the conv and its weight gradient.
void populateCPUConvPatterns(const TypeConverter &converter,
                             LoweringContext &ctx, RewritePatternSet &patterns);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_COMPUTE_H
