/*===- spconv-capi.c - The C API, from C ----------------------------------===*\
|*                                                                            *|
|* Part of the spconv-mlir project.                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

// RUN: spconv-capi-test 2>&1 | FileCheck %s
//
// A C99 program that uses only libSpConvCAPI: registers the dialects, builds
// and inspects geometry and grid attributes, parses a network and lowers it
// with spconv-to-cpu, and checks that every error arrives as a diagnostic.
//
// main first prints the namespace of the dialect handle.
// CHECK: dialect: spconv

#include "spconv-c/SpConv.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <stdio.h>
#include <string.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  printf("diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  printf("\n");
  return mlirLogicalResultSuccess();
}

static void printAttribute(const char *label, MlirAttribute attr) {
  printf("%s: ", label);
  if (mlirAttributeIsNull(attr))
    printf("<null>");
  else
    mlirAttributePrint(attr, printToStdout, NULL);
  printf("\n");
}

// A strided conv: the CPU pipeline lowers it to LLVM.
static const char *kNetwork =
    "func.func @net(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>,\n"
    "               %f: tensor<?x16xf32>, %w: tensor<27x16x32xf32>)\n"
    "    -> tensor<?x32xf32> {\n"
    "  %a:2 = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2],\n"
    "                      padding = [1, 1, 1]> %c, %f, %w\n"
    "      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>,\n"
    "        tensor<?x16xf32>, tensor<27x16x32xf32>\n"
    "      -> tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>,\n"
    "         tensor<?x32xf32>\n"
    "  return %a#1 : tensor<?x32xf32>\n"
    "}\n";

static void testAttributes(MlirContext context) {
  // CHECK-LABEL: attributes
  printf("attributes\n");
  int64_t kernel[] = {3, 3, 3};
  MlirAttribute subm = spconvGeometryAttrGet(context, SpConvConvKindSubm, 3,
                                             kernel, NULL, NULL, NULL, NULL);
  // CHECK: subm: #spconv.geom<subm, kernel = [3, 3, 3]>
  printAttribute("subm", subm);
  // CHECK: is geometry 1, kind 0, rank 3, padding 1 1 1, stride 1
  printf("is geometry %d, kind %d, rank %d, padding %d %d %d, stride %d\n",
         spconvAttributeIsAGeometry(subm), (int)spconvGeometryAttrGetKind(subm),
         (int)spconvGeometryAttrGetRank(subm),
         (int)spconvGeometryAttrGetPadding(subm, 0),
         (int)spconvGeometryAttrGetPadding(subm, 1),
         (int)spconvGeometryAttrGetPadding(subm, 2),
         (int)spconvGeometryAttrGetStride(subm, 0));

  int64_t two[] = {2, 2, 2}, one[] = {1, 0, 1};
  MlirAttribute down = spconvGeometryAttrGet(context, SpConvConvKindRegular, 3,
                                             kernel, two, one, NULL, NULL);
  // CHECK: down: #spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2],
  // padding = [1, 0, 1]>
  printAttribute("down", down);

  // Invalid geometries: a null attribute and a diagnostic each.
  // CHECK: diagnostic: subm geometry needs stride 1, got 2 in dimension 0
  // CHECK: bad stride: <null>
  printAttribute("bad stride",
                 spconvGeometryAttrGet(context, SpConvConvKindSubm, 3, kernel,
                                       two, NULL, NULL, NULL));
  // CHECK: diagnostic: geometry must have 1 to 4 spatial dimensions, got 0
  // CHECK: no kernel: <null>
  printAttribute("no kernel",
                 spconvGeometryAttrGet(context, SpConvConvKindRegular, 0, NULL,
                                       NULL, NULL, NULL, NULL));
  // CHECK: diagnostic: unknown convolution kind 7
  // CHECK: bad kind: <null>
  printAttribute("bad kind",
                 spconvGeometryAttrGet(context, (SpConvConvKind)7, 3, kernel,
                                       NULL, NULL, NULL, NULL));

  int64_t shape[] = {41, 1600, 1408};
  MlirAttribute grid =
      spconvGridAttrGet(context, 3, shape, mlirShapedTypeGetDynamicSize());
  // CHECK: grid: #spconv.grid<[41, 1600, 1408]>
  printAttribute("grid", grid);
  // CHECK: is grid 1, rank 3, extent 1600, dynamic batch 1
  printf("is grid %d, rank %d, extent %d, dynamic batch %d\n",
         spconvAttributeIsAGrid(grid), (int)spconvGridAttrGetRank(grid),
         (int)spconvGridAttrGetExtent(grid, 1),
         mlirShapedTypeIsDynamicSize(spconvGridAttrGetBatch(grid)));
  // CHECK: coords: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
  printf("coords: ");
  mlirTypePrint(spconvCoordsTypeGet(grid), printToStdout, NULL);
  printf("\n");
  // CHECK: batched: #spconv.grid<[41, 1600, 1408], batch = 4>
  printAttribute("batched", spconvGridAttrGet(context, 3, shape, 4));
  // CHECK: diagnostic: grid batch size must be positive, got 0
  // CHECK: bad batch: <null>
  printAttribute("bad batch", spconvGridAttrGet(context, 3, shape, 0));
}

static int testPipelines(MlirContext context) {
  // CHECK-LABEL: pipelines
  printf("pipelines\n");
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kNetwork));
  if (mlirModuleIsNull(module))
    return 1;
  // CHECK: spconv-to-cpu: success
  MlirLogicalResult lowered = spconvRunPipeline(
      module, mlirStringRefCreateFromCString("spconv-to-cpu{openmp=false}"));
  printf("spconv-to-cpu: %s\n",
         mlirLogicalResultIsSuccess(lowered) ? "success" : "failure");
  // The module is now host code in the LLVM dialect.
  // CHECK: llvm.func @net(
  // CHECK-NOT: spconv.conv
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  mlirModuleDestroy(module);

  // CHECK: diagnostic: cannot parse the pass pipeline 'no-such-pipeline'
  // CHECK: unknown pipeline: failure
  module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kNetwork));
  lowered = spconvRunPipeline(
      module, mlirStringRefCreateFromCString("no-such-pipeline"));
  printf("unknown pipeline: %s\n",
         mlirLogicalResultIsSuccess(lowered) ? "success" : "failure");
  mlirModuleDestroy(module);

  // A pipeline that stops short of LLVM fails by naming what it left.
  // CHECK: diagnostic: 'spconv.conv' is left unlowered by spconv-to-cpu
  // CHECK: partial pipeline: failure
  module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kNetwork));
  lowered = spconvRunPipeline(
      module,
      mlirStringRefCreateFromCString(
          "builtin.module(spconv-check-lowered{pipeline=spconv-to-cpu})"));
  printf("partial pipeline: %s\n",
         mlirLogicalResultIsSuccess(lowered) ? "success" : "failure");
  mlirModuleDestroy(module);
  return 0;
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  spconvRegisterAllDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(context, printDiagnostic, NULL, NULL);

  MlirStringRef name =
      mlirDialectHandleGetNamespace(mlirGetDialectHandle__spconv__());
  printf("dialect: %.*s\n", (int)name.length, name.data);

  testAttributes(context);
  int status = testPipelines(context);
  mlirContextDestroy(context);
  return status;
}
