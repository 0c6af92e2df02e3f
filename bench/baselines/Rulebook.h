//===- Rulebook.h - Rulebooks of the baselines ------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Two builders of the same rulebook:
//
//  - buildHashRulebook: spconv v1's CPU algorithm. A tsl::robin_map from the
//    64-bit site key to its row; every input site enumerates the outputs it
//    reaches and probes (subm) or inserts (regular) them. Single-threaded,
//    pairs stored K x N as v1 does, regular outputs in discovery order.
//  - buildSortedRulebook: sort the keys once, then per kernel offset a
//    binary search of the shifted keys (subm); for regular conv the output
//    candidates are sorted and uniqued (DESIGN.md's output order). Used
//    where the rulebook must exist but is not what is timed, and by --check.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_BENCH_RULEBOOK_H
#define SPCONV_BENCH_RULEBOOK_H

#include "BenchUtil.h"

#include <cstdint>
#include <vector>

namespace spconv {
namespace bench {

struct Rulebook {
  int64_t numOffsets = 0;
  /// Capacity per offset: every input has at most one output per offset.
  int64_t capacity = 0;
  /// Pairs of offset j at [j * capacity, j * capacity + counts[j]).
  std::vector<int32_t> inIdx, outIdx;
  std::vector<int64_t> counts;
  int64_t numOut = 0;
  /// Output sites, numOut x 4 (regular conv; subm reuses the input's).
  std::vector<int32_t> outCoords;

  int64_t totalPairs() const;
  int64_t maxPairs() const;
  const int32_t *in(int64_t j) const { return inIdx.data() + j * capacity; }
  const int32_t *out(int64_t j) const { return outIdx.data() + j * capacity; }
};

Rulebook buildHashRulebook(const Sites &sites, const ConvGeometry &geom);
Rulebook buildSortedRulebook(const Sites &sites, const ConvGeometry &geom);

/// Compares two rulebooks of the same conv as sets of (input site, output
/// site) per offset; prints the first difference and returns false.
bool sameRulebook(const Sites &sites, const ConvGeometry &geom,
                  const Rulebook &a, const Rulebook &b);

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_RULEBOOK_H
