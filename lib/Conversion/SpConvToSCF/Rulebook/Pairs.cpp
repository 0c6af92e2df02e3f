//===- Pairs.cpp - Rulebooks to tensors of pairs and back -----------------===//
//
// Part of the spconv-mlir project.
//
// spconv.rulebook_pairs hands out a rulebook's buffers as tensors (the
// offsets widened from index to i64); spconv.rulebook_from_pairs takes them
// back, checking them first: pairs from outside the function must not make
// a later op read outside its buffers. Both lower for the CPU and the GPU
// targets.
//
//===----------------------------------------------------------------------===//

#include "Rulebook/Rulebook.h"
#include "TypeConversion.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

/// A new `memref<(K+1)xT>` of `offsets` (K+1 values) converted to `type`
/// (index or i64), or zeros where `keep` (i1, may be null) does not hold.
static Value convertOffsets(OpBuilder &b, Location loc, Value offsets,
                            int64_t count, Type type, Value keep) {
  Value result = memref::AllocOp::create(
      b, bufferLoc(loc, "the offsets of a rulebook's pairs"),
      MemRefType::get({count}, type));
  scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, count),
      indexConst(b, loc, 1), ValueRange{},
      [&](OpBuilder &fb, Location floc, Value j, ValueRange) {
        Value value = convertScalar(
            fb, floc, memref::LoadOp::create(fb, floc, offsets, j), type);
        if (keep)
          value = arith::SelectOp::create(
              fb, floc, keep, value,
              arith::ConstantOp::create(fb, floc, fb.getZeroAttr(type)));
        memref::StoreOp::create(fb, floc, value, result, j);
        scf::YieldOp::create(fb, floc);
      });
  return result;
}

namespace {
struct RulebookPairsLowering : SpConvOpLowering<RulebookPairsOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(RulebookPairsOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RulebookBuffers rulebook =
        RulebookBuffers::fromValues(adaptor.getRulebook());
    int64_t count =
        op.getRulebook().getType().getGeometry().getKernelVolume() + 1;
    Value offsets = convertOffsets(rewriter, loc, rulebook.offsets, count,
                                   rewriter.getI64Type(), Value());
    Value pairs = memref::LoadOp::create(rewriter, loc, rulebook.offsets,
                                         indexConst(rewriter, loc, count - 1));
    // The rulebook's own buffers, as long as its pairs: the rulebook is
    // never written after its build.
    SmallVector<Value> results = {
        toTensor(rewriter, loc, prefix(rewriter, loc, rulebook.pairIn, pairs),
                 op.getInRows().getType()),
        toTensor(rewriter, loc, prefix(rewriter, loc, rulebook.pairOut, pairs),
                 op.getOutRows().getType()),
        // convertOffsets made it memref<K+1xi64>, the result's shape.
        toTensor(rewriter, loc, offsets, op.getOffsets().getType())};
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct RulebookFromPairsLowering : SpConvOpLowering<RulebookFromPairsOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(RulebookFromPairsOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Value inRows = toOperandBuffer(b, loc, single(adaptor.getInRows()));
    Value outRows = toOperandBuffer(b, loc, single(adaptor.getOutRows()));
    Value offsets = toOperandBuffer(b, loc, single(adaptor.getOffsets()));
    Value numIn = single(adaptor.getNumIn());
    Value numOut = single(adaptor.getNumOut());
    int64_t count =
        op.getRulebook().getType().getGeometry().getKernelVolume() + 1;
    // The host checks the offsets and sizes the launches from them; on the
    // GPU they are device memory, read through one copy (spconv-gpu-memory
    // makes it a device-to-host memcpy). The rows stay on the device, and
    // reportFirstBad checks them there.
    if (ctx.getMachine().deviceBuffers) {
      Value hostOffsets = memref::AllocOp::create(
          b, bufferLoc(loc, "the host copy of a rulebook's pair offsets"),
          MemRefType::get({count}, b.getI64Type()));
      memref::CopyOp::create(b, loc, offsets, hostOffsets);
      offsets = hostOffsets;
    }
    Type i64 = b.getI64Type();
    auto offsetAt = [&](OpBuilder &ob, Location oloc, Value j) -> Value {
      return memref::LoadOp::create(ob, oloc, offsets, j);
    };
    // The verifier fixed the offsets' count at K + 1: they must start at 0,
    // never decrease and fit both row tensors. Each check runs only if the
    // ones before it held.
    Value zero = indexConst(b, loc, 0);
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    auto andThen = [&](function_ref<Value(OpBuilder &, Location)> check) {
      ok = scf::IfOp::create(
               b, loc, ok,
               [&](OpBuilder &tb, Location tloc) {
                 scf::YieldOp::create(tb, tloc, ValueRange{check(tb, tloc)});
               },
               [&](OpBuilder &eb, Location eloc) {
                 scf::YieldOp::create(eb, eloc, ValueRange{ok});
               })
               .getResult(0);
    };
    andThen([&](OpBuilder &tb, Location tloc) {
      Value first = offsetAt(tb, tloc, indexConst(tb, tloc, 0));
      Value zero64 = i64Const(tb, tloc, 0);
      return checkCondition(ctx, tb, tloc,
                            arith::CmpIOp::create(tb, tloc,
                                                  arith::CmpIPredicate::eq,
                                                  first, zero64),
                            first, zero64, SizeCheck::PairOffsetsFirst);
    });
    andThen([&](OpBuilder &tb, Location tloc) {
      Value drop = findFirst(
          tb, tloc, indexConst(tb, tloc, 1), indexConst(tb, tloc, count),
          [&](OpBuilder &fb, Location floc, Value j) -> Value {
            Value before =
                arith::SubIOp::create(fb, floc, j, indexConst(fb, floc, 1));
            return arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::slt,
                                         offsetAt(fb, floc, j),
                                         offsetAt(fb, floc, before));
          });
      Value none = arith::CmpIOp::create(tb, tloc, arith::CmpIPredicate::slt,
                                         drop, indexConst(tb, tloc, 0));
      // Where it dropped (position 1 stands in when nothing did; the
      // values are then not reported).
      Value at = arith::SelectOp::create(tb, tloc, none,
                                         indexConst(tb, tloc, 1), drop);
      return checkCondition(
          ctx, tb, tloc, none, offsetAt(tb, tloc, at),
          offsetAt(
              tb, tloc,
              arith::SubIOp::create(tb, tloc, at, indexConst(tb, tloc, 1))),
          SizeCheck::PairOffsetsOrder);
    });
    andThen([&](OpBuilder &tb, Location tloc) {
      Value pairs = offsetAt(tb, tloc, indexConst(tb, tloc, count - 1));
      Value shorter = arith::MinSIOp::create(
          tb, tloc, memref::DimOp::create(tb, tloc, inRows, zero),
          memref::DimOp::create(tb, tloc, outRows, zero));
      Value shorter64 = convertScalar(tb, tloc, shorter, i64);
      return checkCondition(ctx, tb, tloc,
                            arith::CmpIOp::create(tb, tloc,
                                                  arith::CmpIPredicate::sle,
                                                  pairs, shorter64),
                            pairs, shorter64, SizeCheck::PairRows);
    });
    // The pairs the offsets cover, every row inside its side's sites.
    Value pairs = arith::SelectOp::create(
        b, loc, ok,
        convertScalar(b, loc, offsetAt(b, loc, indexConst(b, loc, count - 1)),
                      b.getIndexType()),
        zero);
    for (auto [rows, bound] : {std::pair{inRows, numIn}, {outRows, numOut}}) {
      Value rowsOf = rows, boundOf = bound;
      auto rowAt = [&](OpBuilder &fb, Location floc, Value i) -> Value {
        return convertScalar(fb, floc,
                             memref::LoadOp::create(fb, floc, rowsOf, i),
                             fb.getIndexType());
      };
      Value none = reportFirstBad(
          ctx, b, loc, pairs, boundOf,
          [&](OpBuilder &fb, Location floc, Value i) -> Value {
            return arith::XOrIOp::create(
                fb, floc, inRange(fb, floc, rowAt(fb, floc, i), boundOf),
                arith::ConstantIntOp::create(fb, floc, 1, 1));
          },
          rowAt);
      ok = arith::AndIOp::create(b, loc, ok, none);
    }
    // A rulebook whose pairs failed a check is empty.
    RulebookBuffers rulebook;
    rulebook.numIn = numIn;
    rulebook.numOut = numOut;
    rulebook.offsets =
        convertOffsets(b, loc, offsets, count, b.getIndexType(), ok);
    Value kept = arith::SelectOp::create(b, loc, ok, pairs, zero);
    rulebook.pairIn = prefix(b, loc, inRows, kept);
    rulebook.pairOut = prefix(b, loc, outRows, kept);
    rewriter.replaceOpWithMultiple(op, {rulebook.toValues()});
    return success();
  }
};
} // namespace

void lowering::populateRulebookPairsPatterns(const TypeConverter &converter,
                                             LoweringContext &ctx,
                                             RewritePatternSet &patterns) {
  patterns.add<RulebookPairsLowering, RulebookFromPairsLowering>(converter,
                                                                 ctx);
}
