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
  // The discardable attributes below pass facts between passes; the
  // dialect verifies each where it appears (verifyOperationAttribute), and
  // any other `spconv.` attribute is an error.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();

    /// A string naming the role of a parallel loop or launch
    /// (`count_pairs`, `conv_f32_16x32`): convert-spconv-to-scf writes it,
    /// spconv-parallel-loops-to-gpu names kernels after it.
    static constexpr ::llvm::StringLiteral kKernelAttrName = "spconv.kernel";
    /// A dictionary of a tiled kernel's tile sizes (positive integers
    /// `threads`, `rows`, `cols`, `depth`, `stages`, `max_registers`,
    /// `thread_rows`, `thread_cols`, `warp_rows`, `warp_cols`; `math`:
    /// `fma`, `mma-f16`, `mma-bf16` or `mma-tf32`) on its `gpu.launch` and
    /// outlined `gpu.func`; `max_registers` becomes the kernel's
    /// `nvvm.maxnreg`;
    /// `stages`, where more than 1, the depth of its cp.async pipeline.
    static constexpr ::llvm::StringLiteral kTileAttrName = "spconv.tile";
    /// On a kernel (`gpu.func`): the bytes of dynamic shared memory its
    /// launches pass (spconv-gpu-dynamic-shared-memory), a positive i64, for
    /// the static reports (ptxas -v counts static shared memory only).
    static constexpr ::llvm::StringLiteral kDynamicSharedMemoryAttrName =
        "spconv.dynamic_shared_memory";
    /// On a function: the symbol of the backward function that
    /// spconv-generate-backward defines for it.
    static constexpr ::llvm::StringLiteral kBackwardAttrName =
        "spconv.backward";
    /// On the module: spconv-profile's label (a string) of each entry id.
    static constexpr ::llvm::StringLiteral kProfileLabelsAttrName =
        "spconv.profile_labels";
    /// On a function's i64 argument (a unit attribute): the source line of
    /// the call, which the function's runtime errors report in place of a
    /// line of its own. spconv-outline-kernels gives each kernel one, so
    /// that one kernel serves layers on different lines.
    static constexpr ::llvm::StringLiteral kSourceLineAttrName =
        "spconv.source_line";
  }];
}

class SpConv_Op<string mnemonic, list<Trait> traits = []>
    : Op<SpConv_Dialect, mnemonic, traits>;

#endif // SPCONV_IR_SPCONVBASE_TD
