//===- ParallelDimsFirst.cpp - Parallel loops outside reductions ----------===//
//
// Part of the spconv-mlir project.
//
// convert-linalg-to-parallel-loops nests loops in the order of the op's
// iterators, and spconv-parallel-loops-to-gpu makes a kernel of each
// outermost scf.parallel. A reduction over a buffer's outer dimension (a
// bias gradient: a sum over rows, iterators [reduction, parallel]) thus
// became a host loop over the rows launching a kernel over the channels
// per row: 100k launches for a 100k-site layer. Here such an op's
// iterators are permuted so that its parallel dimensions come first: one
// kernel, one thread per channel, each adding its rows in order (so the
// sum is the same as before, and deterministic).
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUPARALLELDIMSFIRSTPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// The permutation that puts `op`'s parallel iterators first, each group
/// in its order; empty if they already are.
SmallVector<unsigned> parallelFirst(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (bool parallel : {true, false})
    for (auto [i, iterator] : llvm::enumerate(iterators))
      if ((iterator == utils::IteratorType::parallel) == parallel)
        order.push_back(i);
  if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
    return {};
  return order;
}

struct SpConvGPUParallelDimsFirstPass
    : spconv::impl::SpConvGPUParallelDimsFirstPassBase<
          SpConvGPUParallelDimsFirstPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!parallelFirst(op).empty())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<unsigned> order = parallelFirst(op);
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          continue; // Left as it is: still correct, only slower.
        generic = *generalized;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
        generic.emitError("spconv-gpu-parallel-dims-first: cannot permute "
                          "the iterators");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
