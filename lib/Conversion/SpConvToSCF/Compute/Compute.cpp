//===- Compute.cpp - Convolution and pooling loops over a rulebook --------===//
//
// Part of the spconv-mlir project.
//
// The CPU's form of the conv (register-blocked vector row updates, the pairs
// taken in cache-sized chunks) and pooling, which every target runs as
// these loops. Offsets are processed in order and, within one offset, pairs
// in parallel: no two pairs of one offset share an output row (for a fixed
// offset the output determines the input and vice versa), so the scatter
// needs no atomics and every output's sum runs in the same order on every
// run.
//
//===----------------------------------------------------------------------===//

#include "Compute/Compute.h"
#include "Compute/Conv.h"
#include "SpConv/Support/VectorWidth.h"
#include "SpConv/Transforms/RowUpdate.h"
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

/// How many chunks the pairs of `rows` sites with `bytesPerRow` bytes of
/// features and accumulator per site are taken in: chunks of about
/// `chunkBytes` (convert-spconv-to-scf's chunk-bytes), what one pass over the
/// offsets should find in cache.
static Value pairChunks(OpBuilder &b, Location loc, Value rows,
                        Value bytesPerRow, int64_t chunkBytes) {
  Value chunkRows = arith::MaxSIOp::create(
      b, loc, indexConst(b, loc, 1),
      arith::DivSIOp::create(b, loc, indexConst(b, loc, chunkBytes),
                             bytesPerRow));
  return arith::MaxSIOp::create(
      b, loc, indexConst(b, loc, 1),
      arith::CeilDivSIOp::create(b, loc, rows, chunkRows));
}

/// for c in chunks: for j in offsets: parallel over the c-th of `chunks`
/// equal pieces of the pairs of j, in groups of `groupSize`: body(j, src
/// rows, dst rows) gets a full group, or one pair at a time at the end of a
/// piece. Pairs are sorted by row within an offset, so piece c of every
/// offset touches about the same rows: a chunk's offsets revisit rows that
/// are still in cache, where a pass over all the pairs of one offset at a
/// time would stream every row from memory 27 times. Chunks run one after
/// the other, so each output row still sums in a fixed order.
static void forEachPair(OpBuilder &b, Location loc,
                        const RulebookBuffers &rulebook, int64_t volume,
                        bool inverse, int64_t groupSize, Value chunks,
                        StringRef role,
                        function_ref<void(OpBuilder &, Location, Value,
                                          ArrayRef<Value>, ArrayRef<Value>)>
                            body) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value group = indexConst(b, loc, groupSize);
  auto rowsOf = [&](OpBuilder &pb, Location ploc, Value pair) {
    return pairRows(pb, ploc, rulebook, inverse, pair);
  };
  auto chunkLoop = scf::ForOp::create(b, loc, zero, chunks, one);
  OpBuilder cb(chunkLoop.getBody()->getTerminator(), b.getListener());
  Value chunk = chunkLoop.getInductionVar();
  forEachOffset(
      cb, loc, rulebook, volume,
      [&](OpBuilder &ob, Location oloc, Value offset, Value offsetBegin,
          Value offsetEnd) {
        // The chunk-th piece [begin, end) of [offsetBegin, offsetEnd).
        Value count = arith::SubIOp::create(ob, oloc, offsetEnd, offsetBegin);
        auto boundary = [&](Value c) {
          return arith::AddIOp::create(
              ob, oloc, offsetBegin,
              arith::DivSIOp::create(
                  ob, oloc, arith::MulIOp::create(ob, oloc, count, c), chunks));
        };
        Value begin = boundary(chunk);
        Value end = boundary(arith::AddIOp::create(ob, oloc, chunk, one));
        markKernel(
            scf::ParallelOp::create(
                ob, oloc, ValueRange{begin}, ValueRange{end}, ValueRange{group},
                [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                  Value first = ivs[0];
                  if (groupSize == 1) {
                    auto [src, dst] = rowsOf(pb, ploc, first);
                    body(pb, ploc, offset, src, dst);
                    return;
                  }
                  Value full = arith::CmpIOp::create(
                      pb, ploc, arith::CmpIPredicate::ule,
                      arith::AddIOp::create(pb, ploc, first, group), end);
                  scf::IfOp::create(
                      pb, ploc, full,
                      [&](OpBuilder &tb, Location tloc) {
                        SmallVector<Value> srcs, dsts;
                        for (int64_t g = 0; g < groupSize; ++g) {
                          auto [src, dst] = rowsOf(
                              tb, tloc,
                              arith::AddIOp::create(tb, tloc, first,
                                                    indexConst(tb, tloc, g)));
                          srcs.push_back(src);
                          dsts.push_back(dst);
                        }
                        body(tb, tloc, offset, srcs, dsts);
                        scf::YieldOp::create(tb, tloc);
                      },
                      [&](OpBuilder &eb, Location eloc) {
                        scf::ForOp::create(
                            eb, eloc, first, end, one, ValueRange{},
                            [&](OpBuilder &fb, Location floc, Value pair,
                                ValueRange) {
                              auto [src, dst] = rowsOf(fb, floc, pair);
                              body(fb, floc, offset, src, dst);
                              scf::YieldOp::create(fb, floc);
                            });
                        scf::YieldOp::create(eb, eloc);
                      });
                }),
            role);
      });
}

/// Pairs a depthwise row update takes at a time, and the registers of its
/// chunks: it holds no sums across input channels, so the FMA units'
/// blocking does not apply; eight pairs share each weight chunk load.
static constexpr int64_t kDepthwisePairs = 8;
static constexpr int64_t kDepthwiseChunkRegisters = 2;

/// acc[dsts[g], :] += features[srcs[g], :] @ weight[offset] for a static
/// output width: each chunk of output channels is `chunkRegisters` vector
/// registers per pair of the group (chooseRowBlocking), accumulating a
/// broadcast-FMA per input channel; one weight load serves the whole group.
/// Each row is stored once per chunk.
static void
emitVectorRowUpdate(OpBuilder &b, Location loc,
                    const VectorRegisters &registers, int64_t chunkRegisters,
                    Value acc, ArrayRef<Value> dsts, Value features,
                    ArrayRef<Value> srcs, Value weight, Value offset,
                    Value channelsIn, int64_t channelsOut, Type accType,
                    Value firstIn = Value(), Value firstOut = Value()) {
  Type weightElement = cast<MemRefType>(weight.getType()).getElementType();
  emitVectorRowUpdates(
      b, loc, registers, chunkRegisters, acc, dsts, srcs, channelsIn,
      channelsOut,
      [&](OpBuilder &fb, Location floc, Value ci, Value column, int64_t width) {
        Value w = vector::LoadOp::create(
            fb, floc, VectorType::get({width}, weightElement), weight,
            ValueRange{offset, ci, column});
        if (weightElement != accType)
          w = arith::ExtFOp::create(fb, floc, VectorType::get({width}, accType),
                                    w);
        return w;
      },
      [&](OpBuilder &fb, Location floc, Value src, Value ci) {
        return loadAs(fb, floc, features, {src, addOffset(fb, floc, firstIn, ci)},
                      accType);
      },
      firstOut);
}

/// The grouped form of emitVectorRowUpdate: one register-blocked update per
/// group, over the group's `channelsIn` input and `groupChannelsOut` output
/// channels.
static void emitGroupedRowUpdate(OpBuilder &b, Location loc,
                                 const VectorRegisters &registers,
                                 int64_t chunkRegisters, Value acc,
                                 ArrayRef<Value> dsts, Value features,
                                 ArrayRef<Value> srcs, Value weight,
                                 Value offset, Value channelsIn, int64_t groups,
                                 int64_t groupChannelsOut, Type accType) {
  forEachGroup(
      b, loc, groups, channelsIn, indexConst(b, loc, groupChannelsOut),
      [&](OpBuilder &gb, Location gloc, Value firstIn, Value firstOut) {
        emitVectorRowUpdate(gb, gloc, registers, chunkRegisters, acc, dsts,
                            features, srcs, weight, offset, channelsIn,
                            groupChannelsOut, accType, firstIn, firstOut);
      });
}

/// The depthwise form (a channel per group, `K x 1 x C` weight):
/// acc[dsts[g], c] += features[srcs[g], c] * weight[offset, 0, c], a vector
/// of channels at a time, each weight chunk loaded once for the group.
static void emitDepthwiseRowUpdate(OpBuilder &b, Location loc,
                                   const VectorRegisters &registers, Value acc,
                                   ArrayRef<Value> dsts, Value features,
                                   ArrayRef<Value> srcs, Value weight,
                                   Value offset, int64_t channels,
                                   Type accType) {
  Value zero = indexConst(b, loc, 0);
  int64_t start = 0;
  for (int64_t width :
       rowChunks(channels, registers, accType.getIntOrFloatBitWidth(),
                 kDepthwiseChunkRegisters)) {
    Value column = indexConst(b, loc, start);
    start += width;
    auto accVector = VectorType::get({width}, accType);
    auto asAcc = [&](Value memref, ValueRange at) -> Value {
      Type element = cast<MemRefType>(memref.getType()).getElementType();
      Value v = vector::LoadOp::create(
          b, loc, VectorType::get({width}, element), memref, at);
      if (element != accType)
        v = arith::ExtFOp::create(b, loc, accVector, v);
      return v;
    };
    Value w = asAcc(weight, {offset, zero, column});
    for (auto [src, dst] : llvm::zip_equal(srcs, dsts)) {
      Value sum = vector::LoadOp::create(b, loc, accVector, acc,
                                         ValueRange{dst, column});
      Value x = asAcc(features, {src, column});
      vector::StoreOp::create(b, loc,
                              vector::FMAOp::create(b, loc, x, w, sum), acc,
                              ValueRange{dst, column});
    }
  }
}

/// The same for a dynamic output width, one scalar dot product per output
/// channel.
static void emitScalarRowUpdate(OpBuilder &b, Location loc, Value acc,
                                Value dst, Value features, Value src,
                                Value weight, Value offset, Value channelsIn,
                                Value channelsOut, Type accType, int64_t groups,
                                Value groupChannelsOut) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  scf::ForOp::create(
      b, loc, zero, channelsOut, one, ValueRange{},
      [&](OpBuilder &cb, Location cloc, Value co, ValueRange) {
        emitDotUpdate(cb, cloc, acc, dst, co, features, src, weight, offset,
                      channelsIn, accType,
                      groupFirstInput(cb, cloc, co, groups, channelsIn,
                                      groupChannelsOut));
        scf::YieldOp::create(cb, cloc);
      });
}

Value lowering::lowerConvLoops(LoweringContext &ctx, OpBuilder &b,
                               RulebookConvOp op, const ConvBuffers &buffers) {
  Location loc = op.getLoc();
  ConvShape shape = getConvShape(b, op, buffers);
  const RulebookBuffers &rulebook = buffers.rulebook;
  bool inverse = shape.inverse;
  int64_t volume = shape.volume, groups = shape.groups;
  Type elementType = shape.elementType, accType = shape.accType;
  Value rows = shape.rows, channelsIn = shape.channelsIn,
        channelsOut = shape.channelsOut;
  Value features = buffers.features, weight = buffers.weight,
        destination = buffers.destination;
  const EpilogueBuffers &epilogue = buffers.epilogue;
  auto weightType = cast<MemRefType>(weight.getType());
  Value acc = allocConvAccumulator(b, loc, shape, buffers);
  std::string role = computeRole(inverse ? "inverse_conv" : "conv",
                                 elementType, weightType, groups);
  OpBuilder pairs = guardFeatureRows(ctx, b, loc, features,
                                     inverse ? rulebook.numOut : rulebook.numIn,
                                     inverse ? 1 : 0);
  std::optional<int64_t> staticChannelsOut;
  if (!weightType.isDynamicDim(2))
    staticChannelsOut = weightType.getDimSize(2);
  bool depthwise = staticChannelsOut && groups > 1 &&
                   groups == *staticChannelsOut &&
                   weightType.getDimSize(1) == 1;
  // Groups of pairs share each weight load (no two pairs of one offset
  // write the same row, so a group's updates are independent), blocked
  // for the target over the columns one update covers (a group's).
  RowBlocking blocking{/*rows=*/1, /*chunkRegisters=*/1};
  if (depthwise)
    blocking = {kDepthwisePairs, kDepthwiseChunkRegisters};
  else if (staticChannelsOut)
    blocking = chooseRowBlocking(*staticChannelsOut / groups,
                                 accType.getIntOrFloatBitWidth(),
                                 ctx.getVectorRegisters(), ctx.getFmaUnits());
  int64_t groupSize = blocking.rows;
  // Bytes per site that a pass over the offsets touches: a feature row and
  // an accumulator row.
  int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  int64_t accBytes = accType.getIntOrFloatBitWidth() / 8;
  Value bytesPerRow = arith::AddIOp::create(
      pairs, loc,
      arith::MulIOp::create(pairs, loc,
                            memref::DimOp::create(pairs, loc, features, 1),
                            indexConst(pairs, loc, elementBytes)),
      arith::MulIOp::create(pairs, loc, channelsOut,
                            indexConst(pairs, loc, accBytes)));
  Value chunks = pairChunks(
      pairs, loc,
      arith::MaxSIOp::create(pairs, loc, rulebook.numIn, rulebook.numOut),
      bytesPerRow, ctx.getChunkBytes());
  forEachPair(
      pairs, loc, rulebook, volume, inverse, groupSize, chunks, role,
      [&](OpBuilder &pb, Location ploc, Value offset, ArrayRef<Value> srcs,
          ArrayRef<Value> dsts) {
        // acc[dst, :] += features[src, :] @ weight[offset]
        if (!staticChannelsOut)
          emitScalarRowUpdate(pb, ploc, acc, dsts[0], features, srcs[0], weight,
                              offset, channelsIn, channelsOut, accType, groups,
                              shape.groupChannelsOut);
        else if (groups == 1)
          emitVectorRowUpdate(pb, ploc, ctx.getVectorRegisters(),
                              blocking.chunkRegisters, acc, dsts, features,
                              srcs, weight, offset, channelsIn,
                              *staticChannelsOut, accType);
        else if (depthwise)
          emitDepthwiseRowUpdate(pb, ploc, ctx.getVectorRegisters(), acc, dsts,
                                 features, srcs, weight, offset,
                                 *staticChannelsOut, accType);
        else
          emitGroupedRowUpdate(pb, ploc, ctx.getVectorRegisters(),
                               blocking.chunkRegisters, acc, dsts, features,
                               srcs, weight, offset, channelsIn, groups,
                               *staticChannelsOut / groups, accType);
      });
  if (epilogue) {
    // Rows are final only once the walk is over: the last offset that
    // updates a row is not known where the row is updated.
    SmallVector<int64_t> chunks;
    if (staticChannelsOut)
      chunks =
          rowChunks(*staticChannelsOut, ctx.getVectorRegisters(),
                    accType.getIntOrFloatBitWidth(), blocking.chunkRegisters);
    return finishRowsWithEpilogue(ctx, b, loc, acc, rows, channelsOut,
                                  shape.resultType, epilogue, chunks,
                                  destination);
  }
  return finishRows(ctx, b, loc, acc, rows, channelsOut, shape.resultType,
                    SizeCheck::ConvRows, destination);
}

Value lowering::lowerRulebookPool(LoweringContext &ctx, OpBuilder &b,
                                  RulebookPoolOp op,
                                  const RulebookBuffers &rulebook,
                                  Value features) {
  Location loc = op.getLoc();
  bool isMax = op.getKind() == PoolKind::Max;
  int64_t volume = op.getRulebook().getType().getGeometry().getKernelVolume();
  Type elementType =
      cast<RankedTensorType>(op.getFeatures().getType()).getElementType();
  Type accType = accumulatorType(elementType);
  Value rows = rulebook.numOut;
  Value channels = memref::DimOp::create(b, loc, features, 1);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);

  // Every output has at least one contributor, so -inf never survives a max.
  auto initial = cast<FloatType>(accType);
  TypedAttr start =
      isMax ? TypedAttr(b.getFloatAttr(
                  initial, APFloat::getInf(initial.getFloatSemantics(),
                                           /*Negative=*/true)))
            : TypedAttr(b.getZeroAttr(accType));
  Value acc =
      allocRows(b, loc, rows, channels, accType,
                [&](OpBuilder &pb, Location ploc, Value, Value) {
                  return arith::ConstantOp::create(pb, ploc, start).getResult();
                });
  Value contributors;
  if (!isMax) {
    contributors = alloc1d(b, loc, b.getI32Type(), rows);
    markKernel(scf::ParallelOp::create(
                   b, loc, ValueRange{zero}, ValueRange{rows}, ValueRange{one},
                   [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                     memref::StoreOp::create(pb, ploc, i32Const(pb, ploc, 0),
                                             contributors, ivs);
                   }),
               "zero_counts");
  }
  std::string role;
  llvm::raw_string_ostream(role)
      << (isMax ? "max_pool_" : "avg_pool_") << elementType;
  OpBuilder pairs =
      guardFeatureRows(ctx, b, loc, features, rulebook.numIn, /*what=*/0);
  Value chunks = pairChunks(
      pairs, loc,
      arith::MaxSIOp::create(pairs, loc, rulebook.numIn, rulebook.numOut),
      arith::MulIOp::create(pairs, loc, channels,
                            indexConst(pairs, loc,
                                       (elementType.getIntOrFloatBitWidth() +
                                        accType.getIntOrFloatBitWidth()) /
                                           8)),
      ctx.getChunkBytes());
  forEachPair(
      pairs, loc, rulebook, volume, /*inverse=*/false, /*groupSize=*/1, chunks,
      role,
      [&](OpBuilder &pb, Location ploc, Value, ArrayRef<Value> srcs,
          ArrayRef<Value> dsts) {
        Value src = srcs[0], dst = dsts[0];
        if (!isMax) {
          Value count = memref::LoadOp::create(pb, ploc, contributors, dst);
          memref::StoreOp::create(
              pb, ploc,
              arith::AddIOp::create(pb, ploc, count, i32Const(pb, ploc, 1)),
              contributors, dst);
        }
        scf::ForOp::create(
            pb, ploc, zero, channels, one, ValueRange{},
            [&](OpBuilder &cb, Location cloc, Value c, ValueRange) {
              Value x = loadAs(cb, cloc, features, {src, c}, accType);
              Value current =
                  memref::LoadOp::create(cb, cloc, acc, ValueRange{dst, c});
              Value next =
                  isMax
                      ? arith::MaximumFOp::create(cb, cloc, current, x)
                            .getResult()
                      : arith::AddFOp::create(cb, cloc, current, x).getResult();
              memref::StoreOp::create(cb, cloc, next, acc, ValueRange{dst, c});
              scf::YieldOp::create(cb, cloc);
            });
      });
  if (!isMax) {
    markKernel(
        scf::ParallelOp::create(
            b, loc, ValueRange{zero, zero}, ValueRange{rows, channels},
            ValueRange{one, one},
            [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
              Value count = arith::SIToFPOp::create(
                  pb, ploc, accType,
                  memref::LoadOp::create(pb, ploc, contributors, ivs[0]));
              Value sum = memref::LoadOp::create(pb, ploc, acc, ivs);
              memref::StoreOp::create(
                  pb, ploc, arith::DivFOp::create(pb, ploc, sum, count), acc,
                  ivs);
            }),
        "average");
  }
  return finishRows(ctx, b, loc, acc, rows, channels,
                    resultBufferType(op.getOutFeatures()), SizeCheck::PoolRows,
                    /*destination=*/Value());
}
