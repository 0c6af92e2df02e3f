//===- SpConvAttrs.td - SpConv attributes ------------------*- tablegen -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SPCONVATTRS_TD
#define SPCONV_IR_SPCONVATTRS_TD

include "SpConv/IR/SpConvBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def SpConv_ConvKind : I32EnumAttr<"ConvKind", "kind of sparse convolution", [
    I32EnumAttrCase<"Subm", 0, "subm">,
    I32EnumAttrCase<"Regular", 1, "regular">,
    I32EnumAttrCase<"Transposed", 2, "transposed">,
    I32EnumAttrCase<"Inverse", 3, "inverse">
  ]> {
  let cppNamespace = "::mlir::spconv";
  let genSpecializedAttr = 0;
}

def SpConv_PoolKind : I32EnumAttr<"PoolKind", "reduction of a sparse pooling", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"Avg", 1, "avg">
  ]> {
  let cppNamespace = "::mlir::spconv";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class SpConv_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<SpConv_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def SpConv_GeometryAttr : SpConv_Attr<"Geometry", "geom"> {
  let summary = "Geometry of a sparse convolution: the specialisation key";
  let description = [{
    The kind of convolution and its per-dimension window parameters, for
    1 to 4 spatial dimensions. Only `kernel` is required; the others default
    to `stride = 1`, `dilation = 1`, `output_padding = 0` and `padding = 0`,
    except for `subm`, whose padding is implied as `kernel / 2 * dilation`
    (the window is centred on the site) and cannot be set otherwise.
    Fields equal to their default are not printed.

    | kind | output grid per dimension |
    |------|---------------------------|
    | `subm` | `O = I` (output sites are the input sites) |
    | `regular` | `O = floor((I + 2p - d(k-1) - 1) / s) + 1` |
    | `transposed` | `O = (I - 1)s - 2p + d(k-1) + op + 1` |
    | `inverse` | `O` = the input grid of the regular conv with these parameters |

    Constraints: all lists have the rank of `kernel`; kernel, stride and
    dilation are positive, padding and output padding nonnegative; `subm`
    has stride 1; `output_padding` is only allowed for `transposed`, where
    each entry must be smaller than the stride or the dilation of its
    dimension (PyTorch's rule).

    The kernel offset index is row-major over the kernel indices, so a
    weight for this geometry is `K x Cin x Cout` with `K = prod(kernel)`.

    In C++, `GeometryAttr::get(context, kind, kernel)` and its `getChecked`
    twin take the other lists as optional arguments and fill the ones left
    empty with these defaults; `getChecked` reports a geometry that is still
    invalid through its `emitError` callback and returns null.

    Example:

    ```mlir
    #spconv.geom<subm, kernel = [3, 3, 3]>
    #spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>
    #spconv.geom<transposed, kernel = [2, 2], stride = [2, 2], output_padding = [1, 0]>
    ```
  }];
  let parameters = (ins
    "::mlir::spconv::ConvKind":$kind,
    ArrayRefParameter<"int64_t", "kernel size per dimension">:$kernel,
    ArrayRefParameter<"int64_t", "stride per dimension">:$stride,
    ArrayRefParameter<"int64_t", "padding per dimension">:$padding,
    ArrayRefParameter<"int64_t", "dilation per dimension">:$dilation,
    ArrayRefParameter<"int64_t", "output padding per dimension">:$outputPadding
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::mlir::spconv::ConvKind":$kind,
                     "::llvm::ArrayRef<int64_t>":$kernel,
                     CArg<"::llvm::ArrayRef<int64_t>", "{}">:$stride,
                     CArg<"::llvm::ArrayRef<int64_t>", "{}">:$padding,
                     CArg<"::llvm::ArrayRef<int64_t>", "{}">:$dilation,
                     CArg<"::llvm::ArrayRef<int64_t>", "{}">:$outputPadding), [{
      // A context that has the dialect registered but not loaded cannot
      // hold its attributes yet.
      $_ctxt->getOrLoadDialect<::mlir::spconv::SpConvDialect>();
      // Empty lists take their defaults, as omitted fields do in the textual
      // form; `getChecked` then reports what is still wrong.
      size_t rank = kernel.size();
      ::llvm::SmallVector<int64_t> ones(rank, 1), zeros(rank, 0);
      auto orDefault = [](::llvm::ArrayRef<int64_t> given,
                          ::llvm::ArrayRef<int64_t> fallback) {
        return given.empty() ? fallback : given;
      };
      ::llvm::ArrayRef<int64_t> dilationValue = orDefault(dilation, ones);
      ::llvm::SmallVector<int64_t> centred =
          getDefaultPadding(kind, kernel, dilationValue);
      return $_get($_ctxt, kind, kernel, orDefault(stride, ones),
                   orDefault(padding, centred), dilationValue,
                   orDefault(outputPadding, zeros));
    }]>
  ];
  let skipDefaultBuilders = 1;
  let extraClassDeclaration = [{
    /// Number of spatial dimensions.
    unsigned getRank() const { return getKernel().size(); }
    /// Number of kernel offsets, `prod(kernel)`.
    int64_t getKernelVolume() const;
    /// True if every kernel extent is 1 (a single, centre offset).
    bool isPointwise() const;
    /// Output grid for an input grid; reports through `emitError` (when
    /// given) and fails if a dimension would be empty or overflow int64.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    getOutputShape(::llvm::ArrayRef<int64_t> inputShape,
                   ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError
                   = {}) const;
    /// The same window with another kind (e.g. the regular conv an inverse
    /// conv inverts).
    GeometryAttr withKind(::mlir::spconv::ConvKind kind) const;
    /// Default padding of a kind for this kernel and dilation.
    static ::llvm::SmallVector<int64_t>
    getDefaultPadding(::mlir::spconv::ConvKind kind,
                      ::llvm::ArrayRef<int64_t> kernel,
                      ::llvm::ArrayRef<int64_t> dilation);
  }];
}

def SpConv_GridAttr : SpConv_Attr<"Grid", "grid"> {
  let summary = "Spatial grid of a coordinates tensor";
  let description = [{
    The encoding of a coordinates tensor: the spatial extent `[S0, ..., S(D-1)]`
    of the voxel grid (1 to 4 dimensions, every extent positive) and,
    optionally, the batch size `B`. A site's linear key is
    `((b * S0 + x0) * S1 + x1) ...` in 64 bits, so `B * prod(S)` (or
    `prod(S)` when the batch size is not given) must fit in int64.

    Example:

    ```mlir
    tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
    tensor<?x4xi32, #spconv.grid<[41, 1600, 1408], batch = 4>>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "spatial extent per dimension">:$shape,
    DefaultValuedParameter<"int64_t", "::mlir::ShapedType::kDynamic",
                           "batch size, or dynamic">:$batch
  );
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape,
                     CArg<"int64_t", "::mlir::ShapedType::kDynamic">:$batch), [{
      $_ctxt->getOrLoadDialect<::mlir::spconv::SpConvDialect>();
      return $_get($_ctxt, shape, batch);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getRank() const { return getShape().size(); }
    bool hasStaticBatch() const {
      return getBatch() != ::mlir::ShapedType::kDynamic;
    }
    /// The same batch size on another spatial shape.
    GridAttr withShape(::llvm::ArrayRef<int64_t> shape) const {
      return get(getContext(), shape, getBatch());
    }
  }];
}

#endif // SPCONV_IR_SPCONVATTRS_TD
