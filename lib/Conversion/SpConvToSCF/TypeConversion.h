//===- TypeConversion.h - The 1:N type conversion ---------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// `!spconv.rulebook` and `!spconv.hash_table` values become the buffers they
// are made of, so they flow through `scf`, `cf`, `arith.select` and function
// signatures, calls and returns by the structural patterns populated here.
// The base of every op pattern of the conversion and the helpers they share
// to take tensor operands as buffers and give results back as tensors.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_TYPECONVERSION_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_TYPECONVERSION_H

#include "Utils/LoweringContext.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::spconv::lowering {

/// Rulebooks and hash tables become their buffers; every other type stays.
class SpConvTypeConverter : public TypeConverter {
public:
  SpConvTypeConverter();
};

/// A pattern with access to the state shared by the op lowerings.
template <typename OpT>
class SpConvOpLowering : public OpConversionPattern<OpT> {
public:
  SpConvOpLowering(const TypeConverter &converter, LoweringContext &ctx,
                   PatternBenefit benefit = 1)
      : OpConversionPattern<OpT>(converter, ctx.getModule().getContext(),
                                 benefit),
        ctx(ctx) {}

protected:
  LoweringContext &ctx;
};
/// A tensor operand as a buffer. Coordinates may have any layout (the
/// runtime and the builders read them with strides); everything else is
/// contiguous, which the runtime needs and which lets features and weights
/// be read with unit-stride vector loads.
Value toOperandBuffer(OpBuilder &b, Location loc, Value tensor);

/// The single value an operand of a kept type converted to.
Value single(ValueRange converted);

/// Replaces `op`, whose results are all tensors, by `buffers` as tensors.
void replaceWithTensors(ConversionPatternRewriter &rewriter, Operation *op,
                        ValueRange buffers);

/// Carries rulebooks and tables through `arith.select`, function signatures
/// (every block's arguments), calls, returns, `scf` and `cf`, and marks the
/// ops those patterns convert as legal once converted.
void populateStructuralTypeConversions(const TypeConverter &converter,
                                       RewritePatternSet &patterns,
                                       ConversionTarget &target);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_TYPECONVERSION_H
