/*===-- spconv-c/SpConv.h - C API of spconv-mlir ------------------*- C -*-===*\
|*                                                                            *|
|* Part of the spconv-mlir project.                                           *|
|*                                                                            *|
|* The C API, in the style of upstream's mlir-c: the dialect handle, one call *|
|* that registers everything spconv-opt has, one that runs a pipeline on a    *|
|* module, and builders and accessors of the geometry and grid attributes.   *|
|* Errors go to the context's diagnostic handlers                            *|
|* (mlirContextAttachDiagnosticHandler), never to stderr or an abort.        *|
|*                                                                            *|
|* libSpConvCAPI.so exports these and MLIR's own core C API (mlir-c/IR.h,     *|
|* mlir-c/Pass.h, mlir-c/BuiltinAttributes.h, ...), on top of libMLIR.so.     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SPCONV_C_SPCONV_H
#define SPCONV_C_SPCONV_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*/
/* Registration                                                               */
/*===----------------------------------------------------------------------===*/

/* mlirGetDialectHandle__spconv__(): the spconv dialect alone. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(SpConv, spconv);

/* Inserts into `registry` what spconv-opt loads: the spconv dialect, every
   upstream dialect and extension the pipelines use, and the translations to
   LLVM IR (GPU kernels included). */
MLIR_CAPI_EXPORTED void spconvRegisterAllDialects(MlirDialectRegistry registry);

/* Registers the spconv passes, the pipelines spconv-to-cpu, spconv-to-cuda
   and spconv-to-gpu-emulator, and every upstream pass, so that textual
   pipelines (mlirParsePassPipeline, spconvRunPipeline) can name them. Once
   per process, however often it is called. */
MLIR_CAPI_EXPORTED void spconvRegisterAllPasses(void);

/* Runs a textual pass pipeline on `module`, for example "spconv-to-cpu",
   "spconv-to-cpu{openmp=false}" or "builtin.module(spconv-to-cuda{chip=sm_90})":
   a list of passes nested in builtin.module, with or without that anchor.
   Registers the passes first. A pipeline that does not parse, a pass that
   fails and a pipeline that leaves ops it cannot translate to LLVM IR all
   fail, with diagnostics on the module's context. */
MLIR_CAPI_EXPORTED MlirLogicalResult spconvRunPipeline(MlirModule module,
                                                       MlirStringRef pipeline);

/*===----------------------------------------------------------------------===*/
/* #spconv.geom                                                               */
/*===----------------------------------------------------------------------===*/

typedef enum SpConvConvKind {
  SpConvConvKindSubm = 0,
  SpConvConvKindRegular = 1,
  SpConvConvKindTransposed = 2,
  SpConvConvKindInverse = 3,
} SpConvConvKind;

/* A geometry of `rank` spatial dimensions. Each list holds `rank` values;
   NULL takes the default of the textual form (stride and dilation 1,
   output_padding 0, padding 0 or, for subm, kernel / 2 * dilation). An
   invalid geometry gives a null attribute (mlirAttributeIsNull) and a
   diagnostic saying why. */
MLIR_CAPI_EXPORTED MlirAttribute spconvGeometryAttrGet(
    MlirContext context, SpConvConvKind kind, intptr_t rank,
    const int64_t *kernel, const int64_t *stride, const int64_t *padding,
    const int64_t *dilation, const int64_t *outputPadding);

MLIR_CAPI_EXPORTED bool spconvAttributeIsAGeometry(MlirAttribute attr);
MLIR_CAPI_EXPORTED SpConvConvKind spconvGeometryAttrGetKind(MlirAttribute attr);
MLIR_CAPI_EXPORTED intptr_t spconvGeometryAttrGetRank(MlirAttribute attr);
/* Entry `dim` (0 <= dim < rank) of a list. */
MLIR_CAPI_EXPORTED int64_t spconvGeometryAttrGetKernel(MlirAttribute attr,
                                                       intptr_t dim);
MLIR_CAPI_EXPORTED int64_t spconvGeometryAttrGetStride(MlirAttribute attr,
                                                       intptr_t dim);
MLIR_CAPI_EXPORTED int64_t spconvGeometryAttrGetPadding(MlirAttribute attr,
                                                        intptr_t dim);
MLIR_CAPI_EXPORTED int64_t spconvGeometryAttrGetDilation(MlirAttribute attr,
                                                         intptr_t dim);
MLIR_CAPI_EXPORTED int64_t
spconvGeometryAttrGetOutputPadding(MlirAttribute attr, intptr_t dim);

/*===----------------------------------------------------------------------===*/
/* #spconv.grid and coordinates                                               */
/*===----------------------------------------------------------------------===*/

/* A grid of `rank` spatial extents and a batch size; pass
   mlirShapedTypeGetDynamicSize() for a batch size known only at run time. An
   invalid grid gives a null attribute and a diagnostic. */
MLIR_CAPI_EXPORTED MlirAttribute spconvGridAttrGet(MlirContext context,
                                                   intptr_t rank,
                                                   const int64_t *shape,
                                                   int64_t batch);

MLIR_CAPI_EXPORTED bool spconvAttributeIsAGrid(MlirAttribute attr);
MLIR_CAPI_EXPORTED intptr_t spconvGridAttrGetRank(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t spconvGridAttrGetExtent(MlirAttribute attr,
                                                   intptr_t dim);
/* The batch size, or mlirShapedTypeGetDynamicSize() if not static. */
MLIR_CAPI_EXPORTED int64_t spconvGridAttrGetBatch(MlirAttribute attr);

/* The type of coordinates on `grid`: tensor<?x(1 + rank)xi32, grid>, one row
   (batch, then one column per spatial dimension) per site. */
MLIR_CAPI_EXPORTED MlirType spconvCoordsTypeGet(MlirAttribute grid);

#ifdef __cplusplus
}
#endif

#endif /* SPCONV_C_SPCONV_H */
