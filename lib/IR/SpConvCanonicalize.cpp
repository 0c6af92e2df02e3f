//===- SpConvCanonicalize.cpp - SpConv canonicalization patterns ----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// The output sites of a submanifold geometry are its input sites, in order:
/// users of the result coordinates read the input coordinates instead, which
/// lets later layers see one coordinates value (and share rulebooks).
template <typename OpTy>
struct ForwardSubmCoordinates : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (getGeometry(op).getKind() != ConvKind::Subm)
      return rewriter.notifyMatchFailure(op, "not a subm geometry");
    if (op.getOutCoords().use_empty())
      return rewriter.notifyMatchFailure(op, "result coordinates unused");
    rewriter.replaceAllUsesWith(op.getOutCoords(), op.getCoords());
    return success();
  }

  static GeometryAttr getGeometry(ConvOp op) { return op.getGeometry(); }
  static GeometryAttr getGeometry(BuildRulebookOp op) {
    return op.getRulebook().getType().getGeometry();
  }
};

/// A pointwise (1x...x1) submanifold conv has one pair per site, the centre
/// offset mapping each site to itself, so it is a plain matmul of the
/// features with the single weight slice (plus bias).
struct PointwiseSubmConvToMatmul : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    GeometryAttr geometry = op.getGeometry();
    if (geometry.getKind() != ConvKind::Subm || !geometry.isPointwise())
      return rewriter.notifyMatchFailure(op, "not a pointwise subm conv");
    // A grouped weight is block-diagonal: not one matmul.
    if (op.getGroups() != 1)
      return rewriter.notifyMatchFailure(op, "grouped conv");

    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getOutFeatures().getType());
    Type elementType = resultType.getElementType();
    SmallVector<ReassociationIndices> dropOffsetDim = {{0, 1}, {2}};
    Value weight = tensor::CollapseShapeOp::create(rewriter, loc, op.getWeight(),
                                                   dropOffsetDim);

    SmallVector<Value> dynamicSizes;
    if (resultType.isDynamicDim(0))
      dynamicSizes.push_back(
          tensor::DimOp::create(rewriter, loc, op.getFeatures(), 0));
    if (resultType.isDynamicDim(1))
      dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, weight, 1));
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         elementType, dynamicSizes);
    if (Value bias = op.getBias()) {
      init = linalg::BroadcastOp::create(rewriter, loc, bias, init,
                                         ArrayRef<int64_t>{0})
                 ->getResult(0);
    } else {
      Value zero = arith::ConstantOp::create(
          rewriter, loc, rewriter.getZeroAttr(elementType));
      init = linalg::FillOp::create(rewriter, loc, zero, init).getResult(0);
    }
    Value product =
        linalg::MatmulOp::create(rewriter, loc, TypeRange{resultType},
                                 ValueRange{op.getFeatures(), weight},
                                 ValueRange{init})
            .getResult(0);
    rewriter.replaceOp(op, {op.getCoords(), product});
    return success();
  }
};

} // namespace

void ConvOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<ForwardSubmCoordinates<ConvOp>, PointwiseSubmConvToMatmul>(
      context);
}

void BuildRulebookOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<ForwardSubmCoordinates<BuildRulebookOp>>(context);
}
