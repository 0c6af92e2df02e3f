//===- Patterns.cpp - Compute op patterns ---------------------------------===//
//
// Part of the spconv-mlir project.
//
// Rulebook convs (with their epilogues and concatenation destinations),
// pools, their gradients and the feature concatenations.
//
//===----------------------------------------------------------------------===//

#include "Compute/Compute.h"
#include "TypeConversion.h"
#include "Utils/Builders.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

namespace {
struct RulebookConvLowering : SpConvOpLowering<RulebookConvOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(RulebookConvOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value bias = op.getBias()
                     ? toOperandBuffer(rewriter, loc, single(adaptor.getBias()))
                     : Value();
    EpilogueBuffers epilogue;
    epilogue.body = op.getEpilogueBlock();
    // Contiguous rows whatever the operand (also coordinates), for the
    // vector loads.
    for (ValueRange operand : adaptor.getEpilogueOperands())
      epilogue.operands.push_back(
          toBuffer(rewriter, loc, single(operand), /*contiguous=*/true));
    RulebookBuffers rulebook =
        RulebookBuffers::fromValues(adaptor.getRulebook());
    Value destination =
        concatDestination(ctx, rewriter, loc, op,
                          op.getInverse() ? rulebook.numIn : rulebook.numOut);
    Value result = lowerRulebookConv(
        ctx, rewriter, op, rulebook,
        toOperandBuffer(rewriter, loc, single(adaptor.getFeatures())),
        toOperandBuffer(rewriter, loc, single(adaptor.getWeight())), bias,
        epilogue, destination);
    replaceWithTensors(rewriter, op, result);
    return success();
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

/// The gradient ops: a rulebook, the forward's features and the gradient
/// of its result, lowered by `lower` to the result's buffer.
template <typename OpT> struct RulebookGradLowering : SpConvOpLowering<OpT> {
  using LowerFn = Value (*)(LoweringContext &, OpBuilder &, OpT,
                            const RulebookBuffers &, Value, Value);

  RulebookGradLowering(const TypeConverter &converter, LoweringContext &ctx,
                       LowerFn lower)
      : SpConvOpLowering<OpT>(converter, ctx), lower(lower) {}

  LogicalResult
  matchAndRewrite(OpT op,
                  typename OpConversionPattern<OpT>::OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value result =
        lower(this->ctx, rewriter, op,
              RulebookBuffers::fromValues(adaptor.getRulebook()),
              toOperandBuffer(rewriter, loc, single(adaptor.getFeatures())),
              toOperandBuffer(rewriter, loc, single(adaptor.getOutGrad())));
    replaceWithTensors(rewriter, op, result);
    return success();
  }

  LowerFn lower;
};
} // namespace

void lowering::populateComputePatterns(const TypeConverter &converter,
                                       LoweringContext &ctx,
                                       RewritePatternSet &patterns) {
  patterns.add<RulebookConvLowering, RulebookPoolLowering, ConcatLowering>(
      converter, ctx);
  patterns.add<RulebookGradLowering<RulebookWeightGradOp>>(
      converter, ctx, lowerRulebookWeightGrad);
  patterns.add<RulebookGradLowering<RulebookPoolGradOp>>(converter, ctx,
                                                         lowerRulebookPoolGrad);
}
