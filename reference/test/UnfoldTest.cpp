//===- UnfoldTest.cpp - Dense unfold (im2col) and fold (col2im) -----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>

using namespace spconv::ref;
using namespace spconv::ref::test;

namespace {

Geometry window(std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                std::vector<int64_t> padding = {},
                std::vector<int64_t> dilation = {}) {
  Geometry g;
  g.kernel = std::move(kernel);
  g.stride = std::move(stride);
  g.padding = std::move(padding);
  g.dilation = std::move(dilation);
  return g;
}

// [1, 2, 3, 4] with kernel 2, padding 1: window l reads l - 1 + j, so five
// windows; row j = 0 is [0, 1, 2, 3, 4], row j = 1 is [1, 2, 3, 4, 0].
TEST(Unfold, HandComputed1D) {
  Tensor x({1, 1, 4});
  x.data = {1, 2, 3, 4};
  Tensor cols;
  std::string error;
  ASSERT_TRUE(unfold(window({2}, {}, {1}), x, cols, error)) << error;
  EXPECT_EQ(cols.shape, (std::vector<int64_t>{1, 2, 5}));
  EXPECT_EQ(cols.data, (std::vector<double>{0, 1, 2, 3, 4, 1, 2, 3, 4, 0}));
}

// torch.nn.functional.unfold(torch.arange(9.).view(1, 1, 3, 3), 2).
TEST(Unfold, HandComputed2D) {
  Tensor x({1, 1, 3, 3});
  for (int i = 0; i < 9; ++i)
    x.data[i] = i;
  Tensor cols;
  std::string error;
  ASSERT_TRUE(unfold(window({2, 2}), x, cols, error)) << error;
  EXPECT_EQ(cols.shape, (std::vector<int64_t>{1, 4, 4}));
  EXPECT_EQ(cols.data, (std::vector<double>{0, 1, 3, 4, 1, 2, 4, 5, 3, 4, 6,
                                            7, 4, 5, 7, 8}));
  // fold(unfold(x)) multiplies each pixel by the windows covering it.
  Tensor back;
  ASSERT_TRUE(fold(window({2, 2}), {3, 3}, cols, back, error)) << error;
  EXPECT_EQ(back.data, (std::vector<double>{0, 2, 2, 6, 16, 10, 6, 14, 8}));
}

// A 2-D im2col written the textbook way, with explicit nested loops.
TEST(Unfold, MatchesDirectIm2Col2D) {
  std::mt19937 rng(800);
  for (int iter = 0; iter < 200; ++iter) {
    int64_t n = pick(rng, 1, 2), c = pick(rng, 1, 3), h = pick(rng, 1, 8),
            w = pick(rng, 1, 8);
    int64_t kh = pick(rng, 1, 3), kw = pick(rng, 1, 3), sh = pick(rng, 1, 3),
            sw = pick(rng, 1, 3), ph = pick(rng, 0, 2), pw = pick(rng, 0, 2),
            dh = pick(rng, 1, 3), dw = pick(rng, 1, 3);
    int64_t oh = (h + 2 * ph - dh * (kh - 1) - 1), ow = (w + 2 * pw - dw * (kw - 1) - 1);
    if (oh < 0 || ow < 0)
      continue;
    oh = oh / sh + 1;
    ow = ow / sw + 1;
    Tensor x = randomTensor(rng, {n, c, h, w});
    Tensor cols;
    std::string error;
    ASSERT_TRUE(unfold(window({kh, kw}, {sh, sw}, {ph, pw}, {dh, dw}), x, cols,
                       error))
        << error;
    ASSERT_EQ(cols.shape, (std::vector<int64_t>{n, c * kh * kw, oh * ow}));
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j)
            for (int64_t y = 0; y < oh; ++y)
              for (int64_t z = 0; z < ow; ++z) {
                int64_t py = y * sh - ph + i * dh, pz = z * sw - pw + j * dw;
                double expected =
                    py >= 0 && py < h && pz >= 0 && pz < w
                        ? x.data[((b * c + ch) * h + py) * w + pz]
                        : 0.0;
                ASSERT_EQ(cols.at(b, (ch * kh + i) * kw + j, y * ow + z),
                          expected);
              }
  }
}

class UnfoldByDims : public ::testing::TestWithParam<int64_t> {};

// fold is the adjoint of unfold: <unfold(x), y> == <x, fold(y)>.
TEST_P(UnfoldByDims, FoldIsAdjointOfUnfold) {
  int64_t dims = GetParam();
  std::mt19937 rng(900 + dims);
  for (int iter = 0; iter < 60; ++iter) {
    Geometry g;
    std::vector<int64_t> spatial;
    for (int64_t d = 0; d < dims; ++d) {
      g.kernel.push_back(pick(rng, 1, dims > 2 ? 3 : 5));
      g.stride.push_back(pick(rng, 1, 3));
      g.padding.push_back(pick(rng, 0, 2));
      g.dilation.push_back(pick(rng, 1, 3));
      spatial.push_back(pick(rng, 1, dims > 2 ? 5 : 9));
    }
    std::vector<int64_t> positions;
    std::string error;
    Geometry check = g;
    if (!normalizeGeometry(check, error) ||
        !outputGrid(check, spatial, positions, error))
      continue;
    int64_t n = pick(rng, 1, 2), c = pick(rng, 1, 3);
    std::vector<int64_t> shape = {n, c};
    shape.insert(shape.end(), spatial.begin(), spatial.end());
    Tensor x = randomTensor(rng, shape);
    Tensor cols;
    ASSERT_TRUE(unfold(g, x, cols, error)) << error;
    Tensor y = randomTensor(rng, cols.shape);
    Tensor folded;
    ASSERT_TRUE(fold(g, spatial, y, folded, error)) << error;
    ASSERT_EQ(folded.shape, x.shape);
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < cols.data.size(); ++i)
      lhs += cols.data[i] * y.data[i];
    for (size_t i = 0; i < x.data.size(); ++i)
      rhs += x.data[i] * folded.data[i];
    EXPECT_NEAR(lhs, rhs, 1e-9 * (1 + std::fabs(lhs)));

    // fold(unfold(ones)) counts the windows covering each position.
    Tensor ones(shape), counts;
    for (double &v : ones.data)
      v = 1;
    ASSERT_TRUE(unfold(g, ones, cols, error));
    ASSERT_TRUE(fold(g, spatial, cols, counts, error));
    int64_t volume = 1;
    for (int64_t s : spatial)
      volume *= s;
    for (int64_t flat = 0; flat < volume; ++flat) {
      std::vector<int64_t> pos = unravelIndex(flat, spatial);
      int64_t covering = 0;
      int64_t k = kernelVolume(g), l = cols.shape[2];
      for (int64_t w = 0; w < l; ++w)
        for (int64_t j = 0; j < k; ++j) {
          std::vector<int64_t> wi = unravelIndex(w, positions),
                               ji = kernelIndex(check, j);
          bool hit = true;
          for (int64_t d = 0; d < dims; ++d)
            hit &= wi[d] * check.stride[d] - check.padding[d] +
                       ji[d] * check.dilation[d] ==
                   pos[d];
          covering += hit;
        }
      ASSERT_EQ(counts.data[flat], covering);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, UnfoldByDims, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int64_t> &info) {
                           return std::to_string(info.param) + "D";
                         });

TEST(Fold, RejectsWrongShapes) {
  Tensor cols({1, 4, 3}), out;
  std::string error;
  // 3x3 output, kernel 2: 4 windows, not 3.
  EXPECT_FALSE(fold(window({2, 2}), {3, 3}, cols, out, error));
  EXPECT_NE(error.find("N x (C*4) x 4"), std::string::npos) << error;
  Tensor odd({1, 5, 4});
  EXPECT_FALSE(fold(window({2, 2}), {3, 3}, odd, out, error));
  Tensor x({1, 1, 2}), cols2;
  EXPECT_FALSE(unfold(window({5}), x, cols2, error));
  EXPECT_NE(error.find("empty"), std::string::npos) << error;
}

} // namespace
