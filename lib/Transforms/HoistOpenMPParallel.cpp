//===- HoistOpenMPParallel.cpp - One thread team per loop nest ------------===//
//
// Part of the spconv-mlir project.
//
// convert-scf-to-openmp forks and joins a team per parallel loop; a nest of
// sequential loops around parallel ones (the CPU conv's chunks and offsets)
// forks hundreds of teams per layer. Here the nest runs inside one team:
// every thread runs the sequential loops, the work-sharing loops split the
// iterations as before, and their closing barriers keep them in order.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVHOISTOPENMPPARALLELPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;

namespace {

/// Whether `op` has no operand and no attribute but its operands' segment
/// sizes: each OpenMP clause (a thread count, a schedule, `nowait`,
/// reductions, private copies) is one or the other.
bool hasNoClauses(Operation *op) {
  if (op->getNumOperands() != 0)
    return false;
  return llvm::all_of(op->getAttrDictionary(), [](NamedAttribute attr) {
    return attr.getName() == "operandSegmentSizes";
  });
}

/// The work-sharing loop of `parallel` if it is all the region holds and
/// neither carries a clause: a team that only splits one loop's iterations
/// and waits for them at the loop's end.
omp::WsloopOp plainWorkSharingLoop(omp::ParallelOp parallel) {
  if (!hasNoClauses(parallel))
    return {};
  Block &body = parallel.getRegion().front();
  if (!llvm::hasNItems(body, 2))
    return {};
  auto loop = dyn_cast<omp::WsloopOp>(body.front());
  if (!loop || !hasNoClauses(loop) || !isa<omp::TerminatorOp>(body.back()))
    return {};
  return loop;
}

/// What the sequential code of a nest reads and what its work-sharing loops
/// write, as far as the ops' effects tell; `unknown*` where one does not.
struct NestEffects {
  SmallVector<Value> reads, writes;
  bool unknownRead = false, unknownWrite = false;

  /// Adds the effects of `op` (not of ops nested in it) to reads or writes.
  void add(Operation *op, bool sequential) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      // Ops whose regions carry their effects are walked into.
      if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return;
      (sequential ? unknownRead : unknownWrite) = true;
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &instance : instances) {
      // Fresh memory (a loop body's allocas) is no one else's.
      if (isa<MemoryEffects::Allocate>(instance.getEffect()))
        continue;
      bool read = isa<MemoryEffects::Read>(instance.getEffect());
      // The sequential code's writes make the nest fail elsewhere; the
      // work-sharing loops' reads are their own business.
      if (read != sequential)
        continue;
      Value value = instance.getValue();
      SmallVector<Value> &values = read ? reads : writes;
      bool &unknown = read ? unknownRead : unknownWrite;
      if (value)
        values.push_back(value);
      else
        unknown = true;
    }
  }
};

/// Whether `loop` may run on every thread of one team: it carries no
/// values, and its body holds only plain parallel regions, loops of the same
/// kind and ops that write nothing. Collects what its sequential code reads
/// and its work-sharing loops write into `effects`.
bool runsOnEveryThread(scf::ForOp loop, NestEffects &effects) {
  if (loop.getNumResults() != 0)
    return false;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto parallel = dyn_cast<omp::ParallelOp>(op)) {
      omp::WsloopOp workSharing = plainWorkSharingLoop(parallel);
      if (!workSharing)
        return false;
      workSharing->walk(
          [&](Operation *inner) { effects.add(inner, /*sequential=*/false); });
      continue;
    }
    if (auto inner = dyn_cast<scf::ForOp>(op)) {
      if (!runsOnEveryThread(inner, effects))
        return false;
      continue;
    }
    // Every thread runs it: it may compute and read, nothing else.
    if (op.getNumRegions() != 0)
      return false;
    effects.add(&op, /*sequential=*/true);
    auto memoryEffects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!memoryEffects || !memoryEffects.onlyHasEffect<MemoryEffects::Read>())
      if (!isMemoryEffectFree(&op))
        return false;
  }
  return true;
}

/// Whether no read of the sequential code may see a write of a
/// work-sharing loop that another thread is already running.
bool readsAreUnshared(const NestEffects &effects, AliasAnalysis &aliases) {
  if (effects.reads.empty() && !effects.unknownRead)
    return true;
  if (effects.unknownRead || effects.unknownWrite)
    return false;
  for (Value read : effects.reads)
    for (Value write : effects.writes)
      if (!aliases.alias(read, write).isNo())
        return false;
  return true;
}

/// Moves `loop` into a new omp.parallel and each plain parallel region in
/// it out of its own, leaving its work-sharing loop.
void hoistTeam(scf::ForOp loop) {
  OpBuilder builder(loop);
  auto team = omp::ParallelOp::create(builder, loop.getLoc());
  Block *body = builder.createBlock(&team.getRegion());
  omp::TerminatorOp::create(builder, loop.getLoc());
  loop->moveBefore(body, body->begin());
  // The nest's own regions, not those nested in their work-sharing loops.
  SmallVector<omp::ParallelOp> inner;
  loop->walk<WalkOrder::PreOrder>([&](omp::ParallelOp parallel) {
    inner.push_back(parallel);
    return WalkResult::skip();
  });
  for (omp::ParallelOp parallel : inner) {
    plainWorkSharingLoop(parallel)->moveBefore(parallel);
    parallel->erase();
  }
}

struct SpConvHoistOpenMPParallelPass
    : spconv::impl::SpConvHoistOpenMPParallelPassBase<
          SpConvHoistOpenMPParallelPass> {
  void runOnOperation() override {
    AliasAnalysis &aliases = getAnalysis<AliasAnalysis>();
    // The outermost loop of each nest that qualifies.
    llvm::SetVector<scf::ForOp> nests;
    getOperation()->walk([&](omp::ParallelOp parallel) {
      // Nested parallelism is left as it is.
      if (!plainWorkSharingLoop(parallel) ||
          parallel->getParentOfType<omp::ParallelOp>())
        return;
      scf::ForOp outermost;
      for (auto loop = parallel->getParentOfType<scf::ForOp>(); loop;
           loop = loop->getParentOfType<scf::ForOp>()) {
        NestEffects effects;
        if (!runsOnEveryThread(loop, effects) ||
            !readsAreUnshared(effects, aliases))
          break;
        outermost = loop;
      }
      if (outermost)
        nests.insert(outermost);
    });
    for (scf::ForOp loop : nests)
      hoistTeam(loop);
  }
};

} // namespace
