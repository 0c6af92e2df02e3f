//===- Checks.cpp - Run-time checks and the runtime's error reports -------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Utils/Checks.h"

#include "Utils/Builders.h"

#include "SpConv/IR/SourceLines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

Value lowering::callRuntime(LoweringContext &ctx, OpBuilder &b, Location loc,
                            StringRef name, ValueRange arguments) {
  func::FuncOp function = ctx.getRuntimeFunction(name, TypeRange(arguments),
                                                 TypeRange{b.getI32Type()});
  Value status = func::CallOp::create(b, loc, function, arguments).getResult(0);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, status,
                               i32Const(b, loc, 0));
}

/// Records an error through the runtime report `name`, whose arguments are
/// all i64 (its status is not needed: the report is the failure).
static void reportError(LoweringContext &ctx, OpBuilder &b, Location loc,
                        StringRef name, ArrayRef<Value> scalars) {
  SmallVector<Value> arguments;
  for (Value scalar : scalars)
    arguments.push_back(convertScalar(b, loc, scalar, b.getI64Type()));
  callRuntime(ctx, b, loc, name, arguments);
}

void lowering::reportBadIndex(LoweringContext &ctx, OpBuilder &b, Location loc,
                              Value position, Value value, Value bound) {
  reportError(ctx, b, loc, "spconv_rt_report_bad_index",
              {position, value, bound});
}

/// A kernel over `[0, count)` running `body(position)`.
static void
forEachOnDevice(OpBuilder &b, Location loc, Value count, StringRef role,
                function_ref<void(OpBuilder &, Location, Value)> body) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero}, ValueRange{count}, ValueRange{one},
                 [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                   body(pb, ploc, ivs[0]);
                 }),
             role);
}

/// reportFirstBad on the GPU: the search's state lives in a two-word buffer
/// of device memory, [first bad position (INT64_MAX: none), its index].
static Value reportFirstBadOnDevice(
    LoweringContext &ctx, OpBuilder &b, Location loc, Value count, Value bound,
    function_ref<Value(OpBuilder &, Location, Value)> isBad,
    function_ref<Value(OpBuilder &, Location, Value)> indexAt) {
  Type i64 = b.getI64Type();
  auto stateType = MemRefType::get({2}, i64);
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  Value state = memref::AllocOp::create(
      b, bufferLoc(loc, "the search for a bad index"), stateType);
  // Two threads, not one: a single-iteration loop would fold to host code.
  forEachOnDevice(b, loc, indexConst(b, loc, 2), "bad_index_init",
                  [&](OpBuilder &pb, Location ploc, Value slot) {
                    Value isFirst = arith::CmpIOp::create(
                        pb, ploc, arith::CmpIPredicate::eq, slot,
                        indexConst(pb, ploc, 0));
                    memref::StoreOp::create(
                        pb, ploc,
                        arith::SelectOp::create(pb, ploc, isFirst,
                                                i64Const(pb, ploc, kNone),
                                                i64Const(pb, ploc, 0)),
                        state, ValueRange{slot});
                  });
  forEachOnDevice(b, loc, count, "find_bad_index",
                  [&](OpBuilder &pb, Location ploc, Value i) {
                    scf::IfOp::create(
                        pb, ploc, isBad(pb, ploc, i),
                        [&](OpBuilder &tb, Location tloc) {
                          memref::AtomicRMWOp::create(
                              tb, tloc, arith::AtomicRMWKind::mins,
                              arith::IndexCastOp::create(tb, tloc, i64, i),
                              state, ValueRange{indexConst(tb, tloc, 0)});
                          scf::YieldOp::create(tb, tloc);
                        });
                  });
  // Host memory: only the copies and the loads below touch it.
  Value host = memref::AllocOp::create(b, loc, stateType);
  memref::CopyOp::create(b, loc, state, host);
  Value first =
      memref::LoadOp::create(b, loc, host, ValueRange{indexConst(b, loc, 0)});
  Value found = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, first,
                                      i64Const(b, loc, kNone));
  scf::IfOp::create(b, loc, found, [&](OpBuilder &tb, Location tloc) {
    Value position =
        arith::IndexCastOp::create(tb, tloc, tb.getIndexType(), first);
    forEachOnDevice(tb, tloc, count, "fetch_bad_index",
                    [&](OpBuilder &pb, Location ploc, Value i) {
                      Value isFirst = arith::CmpIOp::create(
                          pb, ploc, arith::CmpIPredicate::eq, i, position);
                      scf::IfOp::create(
                          pb, ploc, isFirst, [&](OpBuilder &ib, Location iloc) {
                            memref::StoreOp::create(
                                ib, iloc,
                                arith::IndexCastOp::create(
                                    ib, iloc, i64, indexAt(ib, iloc, i)),
                                state, ValueRange{indexConst(ib, iloc, 1)});
                            scf::YieldOp::create(ib, iloc);
                          });
                    });
    memref::CopyOp::create(tb, tloc, state, host);
    Value index = memref::LoadOp::create(tb, tloc, host,
                                         ValueRange{indexConst(tb, tloc, 1)});
    reportBadIndex(ctx, tb, tloc, position, index, bound);
    scf::YieldOp::create(tb, tloc);
  });
  return arith::XOrIOp::create(b, loc, found,
                               arith::ConstantIntOp::create(b, loc, 1, 1));
}

Value lowering::reportFirstBad(
    LoweringContext &ctx, OpBuilder &b, Location loc, Value count, Value bound,
    function_ref<Value(OpBuilder &, Location, Value)> isBad,
    function_ref<Value(OpBuilder &, Location, Value)> indexAt) {
  if (ctx.getMachine().deviceBuffers)
    return reportFirstBadOnDevice(ctx, b, loc, count, bound, isBad, indexAt);
  Value zero = indexConst(b, loc, 0);
  Value first = findFirst(b, loc, zero, count, isBad);
  Value found =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, first, zero);
  scf::IfOp::create(b, loc, found, [&](OpBuilder &tb, Location tloc) {
    reportBadIndex(ctx, tb, tloc, first, indexAt(tb, tloc, first), bound);
    scf::YieldOp::create(tb, tloc);
  });
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, first, zero);
}

void lowering::reportFirstBadIndex(
    LoweringContext &ctx, OpBuilder &b, Location loc, Value count, Value bound,
    function_ref<Value(OpBuilder &, Location, Value)> indexAt) {
  reportFirstBad(
      ctx, b, loc, count, bound,
      [&](OpBuilder &fb, Location floc, Value i) -> Value {
        Value index = indexAt(fb, floc, i);
        Value below = arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::slt,
                                            index, indexConst(fb, floc, -1));
        Value above = arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::sge,
                                            index, bound);
        return arith::OrIOp::create(fb, floc, below, above);
      },
      indexAt);
}

Value lowering::checkFeatureRows(LoweringContext &ctx, OpBuilder &b,
                                 Location loc, Value features, Value expected,
                                 int64_t what) {
  Value rows = memref::DimOp::create(b, loc, features, 0);
  Value ok =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rows, expected);
  scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location tloc) { scf::YieldOp::create(tb, tloc); },
      [&](OpBuilder &eb, Location eloc) {
        reportError(ctx, eb, eloc, "spconv_rt_report_row_mismatch",
                    {rows, expected, i64Const(eb, eloc, what)});
        scf::YieldOp::create(eb, eloc);
      });
  return ok;
}

Value lowering::checkSize(LoweringContext &ctx, OpBuilder &b, Location loc,
                          Value actual, Value expected, SizeCheck what) {
  Value ok =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, actual, expected);
  return checkCondition(ctx, b, loc, ok, actual, expected, what);
}

Value lowering::checkCondition(LoweringContext &ctx, OpBuilder &b, Location loc,
                               Value ok, Value actual, Value expected,
                               SizeCheck what) {
  scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location tloc) { scf::YieldOp::create(tb, tloc); },
      [&](OpBuilder &eb, Location eloc) {
        reportError(ctx, eb, eloc, "spconv_rt_report_size_mismatch",
                    {i64Const(eb, eloc, static_cast<int64_t>(what)), actual,
                     expected, sourceLineValue(eb, loc, ctx.getModule())});
        scf::YieldOp::create(eb, eloc);
      });
  return ok;
}

Value lowering::checkSizeIf(LoweringContext &ctx, OpBuilder &b, Location loc,
                            Value precondition, Value actual, Value expected,
                            SizeCheck what) {
  if (!precondition)
    return checkSize(ctx, b, loc, actual, expected, what);
  return scf::IfOp::create(
             b, loc, precondition,
             [&](OpBuilder &tb, Location tloc) {
               scf::YieldOp::create(tb, tloc,
                                    ValueRange{checkSize(ctx, tb, tloc, actual,
                                                         expected, what)});
             },
             [&](OpBuilder &eb, Location eloc) {
               scf::YieldOp::create(eb, eloc, ValueRange{precondition});
             })
      .getResult(0);
}

Value lowering::checkStaticSize(LoweringContext &ctx, OpBuilder &b,
                                Location loc, int64_t staticActual,
                                Value actual, int64_t expected,
                                SizeCheck what) {
  if (ShapedType::isDynamic(expected) || !ShapedType::isDynamic(staticActual))
    return Value();
  return checkSize(ctx, b, loc, actual, indexConst(b, loc, expected), what);
}

Value lowering::castToChecked(LoweringContext &ctx, OpBuilder &b, Location loc,
                              Value buffer, MemRefType type, SizeCheck what) {
  auto bufferType = cast<MemRefType>(buffer.getType());
  SmallVector<Value> checks;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!type.isDynamicDim(d) && bufferType.isDynamicDim(d))
      checks.push_back(checkSize(ctx, b, loc,
                                 memref::DimOp::create(b, loc, buffer, d),
                                 indexConst(b, loc, type.getDimSize(d)), what));
  Value ok = allOf(b, loc, checks);
  if (!ok)
    return castTo(b, loc, buffer, type);
  return scf::IfOp::create(
             b, loc, ok,
             [&](OpBuilder &tb, Location tloc) {
               scf::YieldOp::create(tb, tloc, castTo(tb, tloc, buffer, type));
             },
             [&](OpBuilder &eb, Location eloc) {
               SmallVector<Value> dynamicSizes;
               for (int64_t d = 0; d < type.getRank(); ++d)
                 if (type.isDynamicDim(d))
                   dynamicSizes.push_back(
                       memref::DimOp::create(eb, eloc, buffer, d));
               Value zeros =
                   memref::AllocOp::create(eb, eloc, type, dynamicSizes);
               fillZeros(eb, eloc, zeros);
               scf::YieldOp::create(eb, eloc, zeros);
             })
      .getResult(0);
}
