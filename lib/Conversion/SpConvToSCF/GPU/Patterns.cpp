//===- Patterns.cpp - The GPU's pattern sets ------------------------------===//
//
// Part of the spconv-mlir project.
//
// The per-pair set takes every conv and weight gradient; the tiled set,
// at a higher benefit, takes those it applies to and leaves the rest to the
// per-pair set, as a backend's specialised patterns do beside its generic
// ones.
//
//===----------------------------------------------------------------------===//

#include "GPU/GPU.h"
#include "GPU/ImplicitGemm.h"
#include "Rulebook/BuildStatus.h"
#include "Rulebook/Rulebook.h"
#include "Utils/Builders.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

namespace {
struct PairChannelConvLowering : RulebookConvPattern {
  using RulebookConvPattern::RulebookConvPattern;

  Value lower(OpBuilder &b, RulebookConvOp op,
              const ConvBuffers &buffers) const override {
    return lowerPairChannelConv(ctx, b, op, buffers);
  }
};

struct ElementPerThreadWeightGradLowering : RulebookWeightGradPattern {
  using RulebookWeightGradPattern::RulebookWeightGradPattern;

  void lower(OpBuilder &b, Location loc,
             const WeightGradBuffers &buffers) const override {
    lowerElementPerThreadWeightGrad(b, loc, buffers);
  }
};

struct TiledConvLowering : RulebookConvPattern {
  TiledConvLowering(const TypeConverter &converter, LoweringContext &ctx,
                    PatternBenefit benefit, const TiledFormOptions &options)
      : RulebookConvPattern(converter, ctx, benefit), options(options) {}

  bool appliesTo(RulebookConvOp op) const override {
    return tiledFormApplies(op);
  }
  Value lower(OpBuilder &b, RulebookConvOp op,
              const ConvBuffers &buffers) const override {
    return lowerTiledConv(ctx, b, op, buffers, options);
  }

  TiledFormOptions options;
};

struct TiledWeightGradLowering : RulebookWeightGradPattern {
  using RulebookWeightGradPattern::RulebookWeightGradPattern;

  bool appliesTo(RulebookWeightGradOp op) const override {
    return tiledFormApplies(op.getGroups(), op.getWeightGrad().getType());
  }
  void lower(OpBuilder &b, Location loc,
             const WeightGradBuffers &buffers) const override {
    lowerTiledWeightGrad(b, loc, buffers);
  }
};

/// A subm build whose only users are tiled convs, which read the rulebook
/// through the neighbour table and tile schedule alone: the builder makes
/// the table directly, the schedule follows, and both are recorded as the
/// rulebook's derived buffers. The host learns no size from the build, so
/// it does not wait for it: the status is checked at the call's end. The
/// rulebook's pair buffers are empty and never read.
struct NeighbourTableBuildLowering : SpConvOpLowering<BuildRulebookOp> {
  using SpConvOpLowering::SpConvOpLowering;

  static bool onlyTiledConvsRead(BuildRulebookOp op) {
    Value rulebook = op.getRulebook();
    return !rulebook.use_empty() &&
           llvm::all_of(rulebook.getUsers(), [&](Operation *user) {
             auto conv = dyn_cast<RulebookConvOp>(user);
             return conv && !conv.getInverse() && tiledFormApplies(conv);
           });
  }

  LogicalResult
  matchAndRewrite(BuildRulebookOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    GeometryAttr geometry = op.getRulebook().getType().getGeometry();
    if (geometry.getKind() != ConvKind::Subm || !onlyTiledConvsRead(op) ||
        !canCheckAtReturn(op))
      return failure();
    Location loc = op.getLoc();
    Value coords = single(adaptor.getCoords());
    Value coordsBuffer = toOperandBuffer(rewriter, loc, coords);
    Value table = callNeighbourTableBuilder(ctx, rewriter, op, coordsBuffer);

    int64_t volume = geometry.getKernelVolume();
    RulebookBuffers rulebook;
    rulebook.numIn = rulebook.numOut =
        memref::DimOp::create(rewriter, loc, coordsBuffer, 0);
    Value none = indexConst(rewriter, loc, 0);
    rulebook.pairIn = alloc1d(rewriter, loc, rewriter.getI32Type(), none);
    rulebook.pairOut = alloc1d(rewriter, loc, rewriter.getI32Type(), none);
    rulebook.offsets = memref::AllocOp::create(
        rewriter, loc, MemRefType::get({volume + 1}, rewriter.getIndexType()));
    TileSchedule schedule =
        buildTileSchedule(ctx, rewriter, loc, table, volume, rulebook.numOut);
    ctx.recordDerived(rulebook.offsets, /*inverse=*/false,
                      {table.getDefiningOp(),
                       {table, schedule.order, schedule.groupOffsets}});
    // Subm output sites are its input sites, in their order.
    rewriter.replaceOpWithMultiple(
        op, {rulebook.toValues(), SmallVector<Value>{coords}});
    return success();
  }
};
} // namespace

void lowering::populateGPUPairPatterns(const TypeConverter &converter,
                                       LoweringContext &ctx,
                                       RewritePatternSet &patterns) {
  patterns.add<PairChannelConvLowering, ElementPerThreadWeightGradLowering>(
      converter, ctx);
}

void lowering::populateGPUTiledPatterns(const TypeConverter &converter,
                                        LoweringContext &ctx,
                                        const TiledFormOptions &options,
                                        RewritePatternSet &patterns,
                                        PatternBenefit benefit) {
  patterns.add<TiledConvLowering>(converter, ctx, benefit, options);
  patterns.add<TiledWeightGradLowering, NeighbourTableBuildLowering>(
      converter, ctx, benefit);
}
