//===- Decompose.cpp - Conv and pool to rulebook build + compute ----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/IR/SpConvOps.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVDECOMPOSEPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

/// Builds the rulebook of `geometry` over `coords`, whose output coordinates
/// have type `outCoordsType`.
static BuildRulebookOp buildRulebook(RewriterBase &rewriter, Location loc,
                                     GeometryAttr geometry, Value coords,
                                     Type outCoordsType) {
  auto rulebookType =
      RulebookType::get(rewriter.getContext(), geometry, getGrid(coords.getType()));
  return BuildRulebookOp::create(rewriter, loc, rulebookType, outCoordsType,
                                 coords);
}

static void decompose(RewriterBase &rewriter, ConvOp op) {
  auto build = buildRulebook(rewriter, op.getLoc(), op.getGeometry(),
                             op.getCoords(), op.getOutCoords().getType());
  Value features = RulebookConvOp::create(
      rewriter, op.getLoc(), op.getOutFeatures().getType(), build.getRulebook(),
      op.getFeatures(), op.getWeight(), op.getBias(),
      /*epilogue_operands=*/ValueRange(), /*inverse=*/false, op.getGroups());
  rewriter.replaceOp(op, {build.getOutCoords(), features});
}

static void decompose(RewriterBase &rewriter, PoolOp op) {
  auto build = buildRulebook(rewriter, op.getLoc(), op.getGeometry(),
                             op.getCoords(), op.getOutCoords().getType());
  Value features = RulebookPoolOp::create(
      rewriter, op.getLoc(), op.getOutFeatures().getType(), op.getKind(),
      build.getRulebook(), op.getFeatures());
  rewriter.replaceOp(op, {build.getOutCoords(), features});
}

/// Returns the forward rulebook an inverse conv reads and the features
/// aligned with its output sites. Returns whether the rulebook was reused.
static bool decompose(RewriterBase &rewriter, InverseConvOp op) {
  Location loc = op.getLoc();
  GeometryAttr forward = op.getGeometry().withKind(ConvKind::Regular);
  auto rulebookType = RulebookType::get(rewriter.getContext(), forward,
                                        getGrid(op.getCoords().getType()));
  Value rulebook;
  Value features = op.getFeatures();
  auto source = op.getSourceCoords().getDefiningOp<BuildRulebookOp>();
  bool reused = source && source.getOutCoords() == op.getSourceCoords() &&
                source.getCoords() == op.getCoords() &&
                source.getRulebook().getType() == rulebookType;
  if (reused) {
    rulebook = source.getRulebook();
  } else {
    // The source sites may be in any order: find the row of every forward
    // output site among them.
    auto build = buildRulebook(rewriter, loc, forward, op.getCoords(),
                               op.getSourceCoords().getType());
    rulebook = build.getRulebook();
    auto keysType = RankedTensorType::get({ShapedType::kDynamic},
                                          rewriter.getI64Type());
    auto rowsType = RankedTensorType::get({ShapedType::kDynamic},
                                          rewriter.getI32Type());
    Value sourceKeys =
        LinearizeOp::create(rewriter, loc, keysType, op.getSourceCoords());
    Value table = HashBuildOp::create(
        rewriter, loc, HashTableType::get(rewriter.getContext()), sourceKeys);
    Value outputKeys =
        LinearizeOp::create(rewriter, loc, keysType, build.getOutCoords());
    Value rows =
        HashLookupOp::create(rewriter, loc, rowsType, table, outputKeys);
    auto featuresType = cast<RankedTensorType>(features.getType());
    auto alignedType = RankedTensorType::get(
        {ShapedType::kDynamic, featuresType.getDimSize(1)},
        featuresType.getElementType());
    features = GatherRowsOp::create(rewriter, loc, alignedType, features, rows);
  }
  Value result = RulebookConvOp::create(
      rewriter, loc, op.getOutFeatures().getType(), rulebook, features,
      op.getWeight(), op.getBias(), /*epilogue_operands=*/ValueRange(),
      /*inverse=*/true, op.getGroups());
  rewriter.replaceOp(op, result);
  return reused;
}

namespace {
struct SpConvDecomposePass
    : spconv::impl::SpConvDecomposePassBase<SpConvDecomposePass> {
  using Base::Base;

  void runOnOperation() override {
    // Program order: a forward conv is rewritten before the inverse convs
    // that consume its output coordinates.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<ConvOp, PoolOp, InverseConvOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      if (auto conv = dyn_cast<ConvOp>(op)) {
        decompose(rewriter, conv);
      } else if (auto pool = dyn_cast<PoolOp>(op)) {
        decompose(rewriter, pool);
      } else if (decompose(rewriter, cast<InverseConvOp>(op))) {
        ++numReusedForInverse;
      } else {
        ++numRealigned;
      }
    }
  }
};
} // namespace
