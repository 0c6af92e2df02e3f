//===- LowerNDVectorOps.cpp - n-D vector ops convert-to-llvm lacks --------===//
//
// Part of the spconv-mlir project.
//
// convert-to-llvm lowers vector.from_elements and
// vector.extract_strided_slice of one dimension only. Tensor-core fragments
// are 2-D (nvgpu.mma.sync's operands, and their emulation): a fragment
// built element by element becomes, once canonicalized, an n-D
// from_elements, and the halves of an ldmatrix x4 are n-D strided slices.
// Upstream's patterns rewrite both into 1-D pieces with vector.extract and
// vector.insert. convert-vector-to-llvm would run them too, but it also
// rewrites the rest of the CPU's vector code its own way (32-bit vector
// indices, its own lowering of gathers and masks), which the pipelines do
// not want.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVLOWERNDVECTOROPSPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;

namespace {

struct SpConvLowerNDVectorOpsPass
    : spconv::impl::SpConvLowerNDVectorOpsPassBase<SpConvLowerNDVectorOpsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    vector::populateVectorFromElementsUnrollPatterns(patterns);
    vector::populateVectorInsertExtractStridedSliceDecompositionPatterns(
        patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
