//===- LoweringContext.h - State shared by the op lowerings -----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The options of one run of the conversion (their enums are
// SpConv/Conversion/LoweringOptions.h's), and what the lowerings of one
// module share: declared functions, buffers derived once
// from a rulebook, the concatenation plan.
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

class GPUTileTable;

/// State shared by the op lowerings of one module.
class LoweringContext {
public:
  /// The state of one run of convert-spconv-to-scf with `options` on
  /// `module` (the pass has checked them).
  LoweringContext(ModuleOp module,
                  const ConvertSpConvToSCFPassOptions &options)
      : module(module), blockSize(options.blockSize),
        submSearch(options.submSearch), target(options.target),
        chunkBytes(options.chunkBytes),
        vectorRegisters{options.vectorBits, options.vectorRegisters},
        maxUnrolledOffsets(options.maxUnrolledOffsets),
        gpuConv(options.gpuConv), gpuMatmul(options.gpuMatmul) {}

  ModuleOp getModule() const { return module; }
  int64_t getBlockSize() const { return blockSize; }
  SubmSearch getSubmSearch() const { return submSearch; }
  LoopTarget getTarget() const { return target; }
  int64_t getChunkBytes() const { return chunkBytes; }
  /// The CPU's vector registers, which size the row updates' chunks.
  const VectorRegisters &getVectorRegisters() const { return vectorRegisters; }
  GPUConv getGPUConv() const { return gpuConv; }
  GPUMatmul getGPUMatmul() const { return gpuMatmul; }
  /// The tuned tiles of the implicit GEMM (`gpu-tiles`), or null.
  const GPUTileTable *getTileTable() const { return tileTable; }
  void setTileTable(const GPUTileTable *table) { tileTable = table; }
  /// Whether a strided build sizes its pairs by a bound the host knows
  /// (sites x pairs per site) and reads its status back once, after the
  /// unique, rather than reading the exact pair total back first: on the
  /// GPU each read-back is a host wait; on the CPU it is a copy of a few
  /// words, and exact sizes use less memory.
  bool boundsStridedPairs() const { return target == LoopTarget::GPU; }
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
  int64_t blockSize;
  SubmSearch submSearch;
  LoopTarget target;
  int64_t chunkBytes;
  VectorRegisters vectorRegisters;
  int64_t maxUnrolledOffsets;
  GPUConv gpuConv;
  GPUMatmul gpuMatmul;
  const GPUTileTable *tileTable = nullptr;
  DenseMap<std::pair<Value, unsigned>, DerivedBuffers> derived;
  ConcatPlan concatPlan;
  DenseMap<Operation *, Operation *> returnChecks;
};

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_LOWERINGCONTEXT_H
