// consumer-opt: an opt tool with spconv in it. One call registers the
// dialects, passes, pipelines and translations spconv-opt has.
#include "SpConv/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::spconv::registerEverything(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "consumer-opt\n", registry));
}
