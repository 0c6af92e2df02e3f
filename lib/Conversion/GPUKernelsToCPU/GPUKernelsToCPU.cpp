//===- GPUKernelsToCPU.cpp - Run outlined GPU kernels on the CPU ----------===//
//
// Part of the spconv-mlir project.
//
// A test lowering: the exact kernels that become PTX (their index math,
// grid-stride loops and bounds guards) run on the CPU, so CI checks them
// without a GPU. A kernel becomes a function with the block and thread
// coordinates as extra arguments; a launch becomes a parallel loop over
// blocks around a sequential loop over the threads of a block.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUKERNELSTOCPUPASS
#include "SpConv/Conversion/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// Extra arguments of an emulated kernel, after the kernel's own.
enum EmulatedArgument { kBlockId, kThreadId, kBlockDim, kGridDim, kNumExtra };

/// Checks that `kernel` only uses what this emulation models: the x
/// dimension of ids and sizes, and no synchronisation or shared memory
/// (threads of a block run one after another, so a barrier would deadlock).
LogicalResult checkEmulable(gpu::GPUFuncOp kernel) {
  if (!kernel.getWorkgroupAttributions().empty() ||
      !kernel.getPrivateAttributions().empty())
    return kernel.emitError("spconv-gpu-kernels-to-cpu: kernel @")
           << kernel.getName()
           << " uses workgroup or private memory and cannot be emulated";
  WalkResult result = kernel.walk([&](Operation *op) {
    if (isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::SubgroupReduceOp,
            gpu::AllReduceOp, gpu::LaneIdOp, gpu::GlobalIdOp>(op)) {
      op->emitError("spconv-gpu-kernels-to-cpu: kernel @")
          << kernel.getName() << " uses '" << op->getName()
          << "', which the sequential threads of this emulation cannot run";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Replaces the GPU id and size ops of `body` by the emulated arguments
/// (dimension x) or their constant values (y and z: one block, one thread).
void replaceIds(Region &body, ArrayRef<BlockArgument> extra) {
  SmallVector<Operation *> ids;
  body.walk([&](Operation *op) {
    if (isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::BlockDimOp, gpu::GridDimOp>(
            op))
      ids.push_back(op);
  });
  for (Operation *op : ids) {
    OpBuilder b(op);
    auto dimension = op->getAttrOfType<gpu::DimensionAttr>("dimension");
    bool isX = dimension.getValue() == gpu::Dimension::x;
    Value replacement;
    if (isa<gpu::BlockIdOp>(op))
      replacement = isX ? Value(extra[kBlockId])
                        : arith::ConstantIndexOp::create(b, op->getLoc(), 0);
    else if (isa<gpu::ThreadIdOp>(op))
      replacement = isX ? Value(extra[kThreadId])
                        : arith::ConstantIndexOp::create(b, op->getLoc(), 0);
    else if (isa<gpu::BlockDimOp>(op))
      replacement = isX ? Value(extra[kBlockDim])
                        : arith::ConstantIndexOp::create(b, op->getLoc(), 1);
    else
      replacement = isX ? Value(extra[kGridDim])
                        : arith::ConstantIndexOp::create(b, op->getLoc(), 1);
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
}

/// Moves `kernel` out of its module as a function taking the emulated
/// coordinates after its own arguments.
func::FuncOp emulateKernel(gpu::GPUFuncOp kernel, StringRef name,
                           ModuleOp module) {
  MLIRContext *context = kernel.getContext();
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  Type index = IndexType::get(context);
  inputs.append(kNumExtra, index);
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  auto function = func::FuncOp::create(b, kernel.getLoc(), name,
                                       FunctionType::get(context, inputs, {}));
  function.setPrivate();
  function.getBody().takeBody(kernel.getBody());
  Block &entry = function.getBody().front();
  SmallVector<BlockArgument> extra;
  for (int i = 0; i < kNumExtra; ++i)
    extra.push_back(entry.addArgument(index, kernel.getLoc()));
  replaceIds(function.getBody(), extra);
  function.walk([](gpu::ReturnOp ret) {
    OpBuilder rb(ret);
    func::ReturnOp::create(rb, ret.getLoc());
    ret.erase();
  });
  return function;
}

/// `for block in parallel: for thread: kernel(args, block, thread, ...)`.
LogicalResult emulateLaunch(gpu::LaunchFuncOp launch, func::FuncOp kernel) {
  for (Value size : {launch.getGridSizeY(), launch.getGridSizeZ(),
                     launch.getBlockSizeY(), launch.getBlockSizeZ()})
    if (!matchPattern(size, m_One()))
      return launch.emitError("spconv-gpu-kernels-to-cpu: only launches "
                              "with one-dimensional grids and blocks are "
                              "emulated");
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.getDynamicSharedMemorySize() || launch.hasClusterSize())
    return launch.emitError("spconv-gpu-kernels-to-cpu: asynchronous "
                            "launches, clusters and dynamic shared memory "
                            "are not emulated");
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value blocks = launch.getGridSizeX(), threads = launch.getBlockSizeX();
  SmallVector<Value> operands(launch.getKernelOperands());
  scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{blocks}, ValueRange{one},
      [&](OpBuilder &pb, Location ploc, ValueRange block) {
        scf::ForOp::create(
            pb, ploc, zero, threads, one, ValueRange{},
            [&](OpBuilder &fb, Location floc, Value thread, ValueRange) {
              SmallVector<Value> arguments = operands;
              arguments.append({block[0], thread, threads, blocks});
              func::CallOp::create(fb, floc, kernel, arguments);
              scf::YieldOp::create(fb, floc);
            });
      });
  launch.erase();
  return success();
}

struct SpConvGPUKernelsToCPUPass
    : spconv::impl::SpConvGPUKernelsToCPUPassBase<SpConvGPUKernelsToCPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Emulated kernel functions, by the launch's (module, kernel) names.
    llvm::DenseMap<SymbolRefAttr, func::FuncOp> emulated;
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      for (auto kernel :
           llvm::make_early_inc_range(gpuModule.getOps<gpu::GPUFuncOp>())) {
        if (failed(checkEmulable(kernel)))
          return signalPassFailure();
        auto reference = SymbolRefAttr::get(
            gpuModule.getSymNameAttr(),
            ArrayRef<FlatSymbolRefAttr>{
                FlatSymbolRefAttr::get(kernel.getNameAttr())});
        func::FuncOp function = emulateKernel(kernel, kernel.getName(), module);
        symbols.insert(function); // renamed if the host has the name
        emulated[reference] = function;
        kernel.erase();
      }
      // Device copies of host functions (the hash probe): the host's own
      // copy serves, or the device copy moves out.
      for (auto function :
           llvm::make_early_inc_range(gpuModule.getOps<func::FuncOp>())) {
        if (symbols.lookup(function.getSymName())) {
          function.erase();
          continue;
        }
        function->remove();
        symbols.insert(function);
      }
    }
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    for (gpu::LaunchFuncOp launch : launches) {
      func::FuncOp kernel = emulated.lookup(launch.getKernel());
      if (!kernel) {
        launch.emitError("spconv-gpu-kernels-to-cpu: no kernel ")
            << launch.getKernel() << " in this module";
        return signalPassFailure();
      }
      if (failed(emulateLaunch(launch, kernel)))
        return signalPassFailure();
    }
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      gpuModule.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
