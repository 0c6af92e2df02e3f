//===- DynamicSharedMemory.cpp - Workgroup buffers past 48 KiB ------------===//
//
// Part of the spconv-mlir project.
//
// A CUDA block gets at most 48 KiB of static shared memory: ptxas rejects a
// kernel whose `.shared` arrays take more. Past that, shared memory is
// dynamic: one buffer sized by the launch, which the function must be
// allowed to take (cuFuncSetAttribute, in the runtime's launch). Kernels are
// written with static workgroup attributions, which the emulator runs as
// they are; for CUDA, this pass turns a large kernel's attributions into
// views of `gpu.dynamic_shared_memory` and has its launches pass the size.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUDYNAMICSHAREDMEMORYPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// What a block may hold in static shared memory.
constexpr int64_t kMaxStaticBytes = 48 * 1024;
/// Where each buffer starts in the dynamic one: a multiple of this, which
/// covers every alignment the kernels ask of their buffers (WMMA's 32
/// bytes, cp.async's 16) and is the dynamic buffer's own (NVVM's
/// kSharedMemoryAlignmentBit).
constexpr int64_t kBufferAlignment = 128;

/// The byte offset of each workgroup attribution of `kernel` in one buffer,
/// and the buffer's size.
std::pair<SmallVector<int64_t>, int64_t> layOut(gpu::GPUFuncOp kernel) {
  SmallVector<int64_t> offsets;
  int64_t size = 0;
  for (BlockArgument buffer : kernel.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(buffer.getType());
    size = llvm::alignTo(size, kBufferAlignment);
    offsets.push_back(size);
    size += type.getNumElements() *
            llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  }
  return {offsets, size};
}

/// Replaces `kernel`'s workgroup attributions by views of one dynamic
/// shared buffer at `offsets`.
void moveToDynamic(gpu::GPUFuncOp kernel, ArrayRef<int64_t> offsets) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = kernel.getLoc();
  MLIRContext *context = kernel.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
  Value base = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup));
  unsigned first = kernel.getFirstWorkgroupAttributionIndex();
  unsigned count = kernel.getNumWorkgroupAttributions();
  for (auto [attribution, offset] :
       llvm::zip_equal(kernel.getWorkgroupAttributions(), offsets)) {
    Value buffer = attribution;
    Value view = memref::ViewOp::create(
        b, buffer.getLoc(), cast<MemRefType>(buffer.getType()), base,
        arith::ConstantIndexOp::create(b, loc, offset), ValueRange{});
    buffer.replaceAllUsesWith(view);
  }
  entry.eraseArguments(first, count);
  kernel->removeAttr(gpu::GPUFuncOp::getNumWorkgroupAttributionsAttrName());
  kernel.removeWorkgroupAttribAttrsAttr();
}

struct SpConvGPUDynamicSharedMemoryPass
    : spconv::impl::SpConvGPUDynamicSharedMemoryPassBase<
          SpConvGPUDynamicSharedMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Dynamic shared memory per kernel, by the launches' symbol.
    llvm::DenseMap<SymbolRefAttr, int64_t> moved;
    bool failed = false;
    module.walk([&](gpu::GPUModuleOp kernels) {
      for (auto kernel : kernels.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel())
          continue;
        auto [offsets, size] = layOut(kernel);
        if (size <= kMaxStaticBytes)
          continue;
        if (size > maxBytes) {
          kernel.emitError("spconv-gpu-dynamic-shared-memory: kernel '")
              << kernel.getName() << "' needs " << size
              << " bytes of shared memory, more than a block may take ("
              << maxBytes.getValue() << ", max-bytes)";
          failed = true;
          continue;
        }
        moveToDynamic(kernel, offsets);
        moved[SymbolRefAttr::get(
            kernels.getSymNameAttr(),
            {FlatSymbolRefAttr::get(kernel.getNameAttr())})] = size;
      }
    });
    if (failed)
      return signalPassFailure();
    if (moved.empty())
      return;
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      auto size = moved.find(launch.getKernel());
      if (size == moved.end())
        return WalkResult::advance();
      if (launch.getDynamicSharedMemorySize()) {
        launch.emitError("spconv-gpu-dynamic-shared-memory: the launch of '")
            << launch.getKernelName().getValue()
            << "' already passes dynamic shared memory";
        return WalkResult::interrupt();
      }
      OpBuilder b(launch);
      launch.getDynamicSharedMemorySizeMutable().assign(
          arith::ConstantIntOp::create(b, launch.getLoc(), size->second, 32));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
