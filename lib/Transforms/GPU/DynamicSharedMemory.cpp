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
#include "SpConv/Transforms/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUDYNAMICSHAREDMEMORYPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// Where each buffer starts: a multiple of this, which covers every
/// alignment the kernels ask of their buffers (WMMA's 32 bytes, cp.async's
/// 16).
constexpr int64_t kBufferAlignment = 128;
/// What upstream's lowering declares of the dynamic buffer's start (NVVM's
/// kSharedMemoryAlignmentBit, in bytes): the kernel rounds its start up to
/// kBufferAlignment itself, in the slack this leaves.
constexpr int64_t kDeclaredAlignment = 16;

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

/// The bytes a kernel's launches pass for buffers taking `size` bytes: room
/// to round the dynamic buffer's start up to kBufferAlignment.
int64_t dynamicBytes(int64_t size) {
  return size + kBufferAlignment - kDeclaredAlignment;
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
  // The first byte at a multiple of kBufferAlignment: (-address) mod 128.
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, base);
  Value start = arith::AndIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                            address),
      arith::ConstantIndexOp::create(b, loc, kBufferAlignment - 1));
  unsigned first = kernel.getFirstWorkgroupAttributionIndex();
  unsigned count = kernel.getNumWorkgroupAttributions();
  for (auto [attribution, offset] :
       llvm::zip_equal(kernel.getWorkgroupAttributions(), offsets)) {
    Value buffer = attribution;
    Value shift = arith::AddIOp::create(
        b, loc, start, arith::ConstantIndexOp::create(b, loc, offset));
    Value view = memref::ViewOp::create(b, buffer.getLoc(),
                                        cast<MemRefType>(buffer.getType()),
                                        base, shift, ValueRange{});
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
        auto [offsets, buffers] = layOut(kernel);
        if (buffers <= kMaxStaticSharedMemoryBytes)
          continue;
        int64_t size = dynamicBytes(buffers);
        if (size > maxBytes) {
          kernel.emitError("spconv-gpu-dynamic-shared-memory: kernel '")
              << kernel.getName() << "' needs " << size
              << " bytes of shared memory, more than a block may take ("
              << maxBytes.getValue() << ", max-bytes)";
          failed = true;
          continue;
        }
        moveToDynamic(kernel, offsets);
        kernel->setAttr(
            SpConvDialect::kDynamicSharedMemoryAttrName,
            IntegerAttr::get(IntegerType::get(&getContext(), 64), size));
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
