//===- BuildStatus.cpp - What a rulebook build finds out about its data ---===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Rulebook/BuildStatus.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

static constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

static MemRefType statusType(MLIRContext *context) {
  return MemRefType::get({BuildStatus::NumSlots},
                         IntegerType::get(context, 64));
}

BuildStatus::BuildStatus(OpBuilder &b, Location loc) {
  buffer = memref::AllocOp::create(
      b, bufferLoc(loc, "the status of a rulebook build"),
      statusType(b.getContext()));
  // The rows start at "none", the sizes at 0 (what a failed call leaves).
  // One thread per slot (a single-iteration loop would fold to host code).
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero},
                 ValueRange{indexConst(b, loc, NumSlots)}, ValueRange{one},
                 [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                   Value isRow = arith::CmpIOp::create(
                       pb, ploc, arith::CmpIPredicate::ult, ivs[0],
                       indexConst(pb, ploc, PairTotal));
                   memref::StoreOp::create(
                       pb, ploc,
                       arith::SelectOp::create(pb, ploc, isRow,
                                               i64Const(pb, ploc, kNone),
                                               i64Const(pb, ploc, 0)),
                       buffer, ivs);
                 }),
             "init_status");
}

Value BuildStatus::slot(OpBuilder &b, Location loc, Slot which) const {
  Value view = memref::SubViewOp::create(
      b, loc, buffer, ArrayRef<OpFoldResult>{b.getIndexAttr(which)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  MLIRContext *context = b.getContext();
  return castTo(b, loc, view,
                MemRefType::get({ShapedType::kDynamic}, b.getI64Type(),
                                StridedLayoutAttr::get(
                                    context, ShapedType::kDynamic, {1})));
}

void BuildStatus::lowerTo(OpBuilder &b, Location loc, Slot which,
                          Value value) const {
  memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::mins, value, buffer,
                              ValueRange{indexConst(b, loc, which)});
}

SmallVector<Value> BuildStatus::readBack(OpBuilder &b, Location loc,
                                         ArrayRef<Slot> slots) const {
  // Host memory: only the copy and the loads below touch it.
  Value host = memref::AllocOp::create(b, loc, statusType(b.getContext()));
  memref::CopyOp::create(b, loc, buffer, host);
  SmallVector<Value> values;
  for (Slot which : slots)
    values.push_back(memref::LoadOp::create(
        b, loc, host, ValueRange{indexConst(b, loc, which)}));
  return values;
}

int64_t lowering::outsideSiteKey(ArrayRef<int64_t> shape, int64_t batchSize) {
  // The verifier and effectiveBatchSize keep it inside int64.
  return batchSize * *checkedProduct(shape);
}

int64_t lowering::siteKeyBits(ArrayRef<int64_t> shape, int64_t batchSize) {
  return std::max<int64_t>(1, llvm::Log2_64(static_cast<uint64_t>(
                                  outsideSiteKey(shape, batchSize))) +
                                  1);
}

Value lowering::linearizeSites(OpBuilder &b, Location loc, Value coords,
                               Value n, ArrayRef<int64_t> shape,
                               int64_t batchSize, const BuildStatus &status) {
  Type i64 = b.getI64Type();
  Value keys = alloc1d(b, bufferLoc(loc, "the site keys of a rulebook build"),
                       i64, n);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero}, ValueRange{n}, ValueRange{one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value row = ivs[0];
            auto column = [&](int64_t c) {
              return loadAs(pb, ploc, coords, {row, indexConst(pb, ploc, c)},
                            i64);
            };
            auto inRange = [&](Value x, int64_t bound) {
              return arith::AndIOp::create(
                  pb, ploc,
                  arith::CmpIOp::create(pb, ploc, arith::CmpIPredicate::sge, x,
                                        i64Const(pb, ploc, 0)),
                  arith::CmpIOp::create(pb, ploc, arith::CmpIPredicate::slt, x,
                                        i64Const(pb, ploc, bound)));
            };
            Value batch = column(0);
            Value inside = inRange(batch, batchSize);
            SmallVector<Value> spatial;
            for (auto [d, extent] : llvm::enumerate(shape)) {
              spatial.push_back(column(d + 1));
              inside = arith::AndIOp::create(pb, ploc, inside,
                                             inRange(spatial.back(), extent));
            }
            Value key = arith::SelectOp::create(
                pb, ploc, inside, linearKey(pb, ploc, batch, spatial, shape),
                i64Const(pb, ploc, outsideSiteKey(shape, batchSize)));
            memref::StoreOp::create(pb, ploc, key, keys, ValueRange{row});
            Value outside = arith::XOrIOp::create(
                pb, ploc, inside,
                arith::ConstantOp::create(pb, ploc, pb.getBoolAttr(true)));
            scf::IfOp::create(
                pb, ploc, outside, [&](OpBuilder &tb, Location tloc) {
                  status.lowerTo(
                      tb, tloc, BuildStatus::BadRow,
                      arith::IndexCastOp::create(tb, tloc, i64, row));
                  scf::YieldOp::create(tb, tloc);
                });
          }),
      "linearize");
  return keys;
}

void lowering::delinearizeSites(OpBuilder &b, Location loc, Value keys, Value n,
                                ArrayRef<int64_t> shape, Value coords) {
  Type i32 = b.getI32Type();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero}, ValueRange{n}, ValueRange{one},
                 [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                   Value key = memref::LoadOp::create(pb, ploc, keys,
                                                      ValueRange{ivs[0]});
                   // The last dimension varies fastest; the leading quotient is
                   // the batch index.
                   for (int64_t d = shape.size(); d-- > 0;) {
                     Value extent = i64Const(pb, ploc, shape[d]);
                     Value x = arith::RemUIOp::create(pb, ploc, key, extent);
                     memref::StoreOp::create(
                         pb, ploc, arith::TruncIOp::create(pb, ploc, i32, x),
                         coords,
                         ValueRange{ivs[0], indexConst(pb, ploc, d + 1)});
                     key = arith::DivUIOp::create(pb, ploc, key, extent);
                   }
                   memref::StoreOp::create(
                       pb, ploc, arith::TruncIOp::create(pb, ploc, i32, key),
                       coords, ValueRange{ivs[0], indexConst(pb, ploc, 0)});
                 }),
             "delinearize");
}

/// Reports the first error the read-back values show; returns whether there
/// was none (i1).
static Value checkBuild(LoweringContext &ctx, OpBuilder &b, Location loc,
                        Value coords, Value keys, ArrayRef<int64_t> shape,
                        int64_t batchSize, Value badRow, Value repeatRow,
                        Value pairTotal) {
  Value none = i64Const(b, loc, kNone);
  Value failed = arith::OrIOp::create(
      b, loc,
      arith::OrIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, badRow, none),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, repeatRow,
                                none)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, pairTotal,
                            i64Const(b, loc, 0)));
  scf::IfOp::create(b, loc, failed, [&](OpBuilder &tb, Location tloc) {
    MLIRContext *context = tb.getContext();
    auto anyCoords = MemRefType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic}, tb.getI32Type(),
        StridedLayoutAttr::get(context, ShapedType::kDynamic,
                               {ShapedType::kDynamic, ShapedType::kDynamic}));
    callRuntime(ctx, tb, tloc, "spconv_rt_memref_report_build_error",
                {castTo(tb, tloc, coords, anyCoords), keys,
                 i64Array(tb, tloc, shape), i64Const(tb, tloc, batchSize),
                 badRow, repeatRow, pairTotal});
    scf::YieldOp::create(tb, tloc);
  });
  return arith::XOrIOp::create(
      b, loc, failed, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
}

BuiltPairs lowering::readBackPairs(LoweringContext &ctx, OpBuilder &b,
                                   Location loc, const BuildStatus &status,
                                   Value scanned, Value coords, Value keys,
                                   ArrayRef<int64_t> shape, int64_t batchSize,
                                   bool withUnique) {
  SmallVector<BuildStatus::Slot> slots = {
      BuildStatus::BadRow, BuildStatus::RepeatRow, BuildStatus::PairTotal};
  if (withUnique)
    slots.push_back(BuildStatus::UniqueCount);
  SmallVector<Value> outcome = status.readBack(b, loc, slots);
  Value valid = arith::AndIOp::create(b, loc, scanned,
                                      checkBuild(ctx, b, loc, coords, keys,
                                                 shape, batchSize, outcome[0],
                                                 outcome[1], outcome[2]));
  auto sizeIfValid = [&](Value value) {
    return arith::SelectOp::create(
        b, loc, valid,
        arith::IndexCastOp::create(b, loc, b.getIndexType(), value),
        indexConst(b, loc, 0));
  };
  BuiltPairs built{valid, sizeIfValid(outcome[2]), Value()};
  if (withUnique)
    built.unique = sizeIfValid(outcome[3]);
  return built;
}

bool lowering::canCheckAtReturn(Operation *op) {
  auto function = dyn_cast_or_null<func::FuncOp>(op->getParentOp());
  return function && function.getBody().hasOneBlock() &&
         isa<func::ReturnOp>(function.getBody().front().back());
}

void lowering::checkAtReturn(LoweringContext &ctx, OpBuilder &b, Operation *op,
                             const BuildStatus &status, Value coords,
                             Value keys, ArrayRef<int64_t> shape,
                             int64_t batchSize) {
  assert(canCheckAtReturn(op) && "no single return to check before");
  Location loc = op->getLoc();
  Block &body = cast<func::FuncOp>(op->getParentOp()).getBody().front();
  Operation *ret = &body.back();
  OpBuilder::InsertionGuard guard(b);
  // The host buffer first, so that nothing but the copies (and the frees
  // of what they copied) comes between the read-backs.
  b.setInsertionPointToStart(&body);
  Value host = memref::AllocOp::create(b, loc, statusType(b.getContext()));
  Operation *&checks = ctx.getReturnChecks(ret);
  b.setInsertionPoint(checks ? checks : ret);
  auto copy = memref::CopyOp::create(b, loc, status.getBuffer(), host);
  b.setInsertionPoint(ret);
  auto load = [&](BuildStatus::Slot slot) {
    return memref::LoadOp::create(b, loc, host,
                                  ValueRange{indexConst(b, loc, slot)})
        .getResult();
  };
  Value badRow = load(BuildStatus::BadRow);
  Value repeatRow = load(BuildStatus::RepeatRow);
  if (!checks)
    checks = copy->getNextNode();
  // The build counted no pairs: its total is 0, never an overflow.
  checkBuild(ctx, b, loc, coords, keys, shape, batchSize, badRow, repeatRow,
             i64Const(b, loc, 0));
}
