//===- StreamOrder.cpp - The host's GPU work on one stream ----------------===//
//
// Part of the spconv-mlir project.
//
// Every GPU operation of a host function (launches, device allocations and
// frees, copies) becomes asynchronous and depends on the one before it, so
// the whole function is one token chain: one stream, in program order. The
// runtime's CUDA primitives (spconv_rt_cuda_memref_*) join it too: they run
// on the calling thread's stream, which is the chain's. The host waits for
// the stream only where it must: after copies into host memory (read-backs;
// consecutive ones share a wait), before it touches memory that the device
// may be using, before
// any other call that takes such memory, around profiling timers and before
// returning.
//
// Tokens cross structured control flow as values (an extra scf.if result,
// an extra scf.for iteration argument), not by synchronising at the end of
// every region. Upstream's gpu-to-llvm lowers a token reaching a host-side
// `gpu.wait` through a block argument as if it were an event, so the host
// waits through a runtime call that takes the stream instead
// (spconv_rt_cuda_stream_synchronize).
//
//===----------------------------------------------------------------------===//

#include "GPU/BufferRoot.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUSTREAMORDERPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

constexpr llvm::StringLiteral kSynchronize =
    "spconv_rt_cuda_stream_synchronize";

/// Whether `op` is one of the host's GPU operations that join the chain.
bool isGPUWork(Operation *op) {
  if (auto alloc = dyn_cast<gpu::AllocOp>(op))
    return !alloc.getHostShared(); // cuMemAllocManaged takes no stream.
  return isa<gpu::LaunchFuncOp, gpu::DeallocOp, gpu::MemcpyOp, gpu::MemsetOp>(
      op);
}

/// Whether `op` calls one of the runtime's CUDA primitives: they enqueue
/// their work on the calling thread's stream, the one the chain runs on, so
/// they need no wait before them and leave work in flight.
bool isStreamOrderedCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee().starts_with("spconv_rt_cuda_memref_");
}

/// Whether `op` calls the runtime's CUDA error report of a rulebook build,
/// which waits for the stream before it copies what it names: nothing is
/// in flight after it.
bool waitsForStream(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee() == "spconv_rt_cuda_memref_report_build_error";
}

bool containsGPUWork(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isGPUWork(inner) || isStreamOrderedCall(inner)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether the device may access the memory `value` refers to: buffers of
/// gpu.alloc, the function's arguments (the caller's, device-accessible by
/// contract) and anything not traced to host memory.
bool isDeviceVisible(Value value) { return !isHostMemory(value); }

/// Whether host code `op` (not itself a GPU operation) must wait for the
/// stream first: it reads or writes device-visible memory, calls a function
/// with such memory, or reads a profiling timer.
bool needsSynchronization(Operation *op) {
  if (auto call = dyn_cast<func::CallOp>(op)) {
    if (call.getCallee().starts_with("spconv_rt_profile"))
      return true;
    // A function of the module runs its own chain, which must start after
    // this one's work.
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (callee && !callee.isExternal())
      return true;
    return llvm::any_of(call.getOperands(), [](Value operand) {
      return isa<BaseMemRefType>(operand.getType()) && isDeviceVisible(operand);
    });
  }
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    return llvm::any_of(instances, [](MemoryEffects::EffectInstance &effect) {
      if (!isa<MemoryEffects::Read, MemoryEffects::Write>(effect.getEffect()))
        return false;
      Value value = effect.getValue();
      return !value || isDeviceVisible(value);
    });
  }
  if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return false; // Its nested operations are checked one by one.
  return llvm::any_of(op->getOperands(), [](Value operand) {
    return isa<BaseMemRefType>(operand.getType()) && isDeviceVisible(operand);
  });
}

bool nestedNeedsSynchronization(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return needsSynchronization(inner) ? WalkResult::interrupt()
                                           : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `op` copies into host memory: a read-back, which the host reads
/// next.
bool isReadBack(Operation *op) {
  auto copy = dyn_cast<gpu::MemcpyOp>(op);
  return copy && !isDeviceVisible(copy.getDst());
}

/// The chain of one function: the last token, whether work may be in
/// flight since the host last waited (frees do not count: nothing waits
/// for memory to return to the pool), and whether a read-back is among it.
struct Chain {
  Value token;
  bool pending = false;
  bool readBack = false;
};

class StreamOrder {
public:
  StreamOrder(func::FuncOp synchronize) : synchronize(synchronize) {}

  LogicalResult run(func::FuncOp function) {
    if (!function.getBody().hasOneBlock())
      return function.emitOpError(
          "spconv-gpu-stream-order: expected structured control flow (one "
          "block) in a function with GPU work");
    Block &entry = function.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    Chain chain;
    chain.token =
        gpu::WaitOp::create(b, function.getLoc(),
                            b.getType<gpu::AsyncTokenType>(), ValueRange{})
            .getAsyncToken();
    return threadBlock(entry, chain);
  }

private:
  void wait(Operation *before, Chain &chain) {
    if (!chain.pending)
      return;
    OpBuilder b(before);
    func::CallOp::create(b, before->getLoc(), synchronize,
                         ValueRange{chain.token});
    chain.pending = false;
    chain.readBack = false;
  }

  /// Makes the synchronous `op` asynchronous after `token`; returns its
  /// token. (The token is the op's last result.)
  Value chainOp(Operation *op, Value token) {
    OpBuilder b(op);
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(op->getOperands());
    state.propertiesAttr = op->getPropertiesAsAttribute();
    state.addAttributes(op->getDiscardableAttrDictionary().getValue());
    state.addTypes(op->getResultTypes());
    state.addTypes(b.getType<gpu::AsyncTokenType>());
    Operation *replacement = b.create(state);
    op->replaceAllUsesWith(replacement->getResults().drop_back());
    op->erase();
    auto async = cast<gpu::AsyncOpInterface>(replacement);
    async.addAsyncDependency(token);
    return async.getAsyncToken();
  }

  LogicalResult threadBlock(Block &block, Chain &chain) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (&op == chain.token.getDefiningOp())
        continue;
      if (auto async = dyn_cast<gpu::AsyncOpInterface>(&op);
          async && (async.getAsyncToken() || isa<gpu::WaitOp>(op)))
        return op.emitOpError("spconv-gpu-stream-order: expected synchronous "
                              "GPU operations, which this pass chains");
      // The host waits for read-backs before anything but more read-backs
      // and frees: consecutive read-backs share one wait.
      bool free = isa<gpu::DeallocOp>(op);
      if (chain.readBack && !isReadBack(&op) && !free)
        wait(&op, chain);
      if (isGPUWork(&op)) {
        chain.readBack |= isReadBack(&op);
        chain.pending |= !free;
        chain.token = chainOp(&op, chain.token);
        continue;
      }
      if (isStreamOrderedCall(&op)) {
        chain.pending = !waitsForStream(&op);
        continue;
      }
      if (isa<func::ReturnOp>(op)) {
        wait(&op, chain);
        continue;
      }
      if (op.getNumRegions() == 0) {
        if (needsSynchronization(&op))
          wait(&op, chain);
        continue;
      }
      if (!containsGPUWork(&op)) {
        // Host-only branches (error reports) wait inside the arm that needs
        // it, so the path not taken does not wait. Work stays in flight
        // after the scf.if: the other arm may not have waited.
        if (auto branch = dyn_cast<scf::IfOp>(&op); branch && chain.pending) {
          for (Region &arm : branch->getRegions()) {
            if (arm.empty())
              continue;
            Chain inArm = chain;
            if (failed(threadBlock(arm.front(), inArm)))
              return failure();
          }
          continue;
        }
        if (nestedNeedsSynchronization(&op))
          wait(&op, chain);
        continue;
      }
      if (auto ifOp = dyn_cast<scf::IfOp>(&op)) {
        if (failed(threadIf(ifOp, chain)))
          return failure();
        continue;
      }
      if (auto forOp = dyn_cast<scf::ForOp>(&op)) {
        if (failed(threadFor(forOp, chain)))
          return failure();
        continue;
      }
      return op.emitOpError("spconv-gpu-stream-order: GPU work inside this "
                            "operation cannot join the stream's chain");
    }
    return success();
  }

  /// Each branch continues the chain; the if yields its last token.
  LogicalResult threadIf(scf::IfOp ifOp, Chain &chain) {
    OpBuilder b(ifOp);
    Type tokenType = b.getType<gpu::AsyncTokenType>();
    SmallVector<Type> types(ifOp.getResultTypes());
    types.push_back(tokenType);
    auto threaded =
        scf::IfOp::create(b, ifOp.getLoc(), types, ifOp.getCondition(),
                          /*withElseRegion=*/false);
    threaded.getThenRegion().takeBody(ifOp.getThenRegion());
    if (ifOp.getElseRegion().empty()) {
      // The token passes through a missing else.
      b.createBlock(&threaded.getElseRegion());
      scf::YieldOp::create(b, ifOp.getLoc());
    } else {
      threaded.getElseRegion().takeBody(ifOp.getElseRegion());
    }
    bool pending = false;
    for (Region *region :
         {&threaded.getThenRegion(), &threaded.getElseRegion()}) {
      Chain branch = chain;
      if (failed(threadBlock(region->front(), branch)))
        return failure();
      region->front().getTerminator()->insertOperands(
          region->front().getTerminator()->getNumOperands(), branch.token);
      pending |= branch.pending;
    }
    ifOp->replaceAllUsesWith(threaded.getResults().drop_back());
    ifOp.erase();
    chain.token = threaded.getResults().back();
    chain.pending = pending;
    return success();
  }

  /// The token is an iteration argument: each iteration continues the
  /// chain of the one before.
  LogicalResult threadFor(scf::ForOp forOp, Chain &chain) {
    IRRewriter rewriter(forOp);
    Value incoming = chain.token;
    FailureOr<LoopLikeOpInterface> replaced = forOp.replaceWithAdditionalYields(
        rewriter, ValueRange{incoming}, /*replaceInitOperandUsesInLoop=*/false,
        [](OpBuilder &, Location, ArrayRef<BlockArgument> arguments) {
          return SmallVector<Value>{arguments.front()};
        });
    if (failed(replaced))
      return forOp.emitOpError("spconv-gpu-stream-order: cannot thread the "
                               "stream's token through this loop");
    auto threaded = cast<scf::ForOp>(replaced->getOperation());
    Block *body = threaded.getBody();
    Chain iteration{threaded.getRegionIterArgs().back(), true};
    if (failed(threadBlock(*body, iteration)))
      return failure();
    Operation *yield = body->getTerminator();
    yield->setOperand(yield->getNumOperands() - 1, iteration.token);
    chain.token = threaded.getResults().back();
    chain.pending = true;
    return success();
  }

  func::FuncOp synchronize;
};

struct SpConvGPUStreamOrderPass
    : spconv::impl::SpConvGPUStreamOrderPassBase<SpConvGPUStreamOrderPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal() && containsGPUWork(function))
        functions.push_back(function);
    if (functions.empty())
      return;
    SymbolTable symbols(module);
    auto synchronize = symbols.lookup<func::FuncOp>(kSynchronize);
    if (!synchronize) {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      synchronize = func::FuncOp::create(
          b, module.getLoc(), kSynchronize,
          b.getFunctionType({b.getType<gpu::AsyncTokenType>()}, {}));
      synchronize.setPrivate();
    }
    StreamOrder order(synchronize);
    for (func::FuncOp function : functions)
      if (failed(order.run(function)))
        return signalPassFailure();
  }
};

} // namespace
