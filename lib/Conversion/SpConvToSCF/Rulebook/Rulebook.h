//===- Rulebook.h - Rulebook builders ---------------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// spconv.build_rulebook lowered to a call of a builder specialised per
// geometry (BuildRulebook.cpp; subm by a sorted merge in SortedSubm.cpp),
// the pieces every builder shares (BuildStatus, PairCounts, OutputBox).
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_RULEBOOK_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_RULEBOOK_H

#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Transforms/DialectConversion.h"

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

/// For a subm build whose rulebook only the GPU's tiled convs read
/// (GPU/TiledConv.cpp): calls (creating it once per geometry) the builder
/// that makes the `sites x K` neighbour table of input rows directly, no
/// pairs, and checks its status where the function returns (checkAtReturn;
/// `op` must pass canCheckAtReturn). Returns the table.
Value callNeighbourTableBuilder(LoweringContext &ctx, OpBuilder &b,
                                BuildRulebookOp op, Value coordsBuffer);

/// Creates the subm builder `name` that finds neighbours by merging the
/// sorted site keys (see SortedSubm.cpp).
func::FuncOp createSortedSubmBuilder(LoweringContext &ctx, RulebookType type,
                                     StringRef name);

/// The patterns of this folder's ops (TypeConversion.h's SpConvOpLowering),
/// sharing `ctx`: the build's and those of Pairs.cpp.
void populateRulebookPatterns(const TypeConverter &converter,
                              LoweringContext &ctx,
                              RewritePatternSet &patterns);

/// spconv.rulebook_pairs and spconv.rulebook_from_pairs (Pairs.cpp).
void populateRulebookPairsPatterns(const TypeConverter &converter,
                                   LoweringContext &ctx,
                                   RewritePatternSet &patterns);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_RULEBOOK_H
