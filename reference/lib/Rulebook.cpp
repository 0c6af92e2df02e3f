//===- Rulebook.cpp - Pairs of subm, regular and transposed convs ---------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Each kind transcribes its DESIGN.md rule; for every input site x and every
// kernel offset j there is at most one output o (and vice versa), so walking
// inputs and offsets finds each pair exactly once.
//
//===----------------------------------------------------------------------===//

#include "Sites.h"

#include <algorithm>

using namespace spconv::ref;

namespace {
/// A pair before output rows are known.
struct RawPair {
  int64_t offset;
  int64_t in;
  Site out;
};
} // namespace

static bool insideGrid(const std::vector<int64_t> &o,
                       const std::vector<int64_t> &grid) {
  for (size_t i = 0; i < o.size(); ++i)
    if (o[i] < 0 || o[i] >= grid[i])
      return false;
  return true;
}

/// subm: pair (x -> o, j) with x = o - k/2*d + j*d; outputs are the inputs.
static void submPairs(const Geometry &g, const Coords &coords,
                      const std::vector<int64_t> &grid,
                      std::vector<RawPair> &raw) {
  SiteMap sites = indexSites(coords);
  for (int64_t o = 0; o < coords.rows(); ++o) {
    for (int64_t j = 0; j < kernelVolume(g); ++j) {
      std::vector<int64_t> jj = kernelIndex(g, j);
      std::vector<int64_t> x(g.rank());
      for (int64_t i = 0; i < g.rank(); ++i)
        x[i] = coords.at(o, i + 1) - g.kernel[i] / 2 * g.dilation[i] +
               jj[i] * g.dilation[i];
      if (!insideGrid(x, grid))
        continue;
      Site in = {coords.at(o, 0)};
      for (int64_t v : x)
        in.push_back(static_cast<int32_t>(v));
      int64_t row = lookupSite(sites, in);
      if (row >= 0)
        raw.push_back({j, row, coords.site(o)});
    }
  }
}

/// regular: o is active iff an active x has x = o*s - p + j*d, i.e.
/// o = (x + p - j*d) / s where that divides exactly and lands in the grid.
static void regularPairs(const Geometry &g, const Coords &coords,
                         const std::vector<int64_t> &outGrid,
                         std::vector<RawPair> &raw) {
  for (int64_t x = 0; x < coords.rows(); ++x) {
    for (int64_t j = 0; j < kernelVolume(g); ++j) {
      std::vector<int64_t> jj = kernelIndex(g, j);
      std::vector<int64_t> o(g.rank());
      bool valid = true;
      for (int64_t i = 0; i < g.rank() && valid; ++i) {
        int64_t t = coords.at(x, i + 1) + g.padding[i] - jj[i] * g.dilation[i];
        valid = t >= 0 && t % g.stride[i] == 0;
        o[i] = valid ? t / g.stride[i] : 0;
      }
      if (!valid || !insideGrid(o, outGrid))
        continue;
      Site out = {coords.at(x, 0)};
      for (int64_t v : o)
        out.push_back(static_cast<int32_t>(v));
      raw.push_back({j, x, out});
    }
  }
}

/// transposed: x scatters to o = x*s - p + j*d, kept when inside the grid.
static void transposedPairs(const Geometry &g, const Coords &coords,
                            const std::vector<int64_t> &outGrid,
                            std::vector<RawPair> &raw) {
  for (int64_t x = 0; x < coords.rows(); ++x) {
    for (int64_t j = 0; j < kernelVolume(g); ++j) {
      std::vector<int64_t> jj = kernelIndex(g, j);
      std::vector<int64_t> o(g.rank());
      for (int64_t i = 0; i < g.rank(); ++i)
        o[i] = coords.at(x, i + 1) * g.stride[i] - g.padding[i] +
               jj[i] * g.dilation[i];
      if (!insideGrid(o, outGrid))
        continue;
      Site out = {coords.at(x, 0)};
      for (int64_t v : o)
        out.push_back(static_cast<int32_t>(v));
      raw.push_back({j, x, out});
    }
  }
}

bool spconv::ref::buildRulebook(const Geometry &geometry,
                                const std::vector<int64_t> &grid,
                                const Coords &coords, Rulebook &rb,
                                std::string &error) {
  Geometry g = geometry;
  if (g.kind == ConvKind::Inverse) {
    error = "an inverse conv has no rulebook of its own; build the regular "
            "one it inverts";
    return false;
  }
  if (!normalizeGeometry(g, error) || !outputGrid(g, grid, rb.outGrid, error) ||
      !checkCoords(coords, grid, "coords", error))
    return false;

  std::vector<RawPair> raw;
  switch (g.kind) {
  case ConvKind::Subm:
    submPairs(g, coords, grid, raw);
    break;
  case ConvKind::Regular:
    regularPairs(g, coords, rb.outGrid, raw);
    break;
  default:
    transposedPairs(g, coords, rb.outGrid, raw);
    break;
  }

  // Output rows: the input order for subm, key order otherwise.
  SiteMap outRows;
  if (g.kind == ConvKind::Subm) {
    rb.outCoords = coords;
    outRows = indexSites(coords);
  } else {
    for (const RawPair &p : raw)
      outRows.emplace(p.out, 0);
    rb.outCoords = Coords(g.rank());
    int64_t row = 0;
    for (auto &entry : outRows) {
      entry.second = row++;
      rb.outCoords.append(entry.first);
    }
  }

  rb.pairs.assign(kernelVolume(g), {});
  for (const RawPair &p : raw)
    rb.pairs[p.offset].push_back({p.in, outRows.at(p.out)});
  for (std::vector<Pair> &offsetPairs : rb.pairs)
    std::sort(offsetPairs.begin(), offsetPairs.end(),
              [](const Pair &a, const Pair &b) {
                return a.in != b.in ? a.in < b.in : a.out < b.out;
              });
  return true;
}
