//===- CoordsTest.cpp - Linear keys of coordinates ------------------------===//

#include "TestUtil.h"

using namespace spconv_rt_test;

namespace {
const int64_t kitti[3] = {kGridZ, kGridY, kGridX};
} // namespace

TEST(Coords, LinearizeMatchesFormulaAndRoundTrips) {
  const int64_t n = 100000, batch = 3;
  std::vector<int32_t> coords(static_cast<size_t>(n) * 4);
  uint64_t state = 1;
  for (int64_t i = 0; i < n; ++i) {
    coords[i * 4 + 0] = int32_t(splitmix(state) % batch);
    for (int d = 0; d < 3; ++d)
      coords[i * 4 + 1 + d] = int32_t(splitmix(state) % uint64_t(kitti[d]));
  }
  coords[0] = 2; // the largest key of the grid
  coords[1] = 40;
  coords[2] = 1599;
  coords[3] = 1407;
  std::vector<int64_t> keys(static_cast<size_t>(n));
  ASSERT_EQ(spconv_rt_linearize_coords(coords.data(), n, 3, kitti, batch,
                                       keys.data()),
            0)
      << lastError();
  EXPECT_EQ(keys[0], batch * kGridZ * kGridY * kGridX - 1);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(keys[i], lidarKey(coords[i * 4], coords[i * 4 + 1],
                                coords[i * 4 + 2], coords[i * 4 + 3]));
  std::vector<int32_t> back(coords.size(), -1);
  ASSERT_EQ(spconv_rt_delinearize_keys(keys.data(), n, 3, kitti, batch,
                                       back.data()),
            0)
      << lastError();
  EXPECT_TRUE(back == coords);
}

TEST(Coords, OtherDimensions) {
  // D = 1 and D = 4, checked by hand.
  int64_t shape1[1] = {10};
  std::vector<int32_t> c1 = {0, 3, 1, 9};
  std::vector<int64_t> k1(2);
  ASSERT_EQ(spconv_rt_linearize_coords(c1.data(), 2, 1, shape1, 2, k1.data()),
            0);
  EXPECT_EQ(k1, (std::vector<int64_t>{3, 19}));
  int64_t shape4[4] = {2, 3, 4, 5};
  std::vector<int32_t> c4 = {1, 1, 2, 3, 4};
  int64_t k4;
  ASSERT_EQ(spconv_rt_linearize_coords(c4.data(), 1, 4, shape4, 2, &k4), 0);
  EXPECT_EQ(k4, (((1 * 2 + 1) * 3 + 2) * 4 + 3) * 5 + 4);
  // A key past int32 (spconv v1's limit) stays exact.
  int64_t big[3] = {100000, 100000, 100000};
  std::vector<int32_t> cb = {1, 99999, 99999, 99999};
  int64_t kb;
  ASSERT_EQ(spconv_rt_linearize_coords(cb.data(), 1, 3, big, 2, &kb), 0);
  EXPECT_EQ(kb, 2 * int64_t(100000) * 100000 * 100000 - 1);
}

TEST(Coords, BadCoordinatesNameTheRow) {
  std::vector<int32_t> coords = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
  std::vector<int64_t> keys(3);
  auto run = [&]() {
    return spconv_rt_linearize_coords(coords.data(), 3, 3, kitti, 2,
                                      keys.data());
  };
  ASSERT_EQ(run(), 0);
  coords[9] = -1; // row 2, spatial coordinate 0
  EXPECT_EQ(run(), SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("row 2"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("= -1"), std::string::npos) << lastError();
  coords[9] = 1;
  coords[7] = 1408; // row 1, x == S2
  EXPECT_EQ(run(), SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("row 1"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("[0, 1408)"), std::string::npos) << lastError();
  coords[7] = 3;
  coords[4] = 2; // row 1, batch index == batch size
  EXPECT_EQ(run(), SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("batch index 2"), std::string::npos)
      << lastError();
  coords[4] = 0;
  coords[0] = -5;
  EXPECT_EQ(run(), SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("row 0"), std::string::npos) << lastError();

  // The first bad row is reported, also across threads.
  std::vector<int32_t> many(size_t(400000) * 4, 0);
  many[size_t(300000) * 4 + 2] = 5000;
  many[size_t(350000) * 4 + 2] = -7;
  std::vector<int64_t> manyKeys(400000);
  EXPECT_EQ(spconv_rt_linearize_coords(many.data(), 400000, 3, kitti, 1,
                                       manyKeys.data()),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("row 300000"), std::string::npos) << lastError();
}

TEST(Coords, BadGrids) {
  std::vector<int32_t> coords = {0, 0, 0, 0};
  int64_t key;
  // B * prod(S) overflows int64 even though each factor is fine.
  int64_t huge[3] = {int64_t(1) << 21, int64_t(1) << 21, int64_t(1) << 21};
  EXPECT_EQ(spconv_rt_linearize_coords(coords.data(), 1, 3, huge, 1, &key),
            SPCONV_RT_ERR_OVERFLOW);
  EXPECT_NE(lastError().find("overflows int64"), std::string::npos);
  EXPECT_EQ(spconv_rt_linearize_coords(coords.data(), 1, 3, kitti,
                                       int64_t(1) << 40, &key),
            SPCONV_RT_ERR_OVERFLOW);
  // Exactly at the limit is fine: 2^62 * 1 * 1 * 1 < 2^63.
  int64_t ones[3] = {1, 1, 1};
  EXPECT_EQ(spconv_rt_linearize_coords(coords.data(), 1, 3, ones,
                                       int64_t(1) << 62, &key),
            0);
  int64_t zero[3] = {41, 0, 5};
  EXPECT_EQ(spconv_rt_linearize_coords(coords.data(), 1, 3, zero, 1, &key),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_linearize_coords(coords.data(), 1, 0, kitti, 1, &key),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_linearize_coords(coords.data(), 1, 9, kitti, 1, &key),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_linearize_coords(coords.data(), 1, 3, kitti, 0, &key),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_linearize_coords(coords.data(), 1, 3, nullptr, 1, &key),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_linearize_coords(nullptr, 1, 3, kitti, 1, &key),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_linearize_coords(coords.data(), 1, 3, kitti, 1, nullptr),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_linearize_coords(coords.data(), -1, 3, kitti, 1, &key),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_linearize_coords(nullptr, 0, 3, kitti, 1, nullptr), 0);
}

TEST(Coords, DelinearizeRejectsKeysOutsideTheGrid) {
  int64_t volume = 2 * kGridZ * kGridY * kGridX;
  std::vector<int64_t> keys = {0, volume - 1, volume, -1};
  std::vector<int32_t> coords(16);
  EXPECT_EQ(spconv_rt_delinearize_keys(keys.data(), 2, 3, kitti, 2,
                                       coords.data()),
            0);
  EXPECT_EQ(coords[4], 1);
  EXPECT_EQ(coords[7], 1407);
  EXPECT_EQ(spconv_rt_delinearize_keys(keys.data(), 4, 3, kitti, 2,
                                       coords.data()),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("index 2"), std::string::npos) << lastError();
  std::vector<int64_t> negative = {-1};
  EXPECT_EQ(spconv_rt_delinearize_keys(negative.data(), 1, 3, kitti, 2,
                                       coords.data()),
            SPCONV_RT_ERR_OUT_OF_RANGE);
}
