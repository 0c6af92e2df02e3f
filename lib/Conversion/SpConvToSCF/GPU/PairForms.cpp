//===- PairForms.cpp - The GPU's per-pair conv and weight gradient ------===//
//
// Part of the spconv-mlir project.
//
// The GPU forms that take any conv: dynamic channel counts, groups. They
// are parallel loops that spconv-parallel-loops-to-gpu maps to threads, one
// dot product or one weight-gradient element per thread, each summed in a
// fixed order: deterministic, no atomics.
//
//===----------------------------------------------------------------------===//

#include "GPU/GPU.h"
#include "Utils/Builders.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

/// For j in offsets, parallel over (pair of j,
/// output channel), one dot product each. Consecutive items are consecutive
/// output channels of one pair, so a warp reads one feature row and
/// consecutive weights.
static void emitPairChannelConv(OpBuilder &b, Location loc,
                                const RulebookBuffers &rulebook, int64_t volume,
                                bool inverse, Value acc, Value features,
                                Value weight, Value channelsIn,
                                Value channelsOut, Type accType, int64_t groups,
                                Value groupChannelsOut, StringRef role) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  forEachOffset(
      b, loc, rulebook, volume,
      [&](OpBuilder &ob, Location oloc, Value offset, Value begin, Value end) {
        markKernel(scf::ParallelOp::create(
                       ob, oloc, ValueRange{begin, zero},
                       ValueRange{end, channelsOut}, ValueRange{one, one},
                       [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                         auto [src, dst] =
                             pairRows(pb, ploc, rulebook, inverse, ivs[0]);
                         emitDotUpdate(pb, ploc, acc, dst, ivs[1], features,
                                       src, weight, offset, channelsIn, accType,
                                       groupFirstInput(pb, ploc, ivs[1], groups,
                                                       channelsIn,
                                                       groupChannelsOut));
                       }),
                   role);
      });
}

Value lowering::lowerPairChannelConv(LoweringContext &ctx, OpBuilder &b,
                                     RulebookConvOp op,
                                     const ConvBuffers &buffers) {
  Location loc = op.getLoc();
  ConvShape shape = getConvShape(b, op, buffers);
  const RulebookBuffers &rulebook = buffers.rulebook;
  Value acc = allocConvAccumulator(b, loc, shape, buffers);
  std::string role =
      computeRole(shape.inverse ? "inverse_conv" : "conv", shape.elementType,
                  cast<MemRefType>(buffers.weight.getType()), shape.groups);
  OpBuilder pairs = guardFeatureRows(
      ctx, b, loc, buffers.features,
      shape.inverse ? rulebook.numOut : rulebook.numIn, shape.inverse ? 1 : 0);
  emitPairChannelConv(pairs, loc, rulebook, shape.volume, shape.inverse, acc,
                      buffers.features, buffers.weight, shape.channelsIn,
                      shape.channelsOut, shape.accType, shape.groups,
                      shape.groupChannelsOut, role);
  if (buffers.epilogue)
    return finishRowsWithEpilogue(
        ctx, b, loc, acc, shape.rows, shape.channelsOut, shape.resultType,
        buffers.epilogue, /*chunks=*/{}, buffers.destination);
  return finishRows(ctx, b, loc, acc, shape.rows, shape.channelsOut,
                    shape.resultType, SizeCheck::ConvRows, buffers.destination);
}

/// A thread per element, its sum in a register, rounded once
/// into `result`. Where `ok` is false the pair range is empty: zeros.
static void emitElementPerThread(OpBuilder &b, Location loc,
                                 const RulebookBuffers &rulebook, bool inverse,
                                 int64_t volume, Value ok, Value features,
                                 Value outGrad, Value channelsIn,
                                 Value channelsOut, int64_t groups,
                                 Value groupChannelsOut, Value result,
                                 Type accType, StringRef role) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Type elementType = cast<MemRefType>(result.getType()).getElementType();
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero, zero},
          ValueRange{indexConst(b, loc, volume), channelsIn, channelsOut},
          ValueRange{one, one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value offset = ivs[0], ci = ivs[1], co = ivs[2];
            // The input channel of this group that `ci` names.
            Value column =
                addOffset(pb, ploc,
                          groupFirstInput(pb, ploc, co, groups, channelsIn,
                                          groupChannelsOut),
                          ci);
            auto [begin, end] = pairRange(pb, ploc, rulebook, offset, ok);
            Value start =
                arith::ConstantOp::create(pb, ploc, pb.getZeroAttr(accType));
            auto sum = scf::ForOp::create(
                pb, ploc, begin, end, one, ValueRange{start},
                [&](OpBuilder &fb, Location floc, Value pair,
                    ValueRange partial) {
                  auto [src, dst] = pairRows(fb, floc, rulebook, inverse, pair);
                  Value a = loadAs(fb, floc, features, ValueRange{src, column},
                                   accType);
                  Value g =
                      loadAs(fb, floc, outGrad, ValueRange{dst, co}, accType);
                  Value next = arith::AddFOp::create(
                      fb, floc, partial[0],
                      arith::MulFOp::create(fb, floc, a, g));
                  scf::YieldOp::create(fb, floc, next);
                });
            memref::StoreOp::create(
                pb, ploc,
                convertScalar(pb, ploc, sum.getResult(0), elementType), result,
                ValueRange{offset, ci, co});
          }),
      role);
}

void lowering::lowerElementPerThreadWeightGrad(
    OpBuilder &b, Location loc, const WeightGradBuffers &buffers) {
  emitElementPerThread(b, loc, buffers.rulebook, buffers.inverse,
                       buffers.volume, buffers.ok, buffers.features,
                       buffers.outGrad, buffers.channelsIn, buffers.channelsOut,
                       buffers.groups, buffers.groupChannelsOut, buffers.result,
                       buffers.accType, buffers.role);
}
