//===- TiledWeightGrad.cpp - The GPU's tiled weight gradient --------------===//
//
// Part of the spconv-mlir project.
//
// For static channel counts and no groups: a tiled reduction. A block owns
// a 32 x 32 tile of (input channel, output channel) of one offset and one
// of 8 equal pieces of that offset's pairs; per 32 pairs it stages the
// gathered feature and gradient rows in workgroup memory, and each of its
// 256 threads accumulates 2 x 2 elements in registers. A second kernel sums
// the 8 pieces of every element in order (split-K without atomics), so the
// result is the same on every run.
//
//===----------------------------------------------------------------------===//

#include "GPU/GPU.h"
#include "GPU/GemmKernel.h"
#include "Utils/Builders.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

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
static void emitTiledWeightGrad(OpBuilder &b, Location loc,
                                const RulebookBuffers &rulebook, bool inverse,
                                int64_t volume, Value ok, Value features,
                                Value outGrad, int64_t channelsIn,
                                int64_t channelsOut, Value result, Type accType,
                                StringRef role) {
  MLIRContext *context = b.getContext();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  int64_t inTiles = llvm::divideCeil(channelsIn, kTileChannels);
  int64_t outTiles = llvm::divideCeil(channelsOut, kTileChannels);
  int64_t tileCount = kPairPieces * volume * inTiles * outTiles;
  // Each piece's sums, summed in order by the second kernel.
  Value partial = memref::AllocOp::create(
      b, loc,
      MemRefType::get({kPairPieces, volume, channelsIn, channelsOut}, accType));

  // The staged feature and gradient rows, pair-major.
  auto stagedType =
      gemm::workgroupType(context, {kStagedPairs, kTileChannels}, accType);
  Value stagedIn, stagedGrad;
  gemm::GridStrideLoop loop = gemm::beginGridStrideLoop(
      b, loc, indexConst(b, loc, tileCount), kTileThreads, role,
      [&](OpBuilder &ab) {
        stagedIn = memref::AllocaOp::create(ab, loc, stagedType);
        stagedGrad = memref::AllocaOp::create(ab, loc, stagedType);
      });
  OpBuilder &tb = loop.body;
  Value thread = loop.thread;
  // tile = ((piece * K + offset) * inTiles + ti) * outTiles + to
  Value tile = loop.tile;
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
                Value valid =
                    arith::AndIOp::create(ib, iloc, inPiece, inChannels);
                Value value = gemm::guardedLoad(
                    ib, iloc, valid, accType,
                    [&](OpBuilder &lb, Location lloc) {
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
                    ValueRange{d,
                               arith::AddIOp::create(mb, mloc, ty, stride)}));
                gs.push_back(memref::LoadOp::create(
                    mb, mloc, stagedGrad,
                    ValueRange{d,
                               arith::AddIOp::create(mb, mloc, tx, stride)}));
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
          arith::AddIOp::create(tb, loc, ty,
                                indexConst(tb, loc, a * kTileThreadsPerSide)));
      Value co = arith::AddIOp::create(
          tb, loc, co0,
          arith::AddIOp::create(tb, loc, tx,
                                indexConst(tb, loc, c * kTileThreadsPerSide)));
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
          ValueRange{indexConst(b, loc, volume), indexConst(b, loc, channelsIn),
                     indexConst(b, loc, channelsOut)},
          ValueRange{one, one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value sum =
                arith::ConstantOp::create(pb, ploc, pb.getZeroAttr(accType));
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

void lowering::lowerTiledWeightGrad(OpBuilder &b, Location loc,
                                    const WeightGradBuffers &buffers) {
  emitTiledWeightGrad(b, loc, buffers.rulebook, buffers.inverse, buffers.volume,
                      buffers.ok, buffers.features, buffers.outGrad,
                      buffers.staticChannelsIn, buffers.staticChannelsOut,
                      buffers.result, buffers.accType, buffers.role);
}
