//===- WeightGrad.h - The forms of a conv's weight gradient -----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// spconv.rulebook_weight_grad has one pattern per form, as the conv has
// (Conv.h): the CPU's register-blocked loops (WeightGrad.cpp), the GPU's
// thread per element and its tiled reduction (GPU/). Each derives from
// RulebookWeightGradPattern, which checks the operands and allocates the
// result before its form fills it.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_WEIGHTGRAD_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_WEIGHTGRAD_H

#include "TypeConversion.h"
#include "Utils/RulebookAccess.h"

namespace mlir::spconv::lowering {

/// What a form of the weight gradient reads and writes.
struct WeightGradBuffers {
  RulebookBuffers rulebook;
  bool inverse;
  int64_t volume; ///< kernel offsets
  int64_t groups;
  Value features; ///< memref<rows x Cin x T>
  Value outGrad;  ///< memref<rows x Cout x T>
  /// i1: both have the rulebook's row counts. Where false (reported
  /// already) nothing may read them: every pair range is empty and the
  /// gradient zero (pairRange).
  Value ok;
  /// index: a group's input channels, all output channels, a group's.
  Value channelsIn, channelsOut, groupChannelsOut;
  /// The static `Cin/groups` and `Cout`, or ShapedType::kDynamic.
  int64_t staticChannelsIn, staticChannelsOut;
  /// memref<K x Cin/groups x Cout x T>, allocated, for the form to fill
  /// whole; `sizes` its dynamic sizes.
  Value result;
  SmallVector<Value> sizes;
  Type elementType, accType;
  std::string role; ///< the kernels' role (kKernelRoleAttrName)

  bool hasStaticChannels() const {
    return !ShapedType::isDynamic(staticChannelsIn) &&
           !ShapedType::isDynamic(staticChannelsOut);
  }
};

/// The base of the patterns of spconv.rulebook_weight_grad, one per form; a
/// form that does not apply leaves the op to the next pattern.
class RulebookWeightGradPattern
    : public SpConvOpLowering<RulebookWeightGradOp> {
public:
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(RulebookWeightGradOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final;

protected:
  virtual bool appliesTo(RulebookWeightGradOp op) const { return true; }
  /// Fills `buffers.result`.
  virtual void lower(OpBuilder &b, Location loc,
                     const WeightGradBuffers &buffers) const = 0;
};

/// The first and end pair of `offset`; an empty range where `ok` is false.
std::pair<Value, Value> pairRange(OpBuilder &b, Location loc,
                                  const RulebookBuffers &rulebook, Value offset,
                                  Value ok);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_WEIGHTGRAD_H
