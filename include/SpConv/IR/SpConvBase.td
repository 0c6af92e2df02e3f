//===- SpConvBase.td - SpConv dialect definition -----------*- tablegen -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SPCONVBASE_TD
#define SPCONV_IR_SPCONVBASE_TD

include "mlir/IR/OpBase.td"

def SpConv_Dialect : Dialect {
  let name = "spconv";
  let cppNamespace = "::mlir::spconv";
  let summary = "Sparse convolution on voxel and point-cloud data";
  let description = [{
    The `spconv` dialect describes sparse convolution over the active sites of
    a voxel grid, the rulebooks (kernel maps) it is computed from, and the
    dense and segment primitives that point networks need next to it.

    A sparse tensor is a pair of values: coordinates, an `N x (1 + D)` `i32`
    tensor whose column 0 is the batch index and whose remaining columns are
    the `D` spatial indices (D = 1..4), and features, an `N x C` float tensor
    whose rows follow the coordinate rows. The coordinate tensor carries the
    spatial grid it lives in as its encoding, `#spconv.grid<[41, 1600, 1408]>`,
    so a layer fed a grid that disagrees with its producer is a type error.

    Every convolution-like op carries a `#spconv.geom` attribute (kind, kernel,
    stride, padding, dilation, output padding): the specialisation key from
    which the compiler derives output grids, weight shapes and, when lowering,
    one kernel per distinct geometry.

    The ops come in three levels:
    * high level (`spconv.conv`, `spconv.inverse_conv`, `spconv.pool`);
    * rulebook level (`spconv.build_rulebook`, `spconv.rulebook_conv`,
      `spconv.rulebook_pool`), where rulebooks are explicit values that
      passes can share between layers;
    * primitives the lowering maps onto the runtime (`spconv.linearize`,
      `spconv.delinearize`, `spconv.sort_unique`, `spconv.hash_build`,
      `spconv.hash_lookup`, `spconv.gather_rows`) and dense helpers (`spconv.unfold`,
      `spconv.fold`, `spconv.segment_max`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasCanonicalizer = 0;
  let dependentDialects = [
    "::mlir::tensor::TensorDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::arith::ArithDialect"
  ];
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class SpConv_Op<string mnemonic, list<Trait> traits = []>
    : Op<SpConv_Dialect, mnemonic, traits>;

#endif // SPCONV_IR_SPCONVBASE_TD
