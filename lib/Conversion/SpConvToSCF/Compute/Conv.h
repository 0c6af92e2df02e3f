//===- Conv.h - The forms of a rulebook conv --------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// spconv.rulebook_conv has one pattern per form: the CPU's loops
// (Compute.cpp), the GPU's per-pair kernels and its tiled implicit GEMM
// (GPU/). Each derives from RulebookConvPattern, which takes the operands as
// buffers; the pass registers the forms of its target, the tiled one at a
// higher benefit, so an op it does not apply to falls to the next form.
// Below, the pieces the forms share: the accumulator, its rounding and
// epilogue pass, the feature-row guard and the kernels' role names.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_CONV_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_CONV_H

#include "Compute/Epilogue.h"
#include "TypeConversion.h"
#include "Utils/Checks.h"
#include "Utils/RulebookAccess.h"

namespace mlir::spconv::lowering {

/// What a form of spconv.rulebook_conv reads and writes, as buffers.
struct ConvBuffers {
  RulebookBuffers rulebook;
  Value features; ///< memref<rows x C x T>
  Value weight;   ///< memref<K x C/groups x Cout x T>
  Value bias;     ///< memref<Cout x T>, or null
  EpilogueBuffers epilogue;
  /// A view of the conv's rows in its concatenation's buffer
  /// (concatDestination), or null: the result then gets a buffer of its own.
  Value destination;
};

/// The base of the patterns of spconv.rulebook_conv, one per form. A form
/// lowers the op to its result buffer; one that does not apply to the op
/// leaves it to the next pattern before anything is created.
class RulebookConvPattern : public SpConvOpLowering<RulebookConvOp> {
public:
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(RulebookConvOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final;

protected:
  virtual bool appliesTo(RulebookConvOp op) const { return true; }
  /// The result buffer: `buffers.destination` where given.
  virtual Value lower(OpBuilder &b, RulebookConvOp op,
                      const ConvBuffers &buffers) const = 0;
};

/// The sizes and types of a conv.
struct ConvShape {
  bool inverse;
  int64_t volume; ///< kernel offsets
  int64_t groups;
  Value rows;        ///< index: output rows
  Value channelsIn;  ///< index: a group's input channels (all without groups)
  Value channelsOut; ///< index: all output channels
  Value groupChannelsOut; ///< index: a group's output channels
  Type elementType, accType;
  MemRefType resultType; ///< the result's buffer type
};
ConvShape getConvShape(OpBuilder &b, RulebookConvOp op,
                       const ConvBuffers &buffers);

/// Where output channel `column`'s sums start: `bias[column]` as `type`, or
/// zero without a bias.
Value initialSum(OpBuilder &b, Location loc, Value bias, Value column,
                 Type type);

/// The accumulator of a gather-scatter conv, each row the bias (or zero):
/// the destination where it has the accumulator's type, else a new buffer.
Value allocConvAccumulator(OpBuilder &b, Location loc, const ConvShape &shape,
                           const ConvBuffers &buffers);

/// A builder inside `scf.if (features has one row per site)`: the pair
/// loops read feature rows by the rulebook's indices, so features of any
/// other length are reported (through the runtime, as operand `what` of
/// checkFeatureRows) and not read; the result is then the initial
/// accumulator.
OpBuilder guardFeatureRows(LoweringContext &ctx, OpBuilder &b, Location loc,
                           Value features, Value expected, int64_t what);

/// Converts an accumulator buffer to the result's element type and shape,
/// in `destination` where given (which has the result's rows); a static row
/// count is checked as `what`.
Value finishRows(LoweringContext &ctx, OpBuilder &b, Location loc, Value acc,
                 Value rows, Value channels, MemRefType resultType,
                 SizeCheck what, Value destination);

/// The result of a conv with an epilogue: the accumulator rounded to the
/// result's element type and mapped by the epilogue in one parallel pass over
/// the rows, in place where the types agree: a row a vector per entry of
/// `chunks` (consecutive channels; rowChunks), or, with no chunks, one
/// element per parallel item (the GPU's form). Operands of the wrong size
/// are reported and not read: the result is then the rounded accumulator.
/// The result is `destination` where given.
Value finishRowsWithEpilogue(LoweringContext &ctx, OpBuilder &b, Location loc,
                             Value acc, Value rows, Value channels,
                             MemRefType resultType,
                             const EpilogueBuffers &epilogue,
                             ArrayRef<int64_t> chunks, Value destination);

/// acc[dst, co] += features[src, :] . weight[offset, :, co], one scalar
/// product at a time in input-channel order.
/// With `firstIn`, features[src, firstIn + ci] (a group's input channels).
void emitDotUpdate(OpBuilder &b, Location loc, Value acc, Value dst, Value co,
                   Value features, Value src, Value weight, Value offset,
                   Value channelsIn, Type accType, Value firstIn = Value());

/// `<what>_<element type>_<Cin>x<Cout>` (`dyn` for a dynamic count), then
/// `_g<groups>` for a grouped conv: the kernels' role (kKernelRoleAttrName).
std::string computeRole(StringRef what, Type elementType, MemRefType weightType,
                        int64_t groups = 1);

/// The buffer type of a tensor.
MemRefType resultBufferType(Value tensor);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_CONV_H
