//===- TestUtil.h - Shared helpers of the runtime tests ---------*- C++ -*-===//

#ifndef SPCONV_RT_TEST_TESTUTIL_H
#define SPCONV_RT_TEST_TESTUTIL_H

#include "spconv-rt/SpConvRuntime.h"

#include "LidarKeys.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace spconv_rt_test {

#ifndef SPCONV_RT_TEST_DEFAULT_LARGE_N
#define SPCONV_RT_TEST_DEFAULT_LARGE_N 10000000
#endif

/// Size of the "10 million keys" tests; $SPCONV_RT_TEST_LARGE_N overrides it
/// (the sanitizer build defaults to a smaller value).
inline int64_t largeN() {
  if (const char *env = std::getenv("SPCONV_RT_TEST_LARGE_N"))
    if (long long v = std::atoll(env); v > 0)
      return v;
  return SPCONV_RT_TEST_DEFAULT_LARGE_N;
}

inline std::string lastError() { return spconv_rt_last_error(); }

/// Runs with a given thread count and restores the default afterwards.
struct ScopedThreads {
  explicit ScopedThreads(int n) { spconv_rt_set_num_threads(n); }
  ~ScopedThreads() { spconv_rt_set_num_threads(0); }
};

inline std::vector<int64_t> randomKeys(int64_t n, int64_t maxKey,
                                       uint64_t seed) {
  std::vector<int64_t> keys(static_cast<size_t>(n));
  for (auto &k : keys)
    k = int64_t(splitmix(seed) % uint64_t(maxKey));
  return keys;
}

/// Table built with the runtime; fails the test on error.
struct Table {
  std::vector<int64_t> keys;
  std::vector<int32_t> values;
  int64_t capacity = 0;
  int build(const std::vector<int64_t> &input, int64_t *dup = nullptr) {
    EXPECT_EQ(spconv_rt_hash_capacity(int64_t(input.size()), &capacity), 0);
    keys.assign(size_t(capacity), 12345);
    values.assign(size_t(capacity), 12345);
    return spconv_rt_hash_build(input.data(), int64_t(input.size()),
                                keys.data(), values.data(), capacity, dup);
  }
  std::vector<int32_t> lookup(const std::vector<int64_t> &queries) const {
    std::vector<int32_t> out(queries.size(), -7);
    EXPECT_EQ(spconv_rt_hash_lookup(keys.data(), values.data(), capacity,
                                    queries.data(), int64_t(queries.size()),
                                    out.data()),
              0)
        << lastError();
    return out;
  }
};

} // namespace spconv_rt_test

#endif // SPCONV_RT_TEST_TESTUTIL_H
