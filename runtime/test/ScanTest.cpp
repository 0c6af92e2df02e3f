//===- ScanTest.cpp - Exclusive prefix sums -------------------------------===//

#include "TestUtil.h"

#include <numeric>

using namespace spconv_rt_test;

TEST(Scan, MatchesStdExclusiveScan) {
  for (int64_t n : {0, 1, 2, 1000, 300001}) {
    std::vector<int32_t> in(static_cast<size_t>(n));
    uint64_t state = uint64_t(n);
    for (auto &v : in)
      v = int32_t(splitmix(state) % 100);
    std::vector<int32_t> ref(static_cast<size_t>(n)), out(size_t(n), -1);
    std::exclusive_scan(in.begin(), in.end(), ref.begin(), 0);
    int32_t total = -1;
    ASSERT_EQ(spconv_rt_exclusive_scan_i32(in.data(), n, out.data(), &total),
              0)
        << lastError();
    EXPECT_TRUE(out == ref) << n;
    EXPECT_EQ(total, std::accumulate(in.begin(), in.end(), 0));

    std::vector<int64_t> in64(in.begin(), in.end()), out64(static_cast<size_t>(n));
    for (auto &v : in64)
      v *= int64_t(1) << 33;
    std::vector<int64_t> ref64(static_cast<size_t>(n));
    std::exclusive_scan(in64.begin(), in64.end(), ref64.begin(), int64_t(0));
    int64_t total64 = -1;
    ASSERT_EQ(spconv_rt_exclusive_scan_i64(in64.data(), n, out64.data(),
                                           &total64),
              0);
    EXPECT_TRUE(out64 == ref64) << n;
    EXPECT_EQ(total64, std::accumulate(in64.begin(), in64.end(), int64_t(0)));

    // In place, without total.
    ASSERT_EQ(spconv_rt_exclusive_scan_i32(in.data(), n, in.data(), nullptr),
              0);
    EXPECT_TRUE(in == ref);
  }
}

TEST(Scan, NegativeValues) {
  std::vector<int32_t> in = {5, -3, -4, 10}, out(4);
  int32_t total;
  ASSERT_EQ(spconv_rt_exclusive_scan_i32(in.data(), 4, out.data(), &total), 0);
  EXPECT_EQ(out, (std::vector<int32_t>{0, 5, 2, -2}));
  EXPECT_EQ(total, 8);
}

TEST(Scan, OverflowIsReportedAtFirstPosition) {
  // 3 * 1e9 > INT32_MAX at position 2 (0-based) of a long array, whatever
  // the thread split.
  std::vector<int32_t> in(400000, 0), out(400000);
  in[1] = 1000000000;
  in[200000] = 1000000000;
  in[300000] = 1000000000;
  int32_t total = 77;
  EXPECT_EQ(spconv_rt_exclusive_scan_i32(in.data(), int64_t(in.size()),
                                         out.data(), &total),
            SPCONV_RT_ERR_OVERFLOW);
  EXPECT_NE(lastError().find("[0, 300000]"), std::string::npos) << lastError();
  // The total itself overflowing is an overflow too.
  std::vector<int32_t> two = {INT32_MAX, 1};
  EXPECT_EQ(spconv_rt_exclusive_scan_i32(two.data(), 2, out.data(), &total),
            SPCONV_RT_ERR_OVERFLOW);
  std::vector<int32_t> low = {INT32_MIN, -1};
  EXPECT_EQ(spconv_rt_exclusive_scan_i32(low.data(), 2, out.data(), &total),
            SPCONV_RT_ERR_OVERFLOW);
  // int64: exact detection with a wider accumulator.
  std::vector<int64_t> big = {INT64_MAX - 5, 5, 1, -100};
  std::vector<int64_t> out64(4);
  int64_t total64;
  EXPECT_EQ(spconv_rt_exclusive_scan_i64(big.data(), 4, out64.data(),
                                         &total64),
            SPCONV_RT_ERR_OVERFLOW);
  EXPECT_NE(lastError().find("[0, 2]"), std::string::npos) << lastError();
  std::vector<int64_t> ok = {INT64_MAX, INT64_MIN, INT64_MAX};
  EXPECT_EQ(spconv_rt_exclusive_scan_i64(ok.data(), 3, out64.data(),
                                         &total64),
            0);
  EXPECT_EQ(total64, INT64_MAX - 1);
}

TEST(Scan, BadArguments) {
  int32_t total;
  std::vector<int32_t> v(3);
  EXPECT_EQ(spconv_rt_exclusive_scan_i32(nullptr, 3, v.data(), &total),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_exclusive_scan_i32(v.data(), 3, nullptr, &total),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_exclusive_scan_i32(v.data(), -3, v.data(), &total),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_exclusive_scan_i32(nullptr, 0, nullptr, &total), 0);
  EXPECT_EQ(total, 0);
}

TEST(Scan, DeterministicAcrossThreadCounts) {
  std::vector<int64_t> in(1 << 20);
  uint64_t state = 5;
  for (auto &v : in)
    v = int64_t(splitmix(state) % 1000) - 500;
  std::vector<int64_t> ref;
  for (int threads : {1, 2, 3}) {
    ScopedThreads scoped(threads);
    std::vector<int64_t> out(in.size());
    ASSERT_EQ(spconv_rt_exclusive_scan_i64(in.data(), int64_t(in.size()),
                                           out.data(), nullptr),
              0);
    if (ref.empty())
      ref = out;
    EXPECT_TRUE(out == ref) << threads;
  }
}
