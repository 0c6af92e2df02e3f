//===- ParallelLoopsToGPU.cpp - Kernels from the lowering's loops ---------===//
//
// Part of the spconv-mlir project.
//
// Every outermost scf.parallel becomes a kernel whose threads walk the loop's
// iterations in a grid-stride loop (like spconv's KernelLoopX), so any grid,
// however small, covers the whole range. Kernels are outlined into one
// gpu.module, named after the loop's role and, inside a rulebook builder,
// after the builder's geometry; structurally identical kernels are emitted
// once.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVPARALLELLOOPSTOGPUPASS
#include "SpConv/Conversion/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// Builders name their functions `spconv_build_<kind>_k.._s.._p.._d.._g..`.
constexpr llvm::StringLiteral kBuilderPrefix = "spconv_build_";

/// Replaces `loop` (inside a kernel) by a nest of scf.for: the thread runs
/// the inner iterations itself.
void serializeParallel(scf::ParallelOp loop) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  IRMapping mapping;
  OpBuilder inner = b;
  for (auto [lb, ub, step, iv] :
       llvm::zip_equal(loop.getLowerBound(), loop.getUpperBound(),
                       loop.getStep(), loop.getInductionVars())) {
    auto forOp = scf::ForOp::create(inner, loc, lb, ub, step);
    mapping.map(iv, forOp.getInductionVar());
    inner.setInsertionPoint(forOp.getBody()->getTerminator());
  }
  for (Operation &op : loop.getBody()->without_terminator())
    inner.clone(op, mapping);
  loop.erase();
}

/// Makes the workgroup allocas of `kernel` its workgroup attributions: CUDA
/// shared memory is declared with the kernel, not allocated in its body.
LogicalResult hoistWorkgroupAllocas(gpu::GPUFuncOp kernel) {
  SmallVector<memref::AllocaOp> allocas;
  kernel.walk([&](memref::AllocaOp alloca) {
    if (gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(alloca.getType()))
      allocas.push_back(alloca);
  });
  for (memref::AllocaOp alloca : allocas) {
    if (!alloca.getType().hasStaticShape() ||
        alloca->getParentRegion() != &kernel.getBody())
      return alloca.emitError("spconv-parallel-loops-to-gpu: a workgroup "
                              "buffer needs a static shape and must be "
                              "allocated where the kernel starts");
    BlockArgument buffer =
        kernel.addWorkgroupAttribution(alloca.getType(), alloca.getLoc());
    // The alignment the buffer was allocated with (tensor-core fragments
    // need 32 bytes) becomes the shared variable's.
    if (std::optional<uint64_t> alignment = alloca.getAlignment())
      kernel.setWorkgroupAttributionAttr(
          kernel.getNumWorkgroupAttributions() - 1,
          LLVM::LLVMDialect::getAlignAttrName(),
          IntegerAttr::get(IntegerType::get(kernel.getContext(), 64),
                           *alignment));
    alloca.replaceAllUsesWith(buffer);
    alloca.erase();
  }
  return success();
}

/// `ceil(max(ub - lb, 0) / step)`: the iterations of one dimension.
Value tripCount(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value span = b.createOrFold<arith::MaxSIOp>(
      loc, b.createOrFold<arith::SubIOp>(loc, ub, lb), zero);
  return b.createOrFold<arith::CeilDivSIOp>(loc, span, step);
}

/// The total iterations of `loop`, built from values mapped by `mapping`.
Value totalIterations(OpBuilder &b, Location loc, scf::ParallelOp loop,
                      const IRMapping &mapping,
                      SmallVectorImpl<Value> *trips = nullptr) {
  Value total = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [lb, ub, step] : llvm::zip_equal(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value trip =
        tripCount(b, loc, mapping.lookupOrDefault(lb),
                  mapping.lookupOrDefault(ub), mapping.lookupOrDefault(step));
    if (trips)
      trips->push_back(trip);
    total = b.createOrFold<arith::MulIOp>(loc, total, trip);
  }
  return total;
}

class KernelOutliner {
public:
  KernelOutliner(ModuleOp module, gpu::GPUModuleOp kernels, int64_t blockSize,
                 int64_t maxBlocks)
      : module(module), kernels(kernels), kernelTable(kernels),
        blockSize(blockSize), maxBlocks(maxBlocks) {}

  LogicalResult outline(scf::ParallelOp loop);

  /// Outlines a `gpu.launch` of the lowering (a tiled kernel).
  LogicalResult outline(gpu::LaunchOp launch);

  /// Copies the functions that kernels call into the kernel module.
  LogicalResult copyCallees();

private:
  std::string kernelName(Operation *loop);
  /// Names `kernel` uniquely, or replaces it by an identical kernel.
  gpu::GPUFuncOp deduplicate(gpu::GPUFuncOp kernel, StringRef name);
  gpu::GPUFuncOp buildKernel(scf::ParallelOp loop, StringRef name,
                             ArrayRef<Value> arguments, ArrayRef<Value> sunk);
  gpu::GPUFuncOp findEquivalent(gpu::GPUFuncOp kernel);
  void launch(scf::ParallelOp loop, gpu::GPUFuncOp kernel,
              ArrayRef<Value> arguments);

  ModuleOp module;
  gpu::GPUModuleOp kernels;
  SymbolTable kernelTable;
  int64_t blockSize;
  int64_t maxBlocks;
};

std::string KernelOutliner::kernelName(Operation *loop) {
  auto function = loop->getParentOfType<func::FuncOp>();
  StringRef functionName = function ? function.getSymName() : "kernel";
  auto role = loop->getAttrOfType<StringAttr>(kKernelRoleAttrName);
  if (!role)
    return (functionName + "_loop").str();
  if (functionName.starts_with(kBuilderPrefix))
    return (functionName + "_" + role.getValue()).str();
  return ("spconv_" + role.getValue()).str();
}

gpu::GPUFuncOp KernelOutliner::buildKernel(scf::ParallelOp loop, StringRef name,
                                           ArrayRef<Value> arguments,
                                           ArrayRef<Value> sunk) {
  Location loc = loop.getLoc();
  MLIRContext *context = loop.getContext();
  SmallVector<Type> argumentTypes;
  for (Value value : arguments)
    argumentTypes.push_back(value.getType());
  OpBuilder b(context);
  b.setInsertionPointToEnd(kernels.getBody());
  auto kernel = gpu::GPUFuncOp::create(
      b, loc, name, FunctionType::get(context, argumentTypes, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  UnitAttr::get(context));
  kernel.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(blockSize), 1, 1}));

  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  IRMapping mapping;
  for (auto [value, argument] :
       llvm::zip_equal(arguments, entry.getArguments()))
    mapping.map(value, argument);
  // Constants are cloned, so that the kernel is specialised on them.
  for (Value value : sunk)
    b.clone(*value.getDefiningOp(), mapping);

  // Grid-stride loop over the linearised iteration space.
  SmallVector<Value> trips;
  Value total = totalIterations(b, loc, loop, mapping, &trips);
  Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value threads = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
  Value blocks = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value first = b.createOrFold<arith::AddIOp>(
      loc, b.createOrFold<arith::MulIOp>(loc, block, threads), thread);
  Value stride = b.createOrFold<arith::MulIOp>(loc, blocks, threads);
  auto strideLoop = scf::ForOp::create(b, loc, first, total, stride);
  b.setInsertionPoint(strideLoop.getBody()->getTerminator());
  Value rest = strideLoop.getInductionVar();
  unsigned rank = loop.getNumLoops();
  SmallVector<Value> ivs(rank);
  for (unsigned d = rank; d-- > 0;) {
    Value position = rest;
    if (d > 0) {
      position = b.createOrFold<arith::RemUIOp>(loc, rest, trips[d]);
      rest = b.createOrFold<arith::DivUIOp>(loc, rest, trips[d]);
    }
    ivs[d] = b.createOrFold<arith::AddIOp>(
        loc, mapping.lookupOrDefault(loop.getLowerBound()[d]),
        b.createOrFold<arith::MulIOp>(
            loc, position, mapping.lookupOrDefault(loop.getStep()[d])));
  }
  for (auto [iv, value] : llvm::zip_equal(loop.getInductionVars(), ivs))
    mapping.map(iv, value);
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  b.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(b, loc);

  // Inner parallel loops run on the thread that reaches them.
  SmallVector<scf::ParallelOp> nested;
  kernel.walk([&](scf::ParallelOp op) { nested.push_back(op); });
  for (scf::ParallelOp op : nested) // post-order: innermost first
    serializeParallel(op);
  kernel->walk([](Operation *op) { op->removeAttr(kKernelRoleAttrName); });
  // Constants that folding left unused.
  SmallVector<Operation *> dead;
  kernel.walk([&](Operation *op) {
    if (isOpTriviallyDead(op))
      dead.push_back(op);
  });
  for (Operation *op : dead)
    op->erase();
  return kernel;
}

gpu::GPUFuncOp KernelOutliner::findEquivalent(gpu::GPUFuncOp kernel) {
  for (auto other : kernels.getOps<gpu::GPUFuncOp>()) {
    if (other == kernel || !other.isKernel() ||
        other.getFunctionType() != kernel.getFunctionType() ||
        other.getKnownBlockSizeAttr() != kernel.getKnownBlockSizeAttr() ||
        !llvm::equal(other.getWorkgroupAttributions(),
                     kernel.getWorkgroupAttributions(),
                     [](BlockArgument x, BlockArgument y) {
                       return x.getType() == y.getType();
                     }))
      continue;
    if (OperationEquivalence::isRegionEquivalentTo(
            &other.getBody(), &kernel.getBody(),
            OperationEquivalence::IgnoreLocations))
      return other;
  }
  return nullptr;
}

void KernelOutliner::launch(scf::ParallelOp loop, gpu::GPUFuncOp kernel,
                            ArrayRef<Value> arguments) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value total = totalIterations(b, loc, loop, IRMapping());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value threads = arith::ConstantIndexOp::create(b, loc, blockSize);
  Value blocks = b.createOrFold<arith::CeilDivSIOp>(loc, total, threads);
  if (maxBlocks > 0)
    blocks = b.createOrFold<arith::MinSIOp>(
        loc, blocks, arith::ConstantIndexOp::create(b, loc, maxBlocks));
  // No guard around an empty grid: the runtime launches nothing for it, so
  // launches stay in straight-line host code that one stream can chain.
  gpu::LaunchFuncOp::create(b, loc, kernel, gpu::KernelDim3{blocks, one, one},
                            gpu::KernelDim3{threads, one, one},
                            /*dynamicSharedMemorySize=*/Value(), arguments);
}

LogicalResult KernelOutliner::outline(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitError("spconv-parallel-loops-to-gpu: a parallel loop "
                          "with reductions cannot become a kernel");

  // What the kernel reads from the host: bounds and values defined above.
  llvm::SetVector<Value> used;
  for (Value value : loop.getOperands())
    used.insert(value);
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  SmallVector<Value> arguments, sunk;
  for (Value value : used) {
    if (matchPattern(value, m_Constant()))
      sunk.push_back(value);
    else
      arguments.push_back(value);
  }

  std::string name = kernelName(loop);
  gpu::GPUFuncOp kernel =
      deduplicate(buildKernel(loop, name, arguments, sunk), name);
  launch(loop, kernel, arguments);
  loop.erase();
  return success();
}

gpu::GPUFuncOp KernelOutliner::deduplicate(gpu::GPUFuncOp kernel,
                                           StringRef name) {
  if (gpu::GPUFuncOp existing = findEquivalent(kernel)) {
    kernel.erase();
    return existing;
  }
  // A different kernel of the same role (other channel counts, say).
  // (Not yet in the table, the new kernel cannot collide with itself.)
  std::string unique = name.str();
  for (unsigned i = 1; kernelTable.lookup(unique); ++i)
    unique = (name + "_" + Twine(i)).str();
  kernel.setName(unique);
  kernelTable.insert(kernel);
  return kernel;
}

LogicalResult KernelOutliner::outline(gpu::LaunchOp launch) {
  if (!launch.getBody().hasOneBlock() || launch.getAsyncToken() ||
      !launch.getAsyncDependencies().empty())
    return launch.emitError("spconv-parallel-loops-to-gpu: only a "
                            "synchronous gpu.launch of one block becomes a "
                            "kernel");
  // Constants are sunk, so that the kernel is specialised on them.
  if (failed(sinkOperationsIntoLaunchOp(launch, [](Operation *op) {
        return matchPattern(op, m_Constant());
      })))
    return failure();
  std::string name = kernelName(launch);
  SmallVector<Value> arguments;
  gpu::GPUFuncOp kernel = outlineKernelFunc(launch, name, arguments);
  OpBuilder::atBlockEnd(kernels.getBody()).insert(kernel);
  kernel->walk([](Operation *op) { op->removeAttr(kKernelRoleAttrName); });
  if (failed(hoistWorkgroupAllocas(kernel)))
    return failure();
  if (auto tile = launch->getAttrOfType<DictionaryAttr>(kTileAttrName)) {
    kernel->setAttr(kTileAttrName, tile);
    // A register budget of the tiles becomes PTX's .maxnreg.
    if (auto budget = tile.getAs<IntegerAttr>("max_registers"))
      kernel->setAttr(
          NVVM::NVVMDialect::getMaxnregAttrName(),
          IntegerAttr::get(IntegerType::get(kernel.getContext(), 32),
                           budget.getInt()));
  }
  // No known block size (PTX .maxntid), although the launch's is constant:
  // ptxas reads .maxntid as a register budget (56 registers at 128 threads
  // on sm_80) and spills the register tiles that fit without it.
  kernel.removeKnownBlockSizeAttr();
  kernel = deduplicate(kernel, name);

  // The lowering's launches walk their tiles in a grid-stride loop, so the
  // grid may be capped like any other.
  OpBuilder b(launch);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  if (maxBlocks > 0 && launch->hasAttr(kKernelRoleAttrName))
    grid.x = b.createOrFold<arith::MinSIOp>(
        launch.getLoc(), grid.x,
        arith::ConstantIndexOp::create(b, launch.getLoc(), maxBlocks));
  gpu::LaunchFuncOp::create(b, launch.getLoc(), kernel, grid,
                            launch.getBlockSizeOperandValues(),
                            launch.getDynamicSharedMemorySize(), arguments);
  launch.erase();
  return success();
}

LogicalResult KernelOutliner::copyCallees() {
  SmallVector<Operation *> worklist(kernels.getOps<gpu::GPUFuncOp>().begin(),
                                    kernels.getOps<gpu::GPUFuncOp>().end());
  while (!worklist.empty()) {
    Operation *root = worklist.pop_back_val();
    WalkResult result = root->walk([&](func::CallOp call) {
      StringRef callee = call.getCallee();
      if (kernelTable.lookup(callee))
        return WalkResult::advance();
      auto function = module.lookupSymbol<func::FuncOp>(callee);
      if (!function || function.isExternal()) {
        call.emitError("spconv-parallel-loops-to-gpu: kernel code calls @")
            << callee << ", which has no body to compile for the device";
        return WalkResult::interrupt();
      }
      Operation *copy = function->clone();
      kernelTable.insert(copy);
      worklist.push_back(copy);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
  }
  return success();
}

struct SpConvParallelLoopsToGPUPass
    : spconv::impl::SpConvParallelLoopsToGPUPassBase<
          SpConvParallelLoopsToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize < 1 || blockSize > 1024) {
      module.emitError("spconv-parallel-loops-to-gpu: block-size must be in "
                       "[1, 1024], got ")
          << blockSize.getValue();
      return signalPassFailure();
    }
    if (maxBlocks < 0) {
      module.emitError("spconv-parallel-loops-to-gpu: max-blocks must be 0 "
                       "(no cap) or positive, got ")
          << maxBlocks.getValue();
      return signalPassFailure();
    }
    if (module.lookupSymbol(kernelModule)) {
      module.emitError("spconv-parallel-loops-to-gpu: the module already has "
                       "a symbol named '")
          << kernelModule.getValue() << "'";
      return signalPassFailure();
    }

    // Outermost loops and launches of host functions.
    SmallVector<scf::ParallelOp> loops;
    SmallVector<gpu::LaunchOp> launches;
    module.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::GPUModuleOp>() ||
          op->getParentOfType<gpu::LaunchOp>())
        return;
      if (auto launch = dyn_cast<gpu::LaunchOp>(op))
        launches.push_back(launch);
      else if (auto loop = dyn_cast<scf::ParallelOp>(op);
               loop && !loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    if (loops.empty() && launches.empty())
      return;

    MLIRContext *context = module.getContext();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(context));
    OpBuilder b(context);
    b.setInsertionPointToEnd(module.getBody());
    auto kernels =
        gpu::GPUModuleOp::create(b, module.getLoc(), kernelModule.getValue());
    // NVPTX aligns i64 to 8 bytes; without saying so, LLVM's default layout
    // (i64:32) makes every 64-bit load and store of a key two 32-bit ones.
    auto i64Alignment = DataLayoutEntryAttr::get(
        b.getI64Type(), DenseIntElementsAttr::get(
                            VectorType::get({2}, b.getI64Type()),
                            ArrayRef<int64_t>{64, 64}));
    kernels->setAttr(DLTIDialect::kDataLayoutAttrName,
                     DataLayoutSpecAttr::get(context, {i64Alignment}));
    SymbolTable(module).insert(kernels);

    KernelOutliner outliner(module, kernels, blockSize, maxBlocks);
    for (scf::ParallelOp loop : loops)
      if (failed(outliner.outline(loop)))
        return signalPassFailure();
    for (gpu::LaunchOp launch : launches)
      if (failed(outliner.outline(launch)))
        return signalPassFailure();
    if (failed(outliner.copyCallees()))
      return signalPassFailure();
  }
};

} // namespace
