//===- ProfileTest.cpp - Per-op timers ------------------------------------===//

#include "TestUtil.h"

#include <climits>
#include <thread>

using spconv_rt_test::lastError;

TEST(Profile, AccumulatesTimeRowsAndCalls) {
  spconv_rt_profile_reset();
  EXPECT_EQ(spconv_rt_profile_count(), 0);
  for (int call = 0; call < 2; ++call) {
    ASSERT_EQ(spconv_rt_profile_begin(2), SPCONV_RT_OK);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(spconv_rt_profile_end(2, 100 + call), SPCONV_RT_OK);
  }
  EXPECT_EQ(spconv_rt_profile_count(), 3);
  double ms = 0;
  int64_t rows = 0, calls = 0;
  ASSERT_EQ(spconv_rt_profile_get(2, &ms, &rows, &calls), SPCONV_RT_OK);
  // sleep_for blocks at least as long as asked on a steady clock, so this
  // lower bound holds whatever the load.
  EXPECT_GE(ms, 10.0);
  EXPECT_EQ(rows, 101);
  EXPECT_EQ(calls, 2);
  // Entries never begun read as zero; ids past the end are an error.
  ASSERT_EQ(spconv_rt_profile_get(0, &ms, &rows, &calls), SPCONV_RT_OK);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(ms, 0.0);
  EXPECT_EQ(spconv_rt_profile_get(3, &ms, &rows, &calls),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(spconv_rt_profile_get(2, nullptr, &rows, &calls),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  spconv_rt_profile_reset();
  EXPECT_EQ(spconv_rt_profile_count(), 0);
}

TEST(Profile, EndWithoutBeginIsAnErrorAndChangesNothing) {
  spconv_rt_profile_reset();
  ASSERT_EQ(spconv_rt_profile_begin(2), SPCONV_RT_OK);
  // Entry 0 exists (the table grew to 3) but was never begun: ending it
  // must not add the time since the clock's epoch.
  spconv_rt_clear_error();
  EXPECT_EQ(spconv_rt_profile_end(0, 1), SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "spconv_rt_profile_end: entry 0 was not begun");
  EXPECT_EQ(spconv_rt_profile_end(7, 1), SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_profile_count(), 3);
  double ms = -1;
  int64_t rows = -1, calls = -1;
  ASSERT_EQ(spconv_rt_profile_get(0, &ms, &rows, &calls), SPCONV_RT_OK);
  EXPECT_EQ(ms, 0.0);
  EXPECT_EQ(rows, 0);
  EXPECT_EQ(calls, 0);
  // A second end of the same begin is unmatched too.
  ASSERT_EQ(spconv_rt_profile_end(2, 5), SPCONV_RT_OK);
  EXPECT_EQ(spconv_rt_profile_end(2, 6), SPCONV_RT_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(spconv_rt_profile_get(2, &ms, &rows, &calls), SPCONV_RT_OK);
  EXPECT_EQ(rows, 5);
  EXPECT_EQ(calls, 1);
  spconv_rt_profile_reset();
}

TEST(Profile, IdsOutsideTheTableAreErrorsNotAborts) {
  spconv_rt_profile_reset();
  const int64_t bad[] = {-1,
                         INT64_MIN,
                         SPCONV_RT_PROFILE_MAX_ENTRIES,
                         SPCONV_RT_PROFILE_MAX_ENTRIES + 1,
                         int64_t(1) << 40,
                         int64_t(1) << 62,
                         INT64_MAX - 1,
                         INT64_MAX};
  for (int64_t id : bad) {
    SCOPED_TRACE(id);
    spconv_rt_clear_error();
    EXPECT_EQ(spconv_rt_profile_begin(id), SPCONV_RT_ERR_OUT_OF_RANGE);
    EXPECT_EQ(lastError(), "spconv_rt_profile_begin: entry id " +
                               std::to_string(id) + " is outside [0, 1048576)");
    EXPECT_EQ(spconv_rt_profile_end(id, 1), SPCONV_RT_ERR_OUT_OF_RANGE);
    EXPECT_EQ(lastError(), "spconv_rt_profile_end: entry id " +
                               std::to_string(id) + " is outside [0, 1048576)");
    double ms = 0;
    int64_t rows = 0, calls = 0;
    EXPECT_EQ(spconv_rt_profile_get(id, &ms, &rows, &calls),
              SPCONV_RT_ERR_OUT_OF_RANGE);
    // Nothing was allocated for them.
    EXPECT_EQ(spconv_rt_profile_count(), 0);
  }
}

TEST(Profile, LargestIdWorks) {
  spconv_rt_profile_reset();
  const int64_t last = SPCONV_RT_PROFILE_MAX_ENTRIES - 1;
  ASSERT_EQ(spconv_rt_profile_begin(last), SPCONV_RT_OK);
  ASSERT_EQ(spconv_rt_profile_end(last, 9), SPCONV_RT_OK);
  EXPECT_EQ(spconv_rt_profile_count(), SPCONV_RT_PROFILE_MAX_ENTRIES);
  double ms = -1;
  int64_t rows = 0, calls = 0;
  ASSERT_EQ(spconv_rt_profile_get(last, &ms, &rows, &calls), SPCONV_RT_OK);
  EXPECT_GE(ms, 0.0);
  EXPECT_EQ(rows, 9);
  EXPECT_EQ(calls, 1);
  spconv_rt_profile_reset();
  EXPECT_EQ(spconv_rt_profile_count(), 0);
}
