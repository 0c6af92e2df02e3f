//===- GPUSyncEffects.cpp - Memory effects of the kernels' sync ops -------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
/// A barrier orders the block's reads and writes of shared memory, and a
/// cp.async group or wait orders the thread's copies into it: to any
/// analysis they both read and write memory, so nothing moves across them.
template <typename Op>
struct SyncEffects
    : MemoryEffectOpInterface::ExternalModel<SyncEffects<Op>, Op> {
  void
  getEffects(Operation *,
             SmallVectorImpl<MemoryEffects::EffectInstance> &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};
} // namespace

void mlir::spconv::registerGPUSyncEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, gpu::GPUDialect *) {
    gpu::BarrierOp::attachInterface<SyncEffects<gpu::BarrierOp>>(*context);
  });
  registry.addExtension(+[](MLIRContext *context, nvgpu::NVGPUDialect *) {
    nvgpu::DeviceAsyncCreateGroupOp::attachInterface<
        SyncEffects<nvgpu::DeviceAsyncCreateGroupOp>>(*context);
    nvgpu::DeviceAsyncWaitOp::attachInterface<
        SyncEffects<nvgpu::DeviceAsyncWaitOp>>(*context);
  });
}
