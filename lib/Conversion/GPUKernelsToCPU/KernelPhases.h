//===- KernelPhases.h - Emulating a GPU block on one CPU thread -*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The pieces of spconv-gpu-kernels-to-cpu. A kernel becomes a function that
// runs one whole block: its body is split at every gpu.barrier and warp-level
// operation into phases, and each phase is a loop over the threads of the
// block (barrier splitting, or loop fission). A value that one phase defines
// and a later one uses lives in per-thread storage, one slot per thread;
// control flow that contains a barrier runs once for the block, so its
// conditions and bounds must be the same for every thread.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_GPUKERNELSTOCPU_KERNELPHASES_H
#define SPCONV_LIB_CONVERSION_GPUKERNELSTOCPU_KERNELPHASES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::spconv::emulation {

/// Lanes per warp (a subgroup) on every NVIDIA GPU.
constexpr int64_t kWarpSize = 32;

/// Values of an emulated block, arguments of the function that runs it:
/// dimensions x, y, z of the block id, the block size and the grid size.
struct BlockValues {
  Value blockId[3], blockDim[3], gridDim[3];
  /// Threads of the block, blockDim x * y * z.
  Value numThreads;
};

/// Rewrites the gpu.subgroup_mma_* ops of `kernel` into per-thread vector
/// code (MMAToVectors.cpp). Fails with a diagnostic on what it cannot model.
LogicalResult lowerMMAOps(gpu::GPUFuncOp kernel);

/// Inserts a runtime call before every load and store of `kernel` through a
/// kernel argument or a workgroup buffer (RaceCheck.cpp), naming the
/// buffer, the byte address, the accessing block and thread. Returns the
/// buffers' names for reports, kernel arguments first.
SmallVector<std::string> instrumentRaces(gpu::GPUFuncOp kernel,
                                         ModuleOp module);

/// Lowers the kernel's asynchronous copies (`nvgpu.device_async_copy`,
/// `_create_group`, `_wait`) to calls of the runtime's per-thread queues
/// (AsyncCopies.cpp); sets `lowered` if it had any. Fails, with an error,
/// on a token that flows anywhere but from a copy to a group to a wait.
LogicalResult lowerAsyncCopies(gpu::GPUFuncOp kernel, ModuleOp module,
                               bool &lowered);

/// The kernel argument or workgroup buffer that `memref` views, numbered
/// arguments first, or -1 for memory of the thread's own (allocas).
int64_t bufferNumber(Value memref, gpu::GPUFuncOp kernel);
/// Bytes of a value of `type` (index: 8).
int64_t byteSize(Type type);
Value toI64(OpBuilder &b, Location loc, Value index);
/// The linear ids (i64) of the running block and thread, from gpu id ops:
/// x + dx * (y + dy * z).
Value linearBlockId(OpBuilder &b, Location loc);
Value linearThreadId(OpBuilder &b, Location loc);
/// The byte address (index) of `memref[indices]`.
Value elementAddress(OpBuilder &b, Location loc, Value memref,
                     ValueRange indices, int64_t elementBytes);

/// Declares (once) the emulator's runtime function `name` taking i64s.
func::FuncOp getEmulatorFunction(ModuleOp module, StringRef name,
                                 unsigned numArguments, bool returnsStatus);

/// "spconv-gpu-kernels-to-cpu: kernel @<kernel>: ", the start of every
/// diagnostic of the emulation about a kernel.
InFlightDiagnostic emitKernelError(Operation *op, StringRef kernel);

/// The address and length (i64) of a string global, as the runtime's
/// reports take them.
std::pair<Value, Value> stringArguments(OpBuilder &b, Location loc,
                                        memref::GlobalOp global);

/// A 1-D unit-stride view of `memref`'s buffer, and the position in it of
/// `memref[indices]`. The view reaches `extent` elements past it.
std::pair<Value, Value> flatView(OpBuilder &b, Location loc, Value memref,
                                 ValueRange indices, int64_t extent);

/// A tensor-core product's input `x` as the hardware reads it, in f32:
/// f16 and bf16 extended exactly, f32 as tf32 (its 13 low mantissa bits
/// cleared).
Value tensorCoreInput(OpBuilder &b, Location loc, Value x);

/// The lane of linear thread id `thread` in its warp.
Value laneOf(OpBuilder &b, Location loc, Value thread);

/// Does `op` need the threads of a block or warp to meet: a barrier or a
/// warp-level operation.
bool isSynchronising(Operation *op);

/// Does `op` hold a gpu.barrier (itself or nested).
bool containsBarrier(Operation *op);

/// Splits a kernel body into phases: see the file comment.
class PhaseSplitter {
public:
  /// `names` is the kernel's name for run-time reports (a global of i8).
  PhaseSplitter(gpu::GPUFuncOp kernel, BlockValues block, OpBuilder &entry,
                bool raceCheck, memref::GlobalOp names)
      : kernel(kernel), block(block), entry(entry), raceCheck(raceCheck),
        names(names) {}

  /// Emits the phases of `body` (the kernel's single block, ending in
  /// gpu.return) at `b`, which is in the emulating function.
  LogicalResult run(Block &body, OpBuilder &b);

  /// Makes `kernelValue` (an argument or attribution) read `value`.
  void mapUniform(Value kernelValue, Value value) {
    uniform.map(kernelValue, value);
  }

private:
  /// A value to store into per-thread storage at the end of a phase.
  struct Copy {
    Value value, slot;
  };

  LogicalResult emitBlock(Block &source, OpBuilder &b,
                          ArrayRef<Value> terminatorSlots);
  /// Emits the pending ops (of `source`) as one loop over the threads, then
  /// `copies`, which are operands of `consumer` (a terminator or warp op).
  LogicalResult flush(OpBuilder &b, Block *source, Operation *consumer,
                      ArrayRef<Copy> copies);
  LogicalResult emitFor(scf::ForOp loop, Block &source, OpBuilder &b);
  /// Block-level values for `values`, operands of `consumer` (an scf.for or
  /// scf.if around a barrier), each the same for every thread of the block:
  /// uniform values as they are; values read from memory gathered, checked
  /// to agree across the block at run time (a disagreement is reported as a
  /// barrier in divergent control flow), and taken from thread 0. Values
  /// computed from the thread id are a compile-time error.
  FailureOr<SmallVector<Value>> blockUniform(Operation *consumer,
                                             ValueRange values, Block &source,
                                             OpBuilder &b);
  LogicalResult emitIf(scf::IfOp branch, Block &source, OpBuilder &b);
  /// An scf.if around warp-level ops whose condition may differ between
  /// warps: both arms run for the whole block, predicated per thread.
  LogicalResult emitWarpUniformIf(scf::IfOp branch, Block &source,
                                  OpBuilder &b);
  LogicalResult emitShuffle(gpu::ShuffleOp shuffle, Block &source,
                            OpBuilder &b);
  LogicalResult emitSubgroupReduce(gpu::SubgroupReduceOp reduce, Block &source,
                                   OpBuilder &b);
  /// nvgpu's warp-level matrix ops (MmaSync.cpp).
  LogicalResult emitLdMatrix(nvgpu::LdMatrixOp load, Block &source,
                             OpBuilder &b);
  LogicalResult emitMmaSync(nvgpu::MmaSyncOp mma, Block &source, OpBuilder &b);

  /// A warp op's operand for every thread: a block-level value, or a slot.
  struct Gathered {
    Value uniform, slot;
  };
  /// Ends the phase of `source` before the warp op `consumer` and makes its
  /// `values` readable for every thread.
  FailureOr<SmallVector<Gathered>>
  gather(OpBuilder &b, Block &source, Operation *consumer, ValueRange values);
  Value read(OpBuilder &b, Location loc, const Gathered &value, Value thread);
  /// Scans threads [begin, end) and calls the emulator function `report`
  /// (names, length, thread) with the first whose `values` differ from
  /// `reference`, if any.
  void reportFirstDisagreement(OpBuilder &b, Location loc,
                               ArrayRef<Gathered> values, ValueRange reference,
                               Value begin, Value end, StringRef report);

  /// The value of `v` for thread `thread`, inside a loop over the threads
  /// (`local` maps what this phase computed; loads and recomputations are
  /// emitted at `tb`). Null, with an error, if `v` cannot be carried here.
  Value resolve(Value v, OpBuilder &tb, IRMapping &local, Value thread);
  Value threadValue(Operation *op, OpBuilder &tb, Value thread);
  /// The uniform (block-level) value of `v`, or null.
  Value lookupUniform(Value v) { return uniform.lookupOrNull(v); }
  bool isUniformOp(Operation *op);
  bool isRecomputable(Value v);
  /// Per-thread storage for values of `type`, allocated at function entry:
  /// on the stack, or on the heap (freed when the block ends) for vectors
  /// wider than kMaxStackSlotBits.
  Value newSlot(Type type, Location loc);
  static constexpr int64_t kMaxStackSlotBits = 512;
  Value threadLoop(OpBuilder &b, Location loc,
                   function_ref<void(OpBuilder &, Location, Value)> body);
  InFlightDiagnostic error(Operation *op);

  gpu::GPUFuncOp kernel;
  BlockValues block;
  OpBuilder &entry;
  bool raceCheck;
  memref::GlobalOp names;
  /// Per-thread i1 slot: which threads run the current phases (inside a
  /// warp-uniform branch), or null for all.
  Value predicate;
  /// Ops of the current phase, in order, and as a set.
  SmallVector<Operation *> pending;
  llvm::SmallPtrSet<Operation *, 16> pendingSet;
  /// Kernel values with a block-level equivalent.
  IRMapping uniform;
  /// Kernel values kept in per-thread storage across phases.
  DenseMap<Value, Value> slots;
  /// Slots allocated on the heap, freed where the block's phases end.
  SmallVector<Value> heapSlots;
  DenseMap<Value, bool> recomputable;
};

} // namespace mlir::spconv::emulation

#endif // SPCONV_LIB_CONVERSION_GPUKERNELSTOCPU_KERNELPHASES_H
