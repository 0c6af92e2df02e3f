//===- SpConvAttrs.cpp - SpConv attributes --------------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvAttrs.h"
#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/IR/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::spconv;

#include "SpConv/IR/SpConvEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "SpConv/IR/SpConvAttrs.cpp.inc"

void SpConvDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "SpConv/IR/SpConvAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

GridAttr mlir::spconv::getGrid(Type coordsType) {
  auto tensorType = dyn_cast<RankedTensorType>(coordsType);
  if (!tensorType)
    return {};
  return dyn_cast_or_null<GridAttr>(tensorType.getEncoding());
}

FailureOr<int64_t> mlir::spconv::checkedProduct(ArrayRef<int64_t> sizes) {
  int64_t product = 1;
  for (int64_t size : sizes) {
    std::optional<int64_t> next = llvm::checkedMul(product, size);
    if (!next)
      return failure();
    product = *next;
  }
  return product;
}

/// Parses `[i, j, ...]`.
static ParseResult parseIntList(AsmParser &parser,
                                SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    return parser.parseInteger(values.emplace_back());
  });
}

static void printIntList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

//===----------------------------------------------------------------------===//
// GeometryAttr
//===----------------------------------------------------------------------===//

SmallVector<int64_t> GeometryAttr::getDefaultPadding(ConvKind kind,
                                                     ArrayRef<int64_t> kernel,
                                                     ArrayRef<int64_t> dilation) {
  SmallVector<int64_t> padding(kernel.size(), 0);
  if (kind != ConvKind::Subm || dilation.size() != kernel.size())
    return padding;
  // The submanifold window is centred on the site. Out-of-range values are
  // left to the verifier, which rejects them before this matters.
  for (auto [pad, k, d] : llvm::zip_equal(padding, kernel, dilation))
    pad = llvm::checkedMul(k / 2, d).value_or(-1);
  return padding;
}

Attribute GeometryAttr::parse(AsmParser &parser, Type) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<ConvKind> kind = symbolizeConvKind(kindName);
  if (!kind) {
    parser.emitError(loc, "unknown convolution kind '")
        << kindName << "'; expected subm, regular, transposed or inverse";
    return {};
  }

  std::optional<SmallVector<int64_t>> kernel, stride, padding, dilation,
      outputPadding;
  while (succeeded(parser.parseOptionalComma())) {
    llvm::SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    std::optional<SmallVector<int64_t>> *field =
        llvm::StringSwitch<std::optional<SmallVector<int64_t>> *>(key)
            .Case("kernel", &kernel)
            .Case("stride", &stride)
            .Case("padding", &padding)
            .Case("dilation", &dilation)
            .Case("output_padding", &outputPadding)
            .Default(nullptr);
    if (!field) {
      parser.emitError(keyLoc, "unknown geometry field '")
          << key
          << "'; expected kernel, stride, padding, dilation or output_padding";
      return {};
    }
    if (*field) {
      parser.emitError(keyLoc, "geometry field '") << key << "' given twice";
      return {};
    }
    if (parseIntList(parser, field->emplace()))
      return {};
  }
  if (parser.parseGreater())
    return {};
  if (!kernel) {
    parser.emitError(loc, "geometry needs a 'kernel' field");
    return {};
  }

  size_t rank = kernel->size();
  SmallVector<int64_t> ones(rank, 1), zeros(rank, 0);
  SmallVector<int64_t> dilationValue = dilation.value_or(ones);
  SmallVector<int64_t> paddingValue = padding.value_or(
      getDefaultPadding(*kind, *kernel, dilationValue));
  return GeometryAttr::getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(), *kind,
      *kernel, stride.value_or(ones), paddingValue, dilationValue,
      outputPadding.value_or(zeros));
}

void GeometryAttr::print(AsmPrinter &printer) const {
  auto isAll = [](ArrayRef<int64_t> values, int64_t v) {
    return llvm::all_of(values, [&](int64_t x) { return x == v; });
  };
  auto printField = [&](StringRef name, ArrayRef<int64_t> values) {
    printer << ", " << name << " = ";
    printIntList(printer, values);
  };
  printer << '<' << stringifyConvKind(getKind());
  printField("kernel", getKernel());
  if (!isAll(getStride(), 1))
    printField("stride", getStride());
  if (getPadding() !=
      ArrayRef(getDefaultPadding(getKind(), getKernel(), getDilation())))
    printField("padding", getPadding());
  if (!isAll(getDilation(), 1))
    printField("dilation", getDilation());
  if (!isAll(getOutputPadding(), 0))
    printField("output_padding", getOutputPadding());
  printer << '>';
}

LogicalResult
GeometryAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     ConvKind kind, ArrayRef<int64_t> kernel,
                     ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                     ArrayRef<int64_t> dilation,
                     ArrayRef<int64_t> outputPadding) {
  size_t rank = kernel.size();
  if (rank < 1 || rank > 4)
    return emitError() << "geometry must have 1 to 4 spatial dimensions, got "
                       << rank;
  struct Field {
    StringRef name;
    ArrayRef<int64_t> values;
    int64_t min;
  };
  Field fields[] = {{"kernel", kernel, 1},
                    {"stride", stride, 1},
                    {"padding", padding, 0},
                    {"dilation", dilation, 1},
                    {"output_padding", outputPadding, 0}};
  for (const Field &field : fields)
    if (field.values.size() != rank)
      return emitError() << "geometry field '" << field.name << "' has "
                         << field.values.size() << " entries but 'kernel' has "
                         << rank;
  // Checked before the field ranges: the parser marks an overflowing implied
  // subm padding as -1.
  if (kind == ConvKind::Subm)
    for (size_t dim = 0; dim < rank; ++dim)
      if (!llvm::checkedMul(kernel[dim] / 2, dilation[dim]))
        return emitError() << "subm window extent kernel / 2 * dilation "
                              "overflows int64 in dimension "
                           << dim;
  for (const Field &field : fields) {
    for (auto [dim, value] : llvm::enumerate(field.values))
      if (value < field.min)
        return emitError() << "geometry field '" << field.name << "' must be "
                           << (field.min == 0 ? "nonnegative" : "positive")
                           << ", got " << value << " in dimension " << dim;
  }
  FailureOr<int64_t> volume = checkedProduct(kernel);
  if (failed(volume))
    return emitError() << "kernel volume overflows int64";
  if (*volume > kMaxKernelVolume)
    return emitError() << "kernel volume " << *volume
                       << " exceeds the supported maximum of "
                       << kMaxKernelVolume << " offsets";

  if (kind == ConvKind::Subm) {
    SmallVector<int64_t> centred = getDefaultPadding(kind, kernel, dilation);
    for (size_t dim = 0; dim < rank; ++dim) {
      if (stride[dim] != 1)
        return emitError() << "subm geometry needs stride 1, got "
                           << stride[dim] << " in dimension " << dim;
      if (padding[dim] != centred[dim])
        return emitError() << "subm geometry has the implied padding kernel / "
                              "2 * dilation = "
                           << centred[dim] << " in dimension " << dim
                           << ", got " << padding[dim];
    }
  }
  for (size_t dim = 0; dim < rank; ++dim) {
    if (outputPadding[dim] == 0)
      continue;
    if (kind != ConvKind::Transposed)
      return emitError() << "output_padding is only allowed for a transposed "
                            "geometry";
    if (outputPadding[dim] >= std::max(stride[dim], dilation[dim]))
      return emitError() << "output_padding " << outputPadding[dim]
                         << " in dimension " << dim
                         << " must be smaller than the stride ("
                         << stride[dim] << ") or the dilation ("
                         << dilation[dim] << ")";
  }
  return success();
}

int64_t GeometryAttr::getKernelVolume() const {
  // Verified not to overflow.
  return *checkedProduct(getKernel());
}

bool GeometryAttr::isPointwise() const {
  return llvm::all_of(getKernel(), [](int64_t k) { return k == 1; });
}

GeometryAttr GeometryAttr::withKind(ConvKind kind) const {
  return GeometryAttr::get(getContext(), kind, getKernel(), getStride(),
                           getPadding(), getDilation(), getOutputPadding());
}

FailureOr<SmallVector<int64_t>> GeometryAttr::getOutputShape(
    ArrayRef<int64_t> inputShape,
    function_ref<InFlightDiagnostic()> emitError) const {
  auto fail = [&](auto &&...args) -> FailureOr<SmallVector<int64_t>> {
    if (emitError)
      (emitError() << ... << args);
    return failure();
  };
  // Only `get` in a release build skips the verifier: hold such a geometry
  // to its ranks rather than read past its lists.
  for (ArrayRef<int64_t> field :
       {getStride(), getPadding(), getDilation(), getOutputPadding()})
    if (field.size() != getRank())
      return fail("geometry lists disagree with the rank ", getRank(),
                  " of its kernel");
  if (inputShape.size() != getRank())
    return fail("geometry has ", getRank(),
                " spatial dimensions but the grid has ", inputShape.size());
  if (getKind() == ConvKind::Inverse)
    return fail("the output grid of an inverse geometry is the input grid of "
                "its forward conv and cannot be computed from its source");

  SmallVector<int64_t> output;
  for (size_t dim = 0; dim < getRank(); ++dim) {
    int64_t in = inputShape[dim], k = getKernel()[dim], s = getStride()[dim],
            p = getPadding()[dim], d = getDilation()[dim],
            op = getOutputPadding()[dim];
    if (getKind() == ConvKind::Subm) {
      output.push_back(in);
      continue;
    }
    // span = d * (k - 1), shared by both formulas.
    std::optional<int64_t> span = llvm::checkedMul(d, k - 1);
    std::optional<int64_t> twoP = llvm::checkedMul<int64_t>(2, p);
    std::optional<int64_t> out;
    if (span && twoP && getKind() == ConvKind::Regular) {
      // floor((I + 2p - d(k-1) - 1) / s) + 1
      std::optional<int64_t> num = llvm::checkedAdd(in, *twoP);
      if (num)
        num = llvm::checkedSub(*num, *span);
      if (num)
        num = llvm::checkedSub<int64_t>(*num, 1);
      if (num && *num < 0)
        return fail("the output grid is empty in dimension ", dim,
                    ": input extent ", in, " + 2 * padding ", p,
                    " is smaller than the dilated kernel extent ", *span + 1);
      if (num)
        out = *num / s + 1;
    } else if (span && twoP) {
      // (I - 1)s - 2p + d(k-1) + op + 1
      out = llvm::checkedMul(in - 1, s);
      if (out)
        out = llvm::checkedSub(*out, *twoP);
      if (out)
        out = llvm::checkedAdd(*out, *span);
      if (out)
        out = llvm::checkedAdd(*out, op + 1);
      if (out && *out < 1)
        return fail("the output grid is empty in dimension ", dim,
                    ": (I - 1) * stride - 2 * padding + dilation * (kernel - "
                    "1) + output_padding + 1 = ",
                    *out);
    }
    if (!out)
      return fail("the output extent overflows int64 in dimension ", dim);
    output.push_back(*out);
  }
  return output;
}

//===----------------------------------------------------------------------===//
// GridAttr
//===----------------------------------------------------------------------===//

Attribute GridAttr::parse(AsmParser &parser, Type) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  int64_t batch = ShapedType::kDynamic;
  if (parser.parseLess() || parseIntList(parser, shape))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("batch") || parser.parseEqual() ||
        parser.parseInteger(batch))
      return {};
    if (batch == ShapedType::kDynamic) {
      parser.emitError(loc, "grid batch size must be positive, got ") << batch;
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return GridAttr::getChecked([&] { return parser.emitError(loc); },
                              parser.getContext(), shape, batch);
}

void GridAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printIntList(printer, getShape());
  if (hasStaticBatch())
    printer << ", batch = " << getBatch();
  printer << '>';
}

LogicalResult GridAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, int64_t batch) {
  if (shape.size() < 1 || shape.size() > 4)
    return emitError() << "grid must have 1 to 4 spatial dimensions, got "
                       << shape.size();
  for (auto [dim, extent] : llvm::enumerate(shape))
    if (extent < 1)
      return emitError() << "grid extent must be positive, got " << extent
                         << " in dimension " << dim;
  if (batch != ShapedType::kDynamic && batch < 1)
    return emitError() << "grid batch size must be positive, got " << batch;
  FailureOr<int64_t> volume = checkedProduct(shape);
  if (failed(volume))
    return emitError() << "grid volume " << formatShape(shape)
                       << " overflows int64";
  if (batch != ShapedType::kDynamic && !llvm::checkedMul(batch, *volume))
    return emitError() << "batch size " << batch << " x grid volume "
                       << *volume << " overflows int64";
  return success();
}
