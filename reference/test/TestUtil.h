//===- TestUtil.h - Random sparse cases for the reference tests -*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_REF_TEST_TESTUTIL_H
#define SPCONV_REF_TEST_TESTUTIL_H

#include "DenseOracle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace spconv {
namespace ref {
namespace test {

inline std::string toString(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

/// One random sparse-conv problem on a small grid.
struct Case {
  Geometry geometry; // normalized
  std::vector<int64_t> grid;
  int64_t batches = 1;
  Coords coords;
  Tensor features, weight, bias;
  bool hasBias = false;

  std::string describe() const {
    return std::string(convKindName(geometry.kind)) + " grid " +
           toString(grid) + " kernel " + toString(geometry.kernel) +
           " stride " + toString(geometry.stride) + " padding " +
           toString(geometry.padding) + " dilation " +
           toString(geometry.dilation) + " op " +
           toString(geometry.outputPadding) + " batches " +
           std::to_string(batches) + " N " + std::to_string(coords.rows()) +
           " C " + std::to_string(features.shape[1]) + "->" +
           std::to_string(weight.shape[2]);
  }
};

inline int64_t pick(std::mt19937 &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

inline Tensor randomTensor(std::mt19937 &rng, std::vector<int64_t> shape) {
  Tensor t(std::move(shape));
  std::uniform_real_distribution<double> dist(-1, 1);
  for (double &v : t.data)
    v = dist(rng);
  return t;
}

/// `count` distinct random sites (in random order) of `batches` x `grid`.
inline Coords randomSites(std::mt19937 &rng, int64_t batches,
                          const std::vector<int64_t> &grid, int64_t count) {
  int64_t volume = 1;
  for (int64_t s : grid)
    volume *= s;
  std::vector<int64_t> keys(batches * volume);
  for (size_t i = 0; i < keys.size(); ++i)
    keys[i] = static_cast<int64_t>(i);
  std::shuffle(keys.begin(), keys.end(), rng);
  keys.resize(std::min<int64_t>(count, keys.size()));
  Coords coords(grid.size());
  for (int64_t key : keys) {
    std::vector<int32_t> site = {static_cast<int32_t>(key / volume)};
    for (int64_t v : unravelIndex(key % volume, grid))
      site.push_back(static_cast<int32_t>(v));
    coords.append(site);
  }
  return coords;
}

/// A random valid case of `kind` with `dims` spatial dims. Kernels are drawn
/// from {1, 2, 3, 5} per dim (so non-cubic ones appear), strides and
/// dilations from 1..3, padding up to about half the window.
inline Case randomCase(std::mt19937 &rng, ConvKind kind, int64_t dims) {
  static const int64_t kernels[] = {1, 2, 3, 5};
  // Keep dense volumes small in high dims.
  int64_t maxExtent = dims == 1 ? 12 : dims == 2 ? 9 : dims == 3 ? 6 : 4;
  while (true) {
    Case c;
    Geometry &g = c.geometry;
    g.kind = kind;
    for (int64_t i = 0; i < dims; ++i) {
      int64_t k = kernels[pick(rng, 0, dims == 4 ? 2 : 3)];
      int64_t d = pick(rng, 1, 3), s = kind == ConvKind::Subm ? 1 : pick(rng, 1, 3);
      g.kernel.push_back(k);
      g.dilation.push_back(d);
      g.stride.push_back(s);
      if (kind == ConvKind::Subm)
        g.padding.push_back(k / 2 * d);
      else
        g.padding.push_back(pick(rng, 0, (d * (k - 1) + 1) / 2));
      g.outputPadding.push_back(
          kind == ConvKind::Transposed ? pick(rng, 0, std::max(s, d) - 1) : 0);
      c.grid.push_back(pick(rng, 1, maxExtent));
    }
    std::string error;
    std::vector<int64_t> out;
    if (!normalizeGeometry(g, error) || !outputGrid(g, c.grid, out, error))
      continue;
    int64_t outVolume = 1;
    for (int64_t o : out)
      outVolume *= o;
    if (outVolume > 4096)
      continue;
    c.batches = pick(rng, 1, 3);
    int64_t volume = 1;
    for (int64_t s : c.grid)
      volume *= s;
    // Densities from empty to half full; N = 0 now and then.
    int64_t n = pick(rng, 0, 8) == 0 ? 0 : pick(rng, 1, c.batches * volume / 2 + 1);
    c.coords = randomSites(rng, c.batches, c.grid, n);
    int64_t cin = pick(rng, 1, 5), cout = pick(rng, 1, 6);
    int64_t k = kernelVolume(g);
    c.features = randomTensor(rng, {c.coords.rows(), cin});
    c.weight = randomTensor(rng, {k, cin, cout});
    c.hasBias = pick(rng, 0, 1);
    c.bias = randomTensor(rng, {cout});
    return c;
  }
}

/// Linear 64-bit key of a site.
inline int64_t siteKey(const std::vector<int32_t> &site,
                       const std::vector<int64_t> &grid) {
  int64_t key = site[0];
  for (size_t i = 0; i < grid.size(); ++i)
    key = key * grid[i] + site[i + 1];
  return key;
}

inline std::map<std::vector<int32_t>, int64_t> siteRows(const Coords &coords) {
  std::map<std::vector<int32_t>, int64_t> rows;
  for (int64_t r = 0; r < coords.rows(); ++r)
    rows[coords.site(r)] = r;
  return rows;
}

/// |a - b| within a tolerance suited to double sums of a few hundred terms.
#define EXPECT_CLOSE(a, b) EXPECT_NEAR((a), (b), 1e-9 * (1 + std::fabs(b)))

} // namespace test
} // namespace ref
} // namespace spconv

#endif // SPCONV_REF_TEST_TESTUTIL_H
