//===- PoolTest.cpp - Sparse pooling against a direct computation ---------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>

using namespace spconv::ref;
using namespace spconv::ref::test;

namespace {

/// Per output site: gather the active x = o*s - p + j*d and reduce them.
void checkPool(const Case &c, PoolMode mode) {
  Geometry g = c.geometry;
  Coords outCoords;
  Tensor out;
  std::string error;
  ASSERT_TRUE(sparsePool(mode, g, c.grid, c.coords, c.features, outCoords,
                         out, error))
      << error << "\n"
      << c.describe();
  Coords convCoords;
  Tensor convOut;
  ASSERT_TRUE(sparseConv(g, c.grid, c.coords, c.features, c.weight, nullptr,
                         convCoords, convOut, error));
  ASSERT_EQ(outCoords.data, convCoords.data); // The regular conv's outputs.

  auto active = siteRows(c.coords);
  int64_t channels = c.features.shape[1];
  for (int64_t r = 0; r < outCoords.rows(); ++r) {
    std::vector<int32_t> o = outCoords.site(r);
    std::vector<int64_t> contributors;
    for (int64_t j = 0; j < kernelVolume(g); ++j) {
      std::vector<int64_t> jj = kernelIndex(g, j);
      std::vector<int32_t> x = {o[0]};
      for (int64_t d = 0; d < g.rank(); ++d)
        x.push_back(static_cast<int32_t>(o[d + 1] * g.stride[d] -
                                         g.padding[d] + jj[d] * g.dilation[d]));
      auto it = active.find(x);
      if (it != active.end())
        contributors.push_back(it->second);
    }
    ASSERT_FALSE(contributors.empty());
    for (int64_t ch = 0; ch < channels; ++ch) {
      double expected = mode == PoolMode::Max ? -INFINITY : 0;
      for (int64_t x : contributors)
        expected = mode == PoolMode::Max
                       ? std::fmax(expected, c.features.at(x, ch))
                       : expected + c.features.at(x, ch);
      if (mode == PoolMode::Avg)
        expected /= static_cast<double>(contributors.size());
      ASSERT_NEAR(out.at(r, ch), expected, 1e-12) << c.describe();
    }
  }
}

class PoolByDims : public ::testing::TestWithParam<int64_t> {};

TEST_P(PoolByDims, MaxAndAvgMatchDirectComputation) {
  std::mt19937 rng(700 + GetParam());
  for (int i = 0; i < 40; ++i) {
    Case c = randomCase(rng, ConvKind::Regular, GetParam());
    checkPool(c, PoolMode::Max);
    checkPool(c, PoolMode::Avg);
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, PoolByDims, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int64_t> &info) {
                           return std::to_string(info.param) + "D";
                         });

// 1-D, kernel 2, stride 2 on grid 4: sites 0 (1), 1 (5), 3 (2).
// Output 0 pools sites {0, 1}: max 5, avg 3; output 1 pools {3}: 2, 2.
TEST(Pool, HandComputed1D) {
  Coords coords(1);
  coords.append({0, 3});
  coords.append({0, 0});
  coords.append({0, 1});
  Tensor features({3, 1});
  features.data = {2, 1, 5};
  Geometry g;
  g.kernel = {2};
  g.stride = {2};
  Coords outCoords;
  Tensor out;
  std::string error;
  ASSERT_TRUE(sparsePool(PoolMode::Max, g, {4}, coords, features, outCoords,
                         out, error))
      << error;
  EXPECT_EQ(outCoords.data, (std::vector<int32_t>{0, 0, 0, 1}));
  EXPECT_EQ(out.data, (std::vector<double>{5, 2}));
  ASSERT_TRUE(sparsePool(PoolMode::Avg, g, {4}, coords, features, outCoords,
                         out, error));
  EXPECT_EQ(out.data, (std::vector<double>{3, 2}));
}

TEST(Pool, MaxPropagatesNaN) {
  Coords coords(1);
  coords.append({0, 0});
  coords.append({0, 1});
  Tensor features({2, 2});
  features.data = {NAN, 1, 4, INFINITY};
  Geometry g;
  g.kernel = {2};
  Coords outCoords;
  Tensor out;
  std::string error;
  ASSERT_TRUE(sparsePool(PoolMode::Max, g, {2}, coords, features, outCoords,
                         out, error));
  ASSERT_EQ(out.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(std::isnan(out.at(0, 0)));
  EXPECT_EQ(out.at(0, 1), INFINITY);
}

TEST(Pool, RejectsNonRegularWindow) {
  Geometry g;
  g.kind = ConvKind::Subm;
  g.kernel = {3};
  Coords coords(1), outCoords;
  Tensor features({0, 1}), out;
  std::string error;
  EXPECT_FALSE(sparsePool(PoolMode::Max, g, {4}, coords, features, outCoords,
                          out, error));
  EXPECT_NE(error.find("regular"), std::string::npos) << error;
}

} // namespace
