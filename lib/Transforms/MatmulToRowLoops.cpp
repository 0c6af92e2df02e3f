//===- MatmulToRowLoops.cpp - Row-wise loops for pointwise convs ----------===//
//
// Part of the spconv-mlir project.
//
// A pointwise subm conv canonicalizes to `linalg.matmul` of the features
// [N x Cin] by the weight [Cin x Cout]. Lowered as linalg's default loop nest
// (reduction innermost, weight read down a column) it runs at scalar speed;
// here each output row is one parallel iteration that keeps chunks of the
// row in vector registers, adding a broadcast input channel times a weight
// row per step: the same row update as the rulebook convolution.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Support/CPUUnitOptions.h"
#include "SpConv/Support/VectorWidth.h"
#include "SpConv/Transforms/Passes.h"
#include "SpConv/Transforms/RowUpdate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVMATMULTOROWLOOPSPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// Whether rows of `type` are contiguous (unit innermost stride), so that a
/// vector load reads consecutive columns.
bool hasContiguousRows(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// out[rows[r], :] += lhs[rows[r], :] @ rhs, in registers (RowUpdate.h).
void emitRowUpdates(OpBuilder &b, Location loc,
                    const VectorRegisters &registers, int64_t chunkRegisters,
                    int64_t columns, ValueRange rows, Value lhs, Value rhs,
                    Value out) {
  emitVectorRowUpdates(
      b, loc, registers, chunkRegisters, out, rows, rows,
      memref::DimOp::create(b, loc, lhs, 1), columns,
      [&](OpBuilder &fb, Location floc, Value k, Value column, int64_t width) {
        return vector::LoadOp::create(
            fb, floc,
            VectorType::get({width},
                            cast<MemRefType>(rhs.getType()).getElementType()),
            rhs, ValueRange{k, column});
      },
      [&](OpBuilder &fb, Location floc, Value row, Value k) {
        return memref::LoadOp::create(fb, floc, lhs, ValueRange{row, k});
      });
}

struct MatmulToRowLoops : OpRewritePattern<linalg::MatmulOp> {
  MatmulToRowLoops(MLIRContext *context, const VectorRegisters &registers,
                   const FmaUnits &fma)
      : OpRewritePattern(context), registers(registers), fma(fma) {}

  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "runs after bufferization");
    // Plain C += A * B: no transposes, broadcasts or casts.
    if (!op.getIndexingMaps().empty() && op.hasUserDefinedMaps())
      return rewriter.notifyMatchFailure(op, "user-defined indexing maps");
    Value lhs = op.getInputs()[0], rhs = op.getInputs()[1];
    Value out = op.getOutputs()[0];
    auto lhsType = cast<MemRefType>(lhs.getType());
    auto rhsType = cast<MemRefType>(rhs.getType());
    auto outType = cast<MemRefType>(out.getType());
    Type element = outType.getElementType();
    if (!element.isF32() || lhsType.getElementType() != element ||
        rhsType.getElementType() != element)
      return rewriter.notifyMatchFailure(op, "not f32");
    if (rhsType.isDynamicDim(1) || !hasContiguousRows(rhsType) ||
        !hasContiguousRows(outType))
      return rewriter.notifyMatchFailure(
          op, "needs a static number of columns and contiguous rows");

    Location loc = op.getLoc();
    int64_t columns = rhsType.getDimSize(1);
    RowBlocking blocking = chooseRowBlocking(
        columns, element.getIntOrFloatBitWidth(), registers, fma);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value group = arith::ConstantIndexOp::create(rewriter, loc, blocking.rows);
    Value rows = memref::DimOp::create(rewriter, loc, out, 0);
    Value groups = arith::DivUIOp::create(rewriter, loc, rows, group);
    // Whole groups of rows, then the rows left over one by one.
    scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero}, ValueRange{groups}, ValueRange{one},
        [&](OpBuilder &b, Location ploc, ValueRange ivs) {
          Value first = arith::MulIOp::create(b, ploc, ivs[0], group);
          SmallVector<Value> members;
          for (int64_t r = 0; r < blocking.rows; ++r)
            members.push_back(arith::AddIOp::create(
                b, ploc, first, arith::ConstantIndexOp::create(b, ploc, r)));
          emitRowUpdates(b, ploc, registers, blocking.chunkRegisters, columns,
                         members, lhs, rhs, out);
        });
    scf::ParallelOp::create(
        rewriter, loc,
        ValueRange{arith::MulIOp::create(rewriter, loc, groups, group)},
        ValueRange{rows}, ValueRange{one},
        [&](OpBuilder &b, Location ploc, ValueRange ivs) {
          emitRowUpdates(b, ploc, registers, blocking.chunkRegisters, columns,
                         ivs[0], lhs, rhs, out);
        });
    rewriter.eraseOp(op);
    return success();
  }

  VectorRegisters registers;
  FmaUnits fma;
};

struct SpConvMatmulToRowLoopsPass
    : spconv::impl::SpConvMatmulToRowLoopsPassBase<SpConvMatmulToRowLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string units =
        checkCPUUnitOptions(vectorBits, vectorRegisters, fmaPipes, fmaLatency);
    if (!units.empty()) {
      getOperation().emitError("spconv-matmul-to-row-loops: ") << units;
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<MatmulToRowLoops>(&getContext(),
                                   VectorRegisters{vectorBits, vectorRegisters},
                                   FmaUnits{fmaPipes, fmaLatency});
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
