//===- SortedRulebook.cpp - Rulebooks from sorted keys --------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The independent rulebook: no hash table, only sorted keys. For subm, the
// key of a neighbour at a fixed offset is the site's key plus a constant, so
// walking the sites in key order walks the shifted keys in order too and
// one forward pointer finds every match. Also `totalPairs` and the rulebook
// comparison used by --check.
//
//===----------------------------------------------------------------------===//

#include "Rulebook.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <utility>

using namespace spconv::bench;

int64_t Rulebook::totalPairs() const {
  return std::accumulate(counts.begin(), counts.end(), int64_t(0));
}

int64_t Rulebook::maxPairs() const {
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

namespace {

/// (key, row) of every site, sorted by key.
std::vector<std::pair<int64_t, int32_t>> sortedKeys(const Sites &sites) {
  std::vector<std::pair<int64_t, int32_t>> keys(sites.size());
  for (int64_t i = 0; i < sites.size(); ++i)
    keys[i] = {sites.key(i), static_cast<int32_t>(i)};
  std::sort(keys.begin(), keys.end());
  return keys;
}

Rulebook emptyRulebook(int64_t numOffsets, int64_t n) {
  Rulebook rb;
  rb.numOffsets = numOffsets;
  rb.capacity = n;
  rb.inIdx.resize(numOffsets * n);
  rb.outIdx.resize(numOffsets * n);
  rb.counts.assign(numOffsets, 0);
  return rb;
}

} // namespace

Rulebook spconv::bench::buildSortedRulebook(const Sites &sites,
                                            const ConvGeometry &geom) {
  const int64_t n = sites.size();
  Rulebook rb = emptyRulebook(geom.volume(), n);
  const auto keys = sortedKeys(sites);
  const Dims3 &grid = sites.grid;

  if (geom.subm) {
    for (int64_t j = 0; j < rb.numOffsets; ++j) {
      // Input = output + delta (per dim (j_i - k_i/2) * d_i).
      int64_t jk[3] = {j / (geom.kernel[1] * geom.kernel[2]),
                       j / geom.kernel[2] % geom.kernel[1], j % geom.kernel[2]};
      int64_t delta[3];
      for (int i = 0; i < 3; ++i)
        delta[i] = (jk[i] - geom.kernel[i] / 2) * geom.dilation[i];
      int64_t shift = (delta[0] * grid[1] + delta[1]) * grid[2] + delta[2];
      int64_t p = 0, &c = rb.counts[j];
      for (const auto &[key, row] : keys) {
        const int32_t *o = sites.row(row);
        bool inside = true;
        for (int i = 0; i < 3; ++i) {
          int64_t x = o[i + 1] + delta[i];
          inside &= x >= 0 && x < grid[i];
        }
        if (!inside)
          continue;
        int64_t q = key + shift;
        while (p < n && keys[p].first < q)
          ++p;
        if (p < n && keys[p].first == q) {
          rb.inIdx[j * n + c] = keys[p].second;
          rb.outIdx[j * n + c] = row;
          ++c;
        }
      }
    }
    rb.numOut = n;
    return rb;
  }

  // Regular: candidates, sort + unique (sorted output order), then index.
  const Dims3 outGrid = geom.outputGrid(grid);
  std::vector<int64_t> outKeys;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t *site = sites.row(i);
    forEachOutput(site, geom, outGrid,
                  [&](int64_t, int64_t z, int64_t y, int64_t x) {
                    outKeys.push_back(linearKey(site[0], z, y, x, outGrid));
                  });
  }
  std::sort(outKeys.begin(), outKeys.end());
  outKeys.erase(std::unique(outKeys.begin(), outKeys.end()), outKeys.end());
  rb.numOut = static_cast<int64_t>(outKeys.size());
  for (int64_t key : outKeys) {
    int64_t x = key % outGrid[2], y = key / outGrid[2] % outGrid[1];
    int64_t z = key / (outGrid[1] * outGrid[2]) % outGrid[0];
    int64_t b = key / (outGrid[0] * outGrid[1] * outGrid[2]);
    rb.outCoords.insert(rb.outCoords.end(),
                        {static_cast<int32_t>(b), static_cast<int32_t>(z),
                         static_cast<int32_t>(y), static_cast<int32_t>(x)});
  }
  for (int64_t i = 0; i < n; ++i) {
    const int32_t *site = sites.row(i);
    forEachOutput(
        site, geom, outGrid, [&](int64_t j, int64_t z, int64_t y, int64_t x) {
          int64_t key = linearKey(site[0], z, y, x, outGrid);
          int64_t o = std::lower_bound(outKeys.begin(), outKeys.end(), key) -
                      outKeys.begin();
          int64_t c = rb.counts[j]++;
          rb.inIdx[j * n + c] = static_cast<int32_t>(i);
          rb.outIdx[j * n + c] = static_cast<int32_t>(o);
        });
  }
  return rb;
}

bool spconv::bench::sameRulebook(const Sites &sites, const ConvGeometry &geom,
                                 const Rulebook &a, const Rulebook &b) {
  if (a.numOffsets != b.numOffsets || a.numOut != b.numOut) {
    std::printf("# check: rulebooks differ: %lld vs %lld offsets, %lld vs "
                "%lld outputs\n",
                (long long)a.numOffsets, (long long)b.numOffsets,
                (long long)a.numOut, (long long)b.numOut);
    return false;
  }
  const Dims3 outGrid = geom.outputGrid(sites.grid);
  auto outKey = [&](const Rulebook &rb, int32_t o) {
    if (geom.subm)
      return sites.key(o);
    const int32_t *c = rb.outCoords.data() + 4 * int64_t(o);
    return linearKey(c[0], c[1], c[2], c[3], outGrid);
  };
  auto pairsOf = [&](const Rulebook &rb, int64_t j) {
    std::vector<std::pair<int64_t, int64_t>> pairs(rb.counts[j]);
    for (int64_t r = 0; r < rb.counts[j]; ++r)
      pairs[r] = {sites.key(rb.in(j)[r]), outKey(rb, rb.out(j)[r])};
    std::sort(pairs.begin(), pairs.end());
    return pairs;
  };
  for (int64_t j = 0; j < a.numOffsets; ++j) {
    if (pairsOf(a, j) != pairsOf(b, j)) {
      std::printf("# check: offset %lld differs (%lld vs %lld pairs)\n",
                  (long long)j, (long long)a.counts[j], (long long)b.counts[j]);
      return false;
    }
  }
  return true;
}
