//===- SpConvOps.cpp - SpConv operations ----------------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvOps.h"
#include "SpConv/IR/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::spconv;

static ParseResult
parseEpilogue(OpAsmParser &parser,
              SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands,
              SmallVectorImpl<Type> &types, Region &body);
static void printEpilogue(OpAsmPrinter &printer, Operation *op,
                          OperandRange operands, TypeRange types, Region &body);

#define GET_OP_CLASSES
#include "SpConv/IR/SpConvOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared verification helpers
//===----------------------------------------------------------------------===//

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Checks that two extents agree where both are static.
static LogicalResult verifySameExtent(Operation *op, int64_t lhs,
                                      StringRef lhsName, int64_t rhs,
                                      StringRef rhsName) {
  if (ShapedType::isDynamic(lhs) || ShapedType::isDynamic(rhs) || lhs == rhs)
    return success();
  return op->emitOpError() << lhsName << " (" << lhs << ") and " << rhsName
                           << " (" << rhs << ") must agree";
}

/// Checks a coordinates value: a `#spconv.grid` encoding and `1 + D` columns.
static FailureOr<GridAttr> verifyCoords(Operation *op, Value coords,
                                        StringRef name) {
  RankedTensorType type = tensorType(coords);
  GridAttr grid = getGrid(type);
  if (!grid)
    return op->emitOpError() << name
                             << " must carry a #spconv.grid encoding, got "
                             << type;
  int64_t columns = type.getDimSize(1);
  if (columns != static_cast<int64_t>(grid.getRank()) + 1)
    return op->emitOpError()
           << name << " must have 1 + " << grid.getRank()
           << " columns (batch, then one per spatial dimension of "
           << formatShape(grid.getShape()) << "), got "
           << (ShapedType::isDynamic(columns) ? std::string("?")
                                              : std::to_string(columns));
  return grid;
}

/// Checks that `actual` is the grid `geometry` computes from `input`.
static LogicalResult verifyOutputGrid(Operation *op, GeometryAttr geometry,
                                      GridAttr input, GridAttr actual,
                                      StringRef actualName) {
  if (geometry.getRank() != input.getRank())
    return op->emitOpError()
           << "geometry has " << geometry.getRank()
           << " spatial dimensions but the input grid "
           << formatShape(input.getShape()) << " has " << input.getRank();
  FailureOr<SmallVector<int64_t>> expected = geometry.getOutputShape(
      input.getShape(), [&] { return op->emitOpError(); });
  if (failed(expected))
    return failure();
  if (actual.getShape() != ArrayRef(*expected))
    return op->emitOpError()
           << actualName << " grid " << formatShape(actual.getShape())
           << " disagrees with the grid " << formatShape(*expected)
           << " that the geometry computes from the input grid "
           << formatShape(input.getShape());
  if (actual.getBatch() != input.getBatch())
    return op->emitOpError() << actualName
                             << " grid must keep the batch size of the input "
                                "grid";
  return success();
}

/// Checks input and result coordinates and that the result grid is the one
/// `geometry` computes from the input grid.
static LogicalResult verifyCoordsMapping(Operation *op, GeometryAttr geometry,
                                         Value coords, StringRef coordsName,
                                         Value outCoords,
                                         StringRef outCoordsName,
                                         StringRef outGridName) {
  FailureOr<GridAttr> grid = verifyCoords(op, coords, coordsName);
  if (failed(grid))
    return failure();
  FailureOr<GridAttr> outGrid = verifyCoords(op, outCoords, outCoordsName);
  if (failed(outGrid))
    return failure();
  return verifyOutputGrid(op, geometry, *grid, *outGrid, outGridName);
}

/// Checks that all `values` share one element type.
static LogicalResult verifyElementTypes(Operation *op, ValueRange values) {
  Type expected = tensorType(values.front()).getElementType();
  for (Value value : values.drop_front())
    if (tensorType(value).getElementType() != expected)
      return op->emitOpError()
             << "features, weight, bias and results must share one element "
                "type, got "
             << expected << " and " << tensorType(value).getElementType();
  return success();
}

/// Checks that `groups` splits `channels` input channels (of which `perGroup`
/// per group) and `outChannels` output channels: `what` names the weight or
/// its gradient.
static LogicalResult verifyGroups(Operation *op, int64_t groups,
                                  int64_t channels, StringRef channelsName,
                                  int64_t perGroup, int64_t outChannels,
                                  StringRef what) {
  if (groups < 1)
    return op->emitOpError() << "groups must be positive, got " << groups;
  if (groups == 1)
    return verifySameExtent(op, perGroup, (what + " input channels").str(),
                            channels, channelsName);
  auto isStatic = [](int64_t extent) { return !ShapedType::isDynamic(extent); };
  if (isStatic(channels) && isStatic(perGroup)) {
    std::optional<int64_t> total = llvm::checkedMul(groups, perGroup);
    if (!total || *total != channels)
      return op->emitOpError()
             << channelsName << " (" << channels << ") must be groups ("
             << groups << ") x " << what << " input channels (" << perGroup
             << ")";
  }
  if (isStatic(channels) && channels % groups != 0)
    return op->emitOpError() << channelsName << " (" << channels
                             << ") are not divisible by groups (" << groups
                             << ")";
  if (isStatic(outChannels) && outChannels % groups != 0)
    return op->emitOpError() << what << " output channels (" << outChannels
                             << ") are not divisible by groups (" << groups
                             << ")";
  return success();
}

/// Checks a `K x Cin/groups x Cout` weight and an optional `Cout` bias
/// against the kernel volume and the feature channel counts.
static LogicalResult verifyWeight(Operation *op, GeometryAttr geometry,
                                  Value features, Value weight, Value bias,
                                  Value outFeatures, int64_t groups) {
  ArrayRef<int64_t> w = tensorType(weight).getShape();
  int64_t volume = geometry.getKernelVolume();
  if (!ShapedType::isDynamic(w[0]) && w[0] != volume)
    return op->emitOpError()
           << "weight has " << w[0] << " kernel offsets but the kernel "
           << formatShape(geometry.getKernel()) << " has " << volume;
  if (failed(verifyGroups(op, groups, tensorType(features).getDimSize(1),
                          "feature channels", w[1], w[2], "weight")) ||
      failed(verifySameExtent(op, w[2], "weight output channels",
                              tensorType(outFeatures).getDimSize(1),
                              "result channels")))
    return failure();
  SmallVector<Value> typed = {features, weight, outFeatures};
  if (bias) {
    if (failed(verifySameExtent(op, tensorType(bias).getDimSize(0),
                                "bias size", w[2], "weight output channels")))
      return failure();
    typed.push_back(bias);
  }
  return verifyElementTypes(op, typed);
}

static LogicalResult verifySameRows(Operation *op, Value lhs,
                                    StringRef lhsName, Value rhs,
                                    StringRef rhsName) {
  return verifySameExtent(op, tensorType(lhs).getDimSize(0), lhsName,
                          tensorType(rhs).getDimSize(0), rhsName);
}

//===----------------------------------------------------------------------===//
// High-level ops
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::verify() {
  GeometryAttr geometry = getGeometry();
  if (geometry.getKind() == ConvKind::Inverse)
    return emitOpError("takes a subm, regular or transposed geometry; "
                       "inverse convolutions are spconv.inverse_conv");
  if (failed(verifyCoordsMapping(*this, geometry, getCoords(), "coordinates",
                                 getOutCoords(), "result coordinates",
                                 "result")))
    return failure();
  if (geometry.getKind() == ConvKind::Subm &&
      getCoords().getType() != getOutCoords().getType())
    return emitOpError("subm result coordinates must have the type of the "
                       "input coordinates, ")
           << getCoords().getType();
  if (failed(verifySameRows(*this, getCoords(), "coordinate rows",
                            getFeatures(), "feature rows")) ||
      failed(verifySameRows(*this, getOutCoords(), "result coordinate rows",
                            getOutFeatures(), "result feature rows")))
    return failure();
  return verifyWeight(*this, geometry, getFeatures(), getWeight(), getBias(),
                      getOutFeatures(), getGroups());
}

LogicalResult InverseConvOp::verify() {
  GeometryAttr geometry = getGeometry();
  if (geometry.getKind() != ConvKind::Inverse)
    return emitOpError("takes an inverse geometry, got ")
           << stringifyConvKind(geometry.getKind());
  if (failed(verifyCoordsMapping(*this, geometry.withKind(ConvKind::Regular),
                                 getCoords(), "coordinates",
                                 getSourceCoords(), "source coordinates",
                                 "source (forward conv output)")))
    return failure();
  if (failed(verifySameRows(*this, getSourceCoords(), "source coordinate rows",
                            getFeatures(), "feature rows")) ||
      failed(verifySameRows(*this, getCoords(), "coordinate rows",
                            getOutFeatures(), "result feature rows")))
    return failure();
  return verifyWeight(*this, geometry, getFeatures(), getWeight(), getBias(),
                      getOutFeatures(), getGroups());
}

LogicalResult PoolOp::verify() {
  GeometryAttr geometry = getGeometry();
  if (geometry.getKind() != ConvKind::Regular)
    return emitOpError("takes a regular geometry, got ")
           << stringifyConvKind(geometry.getKind());
  if (failed(verifyCoordsMapping(*this, geometry, getCoords(), "coordinates",
                                 getOutCoords(), "result coordinates",
                                 "result")) ||
      failed(verifySameRows(*this, getCoords(), "coordinate rows",
                            getFeatures(), "feature rows")) ||
      failed(verifySameRows(*this, getOutCoords(), "result coordinate rows",
                            getOutFeatures(), "result feature rows")) ||
      failed(verifySameExtent(*this, tensorType(getFeatures()).getDimSize(1),
                              "feature channels",
                              tensorType(getOutFeatures()).getDimSize(1),
                              "result channels")))
    return failure();
  return verifyElementTypes(*this, {getFeatures(), getOutFeatures()});
}

//===----------------------------------------------------------------------===//
// Rulebook-level ops
//===----------------------------------------------------------------------===//

LogicalResult BuildRulebookOp::verify() {
  RulebookType rulebook = getRulebook().getType();
  FailureOr<GridAttr> grid = verifyCoords(*this, getCoords(), "coordinates");
  if (failed(grid))
    return failure();
  if (*grid != rulebook.getInputGrid())
    return emitOpError("rulebook input grid ")
           << rulebook.getInputGrid() << " differs from the coordinates' grid "
           << *grid;
  FailureOr<GridAttr> outGrid =
      verifyCoords(*this, getOutCoords(), "result coordinates");
  if (failed(outGrid))
    return failure();
  if (*outGrid != rulebook.getOutputGrid())
    return emitOpError("result coordinates grid ")
           << *outGrid << " differs from the rulebook's output grid "
           << rulebook.getOutputGrid();
  if (rulebook.getGeometry().getKind() == ConvKind::Subm &&
      getCoords().getType() != getOutCoords().getType())
    return emitOpError("subm result coordinates must have the type of the "
                       "input coordinates, ")
           << getCoords().getType();
  return success();
}

LogicalResult RulebookConvOp::verify() {
  return verifyWeight(*this, getRulebook().getType().getGeometry(),
                      getFeatures(), getWeight(), getBias(), getOutFeatures(),
                      getGroups());
}

LogicalResult RulebookPoolGradOp::verify() {
  GeometryAttr geometry = getRulebook().getType().getGeometry();
  if (geometry.getKind() != ConvKind::Regular)
    return emitOpError("pools over the rulebook of a regular geometry, got ")
           << stringifyConvKind(geometry.getKind());
  int64_t channels = tensorType(getFeatures()).getDimSize(1);
  if (failed(verifySameExtent(*this, tensorType(getOutGrad()).getDimSize(1),
                              "output gradient channels", channels,
                              "feature channels")) ||
      failed(verifySameExtent(*this, tensorType(getInGrad()).getDimSize(1),
                              "result channels", channels,
                              "feature channels")) ||
      failed(verifySameRows(*this, getInGrad(), "result rows", getFeatures(),
                            "feature rows")))
    return failure();
  return verifyElementTypes(*this, {getFeatures(), getOutGrad(), getInGrad()});
}

LogicalResult RulebookWeightGradOp::verify() {
  GeometryAttr geometry = getRulebook().getType().getGeometry();
  ArrayRef<int64_t> w = tensorType(getWeightGrad()).getShape();
  int64_t volume = geometry.getKernelVolume();
  if (!ShapedType::isDynamic(w[0]) && w[0] != volume)
    return emitOpError() << "weight gradient has " << w[0]
                         << " kernel offsets but the kernel "
                         << formatShape(geometry.getKernel()) << " has "
                         << volume;
  if (failed(verifyGroups(*this, getGroups(),
                          tensorType(getFeatures()).getDimSize(1),
                          "feature channels", w[1], w[2], "weight gradient")) ||
      failed(verifySameExtent(*this, w[2], "weight gradient output channels",
                              tensorType(getOutGrad()).getDimSize(1),
                              "output gradient channels")))
    return failure();
  return verifyElementTypes(*this, {getFeatures(), getOutGrad(), getWeightGrad()});
}

/// The lowering applies an epilogue to vectors of elements: only ops that
/// apply element by element, without effects, and constants.
static bool appliesElementwise(Operation *op) {
  bool elementwise = op->hasTrait<OpTrait::Elementwise>() ||
                     op->hasTrait<OpTrait::ConstantLike>();
  return elementwise && isPure(op) && op->getNumRegions() == 0;
}

bool RulebookConvOp::isEpilogueOp(Operation *op) {
  return appliesElementwise(op) &&
         llvm::all_of(op->getResultTypes(),
                      [](Type type) { return type.isIntOrIndexOrFloat(); });
}

LogicalResult RulebookConvOp::verifyRegions() {
  Block *body = getEpilogueBlock();
  if (!body) {
    if (!getEpilogueOperands().empty())
      return emitOpError("has ") << getEpilogueOperands().size()
                                 << " epilogue operands but no epilogue";
    return success();
  }
  RankedTensorType result = tensorType(getOutFeatures());
  Type element = result.getElementType();
  int64_t channels = result.getDimSize(1);
  size_t expected = 1 + getEpilogueOperands().size();
  if (body->getNumArguments() != expected)
    return emitOpError("epilogue block has ")
           << body->getNumArguments() << " arguments, expected " << expected
           << " (the element, then one per epilogue operand)";
  if (body->getArgument(0).getType() != element)
    return emitOpError("epilogue's first argument must be the result's "
                       "element type ")
           << element << ", got " << body->getArgument(0).getType();
  for (auto [i, operand] : llvm::enumerate(getEpilogueOperands())) {
    RankedTensorType type = tensorType(operand);
    std::string name = "epilogue operand #" + std::to_string(i);
    if (type.getRank() == 2) {
      if (failed(verifySameExtent(*this, type.getDimSize(0), name + " rows",
                                  result.getDimSize(0), "result rows")))
        return failure();
    }
    if (failed(verifySameExtent(*this, type.getDimSize(type.getRank() - 1),
                                name + " channels", channels,
                                "result channels")))
      return failure();
    Type argType = body->getArgument(i + 1).getType();
    if (argType != type.getElementType())
      return emitOpError("epilogue argument #")
             << i + 1 << " must be " << name << "'s element type "
             << type.getElementType() << ", got " << argType;
  }
  if (body->empty() || !isa<YieldOp>(body->back()))
    return emitOpError("epilogue must end with spconv.yield");
  for (Operation &op : body->without_terminator()) {
    if (isEpilogueOp(&op))
      continue;
    if (!appliesElementwise(&op))
      return op.emitOpError("cannot be in an epilogue: only pure "
                            "element-wise ops and constants can");
    return op.emitOpError("in an epilogue must compute scalars, got ")
           << *llvm::find_if(op.getResultTypes(), [](Type type) {
                return !type.isIntOrIndexOrFloat();
              });
  }
  return success();
}

LogicalResult YieldOp::verify() {
  Type element = tensorType(getParentOp().getOutFeatures()).getElementType();
  if (getValue().getType() != element)
    return emitOpError("must yield the result's element type ")
           << element << ", got " << getValue().getType();
  return success();
}

/// `epilogue (operands : types)? region`, or nothing without an epilogue.
static ParseResult
parseEpilogue(OpAsmParser &parser,
              SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands,
              SmallVectorImpl<Type> &types, Region &body) {
  if (failed(parser.parseOptionalKeyword("epilogue")))
    return success();
  if (succeeded(parser.parseOptionalLParen())) {
    if (parser.parseOperandList(operands) || parser.parseColonTypeList(types) ||
        parser.parseRParen())
      return failure();
  }
  return parser.parseRegion(body, /*arguments=*/{},
                            /*enableNameShadowing=*/false);
}

static void printEpilogue(OpAsmPrinter &printer, Operation *,
                          OperandRange operands, TypeRange types,
                          Region &body) {
  if (body.empty())
    return;
  printer << " epilogue";
  if (!operands.empty()) {
    printer << "(" << operands << " : ";
    llvm::interleaveComma(types, printer);
    printer << ")";
  }
  printer << " ";
  printer.printRegion(body, /*printEntryBlockArgs=*/true,
                      /*printBlockTerminators=*/true);
}

/// Whether `offsets` (a 1-D tensor) has the static size `K + 1` of
/// `rulebook`'s kernel offsets.
static LogicalResult verifyPairOffsets(Operation *op, Value offsets,
                                       RulebookType rulebook) {
  int64_t expected = rulebook.getGeometry().getKernelVolume() + 1;
  int64_t actual = tensorType(offsets).getDimSize(0);
  if (ShapedType::isDynamic(actual))
    return op->emitOpError("offsets need the static size ")
           << expected << " (the rulebook's " << expected - 1
           << " kernel offsets and one past them), got a dynamic one";
  if (actual != expected)
    return op->emitOpError("offsets have ")
           << actual << " elements, but the rulebook's " << expected - 1
           << " kernel offsets need " << expected;
  return success();
}

LogicalResult RulebookPairsOp::verify() {
  return verifyPairOffsets(*this, getOffsets(), getRulebook().getType());
}

LogicalResult RulebookFromPairsOp::verify() {
  return verifyPairOffsets(*this, getOffsets(), getRulebook().getType());
}

LogicalResult RulebookPoolOp::verify() {
  GeometryAttr geometry = getRulebook().getType().getGeometry();
  if (geometry.getKind() != ConvKind::Regular)
    return emitOpError("pools over the rulebook of a regular geometry, got ")
           << stringifyConvKind(geometry.getKind());
  if (failed(verifySameExtent(*this, tensorType(getFeatures()).getDimSize(1),
                              "feature channels",
                              tensorType(getOutFeatures()).getDimSize(1),
                              "result channels")))
    return failure();
  return verifyElementTypes(*this, {getFeatures(), getOutFeatures()});
}

//===----------------------------------------------------------------------===//
// Runtime primitives
//===----------------------------------------------------------------------===//

LogicalResult LinearizeOp::verify() {
  if (failed(verifyCoords(*this, getCoords(), "coordinates")))
    return failure();
  return verifySameRows(*this, getCoords(), "coordinate rows", getKeys(),
                        "key count");
}

LogicalResult DelinearizeOp::verify() {
  if (failed(verifyCoords(*this, getCoords(), "result coordinates")))
    return failure();
  return verifySameRows(*this, getKeys(), "key count", getCoords(),
                        "result coordinate rows");
}

LogicalResult SortUniqueOp::verify() {
  if (failed(verifySameRows(*this, getUnique(), "unique key count", getFirst(),
                            "first-occurrence count")) ||
      failed(verifySameRows(*this, getKeys(), "key count", getInverse(),
                            "inverse map size")))
    return failure();
  // The number of keys is the size of the keys or of the inverse map, the
  // number of unique keys that of the unique keys or of their first
  // occurrences: whichever the types make static.
  auto staticOf = [](Value lhs, Value rhs) {
    int64_t size = tensorType(lhs).getDimSize(0);
    return ShapedType::isDynamic(size) ? tensorType(rhs).getDimSize(0) : size;
  };
  int64_t keys = staticOf(getKeys(), getInverse());
  int64_t unique = staticOf(getUnique(), getFirst());
  if (ShapedType::isDynamic(keys) || ShapedType::isDynamic(unique))
    return success();
  if (unique > keys)
    return emitOpError("cannot have more unique keys (")
           << unique << ") than keys (" << keys << ")";
  if (unique == 0 && keys > 0)
    return emitOpError("has at least one unique key for ")
           << keys << " keys, not 0";
  return success();
}

LogicalResult HashLookupOp::verify() {
  return verifySameRows(*this, getQueries(), "query count", getRows(),
                        "result size");
}

LogicalResult GatherRowsOp::verify() {
  if (failed(verifySameRows(*this, getRows(), "index count", getResult(),
                            "result rows")) ||
      failed(verifySameExtent(*this, tensorType(getFeatures()).getDimSize(1),
                              "feature channels",
                              tensorType(getResult()).getDimSize(1),
                              "result channels")))
    return failure();
  return verifyElementTypes(*this, {getFeatures(), getResult()});
}

LogicalResult ScatterAddRowsOp::verify() {
  if (failed(verifySameRows(*this, getRows(), "index count", getSource(),
                            "source rows")) ||
      failed(verifySameExtent(*this, tensorType(getSource()).getDimSize(1),
                              "source channels",
                              tensorType(getDest()).getDimSize(1),
                              "destination channels")))
    return failure();
  return verifyElementTypes(*this, {getSource(), getDest()});
}

//===----------------------------------------------------------------------===//
// Dense and segment primitives
//===----------------------------------------------------------------------===//

/// Checks the shared shape logic of unfold and fold: `dense` is
/// `N x C x S...`, `columns` is `N x (C * K) x L` with `L` the number of
/// window positions over `S`.
static LogicalResult verifyUnfoldShapes(Operation *op, GeometryAttr geometry,
                                        RankedTensorType dense,
                                        StringRef denseName,
                                        RankedTensorType columns,
                                        StringRef columnsName) {
  if (geometry.getKind() != ConvKind::Regular)
    return op->emitOpError("takes a regular geometry, got ")
           << stringifyConvKind(geometry.getKind());
  unsigned rank = geometry.getRank();
  if (dense.getRank() != rank + 2)
    return op->emitOpError()
           << "geometry has " << rank << " spatial dimensions, so the "
           << denseName << " must have rank " << rank + 2
           << " (N x C x spatial), got " << dense.getRank();
  if (columns.getRank() != 3)
    return op->emitOpError() << columnsName
                             << " must have rank 3 (N x C*K x L), got "
                             << columns.getRank();
  if (dense.getElementType() != columns.getElementType())
    return op->emitOpError("input and result must share one element type");
  if (failed(verifySameExtent(op, dense.getDimSize(0),
                              (denseName + " batch").str(),
                              columns.getDimSize(0),
                              (columnsName + " batch").str())))
    return failure();
  int64_t channels = dense.getDimSize(1);
  if (!ShapedType::isDynamic(channels)) {
    std::optional<int64_t> rows =
        llvm::checkedMul(channels, geometry.getKernelVolume());
    if (!rows)
      return op->emitOpError("channels x kernel volume overflows int64");
    if (failed(verifySameExtent(op, columns.getDimSize(1),
                                (columnsName + " rows").str(), *rows,
                                (denseName + " channels x kernel volume")
                                    .str())))
      return failure();
  }
  ArrayRef<int64_t> spatial = dense.getShape().drop_front(2);
  if (ShapedType::isDynamicShape(spatial)) {
    // Every static extent must hold the window even when others are
    // dynamic (the lowering checks those at run time).
    for (auto [dim, extent] : llvm::enumerate(spatial)) {
      if (ShapedType::isDynamic(extent))
        continue;
      int64_t padding = geometry.getPadding()[dim];
      std::optional<int64_t> span = llvm::checkedMul(
          geometry.getDilation()[dim], geometry.getKernel()[dim] - 1);
      std::optional<int64_t> padded = llvm::checkedMul<int64_t>(2, padding);
      if (padded)
        padded = llvm::checkedAdd(extent, *padded);
      if (span && padded && *padded <= *span)
        return op->emitOpError()
               << "the output grid is empty in dimension " << dim
               << ": input extent " << extent << " + 2 * padding " << padding
               << " is smaller than the dilated kernel extent " << *span + 1;
    }
    return success();
  }
  FailureOr<SmallVector<int64_t>> blocks =
      geometry.getOutputShape(spatial, [&] { return op->emitOpError(); });
  if (failed(blocks))
    return failure();
  FailureOr<int64_t> positions = checkedProduct(*blocks);
  if (failed(positions))
    return op->emitOpError("number of window positions overflows int64");
  return verifySameExtent(op, columns.getDimSize(2),
                          (columnsName + " columns").str(), *positions,
                          "window positions " + formatShape(*blocks));
}

LogicalResult UnfoldOp::verify() {
  return verifyUnfoldShapes(*this, getGeometry(), tensorType(getInput()),
                            "input", tensorType(getOutput()), "result");
}

LogicalResult FoldOp::verify() {
  RankedTensorType result = tensorType(getOutput());
  if (result.getRank() > 2 &&
      ShapedType::isDynamicShape(result.getShape().drop_front(2)))
    return emitOpError("needs a static spatial result shape (the output "
                       "size), got ")
           << result;
  RankedTensorType input = tensorType(getInput());
  if (failed(verifyUnfoldShapes(*this, getGeometry(), result, "result", input,
                                "input")))
    return failure();
  int64_t rows = input.getDimSize(1);
  int64_t volume = getGeometry().getKernelVolume();
  if (!ShapedType::isDynamic(rows) && rows % volume != 0)
    return emitOpError("input rows (")
           << rows << ") must be a multiple of the kernel volume " << volume;
  return success();
}

LogicalResult SegmentMaxOp::verify() {
  ArrayRef<int64_t> data = tensorType(getData()).getShape();
  ArrayRef<int64_t> index = tensorType(getIndex()).getShape();
  ArrayRef<int64_t> values = tensorType(getValues()).getShape();
  if (tensorType(getValues()).getElementType() !=
      tensorType(getData()).getElementType())
    return emitOpError("data and values must share one element type");
  if (tensorType(getPositions()).getShape() != values)
    return emitOpError("positions must have the shape of values, ")
           << formatShape(values);
  if (ShapedType::isDynamic(values[2]))
    return emitOpError("needs a static number of segments (the last result "
                       "dimension)");
  if (values[2] < 1)
    return emitOpError("needs at least one segment");
  if (failed(verifySameExtent(*this, data[0], "data batch", index[0],
                              "index batch")) ||
      failed(verifySameExtent(*this, data[2], "data points", index[1],
                              "index points")) ||
      failed(verifySameExtent(*this, data[0], "data batch", values[0],
                              "result batch")) ||
      failed(verifySameExtent(*this, data[1], "data channels", values[1],
                              "result channels")))
    return failure();
  return success();
}

LogicalResult SegmentMaxGradOp::verify() {
  ArrayRef<int64_t> grad = tensorType(getValuesGrad()).getShape();
  ArrayRef<int64_t> dest = tensorType(getDest()).getShape();
  if (tensorType(getValuesGrad()).getElementType() !=
      tensorType(getDest()).getElementType())
    return emitOpError("values gradient and destination must share one "
                       "element type");
  ArrayRef<int64_t> positions = tensorType(getPositions()).getShape();
  for (int64_t d = 0; d < 3; ++d)
    if (failed(verifySameExtent(*this, positions[d], "positions extent",
                                grad[d], "values gradient extent")))
      return failure();
  if (failed(verifySameExtent(*this, grad[0], "values gradient batch",
                              dest[0], "destination batch")) ||
      failed(verifySameExtent(*this, grad[1], "values gradient channels",
                              dest[1], "destination channels")))
    return failure();
  return success();
}

LogicalResult NullBufferOp::verify() {
  // Its lowering writes the strides into the descriptor.
  auto type = cast<MemRefType>(getBuffer().getType());
  if (!type.isStrided())
    return emitOpError("needs a strided layout, got ") << type;
  return success();
}
