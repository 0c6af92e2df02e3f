//===- LoweringUtils.h - Shared helpers of the SpConv lowering --*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_LOWERINGUTILS_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_LOWERINGUTILS_H

#include "SpConv/IR/SpConvOps.h"
#include "SpConv/Support/VectorWidth.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::spconv::lowering {

/// The values a `!spconv.rulebook` becomes (its 1:N type conversion, in this
/// order). Pairs are grouped by kernel offset: those of offset `j` are
/// `[offsets[j], offsets[j + 1])`. The output coordinates are not part of
/// it: `spconv.build_rulebook` returns them as a tensor of their own.
struct RulebookBuffers {
  Value numIn;   ///< index: number of input sites.
  Value numOut;  ///< index: number of output sites.
  /// memref<?xi32>: input row of each pair; pairIn and pairOut hold exactly
  /// offsets[K] pairs.
  Value pairIn;
  Value pairOut; ///< memref<?xi32>: output row of each pair.
  Value offsets; ///< memref<(K+1)xindex>: CSR offsets per kernel offset.

  /// The types of those values for `type`, in order.
  static SmallVector<Type> getTypes(RulebookType type);
  /// Unpacks converted values (`getTypes` order).
  static RulebookBuffers fromValues(ValueRange values);
  SmallVector<Value> toValues() const {
    return {numIn, numOut, pairIn, pairOut, offsets};
  }
};

/// The two arrays of a runtime hash table (HashTableLayout.h): what a
/// `!spconv.hash_table` becomes.
struct HashTableBuffers {
  Value keys;   ///< memref<?xi64>, power-of-two size.
  Value values; ///< memref<?xi32>, same size.

  static SmallVector<Type> getTypes(MLIRContext *context);
  static HashTableBuffers fromValues(ValueRange values);
  SmallVector<Value> toValues() const { return {keys, values}; }
};

/// How subm builders find neighbours.
enum class SubmSearch {
  Sorted, ///< merge the sorted site keys (SortedSubm.cpp)
  Hash    ///< probe the runtime's hash table inline
};

/// Where the parallel loops will run: CPU threads, or GPU threads once
/// `spconv-parallel-loops-to-gpu` makes kernels of them.
enum class LoopTarget {
  CPU, ///< few wide iterations: blocks of sites, vector row updates
  GPU  ///< one thread per item: scalar dot products, no prefetch hints
};

/// How the GPU target computes a convolution.
enum class GPUConv {
  /// One tiled, output-stationary GEMM per layer over a neighbour table
  /// (ImplicitGemm.cpp); needs static channel counts.
  ImplicitGemm,
  /// Per offset, one thread per (pair, output channel) adding into an
  /// accumulator (any channel counts).
  GatherScatter
};

/// What the GPU target's tiled convolution multiplies with.
enum class GPUMatmul {
  /// f16 and bf16 on tensor cores (f32 accumulation), f32 and f64 on FMA.
  TensorCores,
  /// As TensorCores, and f32 too, its inputs rounded to TF32.
  TF32,
  /// Every type on FMA (SIMT).
  FMA
};

class GPUTileTable;

/// State shared by the op lowerings of one module.
class LoweringContext {
public:
  LoweringContext(ModuleOp module, int64_t blockSize, SubmSearch submSearch,
                  LoopTarget target, int64_t chunkBytes,
                  VectorRegisters vectorRegisters, int64_t maxUnrolledOffsets,
                  GPUConv gpuConv, GPUMatmul gpuMatmul)
      : module(module), blockSize(blockSize), submSearch(submSearch),
        target(target), chunkBytes(chunkBytes),
        vectorRegisters(vectorRegisters),
        maxUnrolledOffsets(maxUnrolledOffsets), gpuConv(gpuConv),
        gpuMatmul(gpuMatmul) {}

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

//===----------------------------------------------------------------------===//
// IR helpers
//===----------------------------------------------------------------------===//

/// `loc` naming what the buffer allocated there is for ("the pairs of a
/// rulebook"): an allocation that fails reports it (GuardAllocations.cpp).
Location bufferLoc(Location loc, StringRef what);

/// Names what `loop` does (`count_pairs`, `conv_f32_16x32`, ...): the GPU
/// mapping names the kernel it makes of the loop after this role and, inside
/// a builder, after the builder's geometry. Returns `loop`.
scf::ParallelOp markKernel(scf::ParallelOp loop, StringRef role);

Value indexConst(OpBuilder &b, Location loc, int64_t value);
Value i64Const(OpBuilder &b, Location loc, int64_t value);
Value i32Const(OpBuilder &b, Location loc, int32_t value);

/// The row-major kernel indices (i64) of kernel offset `offset` (index):
/// `j0 * k1 * k2 + j1 * k2 + j2 = offset`. Folds to constants when `offset`
/// is one.
SmallVector<Value> kernelIndices(OpBuilder &b, Location loc,
                                 ArrayRef<int64_t> kernel, Value offset);

/// A memref type for `type` with fully dynamic strides and offset, which
/// any buffer of that shape can be cast to.
MemRefType getAnyLayoutMemRefType(RankedTensorType type);

/// `bufferization.to_buffer` of a tensor: with a fully dynamic layout, or
/// with the identity layout (contiguous) when the runtime needs one.
Value toBuffer(OpBuilder &b, Location loc, Value tensor,
               bool contiguous = false);

/// `bufferization.to_tensor` of a freshly allocated buffer.
Value toTensor(OpBuilder &b, Location loc, Value buffer, Type tensorType);

/// Casts `buffer` to `type` (layouts and static sizes permitting).
Value castTo(OpBuilder &b, Location loc, Value buffer, Type type);

/// `memref.alloc` of a 1-D buffer of `size` elements.
Value alloc1d(OpBuilder &b, Location loc, Type elementType, Value size);

/// The first `size` elements of a 1-D buffer, as a `memref<?xT>`.
Value prefix(OpBuilder &b, Location loc, Value buffer, Value size);

/// A `memref<Dxi64>` holding `values` (stack allocated).
Value i64Array(OpBuilder &b, Location loc, ArrayRef<int64_t> values);

/// Reports, through the runtime, that `position` of an index operand of `op`
/// holds `value`, outside `[0, bound)`. Emitted only when that happened.
void reportBadIndex(LoweringContext &ctx, OpBuilder &b, Location loc,
                    Value position, Value value, Value bound);

/// `first + index`, or `index` where `first` is null (no offset).
Value addOffset(OpBuilder &b, Location loc, Value first, Value index);

/// The first input channel that output channel `co` of a grouped conv
/// reads: that of its group, `co / groupChannelsOut * channelsIn`; null
/// (no offset, for addOffset) without groups.
Value groupFirstInput(OpBuilder &b, Location loc, Value co, int64_t groups,
                      Value channelsIn, Value groupChannelsOut);

/// for q in [0, groups): body(q * channelsIn, q * channelsOut): a grouped
/// conv's loop over its groups, with the first input and output channel of
/// each (`channelsIn`, `channelsOut`: one group's).
void forEachGroup(
    OpBuilder &b, Location loc, int64_t groups, Value channelsIn,
    Value channelsOut,
    function_ref<void(OpBuilder &, Location, Value firstIn, Value firstOut)>
        body);

/// Whether `0 <= index < bound` (i1; index values).
Value inRange(OpBuilder &b, Location loc, Value index, Value bound);

/// Reports, through the runtime, the first position in `[0, count)` where
/// `isBad(position)` (i1) holds, with its index `indexAt(position)` (index
/// type) and `bound`. The position reported does not depend on the thread
/// count: on the CPU a sequential scan; on the GPU, where the indices are
/// device memory the host cannot read, a kernel keeps the smallest such
/// position (an atomic minimum) and, only when there is one, another
/// fetches its index; the host reads back two words.
void reportFirstBad(LoweringContext &ctx, OpBuilder &b, Location loc,
                    Value count, Value bound,
                    function_ref<Value(OpBuilder &, Location, Value)> isBad,
                    function_ref<Value(OpBuilder &, Location, Value)> indexAt);

/// reportFirstBad for an index operand checked before a loop that skips
/// what it cannot read: an index is bad if it is neither -1 (no
/// counterpart) nor in `[0, bound)`.
void reportFirstBadIndex(
    LoweringContext &ctx, OpBuilder &b, Location loc, Value count, Value bound,
    function_ref<Value(OpBuilder &, Location, Value)> indexAt);

/// Whether `features` has `expected` rows (i1); reports the mismatch through
/// the runtime when it does not (`what`: 0 input sites, 1 output sites of
/// an inverted convolution).
Value checkFeatureRows(LoweringContext &ctx, OpBuilder &b, Location loc,
                       Value features, Value expected, int64_t what);

/// What a run-time size check reports: SpConvRtSizeCheck of
/// runtime/include/spconv-rt/SpConvRuntime.h, with the same values (the
/// compiler does not include the runtime's headers).
enum class SizeCheck : int64_t {
  SortUniqueCount = 0,
  SortUniqueInverse = 1,
  LinearizeKeys = 2,
  DelinearizeRows = 3,
  HashLookupRows = 4,
  GatherRows = 5,
  GatherChannels = 6,
  UnfoldBatch = 7,
  UnfoldRows = 8,
  UnfoldColumns = 9,
  FoldBatch = 10,
  FoldRows = 11,
  FoldColumns = 12,
  FoldRowsMultiple = 13,
  OutputSites = 14,
  ConvRows = 15,
  PoolRows = 16,
  EpilogueRows = 17,
  EpilogueChannels = 18,
  ConcatRows = 19,
  ScatterRows = 20,
  SegmentMaxGrad = 21,
  PoolGradRows = 22,
};

/// The source line of `loc` (its first file location), or 0 when it has
/// none; run-time reports name it.
int64_t sourceLine(Location loc);

/// Whether `actual` equals `expected` (both index; i1); reports the mismatch
/// through the runtime (`what`, with the line of `loc`) when it does not.
Value checkSize(LoweringContext &ctx, OpBuilder &b, Location loc, Value actual,
                Value expected, SizeCheck what);

/// Like checkSize, but only where `precondition` (i1) holds, so that an
/// earlier failure (already reported) is not overwritten by a consequence of
/// it: returns `precondition && actual == expected`.
Value checkSizeIf(LoweringContext &ctx, OpBuilder &b, Location loc,
                  Value precondition, Value actual, Value expected,
                  SizeCheck what);

/// Checks, when it is not known at compile time, that a run-time extent
/// matches the static extent of a result: `staticActual` is the static
/// extent of the operand (or dynamic), `actual` its run-time value,
/// `expected` the static extent of the result (or dynamic). Returns the i1
/// of checkSize, or null when there is nothing to check (the result is
/// dynamic, or both are static and the verifier compared them).
Value checkStaticSize(LoweringContext &ctx, OpBuilder &b, Location loc,
                      int64_t staticActual, Value actual, int64_t expected,
                      SizeCheck what);

/// `buffer` (identity layout) as `type`, whose static sizes may be dynamic in
/// `buffer`: each such size is checked at run time (`what`), and on a
/// mismatch the result is a zero buffer of `type`, so no one reads or writes
/// past `buffer` through the static type.
Value castToChecked(LoweringContext &ctx, OpBuilder &b, Location loc,
                    Value buffer, MemRefType type, SizeCheck what);

/// The conjunction of the non-null `conditions`, or null if there are none.
Value allOf(OpBuilder &b, Location loc, ArrayRef<Value> conditions);

/// Stores zero in every element of `buffer` (identity layout, any rank).
void fillZeros(OpBuilder &b, Location loc, Value buffer);

/// Emits `body` where `ok` (i1) holds and fills `zeroed` with zeros where
/// it does not: an op whose sizes failed a run-time check does no work and
/// leaves defined results. With a null `ok`, emits `body` alone.
void ifElseZero(OpBuilder &b, Location loc, Value ok, ValueRange zeroed,
                function_ref<void(OpBuilder &, Location)> body);

/// The first `size` elements of a 1-D buffer, as a `memref<size x T>`; the
/// buffer must have at least `size` elements.
Value staticPrefix(OpBuilder &b, Location loc, Value buffer, int64_t size);

/// `buffer[indices]` where `inside` (i1) holds, zero elsewhere (padding,
/// missing rows); the load happens only inside.
Value loadOrZero(OpBuilder &b, Location loc, Value inside, Value buffer,
                 ValueRange indices);

/// The home slot of `key` (i64) in a table of capacity `mask + 1`
/// (HashTableLayout.h).
Value hashHomeSlot(OpBuilder &b, Location loc, Value key, Value mask);

/// The first position in `[begin, end)` where `holds(position)` (i1) is
/// true, or -1 (index). A sequential scan, so the position reported does
/// not depend on the thread count.
Value findFirst(OpBuilder &b, Location loc, Value begin, Value end,
                function_ref<Value(OpBuilder &, Location, Value)> holds);

/// Calls a runtime entry point and returns whether its status is 0.
Value callRuntime(LoweringContext &ctx, OpBuilder &b, Location loc,
                  StringRef name, ValueRange arguments);

/// The linear key `((b * S0 + x0) * S1 + x1) ...` of a site, all i64.
Value linearKey(OpBuilder &b, Location loc, Value batch,
                ArrayRef<Value> spatial, ArrayRef<int64_t> shape);

/// The batch size to validate keys against: the grid's, or the largest
/// batch whose keys fit in int64 on the largest of `volumes` (and whose
/// index fits the int32 coordinates).
int64_t effectiveBatchSize(GridAttr grid, ArrayRef<int64_t> volumes);

/// Fills the `rows x channels` `buffer` with `init(row, channel)`, in a
/// parallel loop named `role`.
void fillRows(OpBuilder &b, Location loc, Value buffer, Value rows,
              Value channels,
              function_ref<Value(OpBuilder &, Location, Value, Value)> init,
              StringRef role = "init_rows");

/// A `rows x channels` buffer of `type` filled by `init(row, channel)`.
Value allocRows(OpBuilder &b, Location loc, Value rows, Value channels,
                Type type,
                function_ref<Value(OpBuilder &, Location, Value, Value)> init,
                StringRef role = "init_rows");

/// The (source, destination) rows of rulebook pair `pair`: (input, output),
/// or (output, input) for a rulebook read backwards.
std::pair<Value, Value> pairRows(OpBuilder &b, Location loc,
                                 const RulebookBuffers &rulebook, bool inverse,
                                 Value pair);

/// for j in offsets: body(j, first pair of j, end of the pairs of j), in
/// offset order.
void forEachOffset(
    OpBuilder &b, Location loc, const RulebookBuffers &rulebook,
    int64_t volume,
    function_ref<void(OpBuilder &, Location, Value, Value, Value)> body);

/// Loads `memref[indices]` converted to `type` (float extension/truncation
/// or integer cast as needed).
Value loadAs(OpBuilder &b, Location loc, Value memref, ValueRange indices,
             Type type);

/// Converts a float or index value to `type`.
Value convertScalar(OpBuilder &b, Location loc, Value value, Type type);

/// The type features of `elementType` accumulate in: f32 for 16-bit floats.
Type accumulatorType(Type elementType);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_LOWERINGUTILS_H
