//===- GPUBarrierEffects.cpp - Memory effects of gpu.barrier --------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
/// A barrier orders the block's reads and writes of shared memory: to any
/// analysis it both reads and writes memory, so nothing moves across it.
struct BarrierEffects
    : MemoryEffectOpInterface::ExternalModel<BarrierEffects, gpu::BarrierOp> {
  void
  getEffects(Operation *,
             SmallVectorImpl<MemoryEffects::EffectInstance> &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};
} // namespace

void mlir::spconv::registerGPUBarrierEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, gpu::GPUDialect *) {
    gpu::BarrierOp::attachInterface<BarrierEffects>(*context);
  });
}
