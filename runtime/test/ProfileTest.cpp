//===- ProfileTest.cpp - Per-op timers ------------------------------------===//

#include "TestUtil.h"

#include <thread>

TEST(Profile, AccumulatesTimeRowsAndCalls) {
  spconv_rt_profile_reset();
  EXPECT_EQ(spconv_rt_profile_count(), 0);
  for (int call = 0; call < 2; ++call) {
    spconv_rt_profile_begin(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    spconv_rt_profile_end(2, 100 + call);
  }
  EXPECT_EQ(spconv_rt_profile_count(), 3);
  double ms = 0;
  int64_t rows = 0, calls = 0;
  ASSERT_EQ(spconv_rt_profile_get(2, &ms, &rows, &calls), SPCONV_RT_OK);
  EXPECT_GE(ms, 10.0);
  EXPECT_EQ(rows, 101);
  EXPECT_EQ(calls, 2);
  // Entries never begun read as zero; ids past the end are an error.
  ASSERT_EQ(spconv_rt_profile_get(0, &ms, &rows, &calls), SPCONV_RT_OK);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(spconv_rt_profile_get(3, &ms, &rows, &calls),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(spconv_rt_profile_get(2, nullptr, &rows, &calls),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  // An end without a begin is ignored.
  spconv_rt_profile_end(7, 1);
  EXPECT_EQ(spconv_rt_profile_count(), 3);
  spconv_rt_profile_reset();
  EXPECT_EQ(spconv_rt_profile_count(), 0);
}
