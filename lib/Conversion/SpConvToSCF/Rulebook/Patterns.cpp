//===- Patterns.cpp - Rulebook build pattern ------------------------------===//
//
// Part of the spconv-mlir project.
//
// spconv.build_rulebook: its coordinates as a buffer, the builder's
// buffers as the rulebook's values.
//
//===----------------------------------------------------------------------===//

#include "Rulebook/Rulebook.h"
#include "TypeConversion.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

namespace {
struct BuildRulebookLowering : SpConvOpLowering<BuildRulebookOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(BuildRulebookOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value coords = single(adaptor.getCoords());
    FailureOr<BuiltRulebook> built = lowerBuildRulebook(
        ctx, rewriter, op, toOperandBuffer(rewriter, loc, coords));
    if (failed(built))
      return failure();
    // Subm output sites are its input sites, in their order.
    Value outCoords = coords;
    if (built->outCoords) {
      auto type = op.getOutCoords().getType();
      outCoords = toTensor(
          rewriter, loc,
          castToChecked(ctx, rewriter, loc, built->outCoords,
                        MemRefType::get(type.getShape(), type.getElementType()),
                        SizeCheck::OutputSites),
          type);
    }
    rewriter.replaceOpWithMultiple(
        op, {built->rulebook.toValues(), SmallVector<Value>{outCoords}});
    return success();
  }
};
} // namespace

void lowering::populateRulebookPatterns(const TypeConverter &converter,
                                        LoweringContext &ctx,
                                        RewritePatternSet &patterns) {
  patterns.add<BuildRulebookLowering>(converter, ctx);
  populateRulebookPairsPatterns(converter, ctx, patterns);
}
