//===- SpConvOpBuilders.cpp - Builders that infer result types ------------===//
//
// Part of the spconv-mlir project.
//
// The result types of the convolution, pooling and rulebook ops follow from
// their operands and geometry; these builders compute them, so C++ callers
// never spell them. Where the operands do not determine a type (coordinates
// without a grid, a geometry that does not fit the grid, an operand that is
// not a ranked tensor) a builder falls back to an operand's type: the op is
// still built, and its verifier names what is wrong instead of the builder
// failing without a message.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::spconv;

/// Extent `dim` of `type`, dynamic where the type does not have it.
static int64_t extentOf(Type type, unsigned dim) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() <= dim)
    return ShapedType::kDynamic;
  return tensor.getDimSize(dim);
}

/// A `rows x channels` feature tensor with the element type of `like`, or
/// `like` itself where it is no feature tensor.
static Type featuresLike(Type like, int64_t rows, int64_t channels) {
  auto tensor = dyn_cast<RankedTensorType>(like);
  if (!tensor || tensor.getRank() != 2)
    return like;
  return RankedTensorType::get({rows, channels}, tensor.getElementType());
}

/// Coordinates on `grid` with the columns of `like`: one row per output site,
/// their number known only at run time.
static Type coordsOnGrid(RankedTensorType like, GridAttr grid) {
  return RankedTensorType::get({ShapedType::kDynamic, like.getDimSize(1)},
                               like.getElementType(), grid);
}

/// The result coordinates of `geometry` applied to `coords`: the input type
/// for subm (the same sites), otherwise sites on the output grid.
static Type outputCoordsType(GeometryAttr geometry, Type coords) {
  auto tensor = dyn_cast<RankedTensorType>(coords);
  GridAttr grid = getGrid(coords);
  if (!tensor || tensor.getRank() != 2 || !grid || !geometry ||
      geometry.getKind() == ConvKind::Subm)
    return coords;
  FailureOr<SmallVector<int64_t>> shape =
      geometry.getOutputShape(grid.getShape());
  if (failed(shape))
    return coords;
  return coordsOnGrid(tensor, grid.withShape(*shape));
}

/// Output rows of a layer whose output sites are computed: as many as its
/// input for subm, otherwise known only at run time.
static int64_t outputRows(GeometryAttr geometry, Value features) {
  if (geometry && geometry.getKind() == ConvKind::Subm)
    return extentOf(features.getType(), 0);
  return ShapedType::kDynamic;
}

void ConvOp::build(OpBuilder &builder, OperationState &state,
                   GeometryAttr geometry, Value coords, Value features,
                   Value weight, Value bias, int64_t groups) {
  Type outFeatures =
      featuresLike(features.getType(), outputRows(geometry, features),
                   extentOf(weight.getType(), 2));
  build(builder, state, outputCoordsType(geometry, coords.getType()),
        outFeatures, geometry, coords, features, weight, bias, groups);
}

void InverseConvOp::build(OpBuilder &builder, OperationState &state,
                          GeometryAttr geometry, Value coords,
                          Value sourceCoords, Value features, Value weight,
                          Value bias, int64_t groups) {
  Type outFeatures =
      featuresLike(features.getType(), extentOf(coords.getType(), 0),
                   extentOf(weight.getType(), 2));
  build(builder, state, outFeatures, geometry, coords, sourceCoords, features,
        weight, bias, groups);
}

void PoolOp::build(OpBuilder &builder, OperationState &state, PoolKind kind,
                   GeometryAttr geometry, Value coords, Value features) {
  Type outFeatures = featuresLike(features.getType(), ShapedType::kDynamic,
                                  extentOf(features.getType(), 1));
  build(builder, state, outputCoordsType(geometry, coords.getType()),
        outFeatures, kind, geometry, coords, features);
}

void BuildRulebookOp::build(OpBuilder &builder, OperationState &state,
                            RulebookType rulebook, Value coords) {
  Type outCoords = coords.getType();
  auto tensor = dyn_cast<RankedTensorType>(outCoords);
  if (tensor && tensor.getRank() == 2 &&
      rulebook.getGeometry().getKind() != ConvKind::Subm)
    outCoords = coordsOnGrid(tensor, rulebook.getOutputGrid());
  build(builder, state, rulebook, outCoords, coords);
}

void RulebookConvOp::build(OpBuilder &builder, OperationState &state,
                           Value rulebook, Value features, Value weight,
                           Value bias, bool inverse, int64_t groups) {
  auto type = dyn_cast<RulebookType>(rulebook.getType());
  int64_t rows = inverse || !type ? ShapedType::kDynamic
                                  : outputRows(type.getGeometry(), features);
  Type outFeatures =
      featuresLike(features.getType(), rows, extentOf(weight.getType(), 2));
  build(builder, state, outFeatures, rulebook, features, weight, bias,
        /*epilogue_operands=*/ValueRange(), inverse, groups);
}

void RulebookPoolGradOp::build(OpBuilder &builder, OperationState &state,
                               PoolKind kind, Value rulebook, Value features,
                               Value outGrad) {
  build(builder, state, features.getType(), kind, rulebook, features, outGrad);
}

void RulebookWeightGradOp::build(OpBuilder &builder, OperationState &state,
                                 Value rulebook, Value features, Value outGrad,
                                 bool inverse, int64_t groups) {
  auto type = dyn_cast<RulebookType>(rulebook.getType());
  int64_t volume =
      type ? type.getGeometry().getKernelVolume() : ShapedType::kDynamic;
  // A group's input channels; dynamic where the split is not exact (the
  // verifier reports it).
  int64_t channelsIn = extentOf(features.getType(), 1);
  if (!ShapedType::isDynamic(channelsIn) && groups > 0)
    channelsIn = channelsIn % groups ? ShapedType::kDynamic : channelsIn / groups;
  Type weightGrad = RankedTensorType::get(
      {volume, channelsIn, extentOf(outGrad.getType(), 1)},
      getElementTypeOrSelf(features.getType()));
  build(builder, state, weightGrad, rulebook, features, outGrad, inverse,
        groups);
}

void RulebookPoolOp::build(OpBuilder &builder, OperationState &state,
                           PoolKind kind, Value rulebook, Value features) {
  Type outFeatures = featuresLike(features.getType(), ShapedType::kDynamic,
                                  extentOf(features.getType(), 1));
  build(builder, state, outFeatures, kind, rulebook, features);
}
