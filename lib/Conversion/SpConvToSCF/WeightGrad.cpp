//===- WeightGrad.cpp - The weight gradient of a rulebook conv -----------===//
//
// Part of the spconv-mlir project.
//
// `weight_grad[j] = sum over the pairs (x -> o) of offset j of
// features[x]^T (x) out_grad[o]`, a reduction with one writer per element,
// summed in the rulebook's pair order: deterministic on every target, no
// atomics.
//  - CPU: one parallel loop over (offset, block of input channels); each
//    iteration owns rows `weight_grad[j, ci.., :]`, held in vector
//    registers while it walks its offset's pairs: per pair one load of the
//    gradient row and one FMA per row and register. The block is as many
//    rows as fit the target's registers. Channel counts known only at run
//    time take a scalar loop that adds into the result in memory.
//  - Grouped convs (`K x Cin/g x Cout`): the same loops, where output
//    channel `co` pairs with input channel `co / (Cout/g) * Cin/g + ci`.
//  - GPU: one thread per element (offset, input channel, output channel),
//    its sum in a register: K x Cin x Cout threads, neighbouring threads
//    reading neighbouring channels of the same gradient row.
//
//===----------------------------------------------------------------------===//

#include "SpConvToSCF.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

/// The first and end pair of `offset`; an empty range where `ok` is false.
static std::pair<Value, Value> pairRange(OpBuilder &b, Location loc,
                                         const RulebookBuffers &rulebook,
                                         Value offset, Value ok) {
  Value begin = memref::LoadOp::create(b, loc, rulebook.offsets, offset);
  Value end = memref::LoadOp::create(
      b, loc, rulebook.offsets,
      ValueRange{arith::AddIOp::create(b, loc, offset,
                                       indexConst(b, loc, 1))});
  return {begin, arith::SelectOp::create(b, loc, ok, end, begin)};
}

/// The GPU form: a thread per element, its sum in a register, rounded once
/// into `result`. Where `ok` is false the pair range is empty: zeros.
static void emitElementPerThread(OpBuilder &b, Location loc,
                                 const RulebookBuffers &rulebook, bool inverse,
                                 int64_t volume, Value ok, Value features,
                                 Value outGrad, Value channelsIn,
                                 Value channelsOut, Value groupChannelsOut,
                                 Value result, Type accType, StringRef role) {
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
            Value column = arith::AddIOp::create(
                pb, ploc,
                arith::MulIOp::create(
                    pb, ploc,
                    arith::DivUIOp::create(pb, ploc, co, groupChannelsOut),
                    channelsIn),
                ci);
            auto [begin, end] = pairRange(pb, ploc, rulebook, offset, ok);
            Value start =
                arith::ConstantOp::create(pb, ploc, pb.getZeroAttr(accType));
            auto sum = scf::ForOp::create(
                pb, ploc, begin, end, one, ValueRange{start},
                [&](OpBuilder &fb, Location floc, Value pair,
                    ValueRange partial) {
                  auto [src, dst] = pairRows(fb, floc, rulebook, inverse, pair);
                  Value a = loadAs(fb, floc, features,
                                   ValueRange{src, column}, accType);
                  Value g = loadAs(fb, floc, outGrad, ValueRange{dst, co},
                                   accType);
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
    if (firstOut)
      col = arith::AddIOp::create(b, loc, firstOut, col);
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
            Value column =
                firstIn ? arith::AddIOp::create(fb, floc, firstIn, ci).getResult()
                        : ci;
            Value a =
                loadAs(fb, floc, features, ValueRange{src, column}, accType);
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
  scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, groups),
      indexConst(b, loc, 1), ValueRange{},
      [&](OpBuilder &gb, Location gloc, Value group, ValueRange) {
        Value firstIn = arith::MulIOp::create(gb, gloc, group,
                                              indexConst(gb, gloc, channelsIn));
        Value firstOut = arith::MulIOp::create(
            gb, gloc, group, indexConst(gb, gloc, groupChannelsOut));
        emitGroupRankUpdate(gb, gloc, srcs, dsts, features, outGrad, acc,
                            offset, channelsIn, chunks, accType, firstIn,
                            firstOut);
        scf::YieldOp::create(gb, gloc);
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

Value lowering::lowerRulebookWeightGrad(LoweringContext &ctx, OpBuilder &b,
                                        RulebookWeightGradOp op,
                                        const RulebookBuffers &rulebook,
                                        Value features, Value outGrad) {
  Location loc = op.getLoc();
  bool inverse = op.getInverse();
  auto resultType = cast<RankedTensorType>(op.getWeightGrad().getType());
  Type elementType = resultType.getElementType();
  Type accType = accumulatorType(elementType);
  int64_t volume = op.getRulebook().getType().getGeometry().getKernelVolume();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  // A group's input and output channels (all of them without groups).
  int64_t groups = op.getGroups();
  Value groupCount = indexConst(b, loc, groups);
  Value channelsIn = arith::DivUIOp::create(
      b, loc, memref::DimOp::create(b, loc, features, 1), groupCount);
  Value channelsOut = memref::DimOp::create(b, loc, outGrad, 1);
  Value groupChannelsOut =
      arith::DivUIOp::create(b, loc, channelsOut, groupCount);

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
  Value ok = arith::AndIOp::create(b, loc, featuresOk, outGradOk);

  SmallVector<Value> sizes;
  for (auto [d, extent] : llvm::enumerate(resultType.getShape()))
    if (ShapedType::isDynamic(extent))
      sizes.push_back(d == 1 ? channelsIn : channelsOut);
  auto bufferType = MemRefType::get(resultType.getShape(), elementType);
  Value result = memref::AllocOp::create(b, loc, bufferType, sizes);
  std::string role;
  llvm::raw_string_ostream os(role);
  os << "weight_grad_" << elementType;
  if (groups != 1)
    os << "_g" << groups;
  if (ctx.getTarget() == LoopTarget::GPU) {
    emitElementPerThread(b, loc, rulebook, inverse, volume, ok, features,
                         outGrad, channelsIn, channelsOut, groupChannelsOut,
                         result, accType, role);
    return result;
  }
  int64_t staticIn = resultType.getDimSize(1), staticOut = resultType.getDimSize(2);
  if (!ShapedType::isDynamic(staticIn) && !ShapedType::isDynamic(staticOut)) {
    emitOffsetUpdates(ctx, b, loc, rulebook, inverse, volume, ok, features,
                      outGrad, staticIn, staticOut, groups, result, role);
    return result;
  }
  // 16-bit floats sum in f32, in a buffer of their own, then round once.
  Value acc = result;
  if (accType != elementType)
    acc = memref::AllocOp::create(
        b, loc, MemRefType::get(resultType.getShape(), accType), sizes);
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero},
          ValueRange{indexConst(b, loc, volume), channelsIn},
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
            auto guard = scf::IfOp::create(pb, ploc, ok);
            OpBuilder tb(guard.thenBlock()->getTerminator());
            Value begin =
                memref::LoadOp::create(tb, ploc, rulebook.offsets, offset);
            Value end = memref::LoadOp::create(
                tb, ploc, rulebook.offsets,
                ValueRange{arith::AddIOp::create(tb, ploc, offset, one)});
            scf::ForOp::create(
                tb, ploc, begin, end, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value pair, ValueRange) {
                  auto [src, dst] = pairRows(fb, floc, rulebook, inverse, pair);
                  // Group by group: input channel ci of group q is column
                  // q * channelsIn + ci of the features.
                  scf::ForOp::create(
                      fb, floc, zero, groupCount, one, ValueRange{},
                      [&](OpBuilder &gb, Location gloc, Value group,
                          ValueRange) {
                        Value column = arith::AddIOp::create(
                            gb, gloc,
                            arith::MulIOp::create(gb, gloc, group, channelsIn),
                            ci);
                        Value a = loadAs(gb, gloc, features,
                                         ValueRange{src, column}, accType);
                        Value firstOut = arith::MulIOp::create(
                            gb, gloc, group, groupChannelsOut);
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
                        scf::YieldOp::create(gb, gloc);
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
      role);
  return result;
}
