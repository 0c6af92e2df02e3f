//===- BuilderSkeleton.h - What every rulebook builder does -----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// A rulebook builder is one skeleton with a search strategy plugged in:
// declare the function, index the input sites, count the pairs of each
// (kernel offset, block of sites), scan the counts into first slots, size
// the pair buffers (read back, or bounded), write the pairs, make the output
// sites of a strided build, and return the CSR offsets. The strategies (the
// hash table's probes in BuildRulebook.cpp, the sorted merge in
// SortedSubm.cpp) say how sites are indexed and how each pass finds the
// pairs; the pass bodies that test the searched offsets site by site share
// the per-block helpers below.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_BUILDERSKELETON_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_BUILDERSKELETON_H

#include "Rulebook/BuildStatus.h"
#include "Rulebook/PairCounts.h"
#include "Utils/LoweringContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::spconv::lowering {

/// The batch bound of the site keys of a build of `type`.
int64_t buildBatchSize(RulebookType type);

/// The input sites once indexed.
struct IndexedSites {
  Value n;    ///< index: the input rows
  Value keys; ///< memref<?xi64>: their grid keys (linearizeSites)
  /// index: n, or 0 where indexing failed (recorded in the status): the
  /// passes then see no sites.
  Value sites;
};

/// The blocks of sites the passes run over in parallel.
struct SiteBlocks {
  Value sites;     ///< index
  Value blockSize; ///< index: sites per block
  Value blocks;    ///< index: ceil(sites / blockSize)
  /// The first site and the end of the sites of `block`.
  std::pair<Value, Value> range(OpBuilder &b, Location loc, Value block) const;
};

/// The first site and the end of the sites of a block.
using BlockRangeFn =
    function_ref<std::pair<Value, Value>(OpBuilder &, Location, Value)>;
using BlockBodyFn = function_ref<void(OpBuilder &, Location, Value block,
                                      Value start, Value end)>;
/// Parallel over `blocks` blocks of sites, a kernel named `role`:
/// body(block, its first site, the end of its sites) (`blockRange`).
void forEachBlock(OpBuilder &b, Location loc, Value blocks,
                  BlockRangeFn blockRange, StringRef role, BlockBodyFn body);

/// The buffers the writing pass fills, `capacity` slots each: subm writes
/// both rows of each pair; a strided build writes the input row and the
/// output site's key, whose row the unique after the pass gives.
struct PairBuffers {
  Value pairIn;        ///< memref<?xi32>
  Value pairOut;       ///< memref<?xi32>, subm only
  Value candidateKeys; ///< memref<?xi64>, strided only
};

/// How a builder finds the pairs: the strategy the skeleton calls.
class PairSearch {
public:
  virtual ~PairSearch() = default;

  /// Indexes the input sites of `coords`, recording sites outside the grid
  /// and repeated sites in `status`.
  virtual IndexedSites indexSites(OpBuilder &b, Location loc, Value coords,
                                  const BuildStatus &status) = 0;
  /// Pass 1: the pairs of each (kernel offset, block) into `counts`.
  virtual void countPairs(OpBuilder &b, Location loc, Value coords,
                          const SiteBlocks &blocks, PairCounts &counts) = 0;
  /// Pass 2: the pairs of the first `writeBlocks` blocks (0 where a step
  /// failed) into `pairs`, at the slots `counts` gives after its scan.
  virtual void writePairs(OpBuilder &b, Location loc, Value coords,
                          const SiteBlocks &blocks, Value writeBlocks,
                          PairCounts &counts, const PairBuffers &pairs) = 0;
};

/// The private function `name` from a rulebook's coordinates (any strides)
/// to `results`, its builder at the start of its body.
func::FuncOp declareBuilder(LoweringContext &ctx, OpBuilder &b,
                            RulebookType type, StringRef name,
                            TypeRange results);

/// Emits the builder `name` of `type`, (coords) -> ([out coords,] pair in,
/// pair out, CSR offsets), finding pairs with `search`.
func::FuncOp emitRulebookBuilder(LoweringContext &ctx, RulebookType type,
                                 StringRef name, PairSearch &search);

/// Where a buffer of one entry per (site, searched offset), `searched` per
/// site, holds site `site`'s entry for searched offset `k`.
Value searchedEntry(OpBuilder &b, Location loc, Value site, int64_t searched,
                    int64_t k);

/// The end of pass 1 in one block of a subm search that keeps a counter per
/// searched offset: `counted[k]` (i32) pairs at `plan.searched[k]` and, for a
/// symmetric kernel, as many at its mirror and `end - start` at the centre.
void storeSearchedCounts(OpBuilder &b, Location loc, PairCounts &counts,
                         const SubmSearchPlan &plan, ValueRange counted,
                         Value block, Value start, Value end);

/// Pass 2 in one block [start, end) of a search that tests the searched
/// offsets site by site, one counter per offset: for each site q,
/// `visitSite(q)` returns its row (i32) after any loads the others need;
/// for each searched offset k, `found(k)` says whether it has a pair, and
/// `write(k, slot, mirroredSlot)` stores it (`mirroredSlot`: the mirror's
/// slot of a symmetric subm kernel, else null); a symmetric kernel's centre
/// pair follows each site's offsets.
void writeBlockBySite(
    OpBuilder &b, Location loc, PairCounts &counts, const SubmSearchPlan &plan,
    Value block, Value start, Value end, const PairBuffers &pairs,
    function_ref<Value(OpBuilder &, Location, Value)> visitSite,
    function_ref<Value(OpBuilder &, Location, int64_t)> found,
    function_ref<void(OpBuilder &, Location, int64_t, Value, Value)> write);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_BUILDERSKELETON_H
