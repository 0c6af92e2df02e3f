//===- KernelPhases.cpp - A GPU block as loops over its threads -----------===//
//
// Part of the spconv-mlir project.
//
// Barrier splitting: the body of a kernel is cut at every gpu.barrier and
// warp-level operation into phases; each phase becomes one loop over the
// threads of the block, so every thread finishes a phase before any starts
// the next, which is what a barrier guarantees. Block-level values (the
// kernel's arguments, block ids and sizes, and pure ops on them) are
// computed once, outside the thread loops. A thread's value that a later
// phase uses is recomputed there when it is a pure function of block-level
// values and the thread id, and otherwise kept in per-thread storage (one
// slot per thread, allocated when the block starts).
//
// scf.for and scf.if around a barrier or warp operation run once for the
// whole block, so their bounds and conditions must be the same for every
// thread: block-level values, or values read from memory (a tile's list of
// offsets), which every thread computes and the emulator checks for
// agreement at run time. Anything computed from the thread id is a barrier
// in divergent control flow, which CUDA does not allow, and is reported.
//
//===----------------------------------------------------------------------===//

#include "KernelPhases.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::emulation;

bool emulation::isSynchronising(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::SubgroupReduceOp,
             nvgpu::LdMatrixOp, nvgpu::MmaSyncOp>(op);
}

static bool containsSynchronisation(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isSynchronising(inner) ? WalkResult::interrupt()
                                      : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Ids that differ between the threads of a block.
static bool isThreadIdOp(Operation *op) {
  return isa<gpu::ThreadIdOp, gpu::LaneIdOp, gpu::SubgroupIdOp,
             gpu::GlobalIdOp>(op);
}

static bool isStorable(Type type) {
  return isa<IntegerType, IndexType, FloatType, VectorType>(type);
}

static Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

InFlightDiagnostic PhaseSplitter::error(Operation *op) {
  return emitKernelError(op, kernel.getName());
}

Value PhaseSplitter::newSlot(Type type, Location loc) {
  auto slotType = MemRefType::get({ShapedType::kDynamic}, type);
  // A tensor-core fragment is a whole tile per thread (1 KiB for 16 x 16
  // f32): a 256-thread block's loop-carried accumulators take megabytes,
  // more than a host thread's stack. Such slots live on the heap.
  auto vector = dyn_cast<VectorType>(type);
  if (vector && vector.getNumElements() * vector.getElementTypeBitWidth() >
                    kMaxStackSlotBits) {
    Value slot = memref::AllocOp::create(entry, loc, slotType,
                                         ValueRange{block.numThreads});
    heapSlots.push_back(slot);
    return slot;
  }
  return memref::AllocaOp::create(entry, loc, slotType,
                                  ValueRange{block.numThreads});
}

Value PhaseSplitter::threadLoop(
    OpBuilder &b, Location loc,
    function_ref<void(OpBuilder &, Location, Value)> body) {
  auto loop = scf::ForOp::create(
      b, loc, indexConstant(b, loc, 0), block.numThreads,
      indexConstant(b, loc, 1), ValueRange{},
      [&](OpBuilder &tb, Location tloc, Value thread, ValueRange) {
        if (!predicate) {
          body(tb, tloc, thread);
        } else {
          Value active =
              memref::LoadOp::create(tb, tloc, predicate, ValueRange{thread});
          scf::IfOp::create(tb, tloc, active,
                            [&](OpBuilder &ib, Location iloc) {
                              body(ib, iloc, thread);
                              scf::YieldOp::create(ib, iloc);
                            });
        }
        scf::YieldOp::create(tb, tloc);
      });
  return loop.getInductionVar();
}

/// The block-level value that a gpu id or size op reads, or null.
static Value blockLevelValue(Operation *op, const BlockValues &block,
                             OpBuilder &b) {
  auto dim = [](auto idOp) { return static_cast<int>(idOp.getDimension()); };
  if (auto id = dyn_cast<gpu::BlockIdOp>(op))
    return block.blockId[dim(id)];
  if (auto size = dyn_cast<gpu::BlockDimOp>(op))
    return block.blockDim[dim(size)];
  if (auto size = dyn_cast<gpu::GridDimOp>(op))
    return block.gridDim[dim(size)];
  if (isa<gpu::SubgroupSizeOp>(op))
    return indexConstant(b, op->getLoc(), emulation::kWarpSize);
  if (isa<gpu::NumSubgroupsOp>(op))
    return arith::CeilDivUIOp::create(
        b, op->getLoc(), block.numThreads,
        indexConstant(b, op->getLoc(), emulation::kWarpSize));
  return {};
}

Value PhaseSplitter::threadValue(Operation *op, OpBuilder &tb, Value thread) {
  Location loc = op->getLoc();
  auto threadId = [&](int dim) -> Value {
    // CUDA's linear thread id is x + blockDim.x * (y + blockDim.y * z).
    Value rest = thread;
    for (int d = 0; d < dim; ++d)
      rest = arith::DivUIOp::create(tb, loc, rest, block.blockDim[d]);
    if (dim == 2)
      return rest;
    return arith::RemUIOp::create(tb, loc, rest, block.blockDim[dim]);
  };
  if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
    return threadId(static_cast<int>(id.getDimension()));
  if (isa<gpu::LaneIdOp>(op))
    return laneOf(tb, loc, thread);
  if (isa<gpu::SubgroupIdOp>(op))
    return arith::DivUIOp::create(tb, loc, thread,
                                  indexConstant(tb, loc, emulation::kWarpSize));
  auto global = cast<gpu::GlobalIdOp>(op);
  int dim = static_cast<int>(global.getDimension());
  Value base =
      arith::MulIOp::create(tb, loc, block.blockId[dim], block.blockDim[dim]);
  return arith::AddIOp::create(tb, loc, base, threadId(dim));
}

bool PhaseSplitter::isUniformOp(Operation *op) {
  if (op->getNumRegions() != 0 || !isMemoryEffectFree(op) ||
      isSynchronising(op) || isThreadIdOp(op))
    return false;
  return llvm::all_of(op->getOperands(),
                      [&](Value v) { return uniform.contains(v); });
}

bool PhaseSplitter::isRecomputable(Value v) {
  auto known = recomputable.find(v);
  if (known != recomputable.end())
    return known->second;
  Operation *def = v.getDefiningOp();
  bool result = false;
  if (def && isThreadIdOp(def))
    result = true;
  else if (def && def->getNumRegions() == 0 && isMemoryEffectFree(def) &&
           !isSynchronising(def))
    result = llvm::all_of(def->getOperands(), [&](Value operand) {
      return uniform.contains(operand) || isRecomputable(operand);
    });
  recomputable[v] = result;
  return result;
}

Value PhaseSplitter::resolve(Value v, OpBuilder &tb, IRMapping &local,
                             Value thread) {
  if (Value mapped = local.lookupOrNull(v))
    return mapped;
  if (Value u = uniform.lookupOrNull(v)) {
    local.map(v, u);
    return u;
  }
  Location loc = v.getLoc();
  if (Value slot = slots.lookup(v)) {
    Value loaded = memref::LoadOp::create(tb, loc, slot, ValueRange{thread});
    local.map(v, loaded);
    return loaded;
  }
  Operation *def = v.getDefiningOp();
  if (def && isThreadIdOp(def)) {
    Value id = threadValue(def, tb, thread);
    local.map(v, id);
    return id;
  }
  if (def && isRecomputable(v)) {
    for (Value operand : def->getOperands())
      if (!resolve(operand, tb, local, thread))
        return {};
    tb.clone(*def, local);
    return local.lookup(v);
  }
  Operation *at = def ? def : v.getParentBlock()->getParentOp();
  error(at) << "a value of type " << v.getType()
            << " is used across a barrier or warp-level operation and cannot "
               "be kept per thread";
  return {};
}

LogicalResult PhaseSplitter::flush(OpBuilder &b, Block *source,
                                   Operation *consumer, ArrayRef<Copy> copies) {
  if (pending.empty() && copies.empty())
    return success();
  Location loc = pending.empty() ? copies.front().value.getLoc()
                                 : pending.front()->getLoc();
  // Whether `value`, defined in this phase, is used by a later one.
  auto escapes = [&](Value value) {
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      Operation *ancestor = source->findAncestorOpInBlock(*user);
      return !ancestor || (!pendingSet.contains(ancestor) &&
                           !(consumer && ancestor == consumer));
    });
  };
  LogicalResult result = success();
  threadLoop(b, loc, [&](OpBuilder &tb, Location, Value thread) {
    IRMapping local;
    for (Operation *op : pending) {
      llvm::SetVector<Value> used(op->operand_begin(), op->operand_end());
      getUsedValuesDefinedAbove(op->getRegions(), used);
      for (Value v : used)
        if (!resolve(v, tb, local, thread)) {
          result = failure();
          return;
        }
      Operation *clone = tb.clone(*op, local);
      for (auto [value, copy] :
           llvm::zip_equal(op->getResults(), clone->getResults())) {
        if (!escapes(value) || isRecomputable(value))
          continue;
        if (!isStorable(value.getType())) {
          error(op) << "a value of type " << value.getType()
                    << " is used across a barrier or warp-level operation; "
                       "only scalars and vectors are kept per thread";
          result = failure();
          return;
        }
        Value slot = newSlot(value.getType(), op->getLoc());
        memref::StoreOp::create(tb, op->getLoc(), copy, slot,
                                ValueRange{thread});
        slots[value] = slot;
      }
    }
    // Read every copied value before writing any slot: a loop may yield
    // its iteration arguments in another order.
    SmallVector<Value> values;
    for (const Copy &copy : copies) {
      values.push_back(resolve(copy.value, tb, local, thread));
      if (!values.back()) {
        result = failure();
        return;
      }
    }
    for (auto [copy, value] : llvm::zip_equal(copies, values))
      memref::StoreOp::create(tb, loc, value, copy.slot, ValueRange{thread});
  });
  pending.clear();
  pendingSet.clear();
  return result;
}

FailureOr<SmallVector<PhaseSplitter::Gathered>>
PhaseSplitter::gather(OpBuilder &b, Block &source, Operation *consumer,
                      ValueRange values) {
  SmallVector<Copy> copies;
  SmallVector<Gathered> gathered;
  for (Value v : values) {
    if (Value u = lookupUniform(v)) {
      gathered.push_back({u, {}});
      continue;
    }
    // Defined by an earlier phase (or warp op): its slot holds every
    // thread's value already.
    if (Value slot = slots.lookup(v)) {
      gathered.push_back({{}, slot});
      continue;
    }
    gathered.push_back({{}, newSlot(v.getType(), v.getLoc())});
    copies.push_back({v, gathered.back().slot});
  }
  if (failed(flush(b, &source, consumer, copies)))
    return failure();
  return gathered;
}

Value PhaseSplitter::read(OpBuilder &b, Location loc, const Gathered &value,
                          Value thread) {
  if (value.uniform)
    return value.uniform;
  return memref::LoadOp::create(b, loc, value.slot, ValueRange{thread});
}

void PhaseSplitter::reportFirstDisagreement(OpBuilder &b, Location loc,
                                            ArrayRef<Gathered> values,
                                            ValueRange reference, Value begin,
                                            Value end, StringRef report) {
  Value none = indexConstant(b, loc, -1);
  auto scan = scf::ForOp::create(
      b, loc, begin, end, indexConstant(b, loc, 1), ValueRange{none},
      [&](OpBuilder &sb, Location sloc, Value other, ValueRange found) {
        Value differs = arith::ConstantIntOp::create(sb, sloc, 0, 1);
        for (auto [value, expected] : llvm::zip_equal(values, reference))
          differs = arith::OrIOp::create(
              sb, sloc, differs,
              arith::CmpIOp::create(sb, sloc, arith::CmpIPredicate::ne,
                                    expected, read(sb, sloc, value, other)));
        Value firstOne = arith::AndIOp::create(
            sb, sloc, differs,
            arith::CmpIOp::create(sb, sloc, arith::CmpIPredicate::slt, found[0],
                                  indexConstant(sb, sloc, 0)));
        scf::YieldOp::create(sb, sloc,
                             ValueRange{arith::SelectOp::create(
                                 sb, sloc, firstOne, other, found[0])});
      });
  Value diverged =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                            scan.getResult(0), indexConstant(b, loc, 0));
  func::FuncOp function =
      getEmulatorFunction(kernel->getParentOfType<ModuleOp>(), report, 3, true);
  scf::IfOp::create(b, loc, diverged, [&](OpBuilder &eb, Location eloc) {
    auto [name, length] = stringArguments(eb, eloc, names);
    Value thread = arith::IndexCastOp::create(eb, eloc, eb.getI64Type(),
                                              scan.getResult(0));
    func::CallOp::create(eb, eloc, function, ValueRange{name, length, thread});
    scf::YieldOp::create(eb, eloc);
  });
}

FailureOr<SmallVector<Value>> PhaseSplitter::blockUniform(Operation *consumer,
                                                          ValueRange values,
                                                          Block &source,
                                                          OpBuilder &b) {
  SmallVector<Value> result;
  SmallVector<Value> checked;
  for (Value v : values) {
    if (Value u = lookupUniform(v)) {
      result.push_back(u);
      continue;
    }
    if (isRecomputable(v) || predicate ||
        !isa<IntegerType, IndexType>(v.getType()))
      return error(consumer)
             << "this '" << consumer->getName()
             << "' contains a barrier, so its condition and bounds must be "
                "the same for every thread of the block, but they depend on "
                "the thread (a barrier in divergent control flow)";
    result.push_back({});
    checked.push_back(v);
  }
  if (checked.empty())
    return result;
  // Read from memory: every thread computes them, thread 0's are used, and
  // the first thread that disagrees with thread 0 is reported.
  Location loc = consumer->getLoc();
  FailureOr<SmallVector<Gathered>> gathered =
      gather(b, source, consumer, checked);
  if (failed(gathered))
    return failure();
  Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
  SmallVector<Value> first;
  for (const Gathered &value : *gathered)
    first.push_back(read(b, loc, value, zero));
  reportFirstDisagreement(b, loc, *gathered, first, one, block.numThreads,
                          "spconv_rt_emu_report_divergent_block");
  auto next = first.begin();
  for (Value &value : result)
    if (!value)
      value = *next++;
  return result;
}

LogicalResult PhaseSplitter::emitFor(scf::ForOp loop, Block &source,
                                     OpBuilder &b) {
  FailureOr<SmallVector<Value>> bounds = blockUniform(
      loop,
      ValueRange{loop.getLowerBound(), loop.getUpperBound(), loop.getStep()},
      source, b);
  if (failed(bounds))
    return failure();
  Value lower = (*bounds)[0], upper = (*bounds)[1], step = (*bounds)[2];
  SmallVector<Value> iterSlots;
  SmallVector<Copy> inits;
  for (Value init : loop.getInitArgs()) {
    iterSlots.push_back(newSlot(init.getType(), loop.getLoc()));
    inits.push_back({init, iterSlots.back()});
  }
  if (failed(flush(b, nullptr, nullptr, inits)))
    return failure();
  auto emulated =
      scf::ForOp::create(b, loop.getLoc(), lower, upper, step, ValueRange{},
                         nullptr, loop.getUnsignedCmp());
  uniform.map(loop.getInductionVar(), emulated.getInductionVar());
  for (auto [arg, slot] : llvm::zip_equal(loop.getRegionIterArgs(), iterSlots))
    slots[arg] = slot;
  OpBuilder body = OpBuilder::atBlockTerminator(emulated.getBody());
  if (failed(emitBlock(*loop.getBody(), body, iterSlots)))
    return failure();
  for (auto [result, slot] : llvm::zip_equal(loop.getResults(), iterSlots))
    slots[result] = slot;
  return success();
}

bool emulation::containsBarrier(Operation *op) {
  return op->walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

LogicalResult PhaseSplitter::emitWarpUniformIf(scf::IfOp branch, Block &source,
                                               OpBuilder &b) {
  Location loc = branch.getLoc();
  FailureOr<SmallVector<Gathered>> gathered =
      gather(b, source, branch, {branch.getCondition()});
  if (failed(gathered))
    return failure();
  Gathered condition = (*gathered)[0];
  bool hasElse = !branch.getElseRegion().empty();
  Value thenSlot = newSlot(b.getI1Type(), loc);
  Value elseSlot = hasElse ? newSlot(b.getI1Type(), loc) : Value();
  // Every lane must agree with its warp's first lane, which checks them and
  // reports the first that does not (the enclosing predicate is
  // warp-uniform too, so whole warps are active or not); the new
  // predicates narrow the enclosing one.
  threadLoop(b, loc, [&](OpBuilder &tb, Location tloc, Value thread) {
    Value lane = laneOf(tb, tloc, thread);
    Value mine = read(tb, tloc, condition, thread);
    Value isLeader = arith::CmpIOp::create(tb, tloc, arith::CmpIPredicate::eq,
                                           lane, indexConstant(tb, tloc, 0));
    scf::IfOp::create(tb, tloc, isLeader, [&](OpBuilder &lb, Location lloc) {
      Value end = arith::MinUIOp::create(
          lb, lloc,
          arith::AddIOp::create(lb, lloc, thread,
                                indexConstant(lb, lloc, emulation::kWarpSize)),
          block.numThreads);
      reportFirstDisagreement(lb, lloc, condition, mine, thread, end,
                              "spconv_rt_emu_report_divergent_warp");
      scf::YieldOp::create(lb, lloc);
    });
    memref::StoreOp::create(tb, tloc, mine, thenSlot, ValueRange{thread});
    if (hasElse) {
      Value one = arith::ConstantIntOp::create(tb, tloc, 1, 1);
      Value negated = arith::XOrIOp::create(tb, tloc, mine, one);
      memref::StoreOp::create(tb, tloc, negated, elseSlot, ValueRange{thread});
    }
  });
  // Threads outside the enclosing predicate never wrote their entries.
  auto narrow = [&](Value slot) {
    if (!predicate)
      return;
    Value outer = predicate;
    predicate = Value();
    threadLoop(b, loc, [&](OpBuilder &tb, Location tloc, Value thread) {
      Value active =
          memref::LoadOp::create(tb, tloc, outer, ValueRange{thread});
      Value inner = memref::LoadOp::create(tb, tloc, slot, ValueRange{thread});
      Value both = arith::SelectOp::create(tb, tloc, active, inner, active);
      memref::StoreOp::create(tb, tloc, both, slot, ValueRange{thread});
    });
    predicate = outer;
  };
  narrow(thenSlot);
  if (hasElse)
    narrow(elseSlot);

  SmallVector<Value> resultSlots;
  for (Value result : branch.getResults())
    resultSlots.push_back(newSlot(result.getType(), loc));
  Value outer = predicate;
  predicate = thenSlot;
  LogicalResult result =
      emitBlock(branch.getThenRegion().front(), b, resultSlots);
  if (succeeded(result) && hasElse) {
    predicate = elseSlot;
    result = emitBlock(branch.getElseRegion().front(), b, resultSlots);
  }
  predicate = outer;
  for (auto [value, slot] : llvm::zip_equal(branch.getResults(), resultSlots))
    slots[value] = slot;
  return result;
}

LogicalResult PhaseSplitter::emitIf(scf::IfOp branch, Block &source,
                                    OpBuilder &b) {
  if (!lookupUniform(branch.getCondition()) && !containsBarrier(branch))
    return emitWarpUniformIf(branch, source, b);
  FailureOr<SmallVector<Value>> uniformCondition =
      blockUniform(branch, branch.getCondition(), source, b);
  if (failed(uniformCondition))
    return failure();
  Value condition = uniformCondition->front();
  SmallVector<Value> resultSlots;
  for (Value result : branch.getResults())
    resultSlots.push_back(newSlot(result.getType(), branch.getLoc()));
  bool hasElse = !branch.getElseRegion().empty();
  auto emulated =
      scf::IfOp::create(b, branch.getLoc(), TypeRange{}, condition, hasElse);
  OpBuilder thenBuilder =
      OpBuilder::atBlockTerminator(&emulated.getThenRegion().front());
  if (failed(
          emitBlock(branch.getThenRegion().front(), thenBuilder, resultSlots)))
    return failure();
  if (hasElse) {
    OpBuilder elseBuilder =
        OpBuilder::atBlockTerminator(&emulated.getElseRegion().front());
    if (failed(emitBlock(branch.getElseRegion().front(), elseBuilder,
                         resultSlots)))
      return failure();
  }
  for (auto [result, slot] : llvm::zip_equal(branch.getResults(), resultSlots))
    slots[result] = slot;
  return success();
}

LogicalResult PhaseSplitter::emitBlock(Block &source, OpBuilder &b,
                                       ArrayRef<Value> terminatorSlots) {
  for (Operation &op : source.without_terminator()) {
    if (isa<gpu::BarrierOp>(op)) {
      if (failed(flush(b, &source, nullptr, {})))
        return failure();
      if (raceCheck) {
        auto module = kernel->getParentOfType<ModuleOp>();
        func::CallOp::create(
            b, op.getLoc(),
            getEmulatorFunction(module, "spconv_rt_emu_barrier", 0, true),
            ValueRange{});
      }
      continue;
    }
    if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      if (failed(emitShuffle(shuffle, source, b)))
        return failure();
      continue;
    }
    if (auto reduce = dyn_cast<gpu::SubgroupReduceOp>(op)) {
      if (failed(emitSubgroupReduce(reduce, source, b)))
        return failure();
      continue;
    }
    if (auto load = dyn_cast<nvgpu::LdMatrixOp>(op)) {
      if (failed(emitLdMatrix(load, source, b)))
        return failure();
      continue;
    }
    if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
      if (failed(emitMmaSync(mma, source, b)))
        return failure();
      continue;
    }
    if (containsSynchronisation(&op)) {
      if (failed(flush(b, &source, nullptr, {})))
        return failure();
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        if (failed(emitFor(loop, source, b)))
          return failure();
      } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
        if (failed(emitIf(branch, source, b)))
          return failure();
      } else {
        return error(&op) << "'" << op.getName()
                          << "' contains a barrier or warp-level operation; "
                             "the emulator runs them in straight-line code, "
                             "scf.for and scf.if only";
      }
      continue;
    }
    if (Value value = blockLevelValue(&op, block, b)) {
      uniform.map(op.getResult(0), value);
      continue;
    }
    if (isUniformOp(&op)) {
      b.clone(op, uniform);
      continue;
    }
    // Thread ids are computed where a phase uses them (resolve).
    if (isThreadIdOp(&op))
      continue;
    pending.push_back(&op);
    pendingSet.insert(&op);
  }
  Operation *terminator = source.getTerminator();
  SmallVector<Copy> copies;
  for (auto [value, slot] :
       llvm::zip_equal(terminator->getOperands(), terminatorSlots))
    copies.push_back({value, slot});
  return flush(b, &source, terminator, copies);
}

LogicalResult PhaseSplitter::run(Block &body, OpBuilder &b) {
  // Id ops have no operands: moving them to the top makes every use see
  // them at the block level (block ids, sizes) or as a per-thread value
  // each phase recomputes (thread ids).
  SmallVector<Operation *> ids;
  body.walk([&](Operation *op) {
    if (isThreadIdOp(op) || isa<gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
                                gpu::SubgroupSizeOp, gpu::NumSubgroupsOp>(op))
      ids.push_back(op);
  });
  for (Operation *op : llvm::reverse(ids))
    op->moveBefore(&body, body.begin());
  if (failed(emitBlock(body, b, {})))
    return failure();
  // Outlined kernels come after buffer deallocation: the emulation frees
  // what it allocates itself.
  for (Value slot : heapSlots)
    memref::DeallocOp::create(b, slot.getLoc(), slot);
  return success();
}
