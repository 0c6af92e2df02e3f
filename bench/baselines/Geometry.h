//===- Geometry.h - Convolution geometry of the baselines -------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Kernel, stride, padding and dilation per spatial dim, the output grid, and
// the enumeration of the outputs one input site reaches (DESIGN.md's regular
// and submanifold semantics, 3 spatial dims).
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_BENCH_GEOMETRY_H
#define SPCONV_BENCH_GEOMETRY_H

#include <array>
#include <cstdint>

namespace spconv {
namespace bench {

using Dims3 = std::array<int64_t, 3>;

struct ConvGeometry {
  Dims3 kernel{3, 3, 3};
  Dims3 stride{1, 1, 1};
  Dims3 padding{1, 1, 1};
  Dims3 dilation{1, 1, 1};
  bool subm = true;

  int64_t volume() const { return kernel[0] * kernel[1] * kernel[2]; }
  /// Submanifold: the centre offset (the identity pairs).
  int64_t centre() const {
    return ((kernel[0] / 2) * kernel[1] + kernel[1] / 2) * kernel[2] +
           kernel[2] / 2;
  }
  /// The output grid: the input grid for subm, else
  /// floor((I + 2p - d(k-1) - 1) / s) + 1.
  Dims3 outputGrid(const Dims3 &in) const {
    if (subm)
      return in;
    Dims3 out;
    for (int i = 0; i < 3; ++i)
      out[i] = (in[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) /
                   stride[i] +
               1;
    return out;
  }
};

inline int64_t linearKey(int64_t b, int64_t z, int64_t y, int64_t x,
                         const Dims3 &grid) {
  return ((b * grid[0] + z) * grid[1] + y) * grid[2] + x;
}

/// Calls `fn(offset, oz, oy, ox)` for every output `o` with
/// `x = o * s - p + j * d` inside `outGrid`, in kernel-offset order.
/// Subm uses stride 1 and padding k/2 * d, so `o = x + (k/2 - j) * d`.
template <typename Fn>
inline void forEachOutput(const int32_t *site, const ConvGeometry &g,
                          const Dims3 &outGrid, Fn fn) {
  // Per dim: the kernel indices that land on an output, and that output.
  int64_t outPos[3][16];
  int64_t kIdx[3][16];
  int n[3];
  for (int i = 0; i < 3; ++i) {
    n[i] = 0;
    int64_t x = site[i + 1];
    int64_t pad = g.subm ? g.kernel[i] / 2 * g.dilation[i] : g.padding[i];
    int64_t stride = g.subm ? 1 : g.stride[i];
    for (int64_t j = 0; j < g.kernel[i] && n[i] < 16; ++j) {
      int64_t num = x + pad - j * g.dilation[i];
      if (num < 0 || num % stride != 0)
        continue;
      int64_t o = num / stride;
      if (o >= outGrid[i])
        continue;
      outPos[i][n[i]] = o;
      kIdx[i][n[i]++] = j;
    }
  }
  for (int a = 0; a < n[0]; ++a)
    for (int b = 0; b < n[1]; ++b)
      for (int c = 0; c < n[2]; ++c)
        fn((kIdx[0][a] * g.kernel[1] + kIdx[1][b]) * g.kernel[2] + kIdx[2][c],
           outPos[0][a], outPos[1][b], outPos[2][c]);
}

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_GEOMETRY_H
