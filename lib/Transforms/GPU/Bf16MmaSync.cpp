//===- Bf16MmaSync.cpp - bf16 nvgpu.mma.sync as nvvm.mma.sync -------------===//
//
// Part of the spconv-mlir project.
//
// Upstream's convert-nvgpu-to-nvvm hands an nvgpu.mma.sync's operands to
// nvvm.mma.sync as vectors of two elements and lets it deduce the PTX types
// from them: it knows vector<2xf16>, not vector<2xbf16> (PTX passes bf16
// pairs in .b32 registers), and fails. This rewrites the bf16 ones first:
// each pair of A and B bitcast to i32, the accumulators as f32 scalars, the
// PTX types given; the result's four f32 back into the 2 x 2 fragment.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUBF16MMASYNCPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;

namespace {

/// The 32-bit registers of a fragment of bf16 pairs (vector<N x 2 x bf16>).
SmallVector<Value> pairsAsWords(PatternRewriter &rewriter, Location loc,
                                Value fragment) {
  auto word = VectorType::get({1}, rewriter.getI32Type());
  SmallVector<Value> words;
  for (int64_t i = 0, e = cast<VectorType>(fragment.getType()).getDimSize(0);
       i < e; ++i) {
    Value pair = vector::ExtractOp::create(rewriter, loc, fragment, i);
    words.push_back(vector::ExtractOp::create(
        rewriter, loc, vector::BitCastOp::create(rewriter, loc, word, pair),
        0));
  }
  return words;
}

struct Bf16MmaSyncToNVVM : OpRewritePattern<nvgpu::MmaSyncOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(nvgpu::MmaSyncOp op,
                                PatternRewriter &rewriter) const override {
    auto aType = cast<VectorType>(op.getMatrixA().getType());
    auto cType = cast<VectorType>(op.getMatrixC().getType());
    if (!aType.getElementType().isBF16())
      return rewriter.notifyMatchFailure(op, "not a bf16 multiply");
    // PTX's bf16 mma.sync sums in f32 only: 4 x 2 A, 2 x 2 B, 2 x 2 C.
    if (!cType.getElementType().isF32() || aType.getRank() != 2 ||
        aType.getDimSize(1) != 2 || cType.getShape() != ArrayRef<int64_t>{2, 2})
      return rewriter.notifyMatchFailure(op, "not m16n8k{8,16} into f32");
    Location loc = op.getLoc();
    SmallVector<Value> sums;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        sums.push_back(vector::ExtractOp::create(rewriter, loc, op.getMatrixC(),
                                                 ArrayRef<int64_t>{i, j}));
    Type f32 = rewriter.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        rewriter.getContext(), SmallVector<Type>(4, f32));
    std::array<int64_t, 3> shape = op.getMmaShapeAsArray();
    Value result = NVVM::MmaOp::create(
        rewriter, loc, resultType, pairsAsWords(rewriter, loc, op.getMatrixA()),
        pairsAsWords(rewriter, loc, op.getMatrixB()), sums, shape,
        /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> elements;
    for (int64_t i = 0; i < 4; ++i)
      elements.push_back(
          LLVM::ExtractValueOp::create(rewriter, loc, result, i));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, cType, elements);
    return success();
  }
};

struct SpConvGPUBf16MmaSyncPass
    : spconv::impl::SpConvGPUBf16MmaSyncPassBase<SpConvGPUBf16MmaSyncPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<Bf16MmaSyncToNVVM>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
