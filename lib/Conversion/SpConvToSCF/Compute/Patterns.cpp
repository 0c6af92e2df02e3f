//===- Patterns.cpp - Compute op patterns ---------------------------------===//
//
// Part of the spconv-mlir project.
//
// The pools, their gradients and the feature concatenations, which every
// target lowers alike, and the CPU's forms of the conv and its weight
// gradient (the GPU's are GPU/Patterns.cpp's).
//
//===----------------------------------------------------------------------===//

#include "Compute/Compute.h"
#include "TypeConversion.h"
#include "Utils/Builders.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

namespace {
/// The CPU's conv: register-blocked row updates (Compute.cpp).
struct ConvLoopsLowering : RulebookConvPattern {
  using RulebookConvPattern::RulebookConvPattern;

  Value lower(OpBuilder &b, RulebookConvOp op,
              const ConvBuffers &buffers) const override {
    return lowerConvLoops(ctx, b, op, buffers);
  }
};

/// The CPU's weight gradient (WeightGrad.cpp).
struct WeightGradLoopsLowering : RulebookWeightGradPattern {
  using RulebookWeightGradPattern::RulebookWeightGradPattern;

  void lower(OpBuilder &b, Location loc,
             const WeightGradBuffers &buffers) const override {
    lowerWeightGradLoops(ctx, b, loc, buffers);
  }
};

/// A concatenation of features along their channels (Concat.cpp): the
/// operands that their convs did not write into its buffer are copied in.
struct ConcatLowering : SpConvOpLowering<tensor::ConcatOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(tensor::ConcatOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!lowersConcat(ctx, op))
      return failure();
    SmallVector<Value> operands;
    for (ValueRange operand : adaptor.getInputs())
      operands.push_back(toBuffer(rewriter, op.getLoc(), single(operand),
                                  /*contiguous=*/false));
    replaceWithTensors(rewriter, op, lowerConcat(ctx, rewriter, op, operands));
    return success();
  }
};

struct RulebookPoolLowering : SpConvOpLowering<RulebookPoolOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(RulebookPoolOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = lowerRulebookPool(
        ctx, rewriter, op, RulebookBuffers::fromValues(adaptor.getRulebook()),
        toOperandBuffer(rewriter, op.getLoc(), single(adaptor.getFeatures())));
    replaceWithTensors(rewriter, op, result);
    return success();
  }
};

/// The gradient of pooling (PoolGrad.cpp).
struct RulebookPoolGradLowering : SpConvOpLowering<RulebookPoolGradOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(RulebookPoolGradOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value result = lowerRulebookPoolGrad(
        ctx, rewriter, op, RulebookBuffers::fromValues(adaptor.getRulebook()),
        toOperandBuffer(rewriter, loc, single(adaptor.getFeatures())),
        toOperandBuffer(rewriter, loc, single(adaptor.getOutGrad())));
    replaceWithTensors(rewriter, op, result);
    return success();
  }
};
} // namespace

void lowering::populateComputePatterns(const TypeConverter &converter,
                                       LoweringContext &ctx,
                                       RewritePatternSet &patterns) {
  patterns.add<RulebookPoolLowering, RulebookPoolGradLowering, ConcatLowering>(
      converter, ctx);
}

void lowering::populateCPUConvPatterns(const TypeConverter &converter,
                                       LoweringContext &ctx,
                                       RewritePatternSet &patterns) {
  patterns.add<ConvLoopsLowering, WeightGradLoopsLowering>(converter, ctx);
}
