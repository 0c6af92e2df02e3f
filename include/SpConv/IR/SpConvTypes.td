//===- SpConvTypes.td - SpConv types -----------------------*- tablegen -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SPCONVTYPES_TD
#define SPCONV_IR_SPCONVTYPES_TD

include "SpConv/IR/SpConvAttrs.td"

class SpConv_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<SpConv_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def SpConv_RulebookType : SpConv_Type<"Rulebook", "rulebook"> {
  let summary = "Pairs of a sparse convolution, grouped by kernel offset";
  let description = [{
    The rulebook (kernel map) of one geometry applied to one set of input
    sites: for every kernel offset the list of `(input row, output row)`
    pairs, the per-offset counts, and the output coordinates. It is compact:
    its size grows with the number of pairs, never with `K x N` padding or
    the dense grid volume. The type records the geometry and the input grid,
    from which the output grid follows. Its in-memory layout is chosen by
    the lowering.

    Example:

    ```mlir
    !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>
    ```
  }];
  let parameters = (ins
    "::mlir::spconv::GeometryAttr":$geometry,
    "::mlir::spconv::GridAttr":$inputGrid
  );
  let assemblyFormat = "`<` qualified($geometry) `,` qualified($inputGrid) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Grid of the rulebook's output sites.
    GridAttr getOutputGrid() const;
  }];
}

def SpConv_HashTableType : SpConv_Type<"HashTable", "hash_table"> {
  let summary = "Hash table from 64-bit site keys to row indices";
  let description = [{
    An open-addressing table built by `spconv.hash_build` that maps the linear
    key of a site to its row. Its layout is the runtime's documented contract
    (`runtime/include/spconv-rt/HashTableLayout.h`), so lowered kernels can
    probe it inline.

    Example:

    ```mlir
    %table = spconv.hash_build %keys : tensor<?xi64> -> !spconv.hash_table
    ```
  }];
}

#endif // SPCONV_IR_SPCONVTYPES_TD
