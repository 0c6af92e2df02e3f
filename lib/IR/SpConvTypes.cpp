//===- SpConvTypes.cpp - SpConv types -------------------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvTypes.h"
#include "SpConv/IR/SpConvDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::spconv;

#define GET_TYPEDEF_CLASSES
#include "SpConv/IR/SpConvOpsTypes.cpp.inc"

void SpConvDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "SpConv/IR/SpConvOpsTypes.cpp.inc"
      >();
}

LogicalResult
RulebookType::verify(function_ref<InFlightDiagnostic()> emitError,
                     GeometryAttr geometry, GridAttr inputGrid) {
  if (geometry.getKind() == ConvKind::Inverse)
    return emitError() << "a rulebook is built for a subm, regular or "
                          "transposed geometry; an inverse conv reads the "
                          "rulebook of its forward conv";
  FailureOr<SmallVector<int64_t>> outputShape =
      geometry.getOutputShape(inputGrid.getShape(), emitError);
  if (failed(outputShape))
    return failure();
  return GridAttr::verify(emitError, *outputShape, inputGrid.getBatch());
}

GridAttr RulebookType::getOutputGrid() const {
  // Verified to exist when the type was built.
  return getInputGrid().withShape(
      *getGeometry().getOutputShape(getInputGrid().getShape()));
}
