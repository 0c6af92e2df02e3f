//===- ShareRulebooks.cpp - Merge identical rulebook builds ---------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvOps.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dominance.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVSHARERULEBOOKSPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {
struct SpConvShareRulebooksPass
    : spconv::impl::SpConvShareRulebooksPassBase<SpConvShareRulebooksPass> {
  using Base::Base;

  void runOnOperation() override {
    auto &dominance = getAnalysis<DominanceInfo>();
    // Builds kept so far, by (coordinates, rulebook type). A build is
    // replaced by the first kept one that dominates it.
    llvm::DenseMap<std::pair<Value, Type>, SmallVector<BuildRulebookOp>> kept;
    SmallVector<BuildRulebookOp> builds;
    bool changed = false;
    getOperation().walk(
        [&](BuildRulebookOp build) { builds.push_back(build); });
    for (BuildRulebookOp build : builds) {
      auto &candidates =
          kept[{build.getCoords(), build.getRulebook().getType()}];
      auto dominating = llvm::find_if(candidates, [&](BuildRulebookOp other) {
        return dominance.properlyDominates(other.getOperation(), build);
      });
      if (dominating == candidates.end()) {
        candidates.push_back(build);
        continue;
      }
      build.getRulebook().replaceAllUsesWith(dominating->getRulebook());
      build.getOutCoords().replaceAllUsesWith(dominating->getOutCoords());
      build.erase();
      ++numShared;
      changed = true;
    }
    // Statistics count nothing in builds without them.
    if (!changed)
      markAllAnalysesPreserved();
  }
};
} // namespace
