//===- ParallelizeOuterLoops.cpp - Threads for the outermost parallel loop ===//
//
// Part of the spconv-mlir project.
//
// Upstream's affine-parallelize makes the outermost parallel loop of each
// nest parallel, wherever it is: under a sequential loop it forks and joins
// the threads once per iteration of that loop. Here only a nest's outermost
// loop may run on threads, and only when it carries no dependence.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVPARALLELIZEOUTERLOOPSPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {
struct SpConvParallelizeOuterLoopsPass
    : spconv::impl::SpConvParallelizeOuterLoopsPassBase<
          SpConvParallelizeOuterLoopsPass> {
  void runOnOperation() override {
    SmallVector<affine::AffineForOp> outermost;
    getOperation().walk<WalkOrder::PreOrder>(
        [&](LoopLikeOpInterface loop) -> WalkResult {
          if (auto affineLoop = dyn_cast<affine::AffineForOp>(*loop))
            outermost.push_back(affineLoop);
          // Nothing inside a loop is a nest's outermost loop.
          return WalkResult::skip();
        });
    for (affine::AffineForOp loop : outermost) {
      if (!affine::isLoopParallel(loop))
        continue;
      if (failed(affine::affineParallelize(loop))) {
        loop.emitError("spconv-parallelize-outer-loops: cannot make this "
                       "parallel loop an affine.parallel");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
