//===- SortUniqueTest.cpp - Radix sort and unique vs the standard library -===//

#include "TestUtil.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

using namespace spconv_rt_test;

namespace {
/// Named key sets, from adversarial to LiDAR-like.
std::vector<std::pair<std::string, std::vector<int64_t>>> keySets() {
  std::vector<std::pair<std::string, std::vector<int64_t>>> sets;
  sets.push_back({"empty", {}});
  sets.push_back({"one", {42}});
  sets.push_back({"zeros", std::vector<int64_t>(50000, 0)});
  sets.push_back({"allEqual", std::vector<int64_t>(70000, 123456789)});
  std::vector<int64_t> seq(100000);
  std::iota(seq.begin(), seq.end(), int64_t(0));
  sets.push_back({"sorted", seq});
  std::reverse(seq.begin(), seq.end());
  sets.push_back({"reverse", seq});
  sets.push_back({"random62", randomKeys(100000, int64_t(1) << 62, 1)});
  sets.push_back({"randomFewDistinct", randomKeys(100000, 37, 2)});
  std::vector<int64_t> extremes = {INT64_MAX, 0, INT64_MAX - 1, 1, INT64_MAX};
  sets.push_back({"extremes", extremes});
  // Only high bits vary: the low-digit passes are identity passes.
  auto high = randomKeys(60000, 64, 3);
  for (auto &k : high)
    k <<= 48;
  sets.push_back({"highBitsOnly", high});
  auto lidar = makeLidarScene(120000, 4).keys;
  sets.push_back({"lidar", lidar});
  // Regular-conv style candidates: stride-2 downsampled LiDAR keys repeat.
  for (auto &k : lidar) {
    int64_t x = k % kGridX, y = (k / kGridX) % kGridY,
            z = (k / (kGridX * kGridY)) % kGridZ;
    k = lidarKey(0, z / 2, y / 2, x / 2);
  }
  sets.push_back({"lidarDownsampled", lidar});
  return sets;
}

void checkSortPairs(const std::string &name, std::vector<int64_t> keys) {
  std::vector<int32_t> values(keys.size());
  std::iota(values.begin(), values.end(), 0);
  std::vector<std::pair<int64_t, int32_t>> ref(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    ref[i] = {keys[i], values[i]};
  std::stable_sort(ref.begin(), ref.end(),
                   [](auto &a, auto &b) { return a.first < b.first; });
  std::vector<int64_t> keysOnly = keys;
  ASSERT_EQ(spconv_rt_sort_pairs(keys.data(), values.data(),
                                 int64_t(keys.size())),
            0)
      << name << ": " << lastError();
  ASSERT_EQ(spconv_rt_sort_keys(keysOnly.data(), int64_t(keysOnly.size())), 0)
      << name;
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(keys[i], ref[i].first) << name << " at " << i;
    ASSERT_EQ(values[i], ref[i].second) << name << " (stability) at " << i;
    ASSERT_EQ(keysOnly[i], ref[i].first) << name << " at " << i;
  }
}

void checkUnique(const std::string &name, const std::vector<int64_t> &keys) {
  size_t n = keys.size();
  std::vector<int64_t> ref = keys;
  std::sort(ref.begin(), ref.end());
  ref.erase(std::unique(ref.begin(), ref.end()), ref.end());
  std::unordered_map<int64_t, int32_t> first;
  for (size_t i = 0; i < n; ++i)
    first.emplace(keys[i], int32_t(i));

  std::vector<int64_t> uniqueKeys(n, -9);
  std::vector<int32_t> firstIndex(n, -9), inverse(n, -9);
  int64_t numUnique = -1;
  ASSERT_EQ(spconv_rt_unique(keys.data(), int64_t(n), uniqueKeys.data(),
                             firstIndex.data(), inverse.data(), &numUnique),
            0)
      << name << ": " << lastError();
  ASSERT_EQ(numUnique, int64_t(ref.size())) << name;
  for (size_t u = 0; u < ref.size(); ++u) {
    ASSERT_EQ(uniqueKeys[u], ref[u]) << name << " at " << u;
    ASSERT_EQ(firstIndex[u], first[ref[u]]) << name << " at " << u;
  }
  for (size_t i = 0; i < n; ++i) {
    ASSERT_GE(inverse[i], 0) << name;
    ASSERT_LT(inverse[i], numUnique) << name;
    ASSERT_EQ(uniqueKeys[inverse[i]], keys[i]) << name << " at " << i;
  }
  // Optional outputs may be omitted.
  std::vector<int64_t> uniqueOnly(n);
  int64_t count = -1;
  ASSERT_EQ(spconv_rt_unique(keys.data(), int64_t(n), uniqueOnly.data(),
                             nullptr, nullptr, &count),
            0);
  EXPECT_EQ(count, numUnique);
  EXPECT_TRUE(std::equal(ref.begin(), ref.end(), uniqueOnly.begin()));
}
} // namespace

TEST(Sort, MatchesStableSort) {
  for (auto &[name, keys] : keySets())
    checkSortPairs(name, keys);
}

TEST(Unique, MatchesSortUnique) {
  for (auto &[name, keys] : keySets())
    checkUnique(name, keys);
}

TEST(Sort, BadArguments) {
  std::vector<int64_t> keys = {3, 1, -2, 5};
  EXPECT_EQ(spconv_rt_sort_keys(keys.data(), 4), SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("index 2"), std::string::npos) << lastError();
  EXPECT_EQ(keys, (std::vector<int64_t>{3, 1, -2, 5})) << "input modified";
  EXPECT_EQ(spconv_rt_sort_keys(nullptr, 4), SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_sort_keys(nullptr, 0), 0);
  EXPECT_EQ(spconv_rt_sort_keys(keys.data(), -1),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
}

TEST(Unique, BadArguments) {
  std::vector<int64_t> keys = {3, 1, -2, 5}, out(4);
  int64_t count = 7;
  EXPECT_EQ(spconv_rt_unique(keys.data(), 4, out.data(), nullptr, nullptr,
                             &count),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("spconv_rt_unique"), std::string::npos);
  EXPECT_EQ(spconv_rt_unique(keys.data(), 4, out.data(), nullptr, nullptr,
                             nullptr),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_unique(keys.data(), 4, nullptr, nullptr, nullptr,
                             &count),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_unique(keys.data(), int64_t(INT32_MAX) + 1, out.data(),
                             nullptr, nullptr, &count),
            SPCONV_RT_ERR_OVERFLOW);
  EXPECT_EQ(spconv_rt_unique(nullptr, 0, nullptr, nullptr, nullptr, &count), 0);
  EXPECT_EQ(count, 0);
}

TEST(SortUnique, DeterministicAcrossThreadCounts) {
  auto keys = makeLidarScene(300000, 6).keys;
  for (auto &k : keys)
    k /= 3; // introduce duplicates
  std::vector<int64_t> refUnique;
  std::vector<int32_t> refInverse, refFirst;
  for (int threads : {1, 2, 5}) {
    ScopedThreads scoped(threads);
    std::vector<int64_t> u(keys.size());
    std::vector<int32_t> first(keys.size()), inv(keys.size());
    int64_t count;
    ASSERT_EQ(spconv_rt_unique(keys.data(), int64_t(keys.size()), u.data(),
                               first.data(), inv.data(), &count),
              0);
    u.resize(size_t(count));
    first.resize(size_t(count));
    if (refUnique.empty()) {
      refUnique = u;
      refFirst = first;
      refInverse = inv;
    } else {
      EXPECT_TRUE(u == refUnique) << threads << " threads";
      EXPECT_TRUE(first == refFirst) << threads << " threads";
      EXPECT_TRUE(inv == refInverse) << threads << " threads";
    }
  }
}

TEST(SortUnique, TenMillionKeys) {
  int64_t n = largeN();
  // LiDAR-like keys, downsampled by 2 so that about 1/4 are distinct.
  std::vector<int64_t> keys = makeLidarScene(n, 12).keys;
  for (auto &k : keys) {
    int64_t x = k % kGridX, y = (k / kGridX) % kGridY,
            z = (k / (kGridX * kGridY)) % kGridZ,
            b = k / (kGridX * kGridY * kGridZ);
    k = lidarKey(b, z / 2, y / 2, x / 2);
  }
  std::vector<int64_t> ref = keys;
  std::sort(ref.begin(), ref.end());
  std::vector<int64_t> sorted = keys;
  ASSERT_EQ(spconv_rt_sort_keys(sorted.data(), n), 0) << lastError();
  EXPECT_TRUE(sorted == ref);
  ref.erase(std::unique(ref.begin(), ref.end()), ref.end());
  std::vector<int64_t> u(static_cast<size_t>(n));
  std::vector<int32_t> first(static_cast<size_t>(n)), inv(static_cast<size_t>(n));
  int64_t count;
  ASSERT_EQ(spconv_rt_unique(keys.data(), n, u.data(), first.data(),
                             inv.data(), &count),
            0)
      << lastError();
  ASSERT_EQ(count, int64_t(ref.size()));
  EXPECT_TRUE(std::equal(ref.begin(), ref.end(), u.begin()));
  // First occurrences: keys[first[u]] == u, and no earlier index has key u.
  std::vector<int32_t> seen(size_t(count), -1);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    int32_t j = inv[size_t(i)];
    bad += u[size_t(j)] != keys[size_t(i)];
    if (seen[size_t(j)] < 0) {
      seen[size_t(j)] = int32_t(i);
      bad += first[size_t(j)] != i;
    }
  }
  EXPECT_EQ(bad, 0);
}
