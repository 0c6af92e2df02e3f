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

#include "SpConv/Transforms/Passes.h"
#include "SpConv/Support/VectorWidth.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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


struct MatmulToRowLoops : OpRewritePattern<linalg::MatmulOp> {
  MatmulToRowLoops(MLIRContext *context, int64_t vectorBits)
      : OpRewritePattern(context), vectorBits(vectorBits) {}

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
    // One register per chunk: a row's chunks are live one at a time.
    SmallVector<int64_t> chunks = vectorChunks(columns, vectorBits / 32);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value rows = memref::DimOp::create(rewriter, loc, out, 0);
    Value depth = memref::DimOp::create(rewriter, loc, lhs, 1);
    scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero}, ValueRange{rows}, ValueRange{one},
        [&](OpBuilder &b, Location ploc, ValueRange ivs) {
          Value row = ivs[0];
          int64_t start = 0;
          for (int64_t width : chunks) {
            auto chunkType = VectorType::get({width}, element);
            Value column = arith::ConstantIndexOp::create(b, ploc, start);
            start += width;
            Value initial = vector::LoadOp::create(b, ploc, chunkType, out,
                                                   ValueRange{row, column});
            auto sum = scf::ForOp::create(
                b, ploc, zero, depth, one, ValueRange{initial},
                [&](OpBuilder &fb, Location floc, Value k, ValueRange acc) {
                  Value a =
                      memref::LoadOp::create(fb, floc, lhs, ValueRange{row, k});
                  Value w = vector::LoadOp::create(fb, floc, chunkType, rhs,
                                                   ValueRange{k, column});
                  Value next = vector::FMAOp::create(
                      fb, floc,
                      vector::BroadcastOp::create(fb, floc, chunkType, a), w,
                      acc[0]);
                  scf::YieldOp::create(fb, floc, next);
                });
            vector::StoreOp::create(b, ploc, sum.getResult(0), out,
                                    ValueRange{row, column});
          }
        });
    rewriter.eraseOp(op);
    return success();
  }

  int64_t vectorBits;
};

struct SpConvMatmulToRowLoopsPass
    : spconv::impl::SpConvMatmulToRowLoopsPassBase<SpConvMatmulToRowLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (!isSupportedVectorBits(vectorBits)) {
      getOperation().emitError("spconv-matmul-to-row-loops: vector-bits must "
                               "be 128, 256 or 512, got ")
          << vectorBits.getValue();
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<MatmulToRowLoops>(&getContext(), vectorBits);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
