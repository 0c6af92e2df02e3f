//===- HashTableTest.cpp - Coordinate hash table vs std::unordered_map ----===//

#include "TestUtil.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

using namespace spconv_rt_test;

namespace {
/// Builds the table, checks every key, the 27-neighbour queries (hits and
/// misses) and some far-away keys against std::unordered_map.
void checkAgainstUnorderedMap(const std::vector<int64_t> &keys,
                              const std::vector<int64_t> &extraQueries) {
  Table table;
  ASSERT_EQ(table.build(keys), 0) << lastError();
  std::unordered_map<int64_t, int32_t> ref;
  for (size_t i = 0; i < keys.size(); ++i)
    ref.emplace(keys[i], int32_t(i));
  ASSERT_EQ(ref.size(), keys.size()) << "test keys must be unique";

  std::vector<int64_t> queries = keys;
  queries.insert(queries.end(), extraQueries.begin(), extraQueries.end());
  std::vector<int32_t> out = table.lookup(queries);
  int64_t hits = 0, mismatches = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    auto it = ref.find(queries[i]);
    int32_t want = it == ref.end() ? -1 : it->second;
    hits += want >= 0;
    if (out[i] != want && ++mismatches < 10)
      ADD_FAILURE() << "query " << queries[i] << ": got " << out[i]
                    << ", want " << want;
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GE(hits, int64_t(keys.size()));
  // Table invariants: exactly n occupied slots, empties hold -1 values.
  int64_t occupied = 0;
  for (int64_t s = 0; s < table.capacity; ++s) {
    if (table.keys[s] == SPCONV_HT_EMPTY_KEY)
      EXPECT_EQ(table.values[s], -1);
    else
      ++occupied;
  }
  EXPECT_EQ(occupied, int64_t(keys.size()));
}
} // namespace

TEST(HashTable, RandomKeys) {
  auto keys = randomKeys(200000, int64_t(1) << 40, 7);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<int64_t> misses = randomKeys(100000, int64_t(1) << 40, 8);
  checkAgainstUnorderedMap(keys, misses);
}

TEST(HashTable, LidarKeysWithSubm27Queries) {
  LidarScene scene = makeLidarScene(150000, 3);
  checkAgainstUnorderedMap(scene.keys, subm27Queries(scene.keys));
}

TEST(HashTable, SortedAndReverseSortedKeys) {
  std::vector<int64_t> keys(100000);
  std::iota(keys.begin(), keys.end(), int64_t(0));
  checkAgainstUnorderedMap(keys, {-5, 100000, 100001, INT64_MAX});
  std::reverse(keys.begin(), keys.end());
  checkAgainstUnorderedMap(keys, {100000, int64_t(1) << 50});
  // Strided keys: multiples of a large power of two.
  for (auto &k : keys)
    k <<= 20;
  checkAgainstUnorderedMap(keys, {1, 3 << 20});
}

TEST(HashTable, EmptyAndSingleKey) {
  Table table;
  ASSERT_EQ(table.build({}), 0) << lastError();
  EXPECT_EQ(table.capacity, 16);
  for (int64_t s = 0; s < 16; ++s) {
    EXPECT_EQ(table.keys[s], -1);
    EXPECT_EQ(table.values[s], -1);
  }
  EXPECT_EQ(table.lookup({0, 1, 5}), (std::vector<int32_t>{-1, -1, -1}));
  // Zero queries: no pointer is touched.
  EXPECT_EQ(spconv_rt_hash_lookup(table.keys.data(), table.values.data(), 16,
                                  nullptr, 0, nullptr),
            0);
  checkAgainstUnorderedMap({0}, {1, 2});
  checkAgainstUnorderedMap({INT64_MAX}, {INT64_MAX - 1});
}

// Keys whose home slots pile up at the end of a build chunk and at the end
// of the table, so probe runs cross chunk boundaries and wrap around.
TEST(HashTable, CollidingHomeSlotsAcrossChunks) {
  const int64_t capacity = int64_t(1) << 16; // 8 chunks of 8192 slots
  std::vector<int64_t> keys;
  int64_t atChunkEnd = 0, atTableEnd = 0;
  for (int64_t k = 0; keys.size() < 20000; ++k) {
    int64_t home = spconv_ht_home_slot(k, capacity);
    bool nearChunkEnd = (home & 8191) >= 8191 - 2 && atChunkEnd < 3000;
    bool nearTableEnd = home >= capacity - 3 && atTableEnd < 3000;
    if (nearChunkEnd || nearTableEnd) {
      atChunkEnd += nearChunkEnd;
      atTableEnd += nearTableEnd;
      keys.push_back(k);
    } else if (k % 7 == 0) {
      keys.push_back(k);
    }
  }
  std::vector<int64_t> tk(capacity);
  std::vector<int32_t> tv(capacity);
  ASSERT_EQ(spconv_rt_hash_build(keys.data(), int64_t(keys.size()), tk.data(),
                                 tv.data(), capacity, nullptr),
            0)
      << lastError();
  std::vector<int32_t> out(keys.size());
  ASSERT_EQ(spconv_rt_hash_lookup(tk.data(), tv.data(), capacity, keys.data(),
                                  int64_t(keys.size()), out.data()),
            0);
  for (size_t i = 0; i < keys.size(); ++i)
    ASSERT_EQ(out[i], int32_t(i)) << "key " << keys[i];
  // The slot after the table's end run wrapped: slot 0 must be occupied.
  EXPECT_NE(tk[0], -1);
  std::unordered_map<int64_t, int32_t> present;
  for (int64_t k : keys)
    present.emplace(k, 0);
  for (int64_t k = 1; k < 7 * 20000; k += 7) {
    if (present.count(k))
      continue;
    EXPECT_EQ(spconv_ht_lookup(tk.data(), tv.data(), capacity, k), -1);
  }
}

TEST(HashTable, DuplicatesReportSmallestRepeatIndex) {
  int64_t dup = 0;
  std::vector<int64_t> keys = {5, 7, 9, 7, 5};
  Table table;
  EXPECT_EQ(table.build(keys, &dup), SPCONV_RT_ERR_DUPLICATE_KEY);
  EXPECT_EQ(dup, 3);
  EXPECT_NE(lastError().find("index 3"), std::string::npos) << lastError();

  std::vector<int64_t> same(1000, 42);
  EXPECT_EQ(table.build(same, &dup), SPCONV_RT_ERR_DUPLICATE_KEY);
  EXPECT_EQ(dup, 1);

  // A repeat far apart in a large, multi-threaded build.
  auto big = makeLidarScene(300000, 5).keys;
  big[250000] = big[1234];
  big[299999] = big[10];
  EXPECT_EQ(table.build(big, &dup), SPCONV_RT_ERR_DUPLICATE_KEY);
  EXPECT_EQ(dup, 250000);
  // Null duplicateIndex is allowed.
  EXPECT_EQ(table.build(big, nullptr), SPCONV_RT_ERR_DUPLICATE_KEY);
}

TEST(HashTable, BadArguments) {
  std::vector<int64_t> keys = {1, 2, 3};
  std::vector<int64_t> tk(16);
  std::vector<int32_t> tv(16);
  int64_t dup = 0;
  // Negative key, named by index.
  std::vector<int64_t> negative = {1, 2, -3, 4};
  EXPECT_EQ(spconv_rt_hash_build(negative.data(), 4, tk.data(), tv.data(), 16,
                                 &dup),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("index 2"), std::string::npos) << lastError();
  // Capacity: not a power of two, below the minimum, too small for n.
  EXPECT_EQ(spconv_rt_hash_build(keys.data(), 3, tk.data(), tv.data(), 12,
                                 &dup),
            SPCONV_RT_ERR_CAPACITY);
  EXPECT_EQ(spconv_rt_hash_build(keys.data(), 3, tk.data(), tv.data(), 8, &dup),
            SPCONV_RT_ERR_CAPACITY);
  std::vector<int64_t> many(9, 0);
  std::iota(many.begin(), many.end(), 0);
  EXPECT_EQ(spconv_rt_hash_build(many.data(), 9, tk.data(), tv.data(), 16,
                                 &dup),
            SPCONV_RT_ERR_CAPACITY);
  EXPECT_NE(lastError().find("need >= 32"), std::string::npos) << lastError();
  // More keys than int32 values can index (checked before any access).
  EXPECT_EQ(spconv_rt_hash_build(keys.data(), int64_t(INT32_MAX) + 1,
                                 tk.data(), tv.data(), 16, &dup),
            SPCONV_RT_ERR_CAPACITY);
  EXPECT_EQ(spconv_rt_hash_build(keys.data(), -1, tk.data(), tv.data(), 16,
                                 &dup),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  // Capacity whose byte size overflows.
  EXPECT_NE(spconv_rt_hash_build(keys.data(), 3, tk.data(), tv.data(),
                                 int64_t(1) << 62, &dup),
            0);
  // Null pointers.
  EXPECT_EQ(spconv_rt_hash_build(nullptr, 3, tk.data(), tv.data(), 16, &dup),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_hash_build(keys.data(), 3, nullptr, tv.data(), 16, &dup),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_hash_build(keys.data(), 3, tk.data(), nullptr, 16, &dup),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_hash_capacity(5, nullptr), SPCONV_RT_ERR_INVALID_ARGUMENT);
  std::vector<int32_t> out(3);
  EXPECT_EQ(spconv_rt_hash_lookup(tk.data(), tv.data(), 16, nullptr, 3,
                                  out.data()),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_hash_lookup(tk.data(), tv.data(), 10, keys.data(), 3,
                                  out.data()),
            SPCONV_RT_ERR_CAPACITY);
  EXPECT_EQ(spconv_rt_hash_lookup(tk.data(), tv.data(), 16, keys.data(), -2,
                                  out.data()),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  // The status names are stable.
  EXPECT_STREQ(spconv_rt_status_name(SPCONV_RT_ERR_DUPLICATE_KEY),
               "SPCONV_RT_ERR_DUPLICATE_KEY");
  spconv_rt_clear_error();
  EXPECT_EQ(lastError(), "");
}

// A corrupt table without empty slots must not hang lookups.
TEST(HashTable, FullTableLookupTerminates) {
  std::vector<int64_t> tk(16, 0);
  std::vector<int32_t> tv(16, 0);
  std::vector<int64_t> queries = {5, 0};
  std::vector<int32_t> out(2);
  ASSERT_EQ(spconv_rt_hash_lookup(tk.data(), tv.data(), 16, queries.data(), 2,
                                  out.data()),
            0);
  EXPECT_EQ(out[0], -1);
  EXPECT_EQ(out[1], 0);
}

TEST(HashTable, DeterministicAcrossThreadCounts) {
  auto keys = makeLidarScene(400000, 9).keys;
  std::vector<std::vector<int64_t>> tables;
  for (int threads : {1, 2, 3, 8}) {
    ScopedThreads scoped(threads);
    Table table;
    ASSERT_EQ(table.build(keys), 0) << lastError();
    tables.push_back(table.keys);
    if (tables.size() > 1) {
      EXPECT_TRUE(tables.back() == tables.front())
          << "table differs with " << threads << " threads";
    }
  }
}

// 10 million LiDAR-like keys. Reference: a hit must point at an equal key,
// a miss must be absent from the sorted key array.
TEST(HashTable, TenMillionKeys) {
  int64_t n = largeN();
  LidarScene scene = makeLidarScene(n, 11);
  const auto &keys = scene.keys;
  Table table;
  ASSERT_EQ(table.build(keys), 0) << lastError();
  std::vector<int64_t> queries(keys.size());
  uint64_t state = 4;
  for (size_t i = 0; i < queries.size(); ++i) // half hits, half near misses
    queries[i] = (i & 1) ? keys[i] : keys[i] + int64_t(splitmix(state) % 3);
  std::vector<int32_t> out = table.lookup(queries);
  std::vector<int64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  int64_t mismatches = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    if (i & 1)
      mismatches += out[i] != int32_t(i);
    else if (out[i] >= 0)
      mismatches += out[i] >= n || keys[size_t(out[i])] != queries[i];
    else
      mismatches +=
          std::binary_search(sorted.begin(), sorted.end(), queries[i]);
  }
  EXPECT_EQ(mismatches, 0);
}
