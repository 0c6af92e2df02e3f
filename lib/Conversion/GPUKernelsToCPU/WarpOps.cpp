//===- WarpOps.cpp - Shuffles and subgroup reductions, emulated -----------===//
//
// Part of the spconv-mlir project.
//
// A warp-level op ends a phase: every thread's operand goes to per-thread
// storage, then a second loop over the threads reads its partner lane's
// slot. Warps are 32 consecutive linear thread ids, as in CUDA.
//
// gpu.shuffle: lane k reads lane k ^ offset (xor), k + offset (down),
// k - offset (up) or offset (idx); the result is valid when that lane and k
// are below `width` (and not negative). An invalid result is the lane's own
// value, which is what PTX's shfl.sync returns.
//
// gpu.subgroup_reduce: the butterfly that upstream's shuffle lowering emits
// (offsets stride, 2 * stride, ... below stride * cluster size, each step
// `mine op partner's`), so floating-point results round as on the GPU.
//
//===----------------------------------------------------------------------===//

#include "KernelPhases.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::emulation;

/// `lhs op rhs` for a gpu reduction kind, element-wise on vectors.
static Value combine(OpBuilder &b, Location loc, gpu::AllReduceOperation kind,
                     Value lhs, Value rhs) {
  bool isFloat = isa<FloatType>(getElementTypeOrSelf(lhs.getType()));
  using Kind = gpu::AllReduceOperation;
  switch (kind) {
  case Kind::ADD:
    return isFloat ? Value(arith::AddFOp::create(b, loc, lhs, rhs))
                   : Value(arith::AddIOp::create(b, loc, lhs, rhs));
  case Kind::MUL:
    return isFloat ? Value(arith::MulFOp::create(b, loc, lhs, rhs))
                   : Value(arith::MulIOp::create(b, loc, lhs, rhs));
  case Kind::MINUI:
    return arith::MinUIOp::create(b, loc, lhs, rhs);
  case Kind::MINSI:
    return arith::MinSIOp::create(b, loc, lhs, rhs);
  case Kind::MAXUI:
    return arith::MaxUIOp::create(b, loc, lhs, rhs);
  case Kind::MAXSI:
    return arith::MaxSIOp::create(b, loc, lhs, rhs);
  case Kind::MINNUMF:
    return arith::MinNumFOp::create(b, loc, lhs, rhs);
  case Kind::MAXNUMF:
    return arith::MaxNumFOp::create(b, loc, lhs, rhs);
  case Kind::MINIMUMF:
    return arith::MinimumFOp::create(b, loc, lhs, rhs);
  case Kind::MAXIMUMF:
    return arith::MaximumFOp::create(b, loc, lhs, rhs);
  case Kind::AND:
    return arith::AndIOp::create(b, loc, lhs, rhs);
  case Kind::OR:
    return arith::OrIOp::create(b, loc, lhs, rhs);
  case Kind::XOR:
    return arith::XOrIOp::create(b, loc, lhs, rhs);
  }
  llvm_unreachable("unknown gpu reduction");
}

static Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate predicate,
                 Value lhs, Value rhs) {
  return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
}

LogicalResult PhaseSplitter::emitShuffle(gpu::ShuffleOp shuffle, Block &source,
                                         OpBuilder &b) {
  Location loc = shuffle.getLoc();
  FailureOr<SmallVector<Gathered>> operands =
      gather(b, source, shuffle,
             {shuffle.getValue(), shuffle.getOffset(), shuffle.getWidth()});
  if (failed(operands))
    return failure();
  Gathered values = (*operands)[0], offsets = (*operands)[1],
           widths = (*operands)[2];
  Value resultSlot = newSlot(shuffle.getValue().getType(), loc);
  Value validSlot = newSlot(b.getI1Type(), loc);
  gpu::ShuffleMode mode = shuffle.getMode();
  threadLoop(b, loc, [&](OpBuilder &tb, Location tloc, Value thread) {
    auto toIndex = [&](Value i32) -> Value {
      return arith::IndexCastOp::create(tb, tloc, tb.getIndexType(), i32);
    };
    Value lane = laneOf(tb, tloc, thread);
    Value warpBase = arith::SubIOp::create(tb, tloc, thread, lane);
    Value offset = toIndex(read(tb, tloc, offsets, thread));
    Value width = toIndex(read(tb, tloc, widths, thread));
    Value from;
    switch (mode) {
    case gpu::ShuffleMode::XOR:
      from = arith::XOrIOp::create(tb, tloc, lane, offset);
      break;
    case gpu::ShuffleMode::DOWN:
      from = arith::AddIOp::create(tb, tloc, lane, offset);
      break;
    case gpu::ShuffleMode::UP:
      from = arith::SubIOp::create(tb, tloc, lane, offset);
      break;
    case gpu::ShuffleMode::IDX:
      from = offset;
      break;
    }
    using P = arith::CmpIPredicate;
    Value zero = arith::ConstantIndexOp::create(tb, tloc, 0);
    Value sourceThread = arith::AddIOp::create(tb, tloc, warpBase, from);
    // A source past the block's last thread (a partial warp, which the
    // launch reports) reads nothing.
    Value valid = arith::AndIOp::create(
        tb, tloc,
        arith::AndIOp::create(tb, tloc, cmp(tb, tloc, P::sge, from, zero),
                              cmp(tb, tloc, P::slt, from, width)),
        arith::AndIOp::create(
            tb, tloc, cmp(tb, tloc, P::slt, lane, width),
            cmp(tb, tloc, P::ult, sourceThread, block.numThreads)));
    Value reader =
        arith::SelectOp::create(tb, tloc, valid, sourceThread, thread);
    memref::StoreOp::create(tb, tloc, read(tb, tloc, values, reader),
                            resultSlot, ValueRange{thread});
    memref::StoreOp::create(tb, tloc, valid, validSlot, ValueRange{thread});
  });
  slots[shuffle.getShuffleResult()] = resultSlot;
  slots[shuffle.getValid()] = validSlot;
  return success();
}

LogicalResult PhaseSplitter::emitSubgroupReduce(gpu::SubgroupReduceOp reduce,
                                                Block &source, OpBuilder &b) {
  Location loc = reduce.getLoc();
  int64_t size = reduce.getClusterSize().value_or(emulation::kWarpSize);
  int64_t stride = reduce.getClusterStride();
  FailureOr<SmallVector<Gathered>> gathered =
      gather(b, source, reduce, {reduce.getValue()});
  if (failed(gathered))
    return failure();
  Gathered current = (*gathered)[0];
  for (int64_t offset = stride; offset < stride * size; offset <<= 1) {
    Value next = newSlot(reduce.getType(), loc);
    threadLoop(b, loc, [&](OpBuilder &tb, Location tloc, Value thread) {
      Value lane = laneOf(tb, tloc, thread);
      Value partnerLane = arith::XOrIOp::create(
          tb, tloc, lane, arith::ConstantIndexOp::create(tb, tloc, offset));
      Value partner = arith::AddIOp::create(
          tb, tloc, arith::SubIOp::create(tb, tloc, thread, lane), partnerLane);
      Value exists =
          cmp(tb, tloc, arith::CmpIPredicate::ult, partner, block.numThreads);
      partner = arith::SelectOp::create(tb, tloc, exists, partner, thread);
      Value mine = read(tb, tloc, current, thread);
      Value theirs = read(tb, tloc, current, partner);
      memref::StoreOp::create(tb, tloc,
                              combine(tb, tloc, reduce.getOp(), mine, theirs),
                              next, ValueRange{thread});
    });
    current = {{}, next};
  }
  if (current.uniform) // a cluster of one lane
    uniform.map(reduce.getResult(), current.uniform);
  else
    slots[reduce.getResult()] = current.slot;
  return success();
}
