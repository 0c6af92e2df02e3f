//===- OutputBox.h - The outputs an input site reaches ----------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// A regular (strided) conv pairs input x with output o at offset j in
// dimension d iff x + p - j * dil == o * s with 0 <= o < out. Testing every
// kernel offset of every site costs K = prod(k) tests per site although a
// stride-2 3x3x3 conv has about 3.4 pairs per site. Per dimension, the
// offsets that pair are an arithmetic progression: those between two bounds
// (o in the grid) that solve j * dil == x + p (mod s). Enumerating the
// product of the per-dimension progressions visits exactly the site's pairs,
// in increasing offset order, after O(rank) arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_OUTPUTBOX_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_OUTPUTBOX_H

#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

namespace mlir::spconv::lowering {

class OutputBox {
public:
  /// `geometry` must be a regular conv; `outShape` is its output grid.
  OutputBox(GeometryAttr geometry, ArrayRef<int64_t> outShape);

  /// Called for each pair of a site: its kernel offset (index) and the
  /// linear key of its output site (i64).
  using PairBody =
      function_ref<void(OpBuilder &, Location, Value offset, Value outputKey)>;

  /// Emits loops that call `body` once per pair of the input site (`batch`,
  /// `spatial`: i64), in increasing offset order. A site with a negative
  /// batch or coordinates outside every box has no pairs.
  void forEachPair(OpBuilder &b, Location loc, Value batch,
                   ArrayRef<Value> spatial, PairBody body) const;

  /// The most pairs one site can have: per dimension, the offsets of one
  /// progression, ceil(kernel / period).
  int64_t maxPairsPerSite() const;

private:
  /// The constants of one dimension: its offsets that pair solve
  /// j == residue(x) (mod period).
  struct Dimension {
    int64_t kernel, stride, padding, dilation, extent;
    /// s / gcd(dil, s): the step between offsets that pair.
    int64_t period;
    /// gcd(dil, s): x + p must be a multiple of it.
    int64_t divisor;
    /// (dil / divisor)^-1 mod period.
    int64_t inverse;
  };

  /// The offsets of dimension `d` that pair, for the site's coordinate
  /// `x`: `first, first + period, ...` below `end` (index), and x + p.
  struct Progression {
    Value first, end, shifted;
  };
  Progression progression(OpBuilder &b, Location loc, unsigned d,
                          Value x) const;

  /// The loops of dimensions `d` and up, inside those of the dimensions
  /// before (whose offset and key prefix are `offset` and `key`).
  void enumerate(OpBuilder &b, Location loc, unsigned d,
                 ArrayRef<Progression> progressions, Value offset, Value key,
                 PairBody body) const;

  SmallVector<Dimension> dims;
};

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_RULEBOOK_OUTPUTBOX_H
