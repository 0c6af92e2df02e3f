//===- SegmentMax.cpp - Per-segment maximum and its position --------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "spconv-ref/Reference.h"

#include <cmath>
#include <limits>

using namespace spconv::ref;

/// The order segment_max uses: NaN is greater than every number (and not
/// greater than another NaN, so the first NaN stays).
static bool greater(double a, double b) {
  if (std::isnan(b))
    return false;
  return std::isnan(a) || a > b;
}

bool spconv::ref::segmentMax(const Tensor &data,
                             const std::vector<int64_t> &index,
                             int64_t numSegments, Tensor &values,
                             std::vector<int32_t> &positions,
                             std::string &error) {
  if (data.rank() != 3) {
    error = "segment_max data must be B x C x P, got rank " +
            std::to_string(data.rank());
    return false;
  }
  int64_t b = data.shape[0], c = data.shape[1], p = data.shape[2];
  if (static_cast<int64_t>(index.size()) != b * p) {
    error = "segment_max index must be B x P = " + std::to_string(b) + " x " +
            std::to_string(p) + ", got " + std::to_string(index.size()) +
            " elements";
    return false;
  }
  if (numSegments < 0) {
    error = "segment count must be nonnegative";
    return false;
  }
  if (p > std::numeric_limits<int32_t>::max()) {
    error = "segment_max positions are int32; P = " + std::to_string(p) +
            " does not fit";
    return false;
  }
  values = Tensor({b, c, numSegments});
  positions.assign(static_cast<size_t>(b * c * numSegments), -1);
  for (int64_t bi = 0; bi < b; ++bi) {
    // Ascending p, so that a tie keeps the smallest position.
    for (int64_t pi = 0; pi < p; ++pi) {
      int64_t m = index[bi * p + pi];
      if (m < 0 || m >= numSegments) {
        error = "segment_max index[" + std::to_string(bi) + ", " +
                std::to_string(pi) + "] = " + std::to_string(m) +
                " is outside [0, " + std::to_string(numSegments) + ")";
        return false;
      }
      for (int64_t ci = 0; ci < c; ++ci) {
        double v = data.at(bi, ci, pi);
        int64_t out = (bi * c + ci) * numSegments + m;
        if (positions[out] < 0 || greater(v, values.data[out])) {
          values.data[out] = v;
          positions[out] = static_cast<int32_t>(pi);
        }
      }
    }
  }
  return true; // Untouched (empty) segments keep value 0, position -1.
}
