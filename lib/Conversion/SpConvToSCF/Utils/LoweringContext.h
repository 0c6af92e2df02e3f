//===- LoweringContext.h - State shared by the op lowerings -----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The options of one run of the conversion that the lowerings of every
// target read, and what the lowerings of one module share: declared
// functions, buffers derived once from a rulebook, the concatenation plan.
// Which form an op takes on which target is not asked here: the pass
// registers the pattern sets of its target (Pass.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_LOWERINGCONTEXT_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_LOWERINGCONTEXT_H

#include "SpConv/Conversion/Passes.h"
#include "SpConv/Support/VectorWidth.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::spconv::lowering {

/// What the lowerings every target shares (rulebook builds, checks) need to
/// know of the machine their loops run on, for choices of cost, never of
/// form. The pass derives it from its target.
struct MachineTraits {
  /// Buffers are device memory: the host reads one only by a copy that
  /// waits for the device, and loops outside kernels cannot read one.
  bool deviceBuffers = false;
  /// Software prefetches of a site's hash probes pay: a CPU thread's probes
  /// miss the cache one after the other, a GPU's threads overlap theirs.
  bool prefetchProbes = true;
};

/// State shared by the op lowerings of one module.
class LoweringContext {
public:
  /// The state of one run of convert-spconv-to-scf with `options` on
  /// `module` (the pass has checked them).
  LoweringContext(ModuleOp module, const ConvertSpConvToSCFPassOptions &options,
                  const MachineTraits &machine)
      : module(module), machine(machine), blockSize(options.blockSize),
        submSearch(options.submSearch), chunkBytes(options.chunkBytes),
        vectorRegisters{options.vectorBits, options.vectorRegisters},
        fmaUnits{options.fmaPipes, options.fmaLatency},
        maxUnrolledOffsets(options.maxUnrolledOffsets) {}

  ModuleOp getModule() const { return module; }
  int64_t getBlockSize() const { return blockSize; }
  const MachineTraits &getMachine() const { return machine; }
  SubmSearch getSubmSearch() const { return submSearch; }
  int64_t getChunkBytes() const { return chunkBytes; }
  /// The CPU's vector registers, which size the row updates' chunks.
  const VectorRegisters &getVectorRegisters() const { return vectorRegisters; }
  /// The CPU's FMA units, which bound the row updates' blocking from below.
  const FmaUnits &getFmaUnits() const { return fmaUnits; }
  /// Whether a strided build sizes its pairs by a bound the host knows
  /// (sites x pairs per site) and reads its status back once, after the
  /// unique, rather than reading the exact pair total back first: on the
  /// GPU each read-back is a host wait; on the CPU it is a copy of a few
  /// words, and exact sizes use less memory.
  bool boundsStridedPairs() const { return machine.deviceBuffers; }
  /// Whether loops over the `volume` offsets of a kernel are unrolled
  /// (offsets become constants) or stay loops, which keeps the IR and the
  /// compile time of large kernels linear in their volume.
  bool unrollsOffsets(int64_t volume) const {
    return volume <= maxUnrolledOffsets;
  }

  /// Declares the runtime entry point `name` once (C interface, so memrefs
  /// are passed as descriptor pointers) and returns it.
  func::FuncOp getRuntimeFunction(StringRef name, TypeRange arguments,
                                  TypeRange results);

  /// Returns `@spconv_ht_find_slot(keys, key) -> index`, the inline probe of
  /// the runtime's hash table (the slot holding `key`, or -1), creating it
  /// once.
  func::FuncOp getHashFindSlotFunction();

  /// Returns the module-level function `name`, or null.
  func::FuncOp lookupFunction(StringRef name);

  /// Buffers derived once from a rulebook (the GPU conv's neighbour table
  /// and tile schedule) and shared by the ops that use it, keyed by the
  /// rulebook's converted offsets buffer, which every user's adaptor holds:
  /// `values` were built where `anchor` is, so they serve every op after it
  /// in its block or nested in it.
  struct DerivedBuffers {
    Operation *anchor = nullptr;
    SmallVector<Value> values;
  };
  /// The buffers derived from `rulebook` under `key` that `user` can use, or
  /// none.
  ArrayRef<Value> lookupDerived(Value rulebook, unsigned key,
                                Operation *user) const;
  void recordDerived(Value rulebook, unsigned key, DerivedBuffers buffers) {
    derived[{rulebook, key}] = std::move(buffers);
  }

  /// The concatenations whose rulebook-conv operands write their rows into
  /// the concatenation's buffer (Concat.cpp).
  struct ConcatPlan {
    struct Slot {
      Operation *concat = nullptr; ///< the conv's only user
      unsigned operand = 0;        ///< the conv's result's position in it
    };
    struct Buffer {
      Value buffer; ///< created where the first of its convs is lowered
      SmallVector<bool> inPlace; ///< per operand: written into the buffer
    };
    DenseMap<Operation *, Slot> slots;     ///< per conv
    DenseMap<Operation *, Buffer> buffers; ///< per concatenation
  };
  ConcatPlan &getConcatPlan() { return concatPlan; }

  /// The first op of the build checks before `ret` (checkAtReturn in
  /// BuildStatus.h), or null: the next build's read-back goes before it.
  Operation *&getReturnChecks(Operation *ret) { return returnChecks[ret]; }

private:
  ModuleOp module;
  MachineTraits machine;
  int64_t blockSize;
  SubmSearch submSearch;
  int64_t chunkBytes;
  VectorRegisters vectorRegisters;
  FmaUnits fmaUnits;
  int64_t maxUnrolledOffsets;
  DenseMap<std::pair<Value, unsigned>, DerivedBuffers> derived;
  ConcatPlan concatPlan;
  DenseMap<Operation *, Operation *> returnChecks;
};

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_LOWERINGCONTEXT_H
