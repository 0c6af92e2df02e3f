//===- BuildStatus.h - What a rulebook build finds out about its data -*- C++
//-*-===//
//
// Part of the spconv-mlir project.
//
// A rulebook build learns things from its data that the host must know:
// the first site outside the grid, the first repeated site, the number of
// pairs (a size) and, for a strided build, the number of output sites. They
// are written where the build's work runs, into one small buffer (device
// memory on the GPU), and the host reads that buffer back only where it
// needs a size or, for a build whose sizes the host knows, at the end of
// the call (docs/GPU.md, "Rulebook builds on the device"). The CPU runs the
// same code; its read-back is a copy of a few words.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_BUILDSTATUS_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_BUILDSTATUS_H

#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

namespace mlir::spconv::lowering {

class BuildStatus {
public:
  enum Slot : int64_t {
    BadRow,      ///< First site outside the grid; INT64_MAX if none.
    RepeatRow,   ///< First site repeating an earlier one; INT64_MAX if none.
    PairTotal,   ///< Number of pairs; -1 if it overflowed.
    UniqueCount, ///< Number of output sites (strided builds).
    NumSlots
  };

  /// Allocates the buffer and initialises it (a one-block kernel).
  BuildStatus(OpBuilder &b, Location loc);
  /// The status `buffer` (`memref<4xi64>`) that a builder returned.
  explicit BuildStatus(Value buffer) : buffer(buffer) {}

  Value getBuffer() const { return buffer; }

  /// A one-element view of `slot` (`memref<?xi64, strided<[1], offset:
  /// ?>>`), for the runtime's deferred calls.
  Value slot(OpBuilder &b, Location loc, Slot which) const;

  /// Lowers `slot` to `value` (an atomic minimum: threads race for it).
  void lowerTo(OpBuilder &b, Location loc, Slot which, Value value) const;

  /// Copies the buffer to the host (on the GPU: the read-back, which waits
  /// for the stream) and returns the slots' values, i64.
  SmallVector<Value> readBack(OpBuilder &b, Location loc,
                              ArrayRef<Slot> slots) const;

private:
  Value buffer;
};

/// The site keys of `coords` (N x (1 + D) i32), computed by a kernel named
/// `role`: a site outside the grid `shape` x `batchSize` gets the key
/// `batchSize * prod(shape)`, one past the last valid key (so it matches no
/// neighbour), and the first one is recorded in `status`.
Value linearizeSites(OpBuilder &b, Location loc, Value coords, Value n,
                     ArrayRef<int64_t> shape, int64_t batchSize,
                     const BuildStatus &status);

/// The key `linearizeSites` gives a site outside the grid:
/// `batchSize * prod(shape)`.
int64_t outsideSiteKey(ArrayRef<int64_t> shape, int64_t batchSize);

/// Writes the coordinates of `n` valid keys into `coords` (a kernel).
void delinearizeSites(OpBuilder &b, Location loc, Value keys, Value n,
                      ArrayRef<int64_t> shape, Value coords);

/// Bits of the keys `linearizeSites` gives: [0, 2^bits) holds them all.
int64_t siteKeyBits(ArrayRef<int64_t> shape, int64_t batchSize);

/// What a build's read-back tells the host.
struct BuiltPairs {
  Value valid;  ///< i1: no step failed and no error was found.
  Value total;  ///< index: the number of pairs; 0 unless valid.
  Value unique; ///< index: the output count slot, if read; 0 unless valid.
};

/// The read-back of a build whose scan started or not (`scanned`, i1),
/// with the output count too if `withUnique`: reports the first error the
/// status shows (a site of `coords` outside the grid, a repeated site, too
/// many pairs) through the runtime, which then empties the rulebook.
BuiltPairs readBackPairs(LoweringContext &ctx, OpBuilder &b, Location loc,
                         const BuildStatus &status, Value scanned, Value coords,
                         Value keys, ArrayRef<int64_t> shape, int64_t batchSize,
                         bool withUnique = false);

/// Whether the end of the call can check a build that `op` lowers: `op` is
/// in the top-level block of a function of one block, whose return the
/// check then precedes.
bool canCheckAtReturn(Operation *op);

/// The check of a build whose host code needed no size from it (a subm
/// build that only makes the implicit GEMM's neighbour table): the status
/// is read back before the return of the function holding `op`
/// (`canCheckAtReturn`), and its first error reported through the runtime.
/// The read-backs of all such builds of a function are copied one after
/// the other, so the host waits once for them, and that wait leaves
/// nothing in flight for the return's.
void checkAtReturn(LoweringContext &ctx, OpBuilder &b, Operation *op,
                   const BuildStatus &status, Value coords, Value keys,
                   ArrayRef<int64_t> shape, int64_t batchSize);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_BUILDSTATUS_H
