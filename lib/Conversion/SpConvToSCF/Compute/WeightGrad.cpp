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
//  - GPU, static channels, no groups: a tiled reduction. A block owns a
//    32 x 32 tile of (input channel, output channel) of one offset and one
//    of 8 equal pieces of that offset's pairs; per 32 pairs it stages the
//    gathered feature and gradient rows in workgroup memory, and each of its
//    256 threads accumulates 2 x 2 elements in registers. A second kernel
//    sums the 8 pieces of every element in order (split-K without atomics).
//  - GPU otherwise: one thread per element (offset, input channel, output
//    channel), its sum in a register: K x Cin x Cout threads, neighbouring
//    threads reading neighbouring channels of the same gradient row.
//
//===----------------------------------------------------------------------===//

#include "GPU/GemmKernel.h"
#include "SpConv/Conversion/Passes.h"
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
            Value column = addOffset(
                pb, ploc,
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

/// The tiled GPU form's shape: square tiles of channels, pairs staged per
/// step, pieces of each offset's pairs, threads per block (a 16 x 16 grid,
/// each thread 2 x 2 elements of the tile, 16 apart).
static constexpr int64_t kTileChannels = 32;
static constexpr int64_t kStagedPairs = 32;
static constexpr int64_t kPairPieces = 8;
static constexpr int64_t kTileThreadsPerSide = 16;
static constexpr int64_t kTileThreads =
    kTileThreadsPerSide * kTileThreadsPerSide;
static constexpr int64_t kElementsPerSide = kTileChannels / kTileThreadsPerSide;

/// The tiled GPU weight gradient (file comment) for static channel counts
/// and no groups. Where `ok` is false every pair range is empty: zeros.
static void emitTiledWeightGrad(LoweringContext &ctx, OpBuilder &b,
                                Location loc, const RulebookBuffers &rulebook,
                                bool inverse, int64_t volume, Value ok,
                                Value features, Value outGrad,
                                int64_t channelsIn, int64_t channelsOut,
                                Value result, Type accType, StringRef role) {
  MLIRContext *context = b.getContext();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  int64_t inTiles = llvm::divideCeil(channelsIn, kTileChannels);
  int64_t outTiles = llvm::divideCeil(channelsOut, kTileChannels);
  int64_t tileCount = kPairPieces * volume * inTiles * outTiles;
  // Each piece's sums, summed in order by the second kernel.
  Value partial = memref::AllocOp::create(
      b, loc,
      MemRefType::get({kPairPieces, volume, channelsIn, channelsOut}, accType));

  auto launch = gpu::LaunchOp::create(b, loc, indexConst(b, loc, tileCount),
                                      one, one,
                                      indexConst(b, loc, kTileThreads), one, one);
  launch->setAttr(kKernelRoleAttrName, b.getStringAttr(role));
  OpBuilder body = OpBuilder::atBlockEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(body, loc);
  body.setInsertionPointToStart(&launch.getBody().front());
  // Workgroup allocas (spconv-parallel-loops-to-gpu makes them the kernel's
  // attributions): the staged feature and gradient rows, pair-major.
  auto stagedType = gemm::workgroupType(
      context, {kStagedPairs, kTileChannels}, accType);
  Value stagedIn = memref::AllocaOp::create(body, loc, stagedType);
  Value stagedGrad = memref::AllocaOp::create(body, loc, stagedType);
  Value thread = launch.getThreadIds().x;
  auto tileLoop = scf::ForOp::create(body, loc, launch.getBlockIds().x,
                                     indexConst(body, loc, tileCount),
                                     launch.getGridSize().x);
  OpBuilder tb(tileLoop.getBody()->getTerminator());
  // tile = ((piece * K + offset) * inTiles + ti) * outTiles + to
  Value tile = tileLoop.getInductionVar();
  auto divMod = [&](Value value, int64_t divisor) -> std::pair<Value, Value> {
    Value d = indexConst(tb, loc, divisor);
    return {arith::DivUIOp::create(tb, loc, value, d),
            arith::RemUIOp::create(tb, loc, value, d)};
  };
  auto [rest0, to] = divMod(tile, outTiles);
  auto [rest1, ti] = divMod(rest0, inTiles);
  auto [piece, offset] = divMod(rest1, volume);
  Value tileSize = indexConst(tb, loc, kTileChannels);
  Value ci0 = arith::MulIOp::create(tb, loc, ti, tileSize);
  Value co0 = arith::MulIOp::create(tb, loc, to, tileSize);
  auto [begin, end] = pairRange(tb, loc, rulebook, offset, ok);
  Value count = arith::SubIOp::create(tb, loc, end, begin);
  auto boundary = [&](Value p) {
    Value scaled = arith::MulIOp::create(tb, loc, count, p);
    return arith::AddIOp::create(
        tb, loc, begin,
        arith::DivUIOp::create(tb, loc, scaled,
                               indexConst(tb, loc, kPairPieces)));
  };
  Value first = boundary(piece);
  Value last = boundary(arith::AddIOp::create(tb, loc, piece, one));
  auto [ty, tx] = divMod(thread, kTileThreadsPerSide);

  Value accZero = arith::ConstantOp::create(tb, loc, tb.getZeroAttr(accType));
  SmallVector<Value> initial(kElementsPerSide * kElementsPerSide, accZero);
  auto pairLoop = scf::ForOp::create(
      tb, loc, first, last, indexConst(tb, loc, kStagedPairs), initial,
      [&](OpBuilder &pb, Location ploc, Value p0, ValueRange acc) {
        // Stage kStagedPairs pairs: consecutive threads read consecutive
        // channels of one row; zeros past the piece or the channels.
        auto stage = [&](Value staged, Value source, Value c0, int64_t channels,
                         bool isInput) {
          gemm::forEachItemOfBlock(
              pb, ploc, thread, kTileThreads, kStagedPairs * kTileChannels,
              [&](OpBuilder &ib, Location iloc, Value item) {
                Value width = indexConst(ib, iloc, kTileChannels);
                Value d = arith::DivUIOp::create(ib, iloc, item, width);
                Value c = arith::RemUIOp::create(ib, iloc, item, width);
                Value pair = arith::AddIOp::create(ib, iloc, p0, d);
                Value channel = arith::AddIOp::create(ib, iloc, c0, c);
                Value inPiece = arith::CmpIOp::create(
                    ib, iloc, arith::CmpIPredicate::ult, pair, last);
                Value inChannels = arith::CmpIOp::create(
                    ib, iloc, arith::CmpIPredicate::ult, channel,
                    indexConst(ib, iloc, channels));
                Value valid = arith::AndIOp::create(ib, iloc, inPiece, inChannels);
                Value value = gemm::guardedLoad(
                    ib, iloc, valid, accType, [&](OpBuilder &lb, Location lloc) {
                      auto [src, dst] =
                          pairRows(lb, lloc, rulebook, inverse, pair);
                      return loadAs(lb, lloc, source,
                                    {isInput ? src : dst, channel}, accType);
                    });
                memref::StoreOp::create(ib, iloc, value, staged,
                                        ValueRange{d, c});
              });
        };
        stage(stagedIn, features, ci0, channelsIn, /*isInput=*/true);
        stage(stagedGrad, outGrad, co0, channelsOut, /*isInput=*/false);
        gpu::BarrierOp::create(pb, ploc);
        auto multiply = scf::ForOp::create(
            pb, ploc, zero, indexConst(pb, ploc, kStagedPairs), one, acc,
            [&](OpBuilder &mb, Location mloc, Value d, ValueRange sums) {
              // A multiply-add the backend may fuse (math.fma would
              // become a libdevice call).
              auto contract = arith::FastMathFlags::contract;
              SmallVector<Value> xs, gs, next;
              for (int64_t e = 0; e < kElementsPerSide; ++e) {
                Value stride = indexConst(mb, mloc, e * kTileThreadsPerSide);
                xs.push_back(memref::LoadOp::create(
                    mb, mloc, stagedIn,
                    ValueRange{d, arith::AddIOp::create(mb, mloc, ty, stride)}));
                gs.push_back(memref::LoadOp::create(
                    mb, mloc, stagedGrad,
                    ValueRange{d, arith::AddIOp::create(mb, mloc, tx, stride)}));
              }
              for (int64_t a = 0; a < kElementsPerSide; ++a)
                for (int64_t c = 0; c < kElementsPerSide; ++c)
                  next.push_back(arith::AddFOp::create(
                      mb, mloc, sums[a * kElementsPerSide + c],
                      arith::MulFOp::create(mb, mloc, xs[a], gs[c], contract),
                      contract));
              scf::YieldOp::create(mb, mloc, next);
            });
        gpu::BarrierOp::create(pb, ploc);
        scf::YieldOp::create(pb, ploc, multiply.getResults());
      });
  for (int64_t a = 0; a < kElementsPerSide; ++a) {
    for (int64_t c = 0; c < kElementsPerSide; ++c) {
      Value ci = arith::AddIOp::create(
          tb, loc, ci0,
          arith::AddIOp::create(
              tb, loc, ty, indexConst(tb, loc, a * kTileThreadsPerSide)));
      Value co = arith::AddIOp::create(
          tb, loc, co0,
          arith::AddIOp::create(
              tb, loc, tx, indexConst(tb, loc, c * kTileThreadsPerSide)));
      Value inside = arith::AndIOp::create(
          tb, loc,
          arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::ult, ci,
                                indexConst(tb, loc, channelsIn)),
          arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::ult, co,
                                indexConst(tb, loc, channelsOut)));
      scf::IfOp::create(tb, loc, inside, [&](OpBuilder &sb, Location sloc) {
        memref::StoreOp::create(sb, sloc,
                                pairLoop.getResult(a * kElementsPerSide + c),
                                partial, ValueRange{piece, offset, ci, co});
        scf::YieldOp::create(sb, sloc);
      });
    }
  }

  // The pieces of every element, summed in order and rounded once.
  Type elementType = cast<MemRefType>(result.getType()).getElementType();
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero, zero},
          ValueRange{indexConst(b, loc, volume),
                     indexConst(b, loc, channelsIn),
                     indexConst(b, loc, channelsOut)},
          ValueRange{one, one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value sum = arith::ConstantOp::create(pb, ploc,
                                                  pb.getZeroAttr(accType));
            for (int64_t p = 0; p < kPairPieces; ++p)
              sum = arith::AddFOp::create(
                  pb, ploc, sum,
                  memref::LoadOp::create(pb, ploc, partial,
                                         ValueRange{indexConst(pb, ploc, p),
                                                    ivs[0], ivs[1], ivs[2]}));
            memref::StoreOp::create(pb, ploc,
                                    convertScalar(pb, ploc, sum, elementType),
                                    result, ivs);
          }),
      (role + "_sum").str());
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
  int64_t staticIn = resultType.getDimSize(1), staticOut = resultType.getDimSize(2);
  bool staticChannels =
      !ShapedType::isDynamic(staticIn) && !ShapedType::isDynamic(staticOut);
  if (ctx.getTarget() == LoopTarget::GPU && staticChannels && groups == 1) {
    emitTiledWeightGrad(ctx, b, loc, rulebook, inverse, volume, ok, features,
                        outGrad, staticIn, staticOut, result, accType, role);
    return result;
  }
  if (ctx.getTarget() == LoopTarget::GPU) {
    emitElementPerThread(b, loc, rulebook, inverse, volume, ok, features,
                         outGrad, channelsIn, channelsOut, groups,
                         groupChannelsOut, result, accType, role);
    return result;
  }
  if (staticChannels) {
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
      role);
  return result;
}
