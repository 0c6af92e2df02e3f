//===- PoolGrad.cpp - The gradient of pooling over a rulebook ------------===//
//
// Part of the spconv-mlir project.
//
// Within one kernel offset of a regular rulebook, every input and every
// output site appears in at most one pair (`x = o * s - p + j * d` is
// one-to-one for a fixed j). So "for each offset in order, in parallel over
// its pairs" updates rows without races, and every row sums its terms in
// offset order: deterministic on every target, no atomics.
//  - max: a first pass finds, per output and channel, the input that
//    attains the maximum (strictly greater wins: the lowest offset among
//    ties); a second gives each such input the output's gradient.
//  - avg: a first pass counts each output's contributors; a second gives
//    each contributor the output's gradient over that count.
//
//===----------------------------------------------------------------------===//

#include "Compute/Compute.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

namespace {
/// Emits loops over the pairs of a rulebook, offset by offset.
struct PairWalk {
  const RulebookBuffers &rulebook;
  int64_t volume;
  Value ok; ///< i1: where false, every offset's pair range is empty

  /// for j in offsets: parallel over the pairs of j: body(src, dst).
  void emit(OpBuilder &b, Location loc, StringRef role,
            function_ref<void(OpBuilder &, Location, Value, Value)> body) const {
    forEachOffset(
        b, loc, rulebook, volume,
        [&](OpBuilder &ob, Location oloc, Value, Value begin, Value end) {
          end = arith::SelectOp::create(ob, oloc, ok, end, begin);
          markKernel(
              scf::ParallelOp::create(
                  ob, oloc, ValueRange{begin}, ValueRange{end},
                  ValueRange{indexConst(ob, oloc, 1)},
                  [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                    auto [src, dst] =
                        pairRows(pb, ploc, rulebook, /*inverse=*/false, ivs[0]);
                    body(pb, ploc, src, dst);
                  }),
              role);
        });
  }
};
} // namespace

/// for c in [0, channels): body(c).
static void forEachChannel(OpBuilder &b, Location loc, Value channels,
                           function_ref<void(OpBuilder &, Location, Value)> body) {
  scf::ForOp::create(b, loc, indexConst(b, loc, 0), channels,
                     indexConst(b, loc, 1), ValueRange{},
                     [&](OpBuilder &fb, Location floc, Value c, ValueRange) {
                       body(fb, floc, c);
                       scf::YieldOp::create(fb, floc);
                     });
}

/// A `rows x channels` buffer of `type` with every element `value`.
static Value filledRows(OpBuilder &b, Location loc, Value rows, Value channels,
                        Type type, TypedAttr value, StringRef role) {
  return allocRows(
      b, loc, rows, channels, type,
      [&](OpBuilder &pb, Location ploc, Value, Value) -> Value {
        return arith::ConstantOp::create(pb, ploc, value);
      },
      role);
}

Value lowering::lowerRulebookPoolGrad(LoweringContext &ctx, OpBuilder &b,
                                      RulebookPoolGradOp op,
                                      const RulebookBuffers &rulebook,
                                      Value features, Value outGrad) {
  Location loc = op.getLoc();
  bool isMax = op.getKind() == PoolKind::Max;
  int64_t volume = op.getRulebook().getType().getGeometry().getKernelVolume();
  auto resultType = cast<RankedTensorType>(op.getInGrad().getType());
  Type elementType = resultType.getElementType();
  Type accType = accumulatorType(elementType);
  Value channels = memref::DimOp::create(b, loc, features, 1);

  // Rows of the wrong count are reported and not read: the gradient is then
  // zero.
  Value featuresOk =
      checkFeatureRows(ctx, b, loc, features, rulebook.numIn, 0);
  Value gradOk = checkFeatureRows(ctx, b, loc, outGrad, rulebook.numOut, 2);
  PairWalk walk{rulebook, volume,
                arith::AndIOp::create(b, loc, featuresOk, gradOk)};

  std::string suffix;
  llvm::raw_string_ostream(suffix) << "_" << elementType;
  Value acc = filledRows(b, loc, rulebook.numIn, channels, accType,
                         b.getZeroAttr(accType), "zero_pool_grad" + suffix);
  if (isMax) {
    auto floatType = cast<FloatType>(accType);
    Value best = filledRows(
        b, loc, rulebook.numOut, channels, accType,
        b.getFloatAttr(floatType,
                       APFloat::getInf(floatType.getFloatSemantics(),
                                       /*Negative=*/true)),
        "init_pool_max" + suffix);
    Value arg = filledRows(b, loc, rulebook.numOut, channels, b.getI32Type(),
                           b.getI32IntegerAttr(-1), "init_pool_argmax");
    walk.emit(b, loc, "pool_argmax" + suffix,
              [&](OpBuilder &pb, Location ploc, Value src, Value dst) {
                Value srcI32 = arith::IndexCastOp::create(
                    pb, ploc, pb.getI32Type(), src);
                forEachChannel(pb, ploc, channels,
                               [&](OpBuilder &cb, Location cloc, Value c) {
                                 Value v = loadAs(cb, cloc, features,
                                                  ValueRange{src, c}, accType);
                                 Value cur = memref::LoadOp::create(
                                     cb, cloc, best, ValueRange{dst, c});
                                 Value greater = arith::CmpFOp::create(
                                     cb, cloc, arith::CmpFPredicate::OGT, v,
                                     cur);
                                 scf::IfOp::create(
                                     cb, cloc, greater,
                                     [&](OpBuilder &tb, Location tloc) {
                                       memref::StoreOp::create(
                                           tb, tloc, v, best,
                                           ValueRange{dst, c});
                                       memref::StoreOp::create(
                                           tb, tloc, srcI32, arg,
                                           ValueRange{dst, c});
                                       scf::YieldOp::create(tb, tloc);
                                     });
                               });
              });
    walk.emit(b, loc, "pool_max_grad" + suffix,
              [&](OpBuilder &pb, Location ploc, Value src, Value dst) {
                Value srcI32 = arith::IndexCastOp::create(
                    pb, ploc, pb.getI32Type(), src);
                forEachChannel(
                    pb, ploc, channels,
                    [&](OpBuilder &cb, Location cloc, Value c) {
                      Value winner = memref::LoadOp::create(
                          cb, cloc, arg, ValueRange{dst, c});
                      Value wins = arith::CmpIOp::create(
                          cb, cloc, arith::CmpIPredicate::eq, winner, srcI32);
                      scf::IfOp::create(
                          cb, cloc, wins, [&](OpBuilder &tb, Location tloc) {
                            SmallVector<Value, 2> at{src, c};
                            Value g = loadAs(tb, tloc, outGrad,
                                             ValueRange{dst, c}, accType);
                            Value sum = arith::AddFOp::create(
                                tb, tloc,
                                memref::LoadOp::create(tb, tloc, acc, at), g);
                            memref::StoreOp::create(tb, tloc, sum, acc, at);
                            scf::YieldOp::create(tb, tloc);
                          });
                    });
              });
  } else {
    Value one = indexConst(b, loc, 1);
    Value counts = filledRows(b, loc, rulebook.numOut, one, b.getI32Type(),
                              b.getI32IntegerAttr(0), "zero_pool_counts");
    Value zero = indexConst(b, loc, 0);
    walk.emit(b, loc, "pool_counts",
              [&](OpBuilder &pb, Location ploc, Value, Value dst) {
                SmallVector<Value, 2> at{dst, zero};
                Value count = memref::LoadOp::create(pb, ploc, counts, at);
                memref::StoreOp::create(
                    pb, ploc,
                    arith::AddIOp::create(pb, ploc, count,
                                          i32Const(pb, ploc, 1)),
                    counts, at);
              });
    walk.emit(b, loc, "pool_avg_grad" + suffix,
              [&](OpBuilder &pb, Location ploc, Value src, Value dst) {
                Value count = arith::SIToFPOp::create(
                    pb, ploc, accType,
                    memref::LoadOp::create(pb, ploc, counts,
                                           ValueRange{dst, zero}));
                forEachChannel(
                    pb, ploc, channels,
                    [&](OpBuilder &cb, Location cloc, Value c) {
                      SmallVector<Value, 2> at{src, c};
                      Value g = loadAs(cb, cloc, outGrad, ValueRange{dst, c},
                                       accType);
                      Value sum = arith::AddFOp::create(
                          cb, cloc, memref::LoadOp::create(cb, cloc, acc, at),
                          arith::DivFOp::create(cb, cloc, g, count));
                      memref::StoreOp::create(cb, cloc, sum, acc, at);
                    });
              });
  }

  // The result in its own type (16-bit floats summed in f32), a row per
  // input site; a static row count is checked against the rulebook's.
  SmallVector<Value> sizes{rulebook.numIn};
  if (resultType.isDynamicDim(1))
    sizes.push_back(channels);
  Value result = memref::AllocOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic, resultType.getDimSize(1)},
                      elementType),
      sizes);
  fillRows(
      b, loc, result, rulebook.numIn, channels,
      [&](OpBuilder &pb, Location ploc, Value row, Value c) {
        return loadAs(pb, ploc, acc, ValueRange{row, c}, elementType);
      },
      "store_pool_grad" + suffix);
  return castToChecked(ctx, b, loc, result,
                       MemRefType::get(resultType.getShape(), elementType),
                       SizeCheck::PoolGradRows);
}
