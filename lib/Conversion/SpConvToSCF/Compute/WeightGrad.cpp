//===- WeightGrad.cpp - The weight gradient of a rulebook conv -----------===//
//
// Part of the spconv-mlir project.
//
// `weight_grad[j] = sum over the pairs (x -> o) of offset j of
// features[x]^T (x) out_grad[o]`, a reduction with one writer per element,
// summed in the rulebook's pair order: deterministic on every target, no
// atomics.
// This file: the pattern base (WeightGrad.h) and the CPU's form.
//  - Static channel counts: one parallel iteration per kernel offset, whose
//    `Cin x Cout` block of the result takes the rank-one updates of its
//    pairs a few pairs at a time, each gradient chunk held in a vector
//    register while the input channels' rows are loaded once each.
//  - Channel counts known only at run time: one parallel iteration per
//    (offset, input channel), a scalar loop that adds into the result in
//    memory.
//  - Grouped convs (`K x Cin/g x Cout`): the same loops, where output
//    channel `co` pairs with input channel `co / (Cout/g) * Cin/g + ci`.
// The GPU's forms are in GPU/PairForms.cpp and GPU/TiledWeightGrad.cpp.
//
//===----------------------------------------------------------------------===//

#include "Compute/WeightGrad.h"
#include "Compute/Compute.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

std::pair<Value, Value> lowering::pairRange(OpBuilder &b, Location loc,
                                            const RulebookBuffers &rulebook,
                                            Value offset, Value ok) {
  Value begin = memref::LoadOp::create(b, loc, rulebook.offsets, offset);
  Value end = memref::LoadOp::create(
      b, loc, rulebook.offsets,
      ValueRange{arith::AddIOp::create(b, loc, offset,
                                       indexConst(b, loc, 1))});
  return {begin, arith::SelectOp::create(b, loc, ok, end, begin)};
}

/// Pairs whose rank-one updates share each load and store of a result
/// row chunk in the CPU form.
static constexpr int64_t kPairsPerUpdate = 4;

/// One group's rank updates (emitRankUpdate): its output channels start at
/// `firstOut` and its input channels at `firstIn` (null for 0).
static void emitGroupRankUpdate(OpBuilder &b, Location loc, ArrayRef<Value> srcs,
                                ArrayRef<Value> dsts, Value features,
                                Value outGrad, Value acc, Value offset,
                                int64_t channelsIn, ArrayRef<int64_t> chunks,
                                Type accType, Value firstIn, Value firstOut) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Type elementType = cast<MemRefType>(outGrad.getType()).getElementType();
  int64_t column = 0;
  for (int64_t width : chunks) {
    Value col = indexConst(b, loc, column);
    col = addOffset(b, loc, firstOut, col);
    auto chunkType = VectorType::get({width}, elementType);
    auto accChunkType = VectorType::get({width}, accType);
    SmallVector<Value> grads;
    for (Value dst : dsts) {
      Value g = vector::LoadOp::create(b, loc, chunkType, outGrad,
                                       ValueRange{dst, col});
      if (accType != elementType)
        g = arith::ExtFOp::create(b, loc, accChunkType, g);
      grads.push_back(g);
    }
    scf::ForOp::create(
        b, loc, zero, indexConst(b, loc, channelsIn), one, ValueRange{},
        [&](OpBuilder &fb, Location floc, Value ci, ValueRange) {
          SmallVector<Value> at{offset, ci, col};
          Value sum = vector::LoadOp::create(fb, floc, accChunkType, acc, at);
          for (auto [src, g] : llvm::zip(srcs, grads)) {
            Value a = loadAs(fb, floc, features,
                             ValueRange{src, addOffset(fb, floc, firstIn, ci)},
                             accType);
            sum = vector::FMAOp::create(
                fb, floc, vector::BroadcastOp::create(fb, floc, accChunkType, a),
                g, sum);
          }
          vector::StoreOp::create(fb, floc, sum, acc, at);
          scf::YieldOp::create(fb, floc);
        });
    column += width;
  }
}

/// `acc[offset, :, :] += sum over pairs of features[src]^T (x) grad[dst]`
/// for the pairs `[first, first + count)` (`count` static): for every chunk
/// of output channels, the pairs' gradient chunks stay in registers while
/// each input channel's row chunk is loaded once, takes one FMA per pair,
/// and is stored once. With groups, `chunks` split one group's output
/// channels and the update runs group by group.
static void emitRankUpdate(OpBuilder &b, Location loc,
                           const RulebookBuffers &rulebook, bool inverse,
                           Value features, Value outGrad, Value acc,
                           Value offset, Value first, int64_t count,
                           int64_t channelsIn, int64_t groups,
                           ArrayRef<int64_t> chunks, Type accType) {
  SmallVector<Value> srcs, dsts;
  for (int64_t k = 0; k < count; ++k) {
    Value pair = arith::AddIOp::create(b, loc, first, indexConst(b, loc, k));
    auto [src, dst] = pairRows(b, loc, rulebook, inverse, pair);
    srcs.push_back(src);
    dsts.push_back(dst);
  }
  if (groups == 1) {
    emitGroupRankUpdate(b, loc, srcs, dsts, features, outGrad, acc, offset,
                        channelsIn, chunks, accType, Value(), Value());
    return;
  }
  int64_t groupChannelsOut = 0;
  for (int64_t width : chunks)
    groupChannelsOut += width;
  forEachGroup(b, loc, groups, indexConst(b, loc, channelsIn),
               indexConst(b, loc, groupChannelsOut),
               [&](OpBuilder &gb, Location gloc, Value firstIn, Value firstOut) {
                 emitGroupRankUpdate(gb, gloc, srcs, dsts, features, outGrad,
                                     acc, offset, channelsIn, chunks, accType,
                                     firstIn, firstOut);
               });
}

/// for ci in [0, channelsIn): body(ci, column, width) for each chunk of a
/// row: the loops that zero and round the CPU form's blocks.
static void forEachRowChunk(
    OpBuilder &b, Location loc, int64_t channelsIn, ArrayRef<int64_t> chunks,
    function_ref<void(OpBuilder &, Location, Value, Value, int64_t)> body) {
  scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, channelsIn),
      indexConst(b, loc, 1), ValueRange{},
      [&](OpBuilder &fb, Location floc, Value ci, ValueRange) {
        int64_t column = 0;
        for (int64_t width : chunks) {
          body(fb, floc, ci, indexConst(fb, floc, column), width);
          column += width;
        }
        scf::YieldOp::create(fb, floc);
      });
}

/// The CPU form for static channel counts: one iteration per kernel
/// offset, whose `Cin x Cout` block of the result (small: it stays in
/// cache) takes the rank-one updates of its pairs, `kPairsPerUpdate` at a
/// time. Every pair's rows are read once per offset, not once per input
/// channel.
static void emitOffsetUpdates(LoweringContext &ctx, OpBuilder &b, Location loc,
                              const RulebookBuffers &rulebook, bool inverse,
                              int64_t volume, Value ok, Value features,
                              Value outGrad, int64_t channelsIn,
                              int64_t channelsOut, int64_t groups, Value result,
                              StringRef role) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Type elementType = cast<MemRefType>(result.getType()).getElementType();
  Type accType = accumulatorType(elementType);
  // 16-bit floats sum in f32, in a buffer of their own, then round once.
  Value acc = result;
  if (accType != elementType)
    acc = memref::AllocOp::create(
        b, loc,
        MemRefType::get({volume, channelsIn, channelsOut}, accType));
  // Chunks of whole registers, then the rest.
  int64_t lanes = std::max<int64_t>(
      1, ctx.getVectorRegisters().bits / accType.getIntOrFloatBitWidth());
  auto chunksOf = [&](int64_t columns) {
    SmallVector<int64_t> chunks(columns / lanes, lanes);
    if (columns % lanes)
      chunks.push_back(columns % lanes);
    return chunks;
  };
  // Whole rows for zeroing and rounding, one group's columns for updates.
  SmallVector<int64_t> chunks = chunksOf(channelsOut);
  SmallVector<int64_t> groupChunks = chunksOf(channelsOut / groups);
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero}, ValueRange{indexConst(b, loc, volume)},
          ValueRange{one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value offset = ivs[0];
            // Zero this offset's block.
            forEachRowChunk(
                pb, ploc, channelsIn, chunks,
                [&](OpBuilder &fb, Location floc, Value ci, Value column,
                    int64_t width) {
                  auto type = VectorType::get({width}, accType);
                  Value zeros = arith::ConstantOp::create(
                      fb, floc,
                      DenseElementsAttr::get(type, fb.getZeroAttr(accType)));
                  vector::StoreOp::create(fb, floc, zeros, acc,
                                          ValueRange{offset, ci, column});
                });
            auto [begin, end] = pairRange(pb, ploc, rulebook, offset, ok);
            Value group = indexConst(pb, ploc, kPairsPerUpdate);
            Value fullEnd = arith::SubIOp::create(
                pb, ploc, end,
                arith::RemUIOp::create(
                    pb, ploc, arith::SubIOp::create(pb, ploc, end, begin),
                    group));
            scf::ForOp::create(
                pb, ploc, begin, fullEnd, group, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value first, ValueRange) {
                  emitRankUpdate(fb, floc, rulebook, inverse, features,
                                 outGrad, acc, offset, first, kPairsPerUpdate,
                                 channelsIn, groups, groupChunks, accType);
                  scf::YieldOp::create(fb, floc);
                });
            scf::ForOp::create(
                pb, ploc, fullEnd, end, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value pair, ValueRange) {
                  emitRankUpdate(fb, floc, rulebook, inverse, features,
                                 outGrad, acc, offset, pair, 1, channelsIn,
                                 groups, groupChunks, accType);
                  scf::YieldOp::create(fb, floc);
                });
            if (acc == result)
              return;
            forEachRowChunk(
                pb, ploc, channelsIn, chunks,
                [&](OpBuilder &fb, Location floc, Value ci, Value column,
                    int64_t width) {
                  SmallVector<Value> at{offset, ci, column};
                  Value sum = vector::LoadOp::create(
                      fb, floc, VectorType::get({width}, accType), acc, at);
                  vector::StoreOp::create(
                      fb, floc,
                      arith::TruncFOp::create(
                          fb, floc, VectorType::get({width}, elementType), sum),
                      result, at);
                });
          }),
      role);
}

LogicalResult RulebookWeightGradPattern::matchAndRewrite(
    RulebookWeightGradOp op, OneToNOpAdaptor adaptor,
    ConversionPatternRewriter &rewriter) const {
  if (!appliesTo(op))
    return failure();
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  WeightGradBuffers buffers;
  buffers.rulebook = RulebookBuffers::fromValues(adaptor.getRulebook());
  const RulebookBuffers &rulebook = buffers.rulebook;
  Value outGrad = buffers.outGrad =
      toOperandBuffer(rewriter, loc, single(adaptor.getOutGrad()));
  Value features = buffers.features =
      toOperandBuffer(rewriter, loc, single(adaptor.getFeatures()));
  bool inverse = buffers.inverse = op.getInverse();
  auto resultType = cast<RankedTensorType>(op.getWeightGrad().getType());
  Type elementType = buffers.elementType = resultType.getElementType();
  buffers.accType = accumulatorType(elementType);
  buffers.volume = op.getRulebook().getType().getGeometry().getKernelVolume();
  // A group's input and output channels (all of them without groups).
  int64_t groups = buffers.groups = op.getGroups();
  Value groupCount = indexConst(b, loc, groups);
  buffers.channelsIn = arith::DivUIOp::create(
      b, loc, memref::DimOp::create(b, loc, features, 1), groupCount);
  buffers.channelsOut = memref::DimOp::create(b, loc, outGrad, 1);
  buffers.groupChannelsOut =
      arith::DivUIOp::create(b, loc, buffers.channelsOut, groupCount);
  buffers.staticChannelsIn = resultType.getDimSize(1);
  buffers.staticChannelsOut = resultType.getDimSize(2);

  // Rows of the wrong count are reported and not read: the gradient is then
  // zero.
  Value featuresOk =
      checkFeatureRows(ctx, b, loc, features,
                       inverse ? rulebook.numOut : rulebook.numIn,
                       inverse ? 1 : 0);
  Value outGradOk =
      checkFeatureRows(ctx, b, loc, outGrad,
                       inverse ? rulebook.numIn : rulebook.numOut,
                       inverse ? 0 : 2);
  buffers.ok = arith::AndIOp::create(b, loc, featuresOk, outGradOk);

  for (auto [d, extent] : llvm::enumerate(resultType.getShape()))
    if (ShapedType::isDynamic(extent))
      buffers.sizes.push_back(d == 1 ? buffers.channelsIn
                                     : buffers.channelsOut);
  buffers.result = memref::AllocOp::create(
      b, loc, MemRefType::get(resultType.getShape(), elementType),
      buffers.sizes);
  llvm::raw_string_ostream os(buffers.role);
  os << "weight_grad_" << elementType;
  if (groups != 1)
    os << "_g" << groups;
  lower(b, loc, buffers);
  replaceWithTensors(rewriter, op, buffers.result);
  return success();
}

void lowering::lowerWeightGradLoops(LoweringContext &ctx, OpBuilder &b,
                                    Location loc,
                                    const WeightGradBuffers &buffers) {
  if (buffers.hasStaticChannels()) {
    emitOffsetUpdates(ctx, b, loc, buffers.rulebook, buffers.inverse,
                      buffers.volume, buffers.ok, buffers.features,
                      buffers.outGrad, buffers.staticChannelsIn,
                      buffers.staticChannelsOut, buffers.groups, buffers.result,
                      buffers.role);
    return;
  }
  const RulebookBuffers &rulebook = buffers.rulebook;
  bool inverse = buffers.inverse;
  int64_t groups = buffers.groups;
  Value features = buffers.features, outGrad = buffers.outGrad, ok = buffers.ok,
        result = buffers.result;
  Value channelsIn = buffers.channelsIn, channelsOut = buffers.channelsOut,
        groupChannelsOut = buffers.groupChannelsOut;
  Type elementType = buffers.elementType, accType = buffers.accType;
  ArrayRef<int64_t> shape = cast<MemRefType>(result.getType()).getShape();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  // 16-bit floats sum in f32, in a buffer of their own, then round once.
  Value acc = result;
  if (accType != elementType)
    acc = memref::AllocOp::create(b, loc, MemRefType::get(shape, accType),
                                  buffers.sizes);
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero},
          ValueRange{indexConst(b, loc, buffers.volume), channelsIn},
          ValueRange{one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value offset = ivs[0], ci = ivs[1];
            Value accZero =
                arith::ConstantOp::create(pb, ploc, pb.getZeroAttr(accType));
            scf::ForOp::create(
                pb, ploc, zero, channelsOut, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value co, ValueRange) {
                  memref::StoreOp::create(fb, floc, accZero, acc,
                                          ValueRange{offset, ci, co});
                  scf::YieldOp::create(fb, floc);
                });
            auto [begin, end] = pairRange(pb, ploc, rulebook, offset, ok);
            scf::ForOp::create(
                pb, ploc, begin, end, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value pair, ValueRange) {
                  auto [src, dst] = pairRows(fb, floc, rulebook, inverse, pair);
                  // Group by group: input channel ci of group q is column
                  // q * channelsIn + ci of the features.
                  forEachGroup(
                      fb, floc, groups, channelsIn, groupChannelsOut,
                      [&](OpBuilder &gb, Location gloc, Value firstIn,
                          Value firstOut) {
                        Value a = loadAs(gb, gloc, features,
                                         ValueRange{src, addOffset(gb, gloc,
                                                                   firstIn, ci)},
                                         accType);
                        Value endOut = arith::AddIOp::create(
                            gb, gloc, firstOut, groupChannelsOut);
                        scf::ForOp::create(
                            gb, gloc, firstOut, endOut, one, ValueRange{},
                            [&](OpBuilder &cb, Location cloc, Value co,
                                ValueRange) {
                              SmallVector<Value, 3> at{offset, ci, co};
                              Value g = loadAs(cb, cloc, outGrad,
                                               ValueRange{dst, co}, accType);
                              Value sum = arith::AddFOp::create(
                                  cb, cloc,
                                  memref::LoadOp::create(cb, cloc, acc, at),
                                  arith::MulFOp::create(cb, cloc, a, g));
                              memref::StoreOp::create(cb, cloc, sum, acc, at);
                              scf::YieldOp::create(cb, cloc);
                            });
                      });
                  scf::YieldOp::create(fb, floc);
                });
            if (acc == result)
              return;
            scf::ForOp::create(
                pb, ploc, zero, channelsOut, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value co, ValueRange) {
                  SmallVector<Value, 3> at{offset, ci, co};
                  memref::StoreOp::create(
                      fb, floc, loadAs(fb, floc, acc, at, elementType), result,
                      at);
                  scf::YieldOp::create(fb, floc);
                });
          }),
      buffers.role);
}
