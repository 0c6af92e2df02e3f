//===- SegmentMaxTest.cpp - Per-segment max and argmax --------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>

using namespace spconv::ref;
using namespace spconv::ref::test;

namespace {

// data [3, NaN, 5, 5, -1], index [0, 1, 1, 0, 0], M = 3:
// segment 0 = {p0: 3, p3: 5, p4: -1} -> 5 at 3; segment 1 = {p1: NaN,
// p2: 5} -> NaN at 1; segment 2 is empty -> 0 at -1.
TEST(SegmentMax, HandComputed) {
  Tensor data({1, 1, 5});
  data.data = {3, NAN, 5, 5, -1};
  Tensor values;
  std::vector<int32_t> positions;
  std::string error;
  ASSERT_TRUE(segmentMax(data, {0, 1, 1, 0, 0}, 3, values, positions, error))
      << error;
  EXPECT_EQ(values.shape, (std::vector<int64_t>{1, 1, 3}));
  EXPECT_EQ(values.data[0], 5);
  EXPECT_TRUE(std::isnan(values.data[1]));
  EXPECT_EQ(values.data[2], 0);
  EXPECT_EQ(positions, (std::vector<int32_t>{3, 1, -1}));
}

TEST(SegmentMax, TiesTakeTheSmallestPosition) {
  Tensor data({1, 2, 4});
  data.data = {2, 2, 7, 7, -0.0, 0.0, -INFINITY, NAN};
  Tensor values;
  std::vector<int32_t> positions;
  std::string error;
  ASSERT_TRUE(segmentMax(data, {1, 1, 0, 0}, 2, values, positions, error));
  EXPECT_EQ(positions, (std::vector<int32_t>{2, 0, 3, 0}));
  EXPECT_EQ(values.data[0], 7);
  EXPECT_EQ(values.data[1], 2);
  EXPECT_TRUE(std::isnan(values.data[2])); // NaN beats -inf.
  EXPECT_TRUE(std::signbit(values.data[3])); // -0 == 0: the first (-0) stays.
}

TEST(SegmentMax, MatchesPerSegmentScan) {
  std::mt19937 rng(1000);
  const double choices[] = {-1, 0, 1, 2, NAN, -INFINITY};
  for (int iter = 0; iter < 100; ++iter) {
    int64_t b = pick(rng, 1, 3), c = pick(rng, 1, 4), p = pick(rng, 0, 20),
            m = pick(rng, 1, 8);
    Tensor data({b, c, p});
    for (double &v : data.data)
      v = choices[pick(rng, 0, 5)];
    std::vector<int64_t> index(b * p);
    for (int64_t &i : index)
      i = pick(rng, 0, m - 1);
    Tensor values;
    std::vector<int32_t> positions;
    std::string error;
    ASSERT_TRUE(segmentMax(data, index, m, values, positions, error)) << error;
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t mi = 0; mi < m; ++mi) {
          // NaN first, then the largest number; smallest p among equals.
          int64_t best = -1;
          for (int64_t pi = 0; pi < p; ++pi) {
            if (index[bi * p + pi] != mi)
              continue;
            double v = data.at(bi, ci, pi);
            if (best < 0)
              best = pi;
            else if (!std::isnan(data.at(bi, ci, best)) &&
                     (std::isnan(v) || v > data.at(bi, ci, best)))
              best = pi;
          }
          int64_t out = (bi * c + ci) * m + mi;
          ASSERT_EQ(positions[out], best);
          double expected = best < 0 ? 0.0 : data.at(bi, ci, best);
          if (std::isnan(expected))
            ASSERT_TRUE(std::isnan(values.data[out]));
          else
            ASSERT_EQ(values.data[out], expected);
        }
  }
}

TEST(SegmentMax, RejectsBadIndex) {
  Tensor data({1, 1, 3}), values;
  std::vector<int32_t> positions;
  std::string error;
  EXPECT_FALSE(segmentMax(data, {0, 4, 1}, 4, values, positions, error));
  EXPECT_EQ(error, "segment_max index[0, 1] = 4 is outside [0, 4)");
  EXPECT_FALSE(segmentMax(data, {0, -1, 1}, 4, values, positions, error));
  EXPECT_FALSE(segmentMax(data, {0, 1}, 4, values, positions, error));
  EXPECT_NE(error.find("B x P"), std::string::npos);
}

} // namespace
