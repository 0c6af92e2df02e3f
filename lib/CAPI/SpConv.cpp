//===- SpConv.cpp - C API of spconv-mlir ----------------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "spconv-c/SpConv.h"

#include "SpConv/IR/SpConvAttrs.h"
#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::spconv;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(SpConv, spconv, SpConvDialect)

void spconvRegisterAllDialects(MlirDialectRegistry registry) {
  registerAllDialects(*unwrap(registry));
}

void spconvRegisterAllPasses(void) { registerAllPasses(); }

MlirLogicalResult spconvRunPipeline(MlirModule module, MlirStringRef pipeline) {
  registerAllPasses();
  ModuleOp op = unwrap(module);
  StringRef text = unwrap(pipeline).trim();
  // The anchored form names the module; its contents are the same list.
  constexpr StringRef anchor = "builtin.module(";
  if (text.starts_with(anchor) && text.ends_with(")"))
    text = text.drop_front(anchor.size()).drop_back();
  PassManager pm(op->getName());
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(parsePassPipeline(text, pm, errorStream))) {
    op.emitError() << "cannot parse the pass pipeline '" << unwrap(pipeline)
                   << "': " << errors;
    return wrap(failure());
  }
  return wrap(pm.run(op));
}

//===----------------------------------------------------------------------===//
// #spconv.geom
//===----------------------------------------------------------------------===//

/// `rank` values at `values`, or none (the default) when it is null.
static ArrayRef<int64_t> listOrDefault(const int64_t *values, intptr_t rank) {
  if (!values || rank <= 0)
    return {};
  return ArrayRef<int64_t>(values, rank);
}

MlirAttribute spconvGeometryAttrGet(MlirContext context, SpConvConvKind kind,
                                    intptr_t rank, const int64_t *kernel,
                                    const int64_t *stride,
                                    const int64_t *padding,
                                    const int64_t *dilation,
                                    const int64_t *outputPadding) {
  MLIRContext *ctx = unwrap(context);
  auto emitError = [ctx] { return mlir::emitError(UnknownLoc::get(ctx)); };
  std::optional<ConvKind> convKind = symbolizeConvKind(kind);
  if (!convKind) {
    emitError() << "unknown convolution kind " << static_cast<int>(kind);
    return wrap(Attribute());
  }
  if (!kernel && rank > 0) {
    emitError() << "a geometry needs its kernel";
    return wrap(Attribute());
  }
  return wrap(GeometryAttr::getChecked(
      emitError, ctx, *convKind, listOrDefault(kernel, rank),
      listOrDefault(stride, rank), listOrDefault(padding, rank),
      listOrDefault(dilation, rank), listOrDefault(outputPadding, rank)));
}

bool spconvAttributeIsAGeometry(MlirAttribute attr) {
  return isa<GeometryAttr>(unwrap(attr));
}

SpConvConvKind spconvGeometryAttrGetKind(MlirAttribute attr) {
  return static_cast<SpConvConvKind>(
      cast<GeometryAttr>(unwrap(attr)).getKind());
}

intptr_t spconvGeometryAttrGetRank(MlirAttribute attr) {
  return cast<GeometryAttr>(unwrap(attr)).getRank();
}

int64_t spconvGeometryAttrGetKernel(MlirAttribute attr, intptr_t dim) {
  return cast<GeometryAttr>(unwrap(attr)).getKernel()[dim];
}

int64_t spconvGeometryAttrGetStride(MlirAttribute attr, intptr_t dim) {
  return cast<GeometryAttr>(unwrap(attr)).getStride()[dim];
}

int64_t spconvGeometryAttrGetPadding(MlirAttribute attr, intptr_t dim) {
  return cast<GeometryAttr>(unwrap(attr)).getPadding()[dim];
}

int64_t spconvGeometryAttrGetDilation(MlirAttribute attr, intptr_t dim) {
  return cast<GeometryAttr>(unwrap(attr)).getDilation()[dim];
}

int64_t spconvGeometryAttrGetOutputPadding(MlirAttribute attr, intptr_t dim) {
  return cast<GeometryAttr>(unwrap(attr)).getOutputPadding()[dim];
}

//===----------------------------------------------------------------------===//
// #spconv.grid and coordinates
//===----------------------------------------------------------------------===//

MlirAttribute spconvGridAttrGet(MlirContext context, intptr_t rank,
                                const int64_t *shape, int64_t batch) {
  MLIRContext *ctx = unwrap(context);
  auto emitError = [ctx] { return mlir::emitError(UnknownLoc::get(ctx)); };
  if (!shape && rank > 0) {
    emitError() << "a grid needs its shape";
    return wrap(Attribute());
  }
  return wrap(
      GridAttr::getChecked(emitError, ctx, listOrDefault(shape, rank), batch));
}

bool spconvAttributeIsAGrid(MlirAttribute attr) {
  return isa<GridAttr>(unwrap(attr));
}

intptr_t spconvGridAttrGetRank(MlirAttribute attr) {
  return cast<GridAttr>(unwrap(attr)).getRank();
}

int64_t spconvGridAttrGetExtent(MlirAttribute attr, intptr_t dim) {
  return cast<GridAttr>(unwrap(attr)).getShape()[dim];
}

int64_t spconvGridAttrGetBatch(MlirAttribute attr) {
  return cast<GridAttr>(unwrap(attr)).getBatch();
}

MlirType spconvCoordsTypeGet(MlirAttribute grid) {
  auto attr = cast<GridAttr>(unwrap(grid));
  return wrap(RankedTensorType::get(
      {ShapedType::kDynamic, static_cast<int64_t>(attr.getRank()) + 1},
      IntegerType::get(attr.getContext(), 32), attr));
}
