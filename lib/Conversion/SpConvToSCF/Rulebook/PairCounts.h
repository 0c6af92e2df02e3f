//===- PairCounts.h - Per-(offset, block) pair counts of a builder -*- C++
//-*-===//
//
// Part of the spconv-mlir project.
//
// Every rulebook builder counts the pairs of each kernel offset per block of
// sites, prefix-sums the counts into the first slot of each (offset, block)
// and writes the pairs there, so the rulebook is compact and ordered by
// offset, then block. This class holds that bookkeeping, and the subm
// symmetry both subm builders use.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_PAIRCOUNTS_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_PAIRCOUNTS_H

#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

namespace mlir::spconv::lowering {

class BuildStatus;

/// `counts[offset * blocks + block]` (i64), turned into first slots by an
/// exclusive scan.
class PairCounts {
public:
  PairCounts(OpBuilder &b, Location loc, int64_t volume, Value blocks);

  /// Stores the number of pairs `count` (i32) of `offset` (index) in
  /// `block`.
  void store(OpBuilder &b, Location loc, Value count, Value offset,
             Value block);
  void store(OpBuilder &b, Location loc, Value count, int64_t offset,
             Value block) {
    store(b, loc, count, indexConst(b, loc, offset), block);
  }
  /// Adds one pair to the count of `offset` in `block` (counts that were
  /// stored first).
  void increment(OpBuilder &b, Location loc, Value offset, Value block);

  /// Turns the counts into first slots (the runtime's deferred exclusive
  /// scan) and writes the total into `status`'s PairTotal. Returns whether
  /// the scan could start (i1); the total is read back later.
  Value scan(LoweringContext &ctx, OpBuilder &b, Location loc,
             const BuildStatus &status);

  /// The first slot (index) of `offset`'s pairs in `block`, after `scan`.
  Value firstSlot(OpBuilder &b, Location loc, Value offset, Value block);
  Value firstSlot(OpBuilder &b, Location loc, int64_t offset, Value block) {
    return firstSlot(b, loc, indexConst(b, loc, offset), block);
  }

  /// The CSR offsets `memref<(volume + 1)xindex>` of the rulebook of
  /// `total` (index) pairs, by a kernel; all 0 (an empty rulebook) unless
  /// `valid`.
  Value buildOffsets(OpBuilder &b, Location loc, Value valid, Value total);

  /// Where the count of (`offset`, `block`) is: `offset * blocks + block`.
  Value index(OpBuilder &b, Location loc, Value offset, Value block);

private:
  int64_t volume;
  Value blocks, counts;
};

/// The kernel offsets a subm builder searches. An odd kernel is symmetric:
/// a site x finds y at offset j iff y finds x at the mirrored offset K-1-j,
/// and the centre maps every site to itself. So only the offsets below the
/// centre are searched; each pair found is also written, reversed, to the
/// mirrored offset, and the centre is the identity.
struct SubmSearchPlan {
  explicit SubmSearchPlan(GeometryAttr geometry, bool subm);

  int64_t mirror(int64_t offset) const { return volume - 1 - offset; }
  /// The mirrored offset of a loop's offset (index).
  Value mirror(OpBuilder &b, Location loc, Value offset) const;

  int64_t volume;
  bool symmetric;
  int64_t centre;
  SmallVector<int64_t> searched;
};

/// Writes the subm pair `neighbour -> row` (i32 rows) at `slot` and, if
/// `mirroredSlot` is set, the reversed pair `row -> neighbour` there: the
/// pair of the mirrored offset. The centre's identity pair is
/// `neighbour == row` without a mirror.
void storeSubmPairs(OpBuilder &b, Location loc, Value pairIn, Value pairOut,
                    Value slot, Value mirroredSlot, Value neighbour, Value row);

/// The centre pair of a symmetric subm rulebook: `row` (i32) feeds itself,
/// at slot `firstCentre + (position - start)` of the centre offset, where
/// `position` counts the sites of the block that starts at `start`.
void storeCentrePair(OpBuilder &b, Location loc, Value pairIn, Value pairOut,
                     Value firstCentre, Value position, Value start, Value row);

/// When `found`, `write(slot)` stores one offset's next pair at slot
/// `first + written`. Returns the pairs written for that offset so far
/// (index), counting this one.
Value writePairIfFound(OpBuilder &b, Location loc, Value found, Value first,
                       Value written,
                       function_ref<void(OpBuilder &, Location, Value)> write);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_PAIRCOUNTS_H
