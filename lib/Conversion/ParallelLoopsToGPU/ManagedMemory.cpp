//===- ManagedMemory.cpp - Host buffers that kernels can read -------------===//
//
// Part of the spconv-mlir project.
//
// The host code between kernels reads what kernels wrote (pair counts,
// offsets) and hands buffers to the runtime, so every buffer the host
// allocates is CUDA managed memory: one pointer, valid on both sides.
// Launches are synchronous, so the host never reads a buffer a kernel is
// still writing.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUMANAGEDMEMORYPASS
#include "SpConv/Conversion/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// The buffer that `value` views (through casts and views).
Value viewSource(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
      value = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(op)) {
      value = cast.getSource();
      continue;
    }
    break;
  }
  return value;
}

struct SpConvGPUManagedMemoryPass
    : spconv::impl::SpConvGPUManagedMemoryPassBase<SpConvGPUManagedMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::AllocOp> allocs;
    SmallVector<memref::DeallocOp> deallocs;
    bool failedCheck = false;
    for (auto function : module.getOps<func::FuncOp>()) {
      function.walk([&](memref::AllocOp op) { allocs.push_back(op); });
      function.walk([&](memref::DeallocOp op) { deallocs.push_back(op); });
      // Stack and global buffers live in host memory only.
      function.walk([&](gpu::LaunchFuncOp launch) {
        for (Value operand : launch.getKernelOperands()) {
          if (!isa<MemRefType>(operand.getType()))
            continue;
          Operation *source = viewSource(operand).getDefiningOp();
          if (isa_and_nonnull<memref::AllocaOp, memref::GetGlobalOp>(source)) {
            launch.emitError("spconv-gpu-managed-memory: kernel operand is "
                             "host-only memory (")
                << source->getName() << ")";
            failedCheck = true;
          }
        }
      });
    }
    if (failedCheck)
      return signalPassFailure();

    for (memref::AllocOp alloc : allocs) {
      OpBuilder b(alloc);
      auto managed = gpu::AllocOp::create(
          b, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
          /*asyncDependencies=*/ValueRange{}, alloc.getDynamicSizes(),
          alloc.getSymbolOperands(), /*hostShared=*/true);
      alloc.replaceAllUsesWith(managed.getMemref());
      alloc.erase();
    }
    // gpu.dealloc lowers only in its asynchronous form: free on a fresh
    // stream and wait for it.
    for (memref::DeallocOp dealloc : deallocs) {
      OpBuilder b(dealloc);
      Location loc = dealloc.getLoc();
      Type token = gpu::AsyncTokenType::get(b.getContext());
      Value start =
          gpu::WaitOp::create(b, loc, token, ValueRange{}).getAsyncToken();
      Value freed = gpu::DeallocOp::create(b, loc, token, ValueRange{start},
                                           dealloc.getMemref())
                        .getAsyncToken();
      gpu::WaitOp::create(b, loc, Type(), ValueRange{freed});
      dealloc.erase();
    }
  }
};

} // namespace
