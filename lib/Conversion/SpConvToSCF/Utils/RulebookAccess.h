//===- RulebookAccess.h - The buffers of rulebooks and hash tab -*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// What `!spconv.rulebook` and `!spconv.hash_table` become (the 1:N type
// conversion), and how the lowerings read them: pairs per offset, kernel
// indices, site keys, hash slots.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_RULEBOOKACCESS_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_RULEBOOKACCESS_H

#include "SpConv/IR/SpConvOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::spconv::lowering {

/// The values a `!spconv.rulebook` becomes (its 1:N type conversion, in this
/// order). Pairs are grouped by kernel offset: those of offset `j` are
/// `[offsets[j], offsets[j + 1])`. The output coordinates are not part of
/// it: `spconv.build_rulebook` returns them as a tensor of their own.
struct RulebookBuffers {
  Value numIn;  ///< index: number of input sites.
  Value numOut; ///< index: number of output sites.
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

/// The row-major kernel indices (i64) of kernel offset `offset` (index):
/// `j0 * k1 * k2 + j1 * k2 + j2 = offset`. Folds to constants when `offset`
/// is one.
SmallVector<Value> kernelIndices(OpBuilder &b, Location loc,
                                 ArrayRef<int64_t> kernel, Value offset);

/// The home slot of `key` (i64) in a table of capacity `mask + 1`
/// (HashTableLayout.h).
Value hashHomeSlot(OpBuilder &b, Location loc, Value key, Value mask);

/// The linear key `((b * S0 + x0) * S1 + x1) ...` of a site, all i64.
Value linearKey(OpBuilder &b, Location loc, Value batch,
                ArrayRef<Value> spatial, ArrayRef<int64_t> shape);

/// The batch size to validate keys against: the grid's, or the largest
/// batch whose keys fit in int64 on the largest of `volumes` (and whose
/// index fits the int32 coordinates).
int64_t effectiveBatchSize(GridAttr grid, ArrayRef<int64_t> volumes);

/// The (source, destination) rows of rulebook pair `pair`: (input, output),
/// or (output, input) for a rulebook read backwards.
std::pair<Value, Value> pairRows(OpBuilder &b, Location loc,
                                 const RulebookBuffers &rulebook, bool inverse,
                                 Value pair);

/// for j in offsets: body(j, first pair of j, end of the pairs of j), in
/// offset order.
void forEachOffset(
    OpBuilder &b, Location loc, const RulebookBuffers &rulebook, int64_t volume,
    function_ref<void(OpBuilder &, Location, Value, Value, Value)> body);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_RULEBOOKACCESS_H
