//===- LayoutTest.cpp - Pins the hash table layout contract ---------------===//
//
// Generated kernels probe tables inline, so these constants are an ABI: the
// expected values were computed independently (a Python transcription of the
// documented hash and probing rules), not by running this code.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace spconv_rt_test;

extern "C" {
uint64_t layoutTestHashFromC(int64_t key);
int64_t layoutTestCapacityFromC(int64_t n);
int32_t layoutTestLookupFromC(const int64_t *keys, const int32_t *values,
                              int64_t capacity, int64_t key);
}

// The library and the header that code was compiled against agree.
TEST(Layout, ABIVersion) {
  EXPECT_EQ(spconv_rt_abi_version(), SPCONV_RT_ABI_VERSION);
}

TEST(Layout, EmptyMarkersAndLimits) {
  EXPECT_EQ(SPCONV_HT_EMPTY_KEY, int64_t(-1));
  EXPECT_EQ(SPCONV_HT_EMPTY_VALUE, int32_t(-1));
  EXPECT_EQ(SPCONV_HT_MIN_CAPACITY, 16);
  EXPECT_EQ(SPCONV_HT_MAX_ENTRIES, int64_t(INT32_MAX));
}

TEST(Layout, HashOfKnownKeys) {
  struct {
    int64_t key;
    uint64_t hash;
  } cases[] = {
      {0, 0x0ULL},
      {1, 0x5692161d100b05e5ULL},
      {2, 0xdbd238973a2b148aULL},
      {42, 0xa759ea27d4727622ULL},
      {123456789, 0xf21c87d4233ffd60ULL},
      {(int64_t(1) << 62) + 7, 0x618f0356df1b2f1eULL},
      // Batch 1, (z, y, x) = (20, 800, 700) in the KITTI grid.
      {lidarKey(1, 20, 800, 700), 0x14ba8bab929cbee5ULL},
  };
  for (auto c : cases) {
    EXPECT_EQ(spconv_ht_hash(c.key), c.hash) << c.key;
    EXPECT_EQ(layoutTestHashFromC(c.key), c.hash) << c.key;
  }
  EXPECT_EQ(lidarKey(1, 20, 800, 700), 138547900);
  EXPECT_EQ(spconv_ht_home_slot(42, 1024), 546);
  EXPECT_EQ(spconv_ht_home_slot(lidarKey(1, 20, 800, 700), 1024), 741);
  EXPECT_EQ(spconv_ht_next_slot(15, 16), 0);
  EXPECT_EQ(spconv_ht_next_slot(3, 16), 4);
}

TEST(Layout, CapacityRule) {
  struct {
    int64_t n, capacity;
  } cases[] = {{0, 16},      {1, 16},          {8, 16},
               {9, 32},      {1000, 2048},     {1024, 2048},
               {1025, 4096}, {INT32_MAX, int64_t(1) << 32},
               {-1, -1},     {int64_t(INT32_MAX) + 1, -1}};
  for (auto c : cases) {
    EXPECT_EQ(spconv_ht_capacity_for(c.n), c.capacity) << c.n;
    EXPECT_EQ(layoutTestCapacityFromC(c.n), c.capacity) << c.n;
    int64_t capacity = 0;
    int status = spconv_rt_hash_capacity(c.n, &capacity);
    if (c.capacity < 0) {
      EXPECT_NE(status, 0);
    } else {
      EXPECT_EQ(status, 0);
      EXPECT_EQ(capacity, c.capacity);
    }
  }
}

// Slot positions of a small table, including two collisions.
TEST(Layout, SlotPositions) {
  std::vector<int64_t> keys = {3, 17, 42, 1000, 7, 8, 9, 123456};
  // Home slots at capacity 16: 0, 14, 2, 7, 4, 8, 7, 8.
  const int64_t expected[16] = {3, -1, 42,     -1, 7,  -1, -1, 1000,
                                8, 9,  123456, -1, -1, -1, 17, -1};
  std::vector<int64_t> tk(16);
  std::vector<int32_t> tv(16);
  ASSERT_EQ(spconv_rt_hash_build(keys.data(), int64_t(keys.size()), tk.data(),
                                 tv.data(), 16, nullptr),
            0);
  for (int s = 0; s < 16; ++s) {
    EXPECT_EQ(tk[s], expected[s]) << "slot " << s;
    if (expected[s] < 0) {
      EXPECT_EQ(tv[s], -1) << "slot " << s;
    } else {
      size_t i = std::find(keys.begin(), keys.end(), expected[s]) - keys.begin();
      EXPECT_EQ(tv[s], int32_t(i)) << "slot " << s;
    }
  }
  // The inline probe (C and C++) finds every key and rejects others.
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(spconv_ht_lookup(tk.data(), tv.data(), 16, keys[i]), int32_t(i));
    EXPECT_EQ(layoutTestLookupFromC(tk.data(), tv.data(), 16, keys[i]),
              int32_t(i));
  }
  EXPECT_EQ(spconv_ht_find_slot(tk.data(), 16, 9), 9);
  EXPECT_EQ(spconv_ht_find_slot(tk.data(), 16, 123456), 10);
  EXPECT_EQ(spconv_ht_lookup(tk.data(), tv.data(), 16, 5), -1);
  EXPECT_EQ(spconv_ht_lookup(tk.data(), tv.data(), 16, -1), -1);
  EXPECT_EQ(spconv_ht_lookup(tk.data(), tv.data(), 16, INT64_MIN), -1);
}

// A table cleared with 0xFF bytes is an empty table.
TEST(Layout, ByteFillClears) {
  int64_t k;
  int32_t v;
  std::memset(&k, 0xFF, sizeof(k));
  std::memset(&v, 0xFF, sizeof(v));
  EXPECT_EQ(k, SPCONV_HT_EMPTY_KEY);
  EXPECT_EQ(v, SPCONV_HT_EMPTY_VALUE);
}
