//===- SpConvOps.td - SpConv operations --------------------*- tablegen -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SPCONVOPS_TD
#define SPCONV_IR_SPCONVOPS_TD

include "SpConv/IR/SpConvTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints. They check element types and ranks only; the verifiers
// check grids, column counts and extents so that they can say which one is
// wrong.
//===----------------------------------------------------------------------===//

// The element types that every target computes in (f16 and bf16 accumulate
// in f32). Other floats (f80, f128, tf32, f8) and integers have no lowering:
// the CUDA back end cannot select f80 or f128, the sums are float sums.
def SpConv_Float : AnyTypeOf<[F16, BF16, F32, F64], "f16, bf16, f32 or f64">;

def SpConv_CoordsTensor : TensorRankOf<[I32], [2]>;
def SpConv_FeatureTensor : TensorRankOf<[SpConv_Float], [2]>;
def SpConv_WeightTensor : TensorRankOf<[SpConv_Float], [3]>;
def SpConv_BiasTensor : TensorRankOf<[SpConv_Float], [1]>;
def SpConv_KeyTensor : TensorRankOf<[I64], [1]>;
def SpConv_IndexTensor : TensorRankOf<[I32], [1]>;
// Channel groups of a conv (see "Grouped convolution" in docs/SpConv.md).
def SpConv_GroupsAttr : DefaultValuedAttr<I64Attr, "1">;
// An epilogue operand: per row and channel (rank 2) or per channel (rank 1).
// Whole bytes per element (a vector load of i1 would read bits).
def SpConv_EpilogueTensor
    : TensorRankOf<[I8, I16, I32, I64, F16, BF16, F32, F64], [1, 2]>;

//===----------------------------------------------------------------------===//
// High-level ops
//===----------------------------------------------------------------------===//

def SpConv_ConvOp : SpConv_Op<"conv", [Pure]> {
  let summary = "Sparse convolution: submanifold, regular or transposed";
  let description = [{
    Convolves the features of a sparse tensor with a `K x Cin x Cout` weight
    and returns the output sites and their features:

    `out[o] = sum over pairs (x -> o, j) of in[x] @ weight[j] (+ bias)`

    where the pairs follow from the geometry (see `#spconv.geom`):
    * `subm`: the output sites are the input sites, in the same order, and
      `x = o - kernel/2 * dilation + j * dilation`;
    * `regular`: output `o` is active iff an active input `x` has
      `x = o * stride - padding + j * dilation`; outputs are sorted by key;
    * `transposed`: input `x` scatters to `o = x * stride - padding + j * dilation`;
      outputs are sorted by key.

    With `groups = g` (default 1) the channels split into `g` groups: the
    weight is `K x Cin/g x Cout` and output channel `co` of group
    `q = co / (Cout/g)` reads only input channels `q * Cin/g ..< (q+1) * Cin/g`;
    `Cin` and `Cout` must be divisible by `g`. `g = Cin = Cout` is a
    depthwise conv (`K x 1 x C`).

    The result coordinates carry the output grid computed from the geometry;
    a result type with another grid is rejected. For `subm` the result
    coordinates have the type of the input coordinates (and canonicalize to
    them).

    Example:

    ```mlir
    %oc, %of = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>
        %coords, %feats, %w
        : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x32xf32>
        -> tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x32xf32>
    ```
  }];
  let arguments = (ins
    SpConv_GeometryAttr:$geometry,
    SpConv_CoordsTensor:$coords,
    SpConv_FeatureTensor:$features,
    SpConv_WeightTensor:$weight,
    Optional<SpConv_BiasTensor>:$bias,
    SpConv_GroupsAttr:$groups
  );
  let results = (outs
    SpConv_CoordsTensor:$out_coords,
    SpConv_FeatureTensor:$out_features
  );
  let assemblyFormat = [{
    $geometry (`groups` $groups^)? $coords `,` $features `,` $weight
    (`bias` $bias^)? attr-dict `:`
    type($coords) `,` type($features) `,` type($weight) (`,` type($bias)^)?
    `->` type($out_coords) `,` type($out_features)
  }];
  let builders = [
    // Infers both result types from the geometry, the coordinates' grid, the
    // features and the weight.
    OpBuilder<(ins "::mlir::spconv::GeometryAttr":$geometry,
                   "::mlir::Value":$coords, "::mlir::Value":$features,
                   "::mlir::Value":$weight,
                   CArg<"::mlir::Value", "{}">:$bias,
                   CArg<"int64_t", "1">:$groups)>
  ];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def SpConv_InverseConvOp : SpConv_Op<"inverse_conv", [Pure]> {
  let summary = "Inverse of a regular sparse convolution (decoder upsampling)";
  let description = [{
    The transpose of the rulebook of a regular convolution. `coords` are the
    input sites of that regular conv; `source_coords` are its output sites,
    the sites of `features`. The result has one row per row of `coords`, in
    their order:

    `out[x] = sum over the regular conv's pairs (x -> o, j) of in[o] @ weight[j] (+ bias)`

    The geometry has kind `inverse` and the window of the regular conv it
    inverts; `source_coords` must live on that conv's output grid. The rows
    of `source_coords` may come in any order; an output site of the forward
    conv that is missing from them contributes nothing (its features count
    as zero). `groups` splits the channels as for `spconv.conv`. Lowering
    reuses the forward conv's rulebook instead of
    building a new one, and skips the re-ordering when `source_coords` are
    that rulebook's own output coordinates.

    Example:

    ```mlir
    %up = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]>
        %fine, %coarse, %feats, %w
        : tensor<?x4xi32, #spconv.grid<[40, 40, 40]>>, tensor<?x4xi32, #spconv.grid<[20, 20, 20]>>,
          tensor<?x64xf32>, tensor<8x64x32xf32> -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins
    SpConv_GeometryAttr:$geometry,
    SpConv_CoordsTensor:$coords,
    SpConv_CoordsTensor:$source_coords,
    SpConv_FeatureTensor:$features,
    SpConv_WeightTensor:$weight,
    Optional<SpConv_BiasTensor>:$bias,
    SpConv_GroupsAttr:$groups
  );
  let results = (outs SpConv_FeatureTensor:$out_features);
  let assemblyFormat = [{
    $geometry (`groups` $groups^)? $coords `,` $source_coords `,` $features
    `,` $weight
    (`bias` $bias^)? attr-dict `:` type($coords) `,` type($source_coords) `,`
    type($features) `,` type($weight) (`,` type($bias)^)? `->`
    type($out_features)
  }];
  let builders = [
    // Infers the result type: a row per row of `coords`, the weight's output
    // channels.
    OpBuilder<(ins "::mlir::spconv::GeometryAttr":$geometry,
                   "::mlir::Value":$coords, "::mlir::Value":$source_coords,
                   "::mlir::Value":$features, "::mlir::Value":$weight,
                   CArg<"::mlir::Value", "{}">:$bias,
                   CArg<"int64_t", "1">:$groups)>
  ];
  let hasVerifier = 1;
}

def SpConv_PoolOp : SpConv_Op<"pool", [Pure]> {
  let summary = "Sparse max or average pooling";
  let description = [{
    Pools features over the pairs of a regular convolution's rulebook: an
    output site is active iff a regular conv with this geometry would make it
    active, and its features are the channel-wise maximum (`max`) or mean
    (`avg`) of the features of its contributing input sites. Every active
    output has at least one contributor, so both are always defined. Outputs
    are sorted by key.

    Example:

    ```mlir
    %oc, %of = spconv.pool max <regular, kernel = [2, 2, 2], stride = [2, 2, 2]>
        %coords, %feats
        : tensor<?x4xi32, #spconv.grid<[40, 40, 40]>>, tensor<?x32xf32>
        -> tensor<?x4xi32, #spconv.grid<[20, 20, 20]>>, tensor<?x32xf32>
    ```
  }];
  let arguments = (ins
    SpConv_PoolKind:$kind,
    SpConv_GeometryAttr:$geometry,
    SpConv_CoordsTensor:$coords,
    SpConv_FeatureTensor:$features
  );
  let results = (outs
    SpConv_CoordsTensor:$out_coords,
    SpConv_FeatureTensor:$out_features
  );
  let assemblyFormat = [{
    $kind $geometry $coords `,` $features attr-dict `:` type($coords) `,`
    type($features) `->` type($out_coords) `,` type($out_features)
  }];
  let builders = [
    // Infers both result types from the geometry, the coordinates' grid and
    // the features.
    OpBuilder<(ins "::mlir::spconv::PoolKind":$kind,
                   "::mlir::spconv::GeometryAttr":$geometry,
                   "::mlir::Value":$coords, "::mlir::Value":$features)>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Rulebook-level ops
//===----------------------------------------------------------------------===//

def SpConv_BuildRulebookOp : SpConv_Op<"build_rulebook", [Pure]> {
  let summary = "Builds the rulebook of a geometry over a set of input sites";
  let description = [{
    Computes the output sites and the `(input row, output row)` pairs of
    every kernel offset for the geometry recorded in the result type (kind
    `subm`, `regular` or `transposed`). The output coordinates are the input
    coordinates for `subm` and sorted by key otherwise.

    The op is pure: two builds of the same coordinates with the same geometry
    are one rulebook (CSE), which is how layers share it.

    Example:

    ```mlir
    %rb, %oc = spconv.build_rulebook %coords
        : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
        -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>,
           tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
    ```
  }];
  let arguments = (ins SpConv_CoordsTensor:$coords);
  let results = (outs
    SpConv_RulebookType:$rulebook,
    SpConv_CoordsTensor:$out_coords
  );
  let assemblyFormat = [{
    $coords attr-dict `:` type($coords) `->` qualified(type($rulebook)) `,`
    type($out_coords)
  }];
  let builders = [
    // Infers the result coordinates from the rulebook type (build that one
    // with `RulebookType::getChecked`, which rejects a geometry that does not
    // fit the grid).
    OpBuilder<(ins "::mlir::spconv::RulebookType":$rulebook,
                   "::mlir::Value":$coords)>
  ];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def SpConv_RulebookPairsOp : SpConv_Op<"rulebook_pairs", [Pure]> {
  let summary = "The pairs of a rulebook, as tensors";
  let description = [{
    A rulebook as data that can leave the function: the input row and the
    output row of every pair (`i32`), grouped by kernel offset, and the
    `K + 1` CSR offsets of the groups (`i64`): the pairs of offset `j` are
    `[offsets[j], offsets[j + 1])`, `offsets[K]` of them in all.
    `spconv.rulebook_from_pairs` makes a rulebook of them again, so that a
    caller (the PyTorch ops, which keep a rulebook per `indice_key` from the
    forward pass to the backward one) builds a rulebook once and uses it in
    several functions.

    Example:

    ```mlir
    %in, %out, %offsets = spconv.rulebook_pairs %rb
        : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>
        -> tensor<?xi32>, tensor<?xi32>, tensor<28xi64>
    ```
  }];
  let arguments = (ins SpConv_RulebookType:$rulebook);
  let results = (outs
    SpConv_IndexTensor:$in_rows,
    SpConv_IndexTensor:$out_rows,
    SpConv_KeyTensor:$offsets
  );
  let assemblyFormat = [{
    $rulebook attr-dict `:` qualified(type($rulebook)) `->` type($in_rows) `,`
    type($out_rows) `,` type($offsets)
  }];
  let hasVerifier = 1;
}

def SpConv_RulebookFromPairsOp : SpConv_Op<"rulebook_from_pairs", [Pure]> {
  let summary = "A rulebook of given pairs";
  let description = [{
    The rulebook of the geometry and grid in the result type whose pairs are
    `in_rows`, `out_rows` and `offsets` (as `spconv.rulebook_pairs` gives
    them) between `num_in` input sites and `num_out` output sites.

    The pairs come from outside the function, so they are checked at run
    time before anything reads them: `offsets` must start at 0, never
    decrease and end at most at the length of either row tensor, and every
    row of the first `offsets[K]` pairs must lie in `[0, num_in)` or
    `[0, num_out)`. The first violation is reported through the runtime's
    error (the call fails) and the rulebook is then empty, so that no op
    reads outside its buffers. Which pairs a rulebook holds is not checked
    further: pairs that are not a rulebook of the geometry give the sums
    they describe.

    CPU only for now: the GPU target rejects the op.

    Example:

    ```mlir
    %rb = spconv.rulebook_from_pairs %in, %out, %offsets, %n, %n
        : tensor<?xi32>, tensor<?xi32>, tensor<28xi64>
        -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>
    ```
  }];
  let arguments = (ins
    SpConv_IndexTensor:$in_rows,
    SpConv_IndexTensor:$out_rows,
    SpConv_KeyTensor:$offsets,
    Index:$num_in,
    Index:$num_out
  );
  let results = (outs SpConv_RulebookType:$rulebook);
  let assemblyFormat = [{
    $in_rows `,` $out_rows `,` $offsets `,` $num_in `,` $num_out attr-dict `:`
    type($in_rows) `,` type($out_rows) `,` type($offsets) `->`
    qualified(type($rulebook))
  }];
  let hasVerifier = 1;
}

def SpConv_RulebookConvOp : SpConv_Op<"rulebook_conv", [
    Pure, IsolatedFromAbove, AttrSizedOperandSegments]> {
  let summary = "Gather, GEMM per kernel offset and scatter-add over a rulebook";
  let description = [{
    The compute of a sparse convolution:

    `out[o] = sum over the rulebook's pairs (x -> o, j) of in[x] @ weight[j] (+ bias)`

    With `inverse`, the pairs are read backwards (`o -> x`): the input has
    one row per output site of the rulebook and the result one row per input
    site. Read backwards with the weights transposed (`K x Cout x Cin`), the
    rulebook of any conv gives that conv's gradient with respect to its
    input features; the rulebook of a `regular` conv read backwards is also
    `spconv.inverse_conv`. The order in which contributions are summed is
    fixed by the lowering, so results are deterministic.

    With `groups = g` the weight is `K x Cin/g x Cout` and output channel
    `co` reads only the input channels of its group, as for `spconv.conv`.
    The data gradient of a grouped conv is the grouped conv read backwards
    with each group's block transposed: `K x Cout/g x Cin`.

    An optional `epilogue` maps every element of that sum, rounded to the
    result's element type, to the element stored: bias-free BatchNorm scale
    and shift, activations, a residual add. Its block takes the element,
    then one scalar per epilogue operand: a row operand (`rows x Cout`, one
    row per result row) gives its element at the same row and column, a
    channel operand (`Cout`) its element at the same column. The block
    holds pure element-wise ops (arith, math) and constants only, and yields
    the stored element with `spconv.yield`; the op is isolated from above,
    so constants are defined inside. `spconv-fuse-epilogues` builds
    epilogues from the element-wise `linalg` ops that consume a conv, and
    the lowering applies them as each output row is finished.

    Example:

    ```mlir
    %y = spconv.rulebook_conv %rb, %feats, %w
        : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>,
          tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
    // relu(y * scale + shift + residual)
    %z = spconv.rulebook_conv %rb, %feats, %w
        : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>,
          tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
        epilogue(%residual, %scale, %shift : tensor<?x16xf32>, tensor<16xf32>, tensor<16xf32>) {
        ^bb0(%v: f32, %r: f32, %s: f32, %t: f32):
          %zero = arith.constant 0.0 : f32
          %scaled = arith.mulf %v, %s : f32
          %shifted = arith.addf %scaled, %t : f32
          %sum = arith.addf %shifted, %r : f32
          %relu = arith.maximumf %sum, %zero : f32
          spconv.yield %relu : f32
        }
    ```
  }];
  let arguments = (ins
    SpConv_RulebookType:$rulebook,
    SpConv_FeatureTensor:$features,
    SpConv_WeightTensor:$weight,
    Optional<SpConv_BiasTensor>:$bias,
    Variadic<SpConv_EpilogueTensor>:$epilogue_operands,
    UnitAttr:$inverse,
    SpConv_GroupsAttr:$groups
  );
  let results = (outs SpConv_FeatureTensor:$out_features);
  let regions = (region MaxSizedRegion<1>:$epilogue);
  let assemblyFormat = [{
    (`inverse` $inverse^)? (`groups` $groups^)? $rulebook `,` $features `,`
    $weight (`bias` $bias^)? attr-dict `:` qualified(type($rulebook)) `,`
    type($features) `,` type($weight) (`,` type($bias)^)? `->`
    type($out_features) ``
    custom<Epilogue>($epilogue_operands, type($epilogue_operands), $epilogue)
  }];
  let builders = [
    // Infers the result type from the rulebook, the features and the weight.
    OpBuilder<(ins "::mlir::Value":$rulebook, "::mlir::Value":$features,
                   "::mlir::Value":$weight,
                   CArg<"::mlir::Value", "{}">:$bias,
                   CArg<"bool", "false">:$inverse,
                   CArg<"int64_t", "1">:$groups)>
  ];
  let extraClassDeclaration = [{
    /// The epilogue's block, or null without one.
    ::mlir::Block *getEpilogueBlock() {
      return getEpilogue().empty() ? nullptr : &getEpilogue().front();
    }
    /// Whether `op` may be in an epilogue: a pure element-wise op or a
    /// constant, on scalars (what the verifier accepts).
    static bool isEpilogueOp(::mlir::Operation *op);
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def SpConv_YieldOp : SpConv_Op<"yield", [
    Pure, Terminator, HasParent<"RulebookConvOp">]> {
  let summary = "The element an epilogue stores";
  let description = [{
    Ends the epilogue of `spconv.rulebook_conv` with the element to store,
    of the result's element type.
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def SpConv_RulebookPoolOp : SpConv_Op<"rulebook_pool", [Pure]> {
  let summary = "Max or average pooling over a rulebook";
  let description = [{
    The compute of `spconv.pool`: for every output site of a `regular`
    rulebook, the channel-wise maximum or mean of the features of the input
    sites paired with it.

    Example:

    ```mlir
    %y = spconv.rulebook_pool avg %rb, %feats
        : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[40, 40, 40]>>,
          tensor<?x32xf32> -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins
    SpConv_PoolKind:$kind,
    SpConv_RulebookType:$rulebook,
    SpConv_FeatureTensor:$features
  );
  let results = (outs SpConv_FeatureTensor:$out_features);
  let assemblyFormat = [{
    $kind $rulebook `,` $features attr-dict `:` qualified(type($rulebook)) `,`
    type($features) `->` type($out_features)
  }];
  let builders = [
    // Infers the result type from the rulebook and the features.
    OpBuilder<(ins "::mlir::spconv::PoolKind":$kind,
                   "::mlir::Value":$rulebook, "::mlir::Value":$features)>
  ];
  let hasVerifier = 1;
}

def SpConv_RulebookPoolGradOp : SpConv_Op<"rulebook_pool_grad", [Pure]> {
  let summary = "Gradient of max or average pooling over a rulebook";
  let description = [{
    The gradient of `spconv.rulebook_pool` with respect to its features:
    one row per input site of the (`regular`) rulebook, given the pooled
    features' gradient `out_grad` (one row per output site).

    * `avg`: every input row receives, for each output it contributes to,
      that output's gradient divided by the output's number of contributors.
    * `max`: each output's gradient, channel by channel, goes to the input
      that attains the maximum; where several do, to the one of the lowest
      kernel offset (the first in the window's row-major order, as PyTorch's
      max pooling). The maximum is recomputed from `features`, the pooling's
      input, so the forward pass keeps no arg-max.

    Sums follow the rulebook's order: deterministic, no atomics.

    Example:

    ```mlir
    %dx = spconv.rulebook_pool_grad max %rb, %feats, %grad
        : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[40, 40, 40]>>,
          tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins
    SpConv_PoolKind:$kind,
    SpConv_RulebookType:$rulebook,
    SpConv_FeatureTensor:$features,
    SpConv_FeatureTensor:$out_grad
  );
  let results = (outs SpConv_FeatureTensor:$in_grad);
  let assemblyFormat = [{
    $kind $rulebook `,` $features `,` $out_grad attr-dict `:`
    qualified(type($rulebook)) `,` type($features) `,` type($out_grad) `->`
    type($in_grad)
  }];
  let builders = [
    // The result has the features' type.
    OpBuilder<(ins "::mlir::spconv::PoolKind":$kind, "::mlir::Value":$rulebook,
                   "::mlir::Value":$features, "::mlir::Value":$out_grad)>
  ];
  let hasVerifier = 1;
}

def SpConv_RulebookWeightGradOp : SpConv_Op<"rulebook_weight_grad", [Pure]> {
  let summary = "Weight gradient of a rulebook conv";
  let description = [{
    The gradient of `spconv.rulebook_conv` with respect to its weight: for
    every kernel offset `j`, the sum over the rulebook's pairs of `j` of the
    outer product of the input row and the output gradient row,

    `weight_grad[j] = sum over pairs (x -> o, j) of features[x]^T (x) out_grad[o]`

    a `K x Cin x Cout` tensor. `features` are the conv's input features (one
    row per input site of the rulebook) and `out_grad` the gradient of the
    loss with respect to its result (one row per output site). With
    `inverse` the pairs are read backwards, as `spconv.rulebook_conv
    inverse` reads them: `features` then has a row per output site and
    `out_grad` one per input site. The gradient of the bias is the column
    sum of `out_grad`, which needs no rulebook.

    With `groups = g` the result is the grouped weight's gradient,
    `K x Cin/g x Cout`: element `(j, ci, co)` sums `features[x, q * Cin/g + ci]
    * out_grad[o, co]` with `q = co / (Cout/g)` the group of `co`.

    The sum over pairs is a reduction, not a scatter: each element of the
    result is summed by one thread, pair by pair in the rulebook's order, so
    results are deterministic (no float atomics).

    Example:

    ```mlir
    %dw = spconv.rulebook_weight_grad %rb, %feats, %grad
        : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>,
          tensor<?x16xf32>, tensor<?x32xf32> -> tensor<27x16x32xf32>
    ```
  }];
  let arguments = (ins
    SpConv_RulebookType:$rulebook,
    SpConv_FeatureTensor:$features,
    SpConv_FeatureTensor:$out_grad,
    UnitAttr:$inverse,
    SpConv_GroupsAttr:$groups
  );
  let results = (outs SpConv_WeightTensor:$weight_grad);
  let assemblyFormat = [{
    (`inverse` $inverse^)? (`groups` $groups^)? $rulebook `,` $features `,`
    $out_grad attr-dict `:`
    qualified(type($rulebook)) `,` type($features) `,` type($out_grad) `->`
    type($weight_grad)
  }];
  let builders = [
    // Infers the result type from the rulebook's kernel and the channels.
    OpBuilder<(ins "::mlir::Value":$rulebook, "::mlir::Value":$features,
                   "::mlir::Value":$out_grad, CArg<"bool", "false">:$inverse,
                   CArg<"int64_t", "1">:$groups)>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Primitives that lower onto the runtime
//===----------------------------------------------------------------------===//

def SpConv_LinearizeOp : SpConv_Op<"linearize", [Pure]> {
  let summary = "Linear 64-bit keys of sites";
  let description = [{
    `key = ((b * S0 + x0) * S1 + x1) ...` for every row `(b, x0, x1, ...)` of
    the coordinates, with `S` the grid of their type. Keys of distinct sites
    are distinct and sort like the sites (batch, then row-major). A
    coordinate outside the grid, or a negative batch, is a run-time error.

    Example:

    ```mlir
    %keys = spconv.linearize %coords
        : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>> -> tensor<?xi64>
    ```
  }];
  let arguments = (ins SpConv_CoordsTensor:$coords);
  let results = (outs SpConv_KeyTensor:$keys);
  let assemblyFormat = "$coords attr-dict `:` type($coords) `->` type($keys)";
  let hasVerifier = 1;
}

def SpConv_DelinearizeOp : SpConv_Op<"delinearize", [Pure]> {
  let summary = "Sites of linear 64-bit keys";
  let description = [{
    The inverse of `spconv.linearize`: the coordinates, on the grid of the
    result type, of every key.

    Example:

    ```mlir
    %coords = spconv.delinearize %keys
        : tensor<?xi64> -> tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>
    ```
  }];
  let arguments = (ins SpConv_KeyTensor:$keys);
  let results = (outs SpConv_CoordsTensor:$coords);
  let assemblyFormat = "$keys attr-dict `:` type($keys) `->` type($coords)";
  let hasVerifier = 1;
}

def SpConv_SortUniqueOp : SpConv_Op<"sort_unique", [Pure]> {
  let summary = "Sorted unique keys, first occurrences and inverse map";
  let description = [{
    Returns the distinct keys in ascending order, for each of them the
    position of its first occurrence in `keys`, and for each position of
    `keys` the index of its key among the unique ones, so that
    `unique[inverse[i]] == keys[i]` and `keys[first[u]] == unique[u]`.

    Result sizes may be static. The verifier checks what the types make
    static: `unique` and `first` have one size, `inverse` the size of
    `keys`, and there are between 1 and as many unique keys as keys (none
    for no keys). A static number of unique keys that the data contradicts
    is a run-time error (and leaves the results zero).

    Example:

    ```mlir
    %unique, %first, %inverse = spconv.sort_unique %keys
        : tensor<?xi64> -> tensor<?xi64>, tensor<?xi32>, tensor<?xi32>
    ```
  }];
  let arguments = (ins SpConv_KeyTensor:$keys);
  let results = (outs
    SpConv_KeyTensor:$unique,
    SpConv_IndexTensor:$first,
    SpConv_IndexTensor:$inverse
  );
  let assemblyFormat = [{
    $keys attr-dict `:` type($keys) `->` type($unique) `,` type($first) `,`
    type($inverse)
  }];
  let hasVerifier = 1;
}

def SpConv_HashBuildOp : SpConv_Op<"hash_build", [Pure]> {
  let summary = "Hash table from keys to their positions";
  let description = [{
    Builds a table that maps `keys[i]` to `i`. The keys must be distinct: a
    duplicate (two input rows at the same site) is a run-time error that
    names both rows.

    Example:

    ```mlir
    %table = spconv.hash_build %keys : tensor<?xi64> -> !spconv.hash_table
    ```
  }];
  let arguments = (ins SpConv_KeyTensor:$keys);
  let results = (outs SpConv_HashTableType:$table);
  let assemblyFormat = "$keys attr-dict `:` type($keys) `->` qualified(type($table))";
}

def SpConv_HashLookupOp : SpConv_Op<"hash_lookup", [Pure]> {
  let summary = "Batch lookup in a hash table";
  let description = [{
    For each query key, the position it was built from, or -1 when the key
    is not in the table.

    Example:

    ```mlir
    %rows = spconv.hash_lookup %table, %queries
        : !spconv.hash_table, tensor<?xi64> -> tensor<?xi32>
    ```
  }];
  let arguments = (ins SpConv_HashTableType:$table, SpConv_KeyTensor:$queries);
  let results = (outs SpConv_IndexTensor:$rows);
  let assemblyFormat = [{
    $table `,` $queries attr-dict `:` qualified(type($table)) `,`
    type($queries) `->` type($rows)
  }];
  let hasVerifier = 1;
}

def SpConv_GatherRowsOp : SpConv_Op<"gather_rows", [Pure]> {
  let summary = "Rows of a feature tensor by index, zero for -1";
  let description = [{
    Row `i` of the result is row `rows[i]` of `features`, or a row of zeros
    when `rows[i]` is -1 (a site with no counterpart, as `spconv.hash_lookup`
    reports it). Any other index outside `[0, N)` is a run-time error.

    Example:

    ```mlir
    %aligned = spconv.gather_rows %feats, %rows
        : tensor<?x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins SpConv_FeatureTensor:$features, SpConv_IndexTensor:$rows);
  let results = (outs SpConv_FeatureTensor:$result);
  let assemblyFormat = [{
    $features `,` $rows attr-dict `:` type($features) `,` type($rows) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def SpConv_ScatterAddRowsOp : SpConv_Op<"scatter_add_rows", [
    Pure, AllTypesMatch<["dest", "result"]>]> {
  let summary = "Adds rows into a feature tensor by index, skipping -1";
  let description = [{
    The adjoint of `spconv.gather_rows`: the result is `dest` with row `i`
    of `source` added to row `rows[i]`, for every `i` in order, skipping
    `rows[i] == -1`. An index may repeat (its rows add up); any other index
    outside `[0, rows of dest)` is a run-time error and is skipped.

    With `dest` zero this is the gradient of `gather_rows` with respect to
    its features: `dL/dfeatures = scatter_add_rows(dL/dresult, rows)`.
    Rows are summed in index order by one thread per channel, so results
    are deterministic (no float atomics).

    Example:

    ```mlir
    %grad = spconv.scatter_add_rows %out_grad, %rows into %zeros
        : tensor<?x64xf32>, tensor<?xi32> into tensor<?x64xf32>
    ```
  }];
  let arguments = (ins SpConv_FeatureTensor:$source, SpConv_IndexTensor:$rows,
                       SpConv_FeatureTensor:$dest);
  let results = (outs SpConv_FeatureTensor:$result);
  let assemblyFormat = [{
    $source `,` $rows `into` $dest attr-dict `:` type($source) `,` type($rows)
    `into` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dense and segment primitives
//===----------------------------------------------------------------------===//

def SpConv_UnfoldOp : SpConv_Op<"unfold", [Pure]> {
  let summary = "Dense im2col over N spatial dimensions";
  let description = [{
    PyTorch's `nn.functional.unfold`, for 1 to 4 spatial dimensions: the
    input is `N x C x S0 x ... `, the result `N x (C * K) x L` where `K` is the
    kernel volume and `L` the number of window positions, the product of the
    output grid of a `regular` conv with this geometry. Row `c * K + j` of the
    result holds channel `c` at kernel offset `j` (row-major); positions
    outside the input (padding) read zero.

    The window must fit the padded input in every spatial dimension
    (`S + 2 * padding >= dilation * (kernel - 1) + 1`), so that `L >= 1`:
    like PyTorch, an unfold without window positions is an error, not an
    empty result. The verifier rejects it for a static extent; for a
    dynamic one it is a run-time error naming the dimension. Result sizes
    that are static while the input's are dynamic are checked at run time
    too (a mismatch is an error and leaves the result zero).

    Example:

    ```mlir
    %cols = spconv.unfold <regular, kernel = [3, 3], padding = [1, 1]> %x
        : tensor<2x4x8x8xf32> -> tensor<2x36x64xf32>
    ```
  }];
  let arguments = (ins SpConv_GeometryAttr:$geometry,
                       RankedTensorOf<[SpConv_Float]>:$input);
  let results = (outs RankedTensorOf<[SpConv_Float]>:$output);
  let assemblyFormat = [{
    $geometry $input attr-dict `:` type($input) `->` type($output)
  }];
  let hasVerifier = 1;
}

def SpConv_FoldOp : SpConv_Op<"fold", [Pure]> {
  let summary = "Dense col2im over N spatial dimensions";
  let description = [{
    PyTorch's `nn.functional.fold`, the adjoint of `spconv.unfold`: the input
    is `N x (C * K) x L`, the result `N x C x S0 x ...` with the static spatial
    shape of the result type; overlapping contributions are summed and padded
    positions dropped. `L` must equal the number of window positions of the
    result's spatial shape, which must be at least one in every dimension
    (the window must fit the padded output size); the rows must be the
    result channels times `K`. The verifier checks what the types make
    static; a dynamic `L`, row count or batch that disagrees is a run-time
    error (and leaves the result zero).

    Example:

    ```mlir
    %x = spconv.fold <regular, kernel = [3, 3], padding = [1, 1]> %cols
        : tensor<2x36x64xf32> -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins SpConv_GeometryAttr:$geometry,
                       RankedTensorOf<[SpConv_Float]>:$input);
  let results = (outs RankedTensorOf<[SpConv_Float]>:$output);
  let assemblyFormat = [{
    $geometry $input attr-dict `:` type($input) `->` type($output)
  }];
  let hasVerifier = 1;
}

def SpConv_SegmentMaxOp : SpConv_Op<"segment_max", [Pure]> {
  let summary = "Per-segment maximum and its position";
  let description = [{
    For `data` of shape `B x C x P` and `index` of shape `B x P` with values in
    `[0, M)`, computes for every batch `b`, channel `c` and segment `m` the
    maximum of `data[b, c, p]` over the points `p` with `index[b, p] == m`,
    and the smallest such `p` that attains it. `M` is the static size of the
    last result dimension.

    Empty segments are defined: their value is 0 and their position -1
    (never a sentinel that a real value could collide with). NaN compares
    greater than every number, so a segment containing NaN yields NaN and
    its first NaN's position. An index outside `[0, M)` is a run-time error.

    Example:

    ```mlir
    %max, %argmax = spconv.segment_max %data, %index
        : tensor<2x64x1024xf32>, tensor<2x1024xi32> -> tensor<2x64x128xf32>, tensor<2x64x128xi32>
    ```
  }];
  let arguments = (ins
    TensorRankOf<[SpConv_Float], [3]>:$data,
    TensorRankOf<[I32, I64], [2]>:$index
  );
  let results = (outs
    TensorRankOf<[SpConv_Float], [3]>:$values,
    TensorRankOf<[I32], [3]>:$positions
  );
  let assemblyFormat = [{
    $data `,` $index attr-dict `:` type($data) `,` type($index) `->`
    type($values) `,` type($positions)
  }];
  let hasVerifier = 1;
}

def SpConv_SegmentMaxGradOp : SpConv_Op<"segment_max_grad", [
    Pure, AllTypesMatch<["dest", "result"]>]> {
  let summary = "Gradient of segment_max: each segment's gradient to its arg-max";
  let description = [{
    For `values_grad` and `positions` of shape `B x C x M` (the gradient of
    `spconv.segment_max`'s values and its positions) and `dest` of shape
    `B x C x P`, the result is `dest` with `values_grad[b, c, m]` added at
    `[b, c, positions[b, c, m]]` for every segment whose position is not -1
    (empty segments pass nothing back). With `dest` zero this is the
    gradient of `segment_max` with respect to its data: the maximum's
    gradient goes to the point that attains it (the first one, as
    `segment_max` reports it). A position outside `[-1, P)` is a run-time
    error and is skipped. Each `(b, c)` is summed by one thread in segment
    order: deterministic.

    Example:

    ```mlir
    %grad = spconv.segment_max_grad %values_grad, %positions into %zeros
        : tensor<2x64x128xf32>, tensor<2x64x128xi32> into tensor<2x64x1024xf32>
    ```
  }];
  let arguments = (ins
    TensorRankOf<[SpConv_Float], [3]>:$values_grad,
    TensorRankOf<[I32], [3]>:$positions,
    TensorRankOf<[SpConv_Float], [3]>:$dest
  );
  let results = (outs TensorRankOf<[SpConv_Float], [3]>:$result);
  let assemblyFormat = [{
    $values_grad `,` $positions `into` $dest attr-dict `:` type($values_grad)
    `,` type($positions) `into` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

def SpConv_NullBufferOp : SpConv_Op<"null_buffer"> {
  let summary = "A buffer that holds nothing: what a skipped allocation yields";
  let description = [{
    The result stands for a buffer that was never allocated: both of its
    pointers are null, its offset 0, its dynamic sizes 0 (static sizes and
    strides as its type says). `spconv-guard-allocations` yields one for
    every buffer of the code it skips after an allocation failed, so that
    the skipped code's results have values; nothing reads or writes them.
    It counts as an allocation (freeing a null pointer does nothing), so
    the deallocation pipeline owns it like any other buffer and never
    copies it. `convert-spconv-null-buffers-to-llvm` lowers it.

    Example:

    ```mlir
    %none = spconv.null_buffer : memref<?x27xi32>
    ```
  }];
  let results = (outs Res<AnyMemRef, "", [MemAlloc]>:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

#endif // SPCONV_IR_SPCONVOPS_TD
