//===- WeightGrad.cpp - The weight gradient of a rulebook conv -----------===//
//
// Part of the spconv-mlir project.
//
// `weight_grad[j] = sum over the pairs (x -> o) of offset j of
// features[x]^T (x) out_grad[o]`, a reduction with one writer per element,
// summed in the rulebook's pair order: deterministic on every target, no
// atomics.
// This file: the pattern base (WeightGrad.h) and the CPU's form.
//  - Static channel counts: a GEMM per kernel offset over its pairs,
//    register-blocked for the target like the conv, one parallel iteration
//    per (offset, chunk of output channels).
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
#include "SpConv/Support/VectorWidth.h"
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

/// Pairs a tile takes before the next tile: their rows stay in cache for
/// all of an offset's tiles, and a tile's sums pass through memory once per
/// block.
static constexpr int64_t kPairsPerBlock = 128;

namespace {
/// The CPU form for static channel counts: what its loops read and write,
/// and their static shape. `acc` is `result`, or for 16-bit floats an f32
/// buffer rounded into it at the end.
struct WeightGradTiles {
  const RulebookBuffers &rulebook;
  bool inverse;
  Value features, outGrad, acc, result;
  Type accType;
  /// One group's input and output channels, and the groups.
  int64_t channelsIn, groupChannelsOut, groups;
  /// Input channels per tile, and those the full tiles cover.
  int64_t rows, fullRows;

  /// body(first input, first output channel) for each group; once, with
  /// null firsts (no offset), without groups.
  void eachGroup(
      OpBuilder &b, Location loc,
      function_ref<void(OpBuilder &, Location, Value, Value)> body) const {
    if (groups == 1)
      return body(b, loc, Value(), Value());
    forEachGroup(b, loc, groups, indexConst(b, loc, channelsIn),
                 indexConst(b, loc, groupChannelsOut), body);
  }

  /// body(b, loc, [offset, input channel, column]) for every input channel
  /// of every group's chunk at `column`: the loops that zero and round it.
  void
  eachSum(OpBuilder &b, Location loc, Value offset, Value column,
          function_ref<void(OpBuilder &, Location, ValueRange)> body) const {
    eachGroup(b, loc, [&](OpBuilder &gb, Location gloc, Value, Value firstOut) {
      scf::ForOp::create(
          gb, gloc, indexConst(gb, gloc, 0), indexConst(gb, gloc, channelsIn),
          indexConst(gb, gloc, 1), ValueRange{},
          [&](OpBuilder &fb, Location floc, Value ci, ValueRange) {
            body(fb, floc, {offset, ci, addOffset(fb, floc, firstOut, column)});
            scf::YieldOp::create(fb, floc);
          });
    });
  }

  void emitTile(OpBuilder &b, Location loc, Value offset, Value begin,
                Value end, Value ci, int64_t tileRows, Value column,
                int64_t width, Value firstIn, Value firstOut) const;
  void emitChunk(OpBuilder &b, Location loc, Value offset, Value begin,
                 Value end, Value column, int64_t width) const;
};
} // namespace

/// One tile of an offset's block of the result: input channels
/// `[ci, ci + tileRows)` x the `width` output columns from `column`, of the
/// group whose channels start at `firstIn` and `firstOut` (null: 0), over
/// the pairs `[begin, end)`. The tile's sums, read from `acc` (zero before
/// the first block), stay in registers while the pairs stream past: per
/// pair one gradient chunk, a broadcast per row and `tileRows` FMAs. Each
/// element so sums its pairs in the rulebook's order, as every target does.
void WeightGradTiles::emitTile(OpBuilder &b, Location loc, Value offset,
                               Value begin, Value end, Value ci,
                               int64_t tileRows, Value column, int64_t width,
                               Value firstIn, Value firstOut) const {
  Type elementType = cast<MemRefType>(outGrad.getType()).getElementType();
  auto chunkType = VectorType::get({width}, elementType);
  auto accChunkType = VectorType::get({width}, accType);
  Value col = addOffset(b, loc, firstOut, column);
  SmallVector<Value> rowIndices, featureColumns, init;
  for (int64_t r = 0; r < tileRows; ++r) {
    Value row = arith::AddIOp::create(b, loc, ci, indexConst(b, loc, r));
    rowIndices.push_back(row);
    featureColumns.push_back(addOffset(b, loc, firstIn, row));
    init.push_back(vector::LoadOp::create(b, loc, accChunkType, acc,
                                          ValueRange{offset, row, col}));
  }
  auto pairs = scf::ForOp::create(
      b, loc, begin, end, indexConst(b, loc, 1), init,
      [&](OpBuilder &fb, Location floc, Value pair, ValueRange sums) {
        auto [src, dst] = pairRows(fb, floc, rulebook, inverse, pair);
        Value g = vector::LoadOp::create(fb, floc, chunkType, outGrad,
                                         ValueRange{dst, col});
        if (accType != elementType)
          g = arith::ExtFOp::create(fb, floc, accChunkType, g);
        SmallVector<Value> next;
        for (auto [sum, featureColumn] : llvm::zip(sums, featureColumns)) {
          Value a = loadAs(fb, floc, features, ValueRange{src, featureColumn},
                           accType);
          next.push_back(vector::FMAOp::create(
              fb, floc, vector::BroadcastOp::create(fb, floc, accChunkType, a),
              g, sum));
        }
        scf::YieldOp::create(fb, floc, next);
      });
  for (auto [sum, row] : llvm::zip(pairs.getResults(), rowIndices))
    vector::StoreOp::create(b, loc, sum, acc, ValueRange{offset, row, col});
}

/// The sums of the `width` output columns from `column` for every input
/// channel of `offset`: zeroed, then the offset's pairs `[begin, end)`
/// `kPairsPerBlock` at a time through every tile, then rounded into the
/// result if the sums have a buffer of their own.
void WeightGradTiles::emitChunk(OpBuilder &b, Location loc, Value offset,
                                Value begin, Value end, Value column,
                                int64_t width) const {
  auto sumType = VectorType::get({width}, accType);
  eachSum(
      b, loc, offset, column, [&](OpBuilder &fb, Location floc, ValueRange at) {
        Value zeros = arith::ConstantOp::create(
            fb, floc, DenseElementsAttr::get(sumType, fb.getZeroAttr(accType)));
        vector::StoreOp::create(fb, floc, zeros, acc, at);
      });
  Value block = indexConst(b, loc, kPairsPerBlock);
  scf::ForOp::create(
      b, loc, begin, end, block, ValueRange{},
      [&](OpBuilder &bb, Location bloc, Value first, ValueRange) {
        Value last = arith::MinSIOp::create(
            bb, bloc, arith::AddIOp::create(bb, bloc, first, block), end);
        eachGroup(
            bb, bloc,
            [&](OpBuilder &gb, Location gloc, Value firstIn, Value firstOut) {
              scf::ForOp::create(
                  gb, gloc, indexConst(gb, gloc, 0),
                  indexConst(gb, gloc, fullRows), indexConst(gb, gloc, rows),
                  ValueRange{},
                  [&](OpBuilder &fb, Location floc, Value ci, ValueRange) {
                    emitTile(fb, floc, offset, first, last, ci, rows, column,
                             width, firstIn, firstOut);
                    scf::YieldOp::create(fb, floc);
                  });
              if (fullRows < channelsIn)
                emitTile(gb, gloc, offset, first, last,
                         indexConst(gb, gloc, fullRows), channelsIn - fullRows,
                         column, width, firstIn, firstOut);
            });
        scf::YieldOp::create(bb, bloc);
      });
  if (acc == result)
    return;
  Type elementType = cast<MemRefType>(result.getType()).getElementType();
  eachSum(b, loc, offset, column,
          [&](OpBuilder &fb, Location floc, ValueRange at) {
            Value sum = vector::LoadOp::create(fb, floc, sumType, acc, at);
            vector::StoreOp::create(
                fb, floc,
                arith::TruncFOp::create(
                    fb, floc, VectorType::get({width}, elementType), sum),
                result, at);
          });
}

/// The CPU form for static channel counts, a GEMM per kernel offset
/// (`features[src]^T x out_grad[dst]` over its pairs) blocked for the
/// target like the conv (chooseRowBlocking: input channels as rows, output
/// channels in chunks of registers): one parallel iteration per (offset,
/// column chunk), which takes its pairs `kPairsPerBlock` at a time through
/// every tile of input channels. A tile's sums live in registers across a
/// block; the blocks' rows stay in cache across the tiles. 16-bit floats
/// sum in f32, in a buffer of their own, rounded once at the end.
static void emitOffsetUpdates(LoweringContext &ctx, OpBuilder &b, Location loc,
                              const RulebookBuffers &rulebook, bool inverse,
                              int64_t volume, Value ok, Value features,
                              Value outGrad, int64_t channelsIn,
                              int64_t channelsOut, int64_t groups, Value result,
                              StringRef role) {
  int64_t groupChannelsOut = channelsOut / groups;
  // Nothing to sum: the result has no elements.
  if (channelsIn == 0 || groupChannelsOut == 0)
    return;
  Type elementType = cast<MemRefType>(result.getType()).getElementType();
  Type accType = accumulatorType(elementType);
  Value acc = result;
  if (accType != elementType)
    acc = memref::AllocOp::create(
        b, loc, MemRefType::get({volume, channelsIn, channelsOut}, accType));
  int64_t accBits = accType.getIntOrFloatBitWidth();
  RowBlocking blocking = chooseRowBlocking(
      groupChannelsOut, accBits, ctx.getVectorRegisters(), ctx.getFmaUnits());
  // Equal chunks, or equal ones and a shorter last (vectorChunks).
  SmallVector<int64_t> chunks =
      rowChunks(groupChannelsOut, ctx.getVectorRegisters(), accBits,
                blocking.chunkRegisters);
  int64_t width = chunks.front();
  int64_t fullChunks = llvm::count(chunks, width);
  int64_t rows = std::min(blocking.rows, channelsIn);
  WeightGradTiles tiles{rulebook, inverse,    features,
                        outGrad,  acc,        result,
                        accType,  channelsIn, groupChannelsOut,
                        groups,   rows,       channelsIn / rows * rows};
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero},
          ValueRange{indexConst(b, loc, volume),
                     indexConst(b, loc, chunks.size())},
          ValueRange{one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value offset = ivs[0];
            Value column = arith::MulIOp::create(pb, ploc, ivs[1],
                                                 indexConst(pb, ploc, width));
            auto [begin, end] = pairRange(pb, ploc, rulebook, offset, ok);
            if (fullChunks == static_cast<int64_t>(chunks.size())) {
              tiles.emitChunk(pb, ploc, offset, begin, end, column, width);
              return;
            }
            Value full =
                arith::CmpIOp::create(pb, ploc, arith::CmpIPredicate::ult,
                                      ivs[1], indexConst(pb, ploc, fullChunks));
            scf::IfOp::create(
                pb, ploc, full,
                [&](OpBuilder &tb, Location tloc) {
                  tiles.emitChunk(tb, tloc, offset, begin, end, column, width);
                  scf::YieldOp::create(tb, tloc);
                },
                [&](OpBuilder &eb, Location eloc) {
                  tiles.emitChunk(eb, eloc, offset, begin, end, column,
                                  chunks.back());
                  scf::YieldOp::create(eb, eloc);
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
