//===- GPUMemory.cpp - Where the host's buffers live ----------------------===//
//
// Part of the spconv-mlir project.
//
// Each buffer the host functions allocate goes where its uses need it:
// device memory when only the device touches its contents (kernels, the
// runtime's CUDA primitives), managed memory when the host code reads or
// writes it too, host memory when only the host does. Uses are followed
// through views and casts. A result of a public function is the caller's to
// copy (device memory, by the ABI); a buffer that escapes otherwise
// (yielded, passed to a function of the module) may be touched by either
// side. A copy of
// whole buffers touches neither: it becomes a gpu.memcpy between whatever
// memory its ends got (a build's status read-back: device to host).
// Constant globals that kernels read are uploaded once per call.
//
//===----------------------------------------------------------------------===//

#include "GPU/BufferRoot.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPUMEMORYPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// The runtime's CUDA primitives (spconv-gpu-runtime-calls) read and write
/// device memory.
constexpr llvm::StringLiteral kCudaRuntimePrefix = "spconv_rt_cuda_";

/// Whether `copy` can become a `gpu.memcpy` (whole buffers, identity
/// layouts: one contiguous block each), which copies between any two kinds
/// of memory; it then touches neither side's contents itself.
bool isWholeBufferCopy(memref::CopyOp copy) {
  auto isContiguous = [](Value value) {
    auto type = dyn_cast<MemRefType>(value.getType());
    return type && type.getLayout().isIdentity();
  };
  return isContiguous(copy.getSource()) && isContiguous(copy.getTarget());
}

/// Which sides touch a buffer's contents.
struct Access {
  bool host = false;
  bool device = false;
  /// The first op that surely reads or writes the contents on the host (a
  /// load, a store, a call of the CPU runtime), not one that only may.
  Operation *hostUser = nullptr;

  void touchedOnHost(Operation *user) {
    host = true;
    if (!hostUser)
      hostUser = user;
  }
};

void collectAccess(Value buffer, Access &access) {
  for (OpOperand &use : buffer.getUses()) {
    Operation *user = use.getOwner();
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if ((view && view.getViewSource() == buffer) || isa<memref::CastOp>(user)) {
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          collectAccess(result, access);
      continue;
    }
    // Metadata and pointers, not contents.
    if (isa<memref::DimOp, memref::DeallocOp,
            memref::ExtractAlignedPointerAsIndexOp>(user))
      continue;
    if (isa<gpu::LaunchFuncOp>(user)) {
      access.device = true;
      continue;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(user);
        copy && isWholeBufferCopy(copy))
      continue;
    if (isa<memref::LoadOp, memref::StoreOp>(user)) {
      access.touchedOnHost(user);
      continue;
    }
    // A result of a public function goes to a caller outside the module,
    // which copies it explicitly (the ABI): device memory, unless the
    // function's own host code touches it too.
    if (isa<func::ReturnOp>(user) &&
        cast<func::FuncOp>(user->getParentOp()).isPublic()) {
      access.device = true;
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (call.getCallee().starts_with(kCudaRuntimePrefix)) {
        access.device = true;
        continue;
      }
      if (callee && callee.isExternal()) {
        access.touchedOnHost(user); // The CPU runtime.
        continue;
      }
    }
    // Yielded by an scf.if (guarded code, spconv-guard-allocations, and the
    // deallocation pipeline's conditional clones): what happens to the
    // result happens to the buffer.
    if (auto yield = dyn_cast<scf::YieldOp>(user))
      if (auto ifOp = dyn_cast<scf::IfOp>(yield->getParentOp())) {
        collectAccess(ifOp.getResult(use.getOperandNumber()), access);
        continue;
      }
    // Returned, yielded, copied on the host, passed to a function of the
    // module: either side may touch it.
    access.host = access.device = true;
  }
}

/// Whether `buffer` (through views and casts) may outlive the function:
/// returned, or yielded from a region (conservatively: the region's results
/// could be returned). A call does not keep it: functions return buffers
/// they own (the deallocation pipeline clones any other), so a callee never
/// hands an argument back.
bool escapes(Value buffer) {
  for (OpOperand &use : buffer.getUses()) {
    Operation *user = use.getOwner();
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if ((view && view.getViewSource() == buffer) || isa<memref::CastOp>(user)) {
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()) && escapes(result))
          return true;
      continue;
    }
    if (auto yield = dyn_cast<scf::YieldOp>(user))
      if (auto ifOp = dyn_cast<scf::IfOp>(yield->getParentOp())) {
        if (escapes(ifOp.getResult(use.getOperandNumber())))
          return true;
        continue;
      }
    if (user->hasTrait<OpTrait::IsTerminator>())
      return true;
  }
  return false;
}

/// Constant globals that the device reads (bufferized dense constants: a
/// loss's seed, a lookup table), directly or in a function of the module
/// they are passed to, are uploaded into a buffer of the function,
/// once per call: a `memref.alloc` at the function's entry, filled by a
/// copy of the global and freed before every return; the placement below
/// then makes it device memory (managed if host code reads it too or a
/// function of the module gets it, as for any buffer) and the
/// copy a `gpu.memcpy`, which spconv-gpu-stream-order puts on the stream
/// like any other upload (its source is constant host memory, so nothing
/// waits for it).
///
/// Why an upload and not a copy of the global into the kernel module (or
/// its values into the kernel as constants): it serves any constant, of any
/// size and read at any index or through any view; the kernels stay free of
/// data, so the identical ones still deduplicate and the emulator and ptxas
/// see no new kind of op. It costs one small copy per call (4 bytes for a
/// scalar seed), stream-ordered before the call's first launch, with no
/// host wait. (Folding a splat into the kernel would save that copy, but
/// only for splats read directly, and would split a kernel per constant.)
/// A mutable global, or a constant one that leaves the function, stays an
/// error: the device cannot see host memory, and a copy would not be the
/// global.
void uploadConstantGlobals(func::FuncOp function,
                           SmallVectorImpl<memref::AllocOp> &allocs,
                           SmallVectorImpl<memref::DeallocOp> &deallocs) {
  SmallVector<memref::GetGlobalOp> reads;
  function.walk([&](memref::GetGlobalOp op) {
    Access access;
    collectAccess(op.getResult(), access);
    if (access.device)
      reads.push_back(op);
  });
  if (reads.empty())
    return;
  SmallVector<func::ReturnOp> returns;
  function.walk([&](func::ReturnOp op) { returns.push_back(op); });
  llvm::DenseMap<Attribute, Value> uploads;
  // The uploads start the function, in the order of their first reads.
  OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
  for (memref::GetGlobalOp read : reads) {
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        read, read.getNameAttr());
    if (!global || !global.getConstant() || escapes(read.getResult()) ||
        !read.getType().getLayout().isIdentity())
      continue; // Reported with the other host-only kernel operands.
    Value &upload = uploads[read.getNameAttr()];
    if (!upload) {
      Location loc = read.getLoc();
      Value source =
          memref::GetGlobalOp::create(b, loc, read.getType(), read.getName());
      auto alloc = memref::AllocOp::create(b, loc, read.getType());
      memref::CopyOp::create(b, loc, source, alloc);
      allocs.push_back(alloc);
      for (func::ReturnOp ret : returns) {
        OpBuilder atReturn(ret);
        deallocs.push_back(memref::DeallocOp::create(atReturn, loc, alloc));
      }
      upload = alloc;
    }
    read.replaceAllUsesWith(upload);
    read.erase();
  }
}

/// Host copies of arguments are for scalars and small tables: a stack
/// slot, which needs no guard against a failed allocation and no free.
constexpr int64_t kMaxHostCopyBytes = 4096;

/// Whether an argument of `type` is copied to the host for its loads. An
/// `index` element (a rulebook's CSR offsets) is 64 bits in the host code;
/// memref's own bit width knows integers and floats only.
bool copiedToHost(MemRefType type) {
  Type element = type.getElementType();
  if (!type.getLayout().isIdentity() || !type.hasStaticShape() ||
      !element.isIntOrIndexOrFloat())
    return false;
  int64_t bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
  return type.getNumElements() * bits / 8 <= kMaxHostCopyBytes;
}

/// Arguments of a public function that its host code loads from directly
/// (a scalar such as a learning rate, read by `tensor.extract`) are the
/// caller's device memory: each small one (copiedToHost) is copied, whole,
/// into a stack slot at the function's entry, and the loads read the copy.
/// The copy becomes a `gpu.memcpy` below, which spconv-gpu-stream-order
/// waits for before the first load. Arguments are read-only (bufferization
/// writes none), so the entry's copy is what any later load would read.
/// Other host accesses (a larger argument's loads, loads through a view,
/// the CPU runtime) are reported by the caller.
void loadArgumentsFromHostCopies(func::FuncOp function) {
  if (function.isExternal() || !function.isPublic())
    return;
  OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
  for (BlockArgument argument : function.getArguments()) {
    auto type = dyn_cast<MemRefType>(argument.getType());
    if (!type || !copiedToHost(type))
      continue;
    SmallVector<memref::LoadOp> loads;
    for (Operation *user : argument.getUsers())
      if (auto load = dyn_cast<memref::LoadOp>(user))
        loads.push_back(load);
    if (loads.empty())
      continue;
    auto copy = memref::AllocaOp::create(b, argument.getLoc(), type);
    memref::CopyOp::create(b, argument.getLoc(), argument, copy);
    for (memref::LoadOp load : loads)
      load.getMemrefMutable().assign(copy);
  }
}

struct SpConvGPUMemoryPass
    : spconv::impl::SpConvGPUMemoryPassBase<SpConvGPUMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::AllocOp> allocs;
    SmallVector<memref::DeallocOp> deallocs;
    bool failedCheck = false;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      function.walk([&](memref::AllocOp op) { allocs.push_back(op); });
      function.walk([&](memref::DeallocOp op) { deallocs.push_back(op); });
      uploadConstantGlobals(function, allocs, deallocs);
      loadArgumentsFromHostCopies(function);
      // Stack and global buffers live in host memory only.
      function.walk([&](gpu::LaunchFuncOp launch) {
        for (Value operand : launch.getKernelOperands()) {
          if (!isa<MemRefType>(operand.getType()))
            continue;
          Operation *source = bufferRoot(operand).getDefiningOp();
          if (isa_and_nonnull<memref::AllocaOp>(source)) {
            launch.emitError("spconv-gpu-memory: kernel operand is "
                             "host-only memory (")
                << source->getName() << ")";
            failedCheck = true;
          }
          // Constant globals were uploaded above; what is left cannot be.
          if (auto read = dyn_cast_or_null<memref::GetGlobalOp>(source)) {
            auto global =
                SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
                    read, read.getNameAttr());
            InFlightDiagnostic diag =
                launch.emitError("spconv-gpu-memory: kernel operand is "
                                 "host-only memory (memref.get_global @")
                << read.getName() << ": ";
            if (!global || !global.getConstant())
              diag << "a mutable global, which the device cannot share)";
            else if (!read.getType().getLayout().isIdentity())
              diag << "a constant global with a non-identity layout, "
                      "which is not uploaded)";
            else
              diag << "a constant global that leaves the function, so an "
                      "upload would not be the global)";
            failedCheck = true;
          }
        }
      });
    }
    // A public function's arguments are the caller's device memory (the
    // CUDA ABI): host code that reads one would fault on a GPU, though the
    // emulator's host memory hides it. The lowering must give such an
    // access a kernel or a runtime primitive with a CUDA twin.
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal() || !function.isPublic())
        continue;
      for (BlockArgument argument : function.getArguments()) {
        if (!isa<MemRefType>(argument.getType()))
          continue;
        Access access;
        collectAccess(argument, access);
        if (!access.hostUser)
          continue;
        InFlightDiagnostic diag =
            access.hostUser->emitError("spconv-gpu-memory: host code reads ")
            << "argument #" << argument.getArgNumber() << " of @"
            << function.getSymName()
            << ", which the caller passes in device memory";
        if (auto call = dyn_cast<func::CallOp>(access.hostUser))
          diag << " (the CPU runtime's " << call.getCallee()
               << " has no CUDA twin)";
        else if (isa<memref::LoadOp>(access.hostUser) &&
                 access.hostUser->getOperand(0) == argument)
          diag << " (only a statically shaped argument of at most "
               << kMaxHostCopyBytes << " bytes is copied to the host)";
        diag.attachNote(function.getLoc()) << "function defined here";
        failedCheck = true;
      }
    }
    if (failedCheck)
      return signalPassFailure();

    for (memref::AllocOp alloc : allocs) {
      Access access;
      collectAccess(alloc.getResult(), access);
      if (!access.device)
        continue; // Host memory: the device never sees it.
      OpBuilder b(alloc);
      auto placed = gpu::AllocOp::create(
          b, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
          /*asyncDependencies=*/ValueRange{}, alloc.getDynamicSizes(),
          alloc.getSymbolOperands(), /*hostShared=*/access.host);
      alloc.replaceAllUsesWith(placed.getMemref());
      alloc.erase();
    }
    // Copies that involve GPU memory (or the caller's, device-accessible by
    // contract) become gpu.memcpy: a read-back, an upload, or a copy on the
    // device.
    for (auto function : module.getOps<func::FuncOp>())
      function.walk([&](memref::CopyOp copy) {
        if (!isWholeBufferCopy(copy) ||
            (isHostMemory(copy.getSource()) && isHostMemory(copy.getTarget())))
          return;
        OpBuilder b(copy);
        gpu::MemcpyOp::create(b, copy.getLoc(), /*asyncToken=*/Type(),
                              ValueRange{}, copy.getTarget(), copy.getSource());
        copy.erase();
      });
    // Frees of what is now GPU memory (the deallocation pipeline frees only
    // what it allocated, possibly through views or region results).
    for (memref::DeallocOp dealloc : deallocs) {
      if (isa_and_nonnull<memref::AllocOp>(
              bufferRoot(dealloc.getMemref()).getDefiningOp()))
        continue;
      OpBuilder b(dealloc);
      gpu::DeallocOp::create(b, dealloc.getLoc(), /*asyncToken=*/Type(),
                             ValueRange{}, dealloc.getMemref());
      dealloc.erase();
    }
  }
};

} // namespace
