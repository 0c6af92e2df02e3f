/* consumer-capi: parses a network, checks a geometry and lowers it with
 * spconv-to-cpu through the C API alone. */
#include "spconv-c/SpConv.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <stdio.h>

static const char *kNetwork =
    "func.func @net(%c: tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>,"
    "               %f: tensor<?x2xf32>, %w: tensor<27x2x3xf32>)"
    "    -> tensor<?x3xf32> {"
    "  %o:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w"
    "      : tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x2xf32>,"
    "        tensor<27x2x3xf32>"
    "      -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x3xf32>"
    "  return %o#1 : tensor<?x3xf32>"
    "}";

static void print(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stderr);
}

static MlirLogicalResult report(MlirDiagnostic diagnostic, void *userData) {
  (void)userData;
  mlirDiagnosticPrint(diagnostic, print, NULL);
  fputc('\n', stderr);
  return mlirLogicalResultSuccess();
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  spconvRegisterAllDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(context, report, NULL, NULL);

  int64_t kernel[] = {3, 3, 3};
  MlirAttribute subm = spconvGeometryAttrGet(
      context, SpConvConvKindSubm, 3, kernel, NULL, NULL, NULL, NULL);
  int status = mlirAttributeIsNull(subm) ||
               spconvGeometryAttrGetPadding(subm, 0) != 1;

  MlirModule module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(kNetwork));
  if (mlirModuleIsNull(module) ||
      mlirLogicalResultIsFailure(spconvRunPipeline(
          module, mlirStringRefCreateFromCString("spconv-to-cpu"))))
    status = 1;
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDestroy(context);
  printf("consumer-capi: %s\n", status ? "FAILED" : "ok");
  return status;
}
