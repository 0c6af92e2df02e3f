//===- CheckLowered.cpp - Only what translates to LLVM IR is left ---------===//
//
// Part of the spconv-mlir project.
//
// The conversions to the LLVM dialect are partial conversions: an op whose
// lowering is missing (not registered in the context, or not written)
// stays, and the pipeline still succeeds. Checked here, at the end of each
// of our pipelines, so that such a module is an error naming the op.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVCHECKLOWEREDPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// Whether `op` may be left for the translation to LLVM IR.
bool translates(Operation *op) {
  if (isa<ModuleOp, gpu::BinaryOp, gpu::LaunchFuncOp>(op))
    return true;
  Dialect *dialect = op->getDialect();
  return isa_and_nonnull<LLVM::LLVMDialect, omp::OpenMPDialect>(dialect);
}

struct SpConvCheckLoweredPass
    : spconv::impl::SpConvCheckLoweredPassBase<SpConvCheckLoweredPass> {
  using Base::Base;

  void runOnOperation() override {
    // The op to name: the first one left, but an unrealized cast only if
    // nothing else is (a cast left is the trace of another op that was not
    // converted, its operand or user).
    Operation *left = nullptr;
    getOperation().walk([&](Operation *op) {
      if (translates(op))
        return WalkResult::advance();
      if (!left)
        left = op;
      if (!isa<UnrealizedConversionCastOp>(op)) {
        left = op;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!left)
      return;
    std::string by = pipeline.empty() ? "" : " by " + pipeline;
    left->emitError() << "'" << left->getName() << "' is left unlowered" << by
                      << ": only LLVM, OpenMP and gpu.binary / "
                         "gpu.launch_func ops translate to LLVM IR (is the "
                         "conversion of its dialect registered in the "
                         "context?)";
    signalPassFailure();
  }
};

} // namespace
