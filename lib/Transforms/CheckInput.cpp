//===- CheckInput.cpp - What the pipelines cannot take as input -----------===//
//
// Part of the spconv-mlir project.
//
// Our pipelines bufferize their input and deallocate its buffers with
// upstream's ownership-based deallocation, which inserts ownership
// constants at the top of every region: inside an OpenMP loop wrapper
// (omp.wsloop, whose region must hold its loop nest alone) that leaves
// invalid IR. The pipelines make their own threads from scf.parallel, so
// OpenMP ops in their input are refused here, first, with a message, not
// after a pass has broken the module.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVCHECKINPUTPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;

namespace {

struct SpConvCheckInputPass
    : spconv::impl::SpConvCheckInputPassBase<SpConvCheckInputPass> {
  using Base::Base;

  void runOnOperation() override {
    // Pre-order: the outermost OpenMP op is the one to name.
    WalkResult result =
        getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (!isa_and_nonnull<omp::OpenMPDialect>(op->getDialect()))
            return WalkResult::advance();
          std::string who = pipeline.empty() ? "the spconv pipelines take"
                                             : pipeline + " takes";
          op->emitError() << who << " no OpenMP ops: '" << op->getName()
                          << "' is one; give it the parallel loops as "
                             "scf.parallel (it runs them on OpenMP threads "
                             "itself)";
          return WalkResult::interrupt();
        });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
