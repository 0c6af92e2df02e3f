//===- Unfold.cpp - Dense im2col (unfold) and col2im (fold) ---------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Window position l (row-major over the regular-conv output grid O) and
// kernel offset j (row-major over the kernel) read input position
// l*s - p + j*d in every spatial dim.
//
//===----------------------------------------------------------------------===//

#include "spconv-ref/Reference.h"

using namespace spconv::ref;

/// Flat row-major offset of input position l*s - p + j*d within `spatial`,
/// or -1 when it falls in the padding.
static int64_t windowSource(const Geometry &g, const std::vector<int64_t> &l,
                            const std::vector<int64_t> &j,
                            const std::vector<int64_t> &spatial) {
  int64_t flat = 0;
  for (int64_t i = 0; i < g.rank(); ++i) {
    int64_t pos = l[i] * g.stride[i] - g.padding[i] + j[i] * g.dilation[i];
    if (pos < 0 || pos >= spatial[i])
      return -1;
    flat = flat * spatial[i] + pos;
  }
  return flat;
}

/// Normalizes the window (as a regular conv's) and computes the grid of
/// window positions over `spatial`.
static bool prepare(const Geometry &geometry,
                    const std::vector<int64_t> &spatial, Geometry &g,
                    std::vector<int64_t> &positions, std::string &error) {
  g = geometry;
  g.kind = ConvKind::Regular;
  if (!normalizeGeometry(g, error))
    return false;
  if (static_cast<int64_t>(spatial.size()) != g.rank()) {
    error = "spatial rank " + std::to_string(spatial.size()) +
            " differs from the kernel's " + std::to_string(g.rank());
    return false;
  }
  return outputGrid(g, spatial, positions, error);
}

static int64_t product(const std::vector<int64_t> &v) {
  int64_t p = 1;
  for (int64_t x : v)
    p *= x;
  return p;
}

bool spconv::ref::unfold(const Geometry &geometry, const Tensor &input,
                         Tensor &output, std::string &error) {
  if (input.rank() < 3) {
    error = "unfold input must be N x C x spatial..., got rank " +
            std::to_string(input.rank());
    return false;
  }
  std::vector<int64_t> spatial(input.shape.begin() + 2, input.shape.end());
  Geometry g;
  std::vector<int64_t> positions;
  if (!prepare(geometry, spatial, g, positions, error))
    return false;
  int64_t n = input.shape[0], c = input.shape[1], k = kernelVolume(g),
          l = product(positions), volume = product(spatial);
  output = Tensor({n, c * k, l});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t pos = 0; pos < l; ++pos) {
          int64_t src = windowSource(g, rowMajorIndex(pos, positions),
                                     kernelIndex(g, j), spatial);
          if (src >= 0)
            output.at(b, ch * k + j, pos) =
                input.data[(b * c + ch) * volume + src];
        }
  return true;
}

bool spconv::ref::fold(const Geometry &geometry,
                       const std::vector<int64_t> &outputSize,
                       const Tensor &input, Tensor &output,
                       std::string &error) {
  Geometry g;
  std::vector<int64_t> positions;
  if (!prepare(geometry, outputSize, g, positions, error))
    return false;
  int64_t k = kernelVolume(g), l = product(positions);
  if (input.rank() != 3 || input.shape[1] % k != 0 || input.shape[2] != l) {
    error = "fold input must be N x (C*" + std::to_string(k) + ") x " +
            std::to_string(l) + " (the window positions of the output size)";
    if (input.rank() == 3)
      error += ", got " + std::to_string(input.shape[0]) + " x " +
               std::to_string(input.shape[1]) + " x " +
               std::to_string(input.shape[2]);
    return false;
  }
  int64_t n = input.shape[0], c = input.shape[1] / k,
          volume = product(outputSize);
  std::vector<int64_t> shape = {n, c};
  shape.insert(shape.end(), outputSize.begin(), outputSize.end());
  output = Tensor(shape);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t pos = 0; pos < l; ++pos) {
          int64_t dst = windowSource(g, rowMajorIndex(pos, positions),
                                     kernelIndex(g, j), outputSize);
          if (dst >= 0)
            output.data[(b * c + ch) * volume + dst] +=
                input.at(b, ch * k + j, pos);
        }
  return true;
}
