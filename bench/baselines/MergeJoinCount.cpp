//===- MergeJoinCount.cpp - Counting rulebook pairs on sorted keys --------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The reference point for sorted-key map search (Minuet's idea): sort the
// keys once; for one kernel offset the neighbour keys are the sorted keys
// plus a constant, so a merge of two sorted streams finds every pair. This
// only COUNTS the pairs of a submanifold conv, i.e. the floor of any
// sorted-key rulebook builder that must also write them.
//
// Keys are taken over the grid padded by the kernel radius on every side,
// so that adding an offset never wraps from one row into the next (padding
// cells hold no site, so shifted keys that leave the grid match nothing).
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

using namespace spconv::bench;
using Clock = std::chrono::steady_clock;

static const char *const kUsage =
    "Submanifold only (--regular is refused); --cin/--cout are ignored.\n"
    "Metrics (ms): sort_ms (std::sort of the shuffled keys),\n"
    "merge_simple_ms (one merge stream per offset, all K offsets), merge_ms\n"
    "(the same merge as 8 interleaved streams), merge_half_ms (merge_ms over\n"
    "the offsets before the centre, doubled, plus N: subm symmetry),\n"
    "bsearch_ms (one std::lower_bound per site and offset); and pairs.\n"
    "--threads splits the offsets over threads.\n";

namespace {

/// Matches of (keys + shift) in keys; both ascending. Branch-free steps: the
/// comparisons are unpredictable. One stream is latency bound: every step
/// waits for the loads that the previous step's comparison chose.
int64_t mergeCount(const int64_t *keys, int64_t n, int64_t shift) {
  int64_t i = 0, j = 0, count = 0;
  while (i < n && j < n) {
    int64_t q = keys[i] + shift, k = keys[j];
    count += q == k;
    i += q <= k;
    j += q >= k;
  }
  return count;
}

/// The same merge cut into kLanes independent streams stepped in lock-step,
/// so that the lanes' loads overlap. Lanes split the merged sequence evenly
/// (merge-path style): lane l starts at the query index i whose i + (keys
/// below keys[i] + shift) first reaches l * 2n / kLanes, in both arrays. Equal
/// values never straddle a split. `keys[n]` must be a sentinel above every
/// key + shift.
constexpr int kLanes = 8;
int64_t mergeCountLanes(const int64_t *keys, int64_t n, int64_t shift) {
  auto below = [&](int64_t i) { // keys below query i
    return i == n ? n
                  : std::lower_bound(keys, keys + n, keys[i] + shift) - keys;
  };
  int64_t i[kLanes + 1], j[kLanes + 1], count = 0;
  for (int l = 0; l <= kLanes; ++l) {
    int64_t target = 2 * n * l / kLanes, lo = 0, hi = n;
    while (lo < hi) { // first i with i + below(i) >= target
      int64_t mid = (lo + hi) / 2;
      if (mid + below(mid) >= target)
        hi = mid;
      else
        lo = mid + 1;
    }
    i[l] = lo;
    j[l] = below(lo);
  }
  int64_t end[kLanes], jend[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    end[l] = i[l + 1];
    jend[l] = j[l + 1];
  }
  for (bool any = true; any;) {
    any = false;
    for (int l = 0; l < kLanes; ++l) {
      bool active = (i[l] < end[l]) & (j[l] < jend[l]);
      int64_t q = keys[i[l]] + shift, k = keys[j[l]];
      count += active & (q == k);
      i[l] += active & (q <= k);
      j[l] += active & (q >= k);
      any |= active;
    }
  }
  return count;
}

int64_t searchCount(const int64_t *keys, int64_t n, int64_t shift) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t q = keys[i] + shift;
    const int64_t *p = std::lower_bound(keys, keys + n, q);
    count += p != keys + n && *p == q;
  }
  return count;
}

/// Sum of `fn(shift)` over `shifts`, split round-robin over `threads`.
template <typename Fn>
int64_t sumOver(const std::vector<int64_t> &shifts, int threads, Fn fn) {
  if (threads <= 1) {
    int64_t total = 0;
    for (int64_t s : shifts)
      total += fn(s);
    return total;
  }
  std::vector<int64_t> partial(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (size_t j = t; j < shifts.size(); j += threads)
        partial[t] += fn(shifts[j]);
    });
  for (std::thread &th : pool)
    th.join();
  int64_t total = 0;
  for (int64_t p : partial)
    total += p;
  return total;
}

} // namespace

int main(int argc, char **argv) {
  Options opts = parseOptions(argc, argv, "merge-join-count", kUsage);
  if (!opts.geom.subm) {
    std::fprintf(stderr, "merge-join-count: counts submanifold pairs only\n");
    return 2;
  }
  Sites sites = loadSites(opts);
  printHeader(opts, sites);

  const ConvGeometry &g = opts.geom;
  Dims3 radius, padded;
  for (int i = 0; i < 3; ++i) {
    radius[i] = g.kernel[i] / 2 * g.dilation[i];
    padded[i] = sites.grid[i] + 2 * radius[i];
  }
  const int64_t n = sites.size();
  std::vector<int64_t> raw(n);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t *r = sites.row(i);
    raw[i] = linearKey(r[0], r[1] + radius[0], r[2] + radius[1],
                       r[3] + radius[2], padded);
  }
  // Voxelisers emit sites in point order, not key order: time the sort on
  // shuffled keys.
  std::shuffle(raw.begin(), raw.end(), std::mt19937_64(opts.seed));

  // Shifts in offset order; the centre one is zero.
  std::vector<int64_t> shifts, before;
  for (int64_t a = 0; a < g.kernel[0]; ++a)
    for (int64_t b = 0; b < g.kernel[1]; ++b)
      for (int64_t c = 0; c < g.kernel[2]; ++c) {
        int64_t s = (((a - g.kernel[0] / 2) * g.dilation[0] * padded[1]) +
                     (b - g.kernel[1] / 2) * g.dilation[1]) *
                        padded[2] +
                    (c - g.kernel[2] / 2) * g.dilation[2];
        shifts.push_back(s);
        if (s < 0)
          before.push_back(s);
      }

  Metrics metrics;
  std::vector<int64_t> keys;
  int64_t pairs = 0, pairsSimple = 0, pairsHalf = 0, pairsSearch = 0;
  for (int rep = 0; rep <= opts.repeat; ++rep) {
    keys = raw;
    auto start = Clock::now();
    std::sort(keys.begin(), keys.end());
    double sortMs = msSince(start);
    // Above any key + shift, and far from overflowing.
    keys.push_back(INT64_MAX / 2);

    start = Clock::now();
    pairsSimple = sumOver(shifts, opts.threads, [&](int64_t s) {
      return mergeCount(keys.data(), n, s);
    });
    double simpleMs = msSince(start);

    auto merge = [&](int64_t s) { return mergeCountLanes(keys.data(), n, s); };
    start = Clock::now();
    pairs = sumOver(shifts, opts.threads, merge);
    double mergeMs = msSince(start);

    start = Clock::now();
    pairsHalf = 2 * sumOver(before, opts.threads, merge) + n;
    double halfMs = msSince(start);

    start = Clock::now();
    pairsSearch = sumOver(shifts, opts.threads, [&](int64_t s) {
      return searchCount(keys.data(), n, s);
    });
    double searchMs = msSince(start);
    if (rep == 0)
      continue; // warm-up
    metrics.add("sort_ms", sortMs);
    metrics.add("merge_simple_ms", simpleMs);
    metrics.add("merge_ms", mergeMs);
    metrics.add("merge_half_ms", halfMs);
    metrics.add("bsearch_ms", searchMs);
  }
  metrics.print();
  std::printf("pairs %lld\n", static_cast<long long>(pairs));
  if (pairsSimple != pairs || pairsHalf != pairs || pairsSearch != pairs) {
    std::fprintf(stderr,
                 "error: counts disagree: merge %lld, simple %lld, half %lld, "
                 "bsearch %lld\n",
                 (long long)pairs, (long long)pairsSimple, (long long)pairsHalf,
                 (long long)pairsSearch);
    return 1;
  }
  return 0;
}
