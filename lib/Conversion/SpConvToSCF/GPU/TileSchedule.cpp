//===- TileSchedule.cpp - Which rows and offsets a GPU conv tile visits ---===//
//
// Part of the spconv-mlir project.
//
// A tile of the implicit-GEMM convolution stages and multiplies every kernel
// offset at least one of its rows has a neighbour at. With output rows in
// their own order, a 128-row tile of a LiDAR scan has neighbours at 23 of 27
// offsets while each row has about 7. The schedule orders the rows by their
// offset mask (a stable sort, so the order is deterministic), which puts
// rows with the same neighbourhood side by side, and records for each group
// of kScheduleGroupRows consecutive slots which offsets any of its rows has:
// a tile visits the offsets of its groups only.
//
//===----------------------------------------------------------------------===//

#include "GPU/ImplicitGemm.h"
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

/// Offsets past this one do not enter the sort key (an i64 that must stay
/// nonnegative); they still enter the groups' offset lists.
static constexpr int64_t kMaxKeyOffsets = 62;

TileSchedule lowering::buildTileSchedule(LoweringContext &ctx, OpBuilder &b,
                                         Location loc, Value table,
                                         int64_t volume, Value rows) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Type i64 = b.getI64Type(), i32 = b.getI32Type();
  auto dynamic = [&](Type element) {
    return MemRefType::get({ShapedType::kDynamic}, element);
  };
  Location scheduleLoc = bufferLoc(loc, "the tile schedule of a rulebook");
  Value keys =
      memref::AllocOp::create(b, scheduleLoc, dynamic(i64), ValueRange{rows});
  Value order =
      memref::AllocOp::create(b, scheduleLoc, dynamic(i32), ValueRange{rows});
  int64_t keyOffsets = std::min(volume, kMaxKeyOffsets);
  // key[r] = sum over offsets k where row r has a neighbour of 2^k.
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero}, ValueRange{rows}, ValueRange{one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value row = ivs[0];
            Value noKey = arith::ConstantIntOp::create(pb, ploc, i64, 0);
            auto mask = scf::ForOp::create(
                pb, ploc, indexConst(pb, ploc, 0),
                indexConst(pb, ploc, keyOffsets), indexConst(pb, ploc, 1),
                ValueRange{noKey},
                [&](OpBuilder &fb, Location floc, Value k, ValueRange key) {
                  Value source = memref::LoadOp::create(fb, floc, table,
                                                        ValueRange{row, k});
                  Value hit =
                      arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::sge,
                                            source, i32Const(fb, floc, 0));
                  Value bit = arith::ShLIOp::create(
                      fb, floc, arith::ExtUIOp::create(fb, floc, i64, hit),
                      arith::IndexCastOp::create(fb, floc, i64, k));
                  scf::YieldOp::create(
                      fb, floc,
                      ValueRange{arith::OrIOp::create(fb, floc, key[0], bit)});
                });
            memref::StoreOp::create(pb, ploc, mask.getResult(0), keys, row);
            memref::StoreOp::create(
                pb, ploc, arith::IndexCastOp::create(pb, ploc, i32, row), order,
                row);
          }),
      "tile_schedule_keys");
  // Stable: rows with the same mask keep their order, so the schedule, and
  // with it every result, does not depend on the sort's implementation.
  callRuntime(ctx, b, loc, "spconv_rt_memref_sort_pairs_bits",
              {keys, order, i64Const(b, loc, keyOffsets)});

  Value groupRows = indexConst(b, loc, kScheduleGroupRows);
  Value groups = arith::CeilDivUIOp::create(b, loc, rows, groupRows);
  Value k = indexConst(b, loc, volume);
  Value offsets = memref::AllocOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic, volume}, b.getI8Type()),
      ValueRange{groups});
  // offsets[g, k] = 1 if a row in slots [32 g, 32 g + 32) has a neighbour at
  // offset k.
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero}, ValueRange{groups, k},
          ValueRange{one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value first = arith::MulIOp::create(pb, ploc, ivs[0], groupRows);
            Value last = arith::MinUIOp::create(
                pb, ploc, arith::AddIOp::create(pb, ploc, first, groupRows),
                rows);
            Value none = arith::ConstantIntOp::create(pb, ploc, 0, 1);
            auto any = scf::ForOp::create(
                pb, ploc, first, last, indexConst(pb, ploc, 1),
                ValueRange{none},
                [&](OpBuilder &fb, Location floc, Value slot, ValueRange seen) {
                  Value row = arith::IndexCastOp::create(
                      fb, floc, fb.getIndexType(),
                      memref::LoadOp::create(fb, floc, order, slot));
                  Value source = memref::LoadOp::create(
                      fb, floc, table, ValueRange{row, ivs[1]});
                  Value hit =
                      arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::sge,
                                            source, i32Const(fb, floc, 0));
                  scf::YieldOp::create(
                      fb, floc,
                      ValueRange{arith::OrIOp::create(fb, floc, seen[0], hit)});
                });
            memref::StoreOp::create(pb, ploc,
                                    arith::ExtUIOp::create(pb, ploc,
                                                           pb.getI8Type(),
                                                           any.getResult(0)),
                                    offsets, ivs);
          }),
      "tile_schedule_offsets");
  return TileSchedule{order, offsets};
}
