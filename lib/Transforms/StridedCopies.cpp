//===- StridedCopies.cpp - Copies of strided views as parallel loops ------===//
//
// Part of the spconv-mlir project.
//
// A concatenation bufferizes to `memref.copy` into strided views of the
// result (`memref.subview` of its columns). On a GPU target a copy of whole
// buffers becomes a `gpu.memcpy` (spconv-gpu-memory), but a strided one can
// only run on the host, which puts both buffers in managed memory and makes
// the host wait for the kernels that wrote them. Here such a copy becomes
// upstream's `linalg.copy`, lowered at once to an `scf.parallel` nest
// tagged `spconv.kernel = "strided_copy"`: spconv-parallel-loops-to-gpu
// then makes it a kernel like any other loop.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUSTRIDEDCOPIESPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

bool isStrided(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return !type.getLayout().isIdentity();
}

struct SpConvGPUStridedCopiesPass
    : spconv::impl::SpConvGPUStridedCopiesPassBase<SpConvGPUStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (isStrided(copy.getSource()) || isStrided(copy.getTarget()))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      auto linalgCopy = linalg::CopyOp::create(
          rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToParallelLoops(rewriter, linalgCopy);
      if (failed(loops)) {
        copy.emitError("spconv-gpu-strided-copies: cannot lower the copy "
                       "to parallel loops");
        return signalPassFailure();
      }
      // A 0-d copy has no loop: it stays a scalar load and store.
      if (!loops->empty())
        loops->front()->setAttr(SpConvDialect::kKernelAttrName,
                                rewriter.getStringAttr("strided_copy"));
      rewriter.eraseOp(linalgCopy);
      rewriter.eraseOp(copy);
    }
  }
};

} // namespace
