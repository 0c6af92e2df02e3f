//===- GPUKernelsToCPU.cpp - Run outlined GPU kernels on the CPU ----------===//
//
// Part of the spconv-mlir project.
//
// A test lowering: the exact kernels that become PTX run on the CPU, so CI
// checks them without a GPU. Each kernel becomes a function that runs one
// block (KernelPhases.h: a loop over the block's threads per phase between
// barriers and warp-level ops, workgroup buffers allocated per block); each
// launch becomes a parallel loop over the blocks of its grid calling it.
//
//===----------------------------------------------------------------------===//

#include "KernelPhases.h"
#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUKERNELSTOCPUPASS
#include "SpConv/Conversion/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::emulation;

namespace {

/// Arguments of an emulated kernel after its own, each for x, y, z.
enum EmulatedArgument {
  kBlockId = 0,
  kBlockDim = 3,
  kGridDim = 6,
  kNumExtra = 9
};

/// What a launch of an emulated kernel needs.
struct EmulatedKernel {
  func::FuncOp function;
  /// Shuffles, subgroup reductions or tensor-core ops: whole warps only.
  bool usesWarps = false;
  /// Kernel arguments (then workgroup buffers) in race-check reports.
  unsigned numArguments = 0;
  /// "name\nbuffer 0\n...": the kernel and, with race checking, its buffers.
  memref::GlobalOp names;
};

/// "spconv-gpu-kernels-to-cpu: kernel @<kernel> ", for sentences about the
/// kernel as a whole ("... uses private memory").
InFlightDiagnostic kernelError(Operation *op, StringRef kernel) {
  return op->emitError("spconv-gpu-kernels-to-cpu: kernel @") << kernel << " ";
}

/// Rejects what the emulation does not model, naming it.
LogicalResult checkEmulable(gpu::GPUFuncOp kernel) {
  StringRef name = kernel.getName();
  if (!kernel.getPrivateAttributions().empty())
    return kernelError(kernel, name)
           << "uses private memory attributions, which are not emulated";
  for (Value buffer : kernel.getWorkgroupAttributions())
    if (!cast<MemRefType>(buffer.getType()).hasStaticShape())
      return kernelError(kernel, name)
             << "has a workgroup buffer of dynamic shape";
  if (!kernel.getBody().hasOneBlock())
    return kernelError(kernel, name)
           << "has unstructured control flow ("
           << kernel.getBody().getBlocks().size()
           << " blocks); the emulator runs structured (scf) kernels";
  WalkResult result = kernel.walk([&](Operation *op) {
    if (isa<gpu::AllReduceOp, gpu::DynamicSharedMemoryOp, gpu::PrintfOp>(op) ||
        (op->getDialect()->getNamespace() == "nvgpu" &&
         !isa<nvgpu::LdMatrixOp, nvgpu::MmaSyncOp>(op)) ||
        op->getDialect()->getNamespace() == "nvvm") {
      kernelError(op, name) << "uses '" << op->getName()
                            << "', which the emulator does not model";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

bool usesWarpOps(gpu::GPUFuncOp kernel) {
  return kernel
      ->walk([](Operation *op) {
        return isa<gpu::ShuffleOp, gpu::SubgroupReduceOp,
                   gpu::SubgroupMmaLoadMatrixOp, gpu::SubgroupMmaStoreMatrixOp,
                   gpu::SubgroupMmaComputeOp, nvgpu::LdMatrixOp,
                   nvgpu::MmaSyncOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

Type withoutGPUAddressSpace(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref ||
      !isa_and_nonnull<gpu::AddressSpaceAttr>(memref.getMemorySpace()))
    return type;
  return MemRefType::get(memref.getShape(), memref.getElementType(),
                         memref.getLayout());
}

/// Workgroup memory is ordinary memory of the emulating block.
void dropGPUAddressSpaces(gpu::GPUFuncOp kernel) {
  kernel.getBody().walk([](Block *block) {
    for (BlockArgument arg : block->getArguments())
      arg.setType(withoutGPUAddressSpace(arg.getType()));
  });
  kernel.getBody().walk([](Operation *op) {
    for (OpResult result : op->getResults())
      result.setType(withoutGPUAddressSpace(result.getType()));
  });
}

/// A constant byte string, for the runtime's reports.
memref::GlobalOp stringGlobal(ModuleOp module, StringRef symbol,
                              StringRef text) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  auto type =
      MemRefType::get({static_cast<int64_t>(text.size())}, b.getI8Type());
  auto tensorType = RankedTensorType::get(type.getShape(), b.getI8Type());
  auto value = DenseElementsAttr::get(tensorType,
                                      ArrayRef<char>(text.data(), text.size()));
  auto global = memref::GlobalOp::create(
      b, module.getLoc(), symbol, b.getStringAttr("private"), type, value,
      /*constant=*/true, /*alignment=*/IntegerAttr{});
  SymbolTable(module).insert(global);
  return global;
}

/// The kernel as a function running one block.
FailureOr<EmulatedKernel> emulateKernel(gpu::GPUFuncOp kernel, ModuleOp module,
                                        bool raceCheck) {
  bool asyncCopies = false;
  if (failed(lowerAsyncCopies(kernel, module, asyncCopies)) ||
      failed(checkEmulable(kernel)))
    return failure();
  EmulatedKernel emulated;
  emulated.usesWarps = usesWarpOps(kernel);
  emulated.numArguments = kernel.getNumArguments();
  if (failed(lowerMMAOps(kernel)))
    return failure();
  std::string names = kernel.getName().str();
  if (raceCheck)
    for (const std::string &buffer : instrumentRaces(kernel, module))
      names += "\n" + buffer;
  // Run-time reports name the kernel: races, partial or divergent warps,
  // blocks that disagree around a barrier.
  if (raceCheck || emulated.usesWarps || containsBarrier(kernel) || asyncCopies)
    emulated.names = stringGlobal(
        module, ("__spconv_emulated_" + kernel.getName()).str(), names);
  dropGPUAddressSpaces(kernel);

  MLIRContext *context = kernel.getContext();
  Location loc = kernel.getLoc();
  Type index = IndexType::get(context);
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  inputs.append(kNumExtra, index);
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  auto function = func::FuncOp::create(b, loc, kernel.getName(),
                                       FunctionType::get(context, inputs, {}));
  function.setPrivate();
  Block *entry = function.addEntryBlock();
  unsigned numArgs = kernel.getNumArguments();
  BlockValues block;
  for (int d = 0; d < 3; ++d) {
    block.blockId[d] = entry->getArgument(numArgs + kBlockId + d);
    block.blockDim[d] = entry->getArgument(numArgs + kBlockDim + d);
    block.gridDim[d] = entry->getArgument(numArgs + kGridDim + d);
  }
  OpBuilder entryBuilder = OpBuilder::atBlockEnd(entry);
  block.numThreads = arith::MulIOp::create(
      entryBuilder, loc,
      arith::MulIOp::create(entryBuilder, loc, block.blockDim[0],
                            block.blockDim[1]),
      block.blockDim[2]);

  PhaseSplitter splitter(kernel, block, entryBuilder, raceCheck,
                         emulated.names);
  for (unsigned i = 0; i < numArgs; ++i)
    splitter.mapUniform(kernel.getArgument(i), entry->getArgument(i));
  // With the alignment the kernel declares (llvm.align): its vector
  // accesses may count on it, and on the CPU an aligned vector access to
  // memory that is not traps.
  for (auto [index, buffer] :
       llvm::enumerate(kernel.getWorkgroupAttributions()))
    splitter.mapUniform(
        buffer,
        memref::AllocaOp::create(
            entryBuilder, buffer.getLoc(), cast<MemRefType>(buffer.getType()),
            dyn_cast_or_null<IntegerAttr>(kernel.getWorkgroupAttributionAttr(
                index, LLVM::LLVMDialect::getAlignAttrName()))));

  // The phases go to a block of their own, then after the allocations
  // that they add to the entry block as they go.
  auto *body = new Block();
  function.getBody().push_back(body);
  OpBuilder bodyBuilder = OpBuilder::atBlockEnd(body);
  if (failed(splitter.run(kernel.getBody().front(), bodyBuilder))) {
    function.erase();
    return failure();
  }
  if (asyncCopies) {
    // A copy no thread waited for is lost work at best: reported.
    Value linearBlock = arith::AddIOp::create(
        bodyBuilder, loc, block.blockId[0],
        arith::MulIOp::create(
            bodyBuilder, loc, block.gridDim[0],
            arith::AddIOp::create(bodyBuilder, loc, block.blockId[1],
                                  arith::MulIOp::create(bodyBuilder, loc,
                                                        block.gridDim[1],
                                                        block.blockId[2]))));
    auto [name, length] = stringArguments(bodyBuilder, loc, emulated.names);
    func::CallOp::create(
        bodyBuilder, loc,
        getEmulatorFunction(module, "spconv_rt_emu_async_block_end", 3, true),
        ValueRange{name, length, toI64(bodyBuilder, loc, linearBlock)});
  }
  func::ReturnOp::create(bodyBuilder, loc);
  entry->getOperations().splice(entry->end(), body->getOperations());
  body->erase();
  emulated.function = function;
  return emulated;
}

Value i64Constant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 64);
}

/// `for each block of the grid: kernel(args, block, sizes)`, in parallel, or
/// in order (one host thread) when the race detector's state is shared.
LogicalResult emulateLaunch(gpu::LaunchFuncOp launch,
                            const EmulatedKernel &kernel, bool raceCheck) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.getDynamicSharedMemorySize() || launch.hasClusterSize())
    return launch.emitError("spconv-gpu-kernels-to-cpu: asynchronous "
                            "launches, clusters and dynamic shared memory "
                            "are not emulated");
  ModuleOp module = launch->getParentOfType<ModuleOp>();
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 threads = launch.getBlockSizeOperandValues();
  SmallVector<Value> gridSizes{grid.x, grid.y, grid.z};
  SmallVector<Value> blockSizes{threads.x, threads.y, threads.z};
  if (kernel.usesWarps) {
    Value numThreads = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, threads.x, threads.y), threads.z);
    Value partial = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::RemUIOp::create(
            b, loc, numThreads,
            arith::ConstantIndexOp::create(b, loc, emulation::kWarpSize)),
        zero);
    scf::IfOp::create(b, loc, partial, [&](OpBuilder &tb, Location tloc) {
      auto [name, length] = stringArguments(tb, tloc, kernel.names);
      func::CallOp::create(
          tb, tloc,
          getEmulatorFunction(module, "spconv_rt_emu_report_partial_warp", 3,
                              true),
          ValueRange{name, length,
                     arith::IndexCastOp::create(tb, tloc, tb.getI64Type(),
                                                numThreads)});
      scf::YieldOp::create(tb, tloc);
    });
  }
  if (raceCheck) {
    auto [name, length] = stringArguments(b, loc, kernel.names);
    func::CallOp::create(
        b, loc,
        getEmulatorFunction(module, "spconv_rt_emu_launch_begin", 3, true),
        ValueRange{name, length, i64Constant(b, loc, kernel.numArguments)});
  }
  SmallVector<Value> operands(launch.getKernelOperands());
  auto callBlock = [&](OpBuilder &cb, Location cloc, ValueRange blockId) {
    SmallVector<Value> arguments = operands;
    arguments.append(blockId.begin(), blockId.end());
    arguments.append(blockSizes);
    arguments.append(gridSizes);
    func::CallOp::create(cb, cloc, kernel.function, arguments);
  };
  SmallVector<Value> zeros(3, zero), ones(3, one);
  if (raceCheck) {
    scf::buildLoopNest(b, loc, zeros, gridSizes, ones,
                       [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
                         callBlock(nb, nloc, ivs);
                       });
    func::CallOp::create(
        b, loc,
        getEmulatorFunction(module, "spconv_rt_emu_launch_end", 0, true),
        ValueRange{});
  } else {
    scf::ParallelOp::create(b, loc, zeros, gridSizes, ones,
                            [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                              callBlock(pb, ploc, ivs);
                            });
  }
  launch.erase();
  return success();
}

struct SpConvGPUKernelsToCPUPass
    : spconv::impl::SpConvGPUKernelsToCPUPassBase<SpConvGPUKernelsToCPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Emulated kernels, by the launch's (module, kernel) names.
    llvm::DenseMap<SymbolRefAttr, EmulatedKernel> emulated;
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      for (auto kernel :
           llvm::make_early_inc_range(gpuModule.getOps<gpu::GPUFuncOp>())) {
        auto reference = SymbolRefAttr::get(
            gpuModule.getSymNameAttr(),
            ArrayRef<FlatSymbolRefAttr>{
                FlatSymbolRefAttr::get(kernel.getNameAttr())});
        FailureOr<EmulatedKernel> function =
            emulateKernel(kernel, module, raceCheck);
        if (failed(function))
          return signalPassFailure();
        symbols.insert(function->function); // renamed if the host has it
        emulated[reference] = *function;
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
      auto kernel = emulated.find(launch.getKernel());
      if (kernel == emulated.end()) {
        launch.emitError("spconv-gpu-kernels-to-cpu: no kernel ")
            << launch.getKernel() << " in this module";
        return signalPassFailure();
      }
      if (failed(emulateLaunch(launch, kernel->second, raceCheck)))
        return signalPassFailure();
    }
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      gpuModule.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
