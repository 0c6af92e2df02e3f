//===- AsyncCopies.cpp - Emulating cp.async -------------------------------===//
//
// Part of the spconv-mlir project.
//
// nvgpu's asynchronous copies become calls of the runtime's per-thread
// queues (runtime/lib/CPU/Emulator.cpp): a copy is queued in its thread's
// open group, a group is closed, and a wait lands the thread's groups but
// the newest N. Copies land only then, so a kernel that reads a stage early
// reads stale data here as it may on a GPU, and the race detector names the
// access. The tokens that order the ops in the IR carry nothing the
// runtime needs: CUDA's groups are per thread, counted, not named.
//
//===----------------------------------------------------------------------===//

#include "KernelPhases.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::emulation;

/// Whether every use of `token` is an op of type `User`.
template <typename User>
static LogicalResult checkTokenUses(Operation *op, Value token,
                                    StringRef kernel) {
  for (Operation *user : token.getUsers())
    if (!isa<User>(user))
      return emitKernelError(op, kernel)
             << "passes the token of '" << op->getName() << "' to '"
             << user->getName() << "', which the emulator does not model ("
             << "tokens go from copies to groups to waits)";
  return success();
}

LogicalResult emulation::lowerAsyncCopies(gpu::GPUFuncOp kernel,
                                          ModuleOp module, bool &lowered) {
  SmallVector<nvgpu::DeviceAsyncCopyOp> copies;
  SmallVector<nvgpu::DeviceAsyncCreateGroupOp> groups;
  SmallVector<nvgpu::DeviceAsyncWaitOp> waits;
  kernel.walk([&](Operation *op) {
    if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
      copies.push_back(copy);
    else if (auto group = dyn_cast<nvgpu::DeviceAsyncCreateGroupOp>(op))
      groups.push_back(group);
    else if (auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op))
      waits.push_back(wait);
  });
  lowered = !copies.empty() || !groups.empty() || !waits.empty();
  if (!lowered)
    return success();
  StringRef name = kernel.getName();
  for (auto copy : copies)
    if (failed(checkTokenUses<nvgpu::DeviceAsyncCreateGroupOp>(
            copy, copy.getAsyncToken(), name)))
      return failure();
  for (auto group : groups)
    if (failed(checkTokenUses<nvgpu::DeviceAsyncWaitOp>(
            group, group.getAsyncToken(), name)))
      return failure();

  Block &entry = kernel.getBody().front();
  OpBuilder eb = OpBuilder::atBlockBegin(&entry);
  Location loc = kernel.getLoc();
  Value block = linearBlockId(eb, loc);
  Value thread = linearThreadId(eb, loc);
  func::FuncOp copyFn =
      getEmulatorFunction(module, "spconv_rt_emu_async_copy", 9, true);
  func::FuncOp commitFn =
      getEmulatorFunction(module, "spconv_rt_emu_async_commit", 2, true);
  func::FuncOp waitFn =
      getEmulatorFunction(module, "spconv_rt_emu_async_wait", 3, true);
  auto i64 = [](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, l, value, 64);
  };

  for (auto copy : copies) {
    OpBuilder b(copy);
    Location cloc = copy.getLoc();
    int64_t buffer = bufferNumber(copy.getDst(), kernel);
    if (buffer < 0)
      return emitKernelError(copy, name)
             << "copies asynchronously into memory that is neither a kernel "
                "argument nor a workgroup buffer";
    Type element = copy.getDst().getType().getElementType();
    int64_t elementBytes = byteSize(element);
    Value dst = elementAddress(b, cloc, copy.getDst(), copy.getDstIndices(),
                               elementBytes);
    Value src = elementAddress(b, cloc, copy.getSrc(), copy.getSrcIndices(),
                               elementBytes);
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(
        b, cloc, entry.getArgument(buffer));
    Value offset = arith::SubIOp::create(b, cloc, dst, base);
    int64_t dstBytes = copy.getDstElements().getZExtValue() * elementBytes;
    // Fewer source elements than destination ones: the rest are zeros.
    Value srcBytes = i64(b, cloc, dstBytes);
    if (Value srcElements = copy.getSrcElements())
      srcBytes = toI64(b, cloc,
                       arith::MulIOp::create(b, cloc, srcElements,
                                             arith::ConstantIndexOp::create(
                                                 b, cloc, elementBytes)));
    func::CallOp::create(b, cloc, copyFn,
                         ValueRange{i64(b, cloc, buffer), toI64(b, cloc, dst),
                                    toI64(b, cloc, offset), toI64(b, cloc, src),
                                    i64(b, cloc, dstBytes), srcBytes,
                                    i64(b, cloc, elementBytes), block, thread});
  }
  for (auto group : groups) {
    OpBuilder b(group);
    func::CallOp::create(b, group.getLoc(), commitFn,
                         ValueRange{block, thread});
  }
  for (auto wait : waits) {
    OpBuilder b(wait);
    // No count waits for every group.
    int64_t pending = wait.getNumGroups().value_or(0);
    func::CallOp::create(
        b, wait.getLoc(), waitFn,
        ValueRange{i64(b, wait.getLoc(), pending), block, thread});
  }
  for (auto wait : waits)
    wait.erase();
  for (auto group : groups)
    group.erase();
  for (auto copy : copies)
    copy.erase();
  return success();
}
