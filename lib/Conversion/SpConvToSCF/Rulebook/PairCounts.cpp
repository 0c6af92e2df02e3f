//===- PairCounts.cpp - Per-(offset, block) pair counts of a builder ------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Rulebook/PairCounts.h"
#include "Rulebook/BuildStatus.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

PairCounts::PairCounts(OpBuilder &b, Location loc, int64_t volume, Value blocks)
    : volume(volume), blocks(blocks) {
  counts = alloc1d(
      b, bufferLoc(loc, "the pair counts of a rulebook build"), b.getI64Type(),
      arith::MulIOp::create(b, loc, blocks, indexConst(b, loc, volume)));
}

Value PairCounts::index(OpBuilder &b, Location loc, Value offset, Value block) {
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, blocks, offset), block);
}

void PairCounts::store(OpBuilder &b, Location loc, Value count, Value offset,
                       Value block) {
  memref::StoreOp::create(b, loc,
                          arith::ExtUIOp::create(b, loc, b.getI64Type(), count),
                          counts, ValueRange{index(b, loc, offset, block)});
}

void PairCounts::increment(OpBuilder &b, Location loc, Value offset,
                           Value block) {
  Value at = index(b, loc, offset, block);
  Value count = memref::LoadOp::create(b, loc, counts, ValueRange{at});
  memref::StoreOp::create(
      b, loc, arith::AddIOp::create(b, loc, count, i64Const(b, loc, 1)), counts,
      ValueRange{at});
}

Value PairCounts::scan(LoweringContext &ctx, OpBuilder &b, Location loc,
                       const BuildStatus &status) {
  return callRuntime(
      ctx, b, loc, "spconv_rt_memref_exclusive_scan_i64_deferred",
      {counts, counts, status.slot(b, loc, BuildStatus::PairTotal)});
}

Value PairCounts::firstSlot(OpBuilder &b, Location loc, Value offset,
                            Value block) {
  return arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, counts,
                             ValueRange{index(b, loc, offset, block)}));
}

Value PairCounts::buildOffsets(OpBuilder &b, Location loc, Value valid,
                               Value total) {
  Value offsets = memref::AllocOp::create(
      b, loc, MemRefType::get({volume + 1}, b.getIndexType()));
  // Block 0 of an offset is where its pairs start; offset `volume` is the
  // total. A kernel: the counts stay where they were computed.
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value any = arith::AndIOp::create(
      b, loc, valid,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, blocks, zero));
  Value last = indexConst(b, loc, volume);
  Value end = arith::SelectOp::create(b, loc, valid, total, zero);
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero}, ValueRange{indexConst(b, loc, volume + 1)},
          ValueRange{one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value offset = ivs[0];
            Value isLast = arith::CmpIOp::create(
                pb, ploc, arith::CmpIPredicate::eq, offset, last);
            Value inside = arith::AndIOp::create(
                pb, ploc, any,
                arith::CmpIOp::create(pb, ploc, arith::CmpIPredicate::ult,
                                      offset, last));
            Value start = arith::IndexCastOp::create(
                pb, ploc, pb.getIndexType(),
                loadOrZero(pb, ploc, inside, counts,
                           ValueRange{index(pb, ploc, offset,
                                            indexConst(pb, ploc, 0))}));
            memref::StoreOp::create(
                pb, ploc, arith::SelectOp::create(pb, ploc, isLast, end, start),
                offsets, ValueRange{offset});
          }),
      "offsets");
  return offsets;
}

SubmSearchPlan::SubmSearchPlan(GeometryAttr geometry, bool subm)
    : volume(geometry.getKernelVolume()) {
  symmetric = subm && llvm::all_of(geometry.getKernel(),
                                   [](int64_t k) { return k % 2 == 1; });
  centre = (volume - 1) / 2;
  for (int64_t offset = 0; offset < (symmetric ? centre : volume); ++offset)
    searched.push_back(offset);
}

Value SubmSearchPlan::mirror(OpBuilder &b, Location loc, Value offset) const {
  return arith::SubIOp::create(b, loc, indexConst(b, loc, volume - 1), offset);
}

void lowering::storeCentrePair(OpBuilder &b, Location loc, Value pairIn,
                               Value pairOut, Value firstCentre, Value position,
                               Value start, Value row) {
  Value slot = arith::AddIOp::create(
      b, loc, firstCentre, arith::SubIOp::create(b, loc, position, start));
  storeSubmPairs(b, loc, pairIn, pairOut, slot, Value(), row, row);
}

Value lowering::writePairIfFound(
    OpBuilder &b, Location loc, Value found, Value first, Value written,
    function_ref<void(OpBuilder &, Location, Value)> write) {
  auto ifOp = scf::IfOp::create(
      b, loc, found,
      [&](OpBuilder &tb, Location tloc) {
        write(tb, tloc, arith::AddIOp::create(tb, tloc, first, written));
        scf::YieldOp::create(tb, tloc,
                             ValueRange{arith::AddIOp::create(
                                 tb, tloc, written, indexConst(tb, tloc, 1))});
      },
      [&](OpBuilder &eb, Location eloc) {
        scf::YieldOp::create(eb, eloc, written);
      });
  return ifOp.getResult(0);
}

void lowering::storeSubmPairs(OpBuilder &b, Location loc, Value pairIn,
                              Value pairOut, Value slot, Value mirroredSlot,
                              Value neighbour, Value row) {
  auto store = [&](Value value, Value buffer, Value at) {
    memref::StoreOp::create(b, loc, value, buffer, ValueRange{at});
  };
  store(neighbour, pairIn, slot);
  store(row, pairOut, slot);
  if (mirroredSlot) {
    store(row, pairIn, mirroredSlot);
    store(neighbour, pairOut, mirroredSlot);
  }
}
