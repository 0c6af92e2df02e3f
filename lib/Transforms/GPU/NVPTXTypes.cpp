//===- NVPTXTypes.cpp - Kernel types the NVPTX back end compiles ----------===//
//
// Part of the spconv-mlir project.
//
// LLVM's NVPTX back end has no arithmetic for x87 or quad floats: a kernel
// computing in f80 or f128 ends in "LLVM ERROR: unsupported library call
// operation" during gpu-module-to-binary. The CUDA pipeline checks first and
// names the kernel and the type instead.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUCHECKNVPTXTYPESPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// The float type NVPTX cannot compute in that `type` is or holds, if any.
Type unsupportedFloat(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  if (isa<Float80Type, Float128Type>(type))
    return type;
  return Type();
}

struct SpConvGPUCheckNVPTXTypesPass
    : spconv::impl::SpConvGPUCheckNVPTXTypesPassBase<
          SpConvGPUCheckNVPTXTypesPass> {
  void runOnOperation() override {
    bool found = false;
    getOperation().walk([&](gpu::GPUModuleOp kernels) {
      kernels.walk([&](Operation *op) {
        auto check = [&](Type type) {
          Type bad = unsupportedFloat(type);
          if (!bad)
            return false;
          op->emitOpError("spconv-gpu-check-nvptx-types: kernel code uses ")
              << bad
              << ", which the NVPTX back end cannot compile (kernel "
                 "floats: f16, bf16, f32, f64)";
          return found = true;
        };
        for (Type type : op->getResultTypes())
          if (check(type))
            return WalkResult::interrupt();
        for (Region &region : op->getRegions())
          for (Block &block : region)
            for (BlockArgument argument : block.getArguments())
              if (check(argument.getType()))
                return WalkResult::interrupt();
        return WalkResult::advance();
      });
    });
    if (found)
      signalPassFailure();
  }
};

} // namespace
