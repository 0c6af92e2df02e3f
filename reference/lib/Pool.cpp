//===- Pool.cpp - Sparse max and average pooling --------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Sites.h"

#include <cmath>

using namespace spconv::ref;

bool spconv::ref::sparsePool(PoolMode mode, const Geometry &geometry,
                             const std::vector<int64_t> &grid,
                             const Coords &coords, const Tensor &features,
                             Coords &outCoords, Tensor &outFeatures,
                             std::string &error) {
  if (geometry.kind != ConvKind::Regular) {
    error = "pooling uses a regular conv's window, got kind '" +
            std::string(convKindName(geometry.kind)) + "'";
    return false;
  }
  Rulebook rb;
  if (!buildRulebook(geometry, grid, coords, rb, error) ||
      !checkFeatures(features, coords.rows(), "features", error))
    return false;

  int64_t rows = rb.outCoords.rows(), channels = features.shape[1];
  outCoords = rb.outCoords;
  outFeatures = Tensor({rows, channels});
  // Every active output has a contributor, so `count` ends positive.
  std::vector<int64_t> count(rows, 0);
  for (const std::vector<Pair> &offsetPairs : rb.pairs) {
    for (const Pair &pair : offsetPairs) {
      for (int64_t c = 0; c < channels; ++c) {
        double v = features.at(pair.in, c);
        double &acc = outFeatures.at(pair.out, c);
        if (mode == PoolMode::Avg)
          acc += v;
        else if (count[pair.out] == 0 ||
                 (!std::isnan(acc) && (std::isnan(v) || v > acc)))
          acc = v; // NaN is greater than every number.
      }
      ++count[pair.out];
    }
  }
  if (mode == PoolMode::Avg)
    for (int64_t o = 0; o < rows; ++o)
      for (int64_t c = 0; c < channels; ++c)
        outFeatures.at(o, c) /= static_cast<double>(count[o]);
  return true;
}
