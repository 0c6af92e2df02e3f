//===- Concat.cpp - Convs that write into a concatenation's buffer --------===//
//
// Part of the spconv-mlir project.
//
// A U-Net decoder concatenates an upsampled feature map with the skip
// features along the channels (`tensor.concat dim(1)`). Bufferized on its
// own, the concatenation allocates its result and copies every operand into
// a column slice of it. Here a rulebook conv whose only user is such a
// concatenation writes its rows straight into its column slice (a strided
// view of the joint buffer): the conv's result is never a buffer of its own
// and never copied. Operands with other users (the skip features, which the
// next encoder stage reads too) are copied once, as before.
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
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

/// Whether the lowering allocates the buffer of `concat` and checks its
/// operands' rows: rank-2 features side by side, with dynamic rows and
/// static channels (so every operand's columns are static).
static bool isFeatureConcat(tensor::ConcatOp concat) {
  RankedTensorType type = concat.getResultType();
  return concat.getDim() == 1 && type.getRank() == 2 && type.isDynamicDim(0) &&
         !type.isDynamicDim(1) &&
         llvm::none_of(concat.getInputs(), [](Value operand) {
           return cast<RankedTensorType>(operand.getType()).isDynamicDim(1);
         });
}

/// The column where operand `index` of a feature concatenation starts.
static int64_t columnOffset(tensor::ConcatOp concat, unsigned index) {
  int64_t offset = 0;
  for (Value operand : concat.getInputs().take_front(index))
    offset += cast<RankedTensorType>(operand.getType()).getDimSize(1);
  return offset;
}

void lowering::planConcatDestinations(LoweringContext &ctx) {
  LoweringContext::ConcatPlan &plan = ctx.getConcatPlan();
  ctx.getModule().walk([&](tensor::ConcatOp concat) {
    if (isFeatureConcat(concat))
      plan.buffers[concat] = {};
  });
  ctx.getModule().walk([&](RulebookConvOp conv) {
    // One user besides shape queries (which the view answers as well).
    Value result = conv.getOutFeatures();
    OpOperand *only = nullptr;
    for (OpOperand &use : result.getUses()) {
      if (isa<tensor::DimOp>(use.getOwner()))
        continue;
      if (only)
        return;
      only = &use;
    }
    if (!only)
      return;
    // A feature concatenation in the conv's block: the buffer is created
    // where the first of its convs runs and must dominate the others. Its
    // rows are the conv's, known at run time only (a static count would
    // need its own check against the rulebook's).
    auto concat = dyn_cast<tensor::ConcatOp>(only->getOwner());
    if (!concat || !plan.buffers.contains(concat) ||
        concat->getBlock() != conv->getBlock() ||
        !cast<RankedTensorType>(result.getType()).isDynamicDim(0))
      return;
    plan.slots[conv] = {concat, only->getOperandNumber()};
  });
}

/// `buffer`'s columns [column, column + channels) of its first `rows` rows:
/// `memref<? x channels, strided<[C, 1], offset: column>>`.
static Value columnSlice(OpBuilder &b, Location loc, Value buffer, Value rows,
                         int64_t column, int64_t channels) {
  return memref::SubViewOp::create(
      b, loc, buffer, {b.getIndexAttr(0), b.getIndexAttr(column)},
      {rows, b.getIndexAttr(channels)}, {b.getIndexAttr(1), b.getIndexAttr(1)});
}

/// Zeros in the columns of an operand whose rows did not match: a parallel
/// loop, so that on a GPU the buffer stays device memory (a host loop would
/// need it where the host can write it).
static void zeroColumns(OpBuilder &b, Location loc, Value slice) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value value = arith::ConstantOp::create(
      b, loc,
      b.getZeroAttr(cast<MemRefType>(slice.getType()).getElementType()));
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero, zero},
                 ValueRange{memref::DimOp::create(b, loc, slice, 0),
                            memref::DimOp::create(b, loc, slice, 1)},
                 ValueRange{one, one},
                 [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                   memref::StoreOp::create(pb, ploc, value, slice, ivs);
                 }),
             "zero_columns");
}

/// Creates the buffer of `concat` with `rows` rows, nothing in it yet.
static void createJointBuffer(OpBuilder &b, Location loc,
                              tensor::ConcatOp concat,
                              LoweringContext::ConcatPlan::Buffer &joint,
                              Value rows) {
  RankedTensorType type = concat.getResultType();
  joint.buffer = memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()),
      ValueRange{rows});
  joint.inPlace.assign(concat.getInputs().size(), false);
}

Value lowering::concatDestination(LoweringContext &ctx, OpBuilder &b,
                                  Location loc, RulebookConvOp op, Value rows) {
  LoweringContext::ConcatPlan &plan = ctx.getConcatPlan();
  auto slot = plan.slots.find(op);
  if (slot == plan.slots.end())
    return {};
  auto concat = cast<tensor::ConcatOp>(slot->second.concat);
  unsigned index = slot->second.operand;
  LoweringContext::ConcatPlan::Buffer &joint = plan.buffers[concat];
  int64_t column = columnOffset(concat, index);
  int64_t channels =
      cast<RankedTensorType>(op.getOutFeatures().getType()).getDimSize(1);
  if (!joint.buffer) {
    // The first conv sizes the buffer by its rows.
    createJointBuffer(b, loc, concat, joint, rows);
    joint.inPlace[index] = true;
    return columnSlice(b, loc, joint.buffer, rows, column, channels);
  }
  // The buffer must be created before this conv (the conversion visits ops
  // in order, so it is); where not, the conv writes a buffer of its own,
  // which is copied as before.
  Operation *alloc = joint.buffer.getDefiningOp();
  if (alloc->getBlock() != b.getInsertionBlock() ||
      (b.getInsertionPoint() != b.getInsertionBlock()->end() &&
       !alloc->isBeforeInBlock(&*b.getInsertionPoint())))
    return {};
  joint.inPlace[index] = true;
  // Every operand has the concatenation's rows. A conv with other rows
  // writes a scratch buffer of the same layout instead, and its slice of the
  // joint buffer is zero: nothing is written past the joint buffer.
  Value jointRows = memref::DimOp::create(b, loc, joint.buffer, 0);
  // Reported at the concatenation, whose operands disagree.
  Value ok = checkSize(ctx, b, concat.getLoc(), rows, jointRows,
                       SizeCheck::ConcatRows);
  auto choice = scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location tloc) {
        scf::YieldOp::create(
            tb, tloc,
            columnSlice(tb, tloc, joint.buffer, rows, column, channels));
      },
      [&](OpBuilder &eb, Location eloc) {
        zeroColumns(
            eb, eloc,
            columnSlice(eb, eloc, joint.buffer, jointRows, column, channels));
        Value scratch = memref::AllocOp::create(
            eb, eloc, cast<MemRefType>(joint.buffer.getType()),
            ValueRange{rows});
        scf::YieldOp::create(
            eb, eloc, columnSlice(eb, eloc, scratch, rows, column, channels));
      });
  return choice.getResult(0);
}

bool lowering::lowersConcat(LoweringContext &ctx, tensor::ConcatOp op) {
  return ctx.getConcatPlan().buffers.contains(op);
}

Value lowering::lowerConcat(LoweringContext &ctx, OpBuilder &b,
                            tensor::ConcatOp op, ValueRange operands) {
  Location loc = op.getLoc();
  LoweringContext::ConcatPlan::Buffer &joint = ctx.getConcatPlan().buffers[op];
  // No conv wrote into it: sized by the first operand.
  if (!joint.buffer)
    createJointBuffer(b, loc, op, joint,
                      memref::DimOp::create(b, loc, operands.front(), 0));
  Value jointRows = memref::DimOp::create(b, loc, joint.buffer, 0);
  for (auto [index, operand] : llvm::enumerate(operands)) {
    if (joint.inPlace[index])
      continue;
    auto type = cast<MemRefType>(operand.getType());
    Value slice = columnSlice(b, loc, joint.buffer, jointRows,
                              columnOffset(op, index), type.getDimSize(1));
    Value rows = memref::DimOp::create(b, loc, operand, 0);
    Value ok = checkSize(ctx, b, loc, rows, jointRows, SizeCheck::ConcatRows);
    scf::IfOp::create(
        b, loc, ok,
        [&](OpBuilder &tb, Location tloc) {
          memref::CopyOp::create(tb, tloc, operand, slice);
          scf::YieldOp::create(tb, tloc);
        },
        [&](OpBuilder &eb, Location eloc) {
          zeroColumns(eb, eloc, slice);
          scf::YieldOp::create(eb, eloc);
        });
  }
  return joint.buffer;
}
