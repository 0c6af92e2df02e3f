//===- EmulatorTest.cpp - The GPU emulator's race detector ----------------===//
//
// Access sequences as an emulated launch makes them (blocks in order, a
// barrier call between phases), with the races CUDA's memory model has and
// the orderings that rule them out.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <string>

using namespace spconv_rt_test;

namespace {

const char kNames[] = "k\nargument 0 (memref<?xf32>)\nworkgroup buffer 0";

/// Starts a launch of kernel @k with one argument and one workgroup buffer.
void begin() {
  spconv_rt_clear_error();
  ASSERT_EQ(spconv_rt_emu_launch_begin(
                static_cast<int64_t>(reinterpret_cast<intptr_t>(kNames)),
                sizeof(kNames) - 1, 1),
            0);
}

int access(int64_t buffer, int64_t address, bool write, int64_t block,
           int64_t thread, int64_t count = 1) {
  return spconv_rt_emu_access(buffer, address, address - 4096, 4, count,
                              write ? 1 : 0, block, thread);
}

constexpr int64_t kGlobal = 0, kShared = 1;
constexpr int kRace = SPCONV_RT_ERR_EMULATION;

TEST(RaceDetector, WriteThenReadInOnePhaseRaces) {
  begin();
  EXPECT_EQ(access(kShared, 4100, true, 0, 3), 0);
  EXPECT_EQ(access(kShared, 4100, false, 0, 5), kRace);
  EXPECT_EQ(lastError(),
            "data race in kernel @k on workgroup buffer 0 at byte offset 4: "
            "written by thread 3 of block 0 and read by thread 5 of block 0 "
            "with no barrier between them");
  EXPECT_EQ(spconv_rt_emu_launch_end(), kRace);
}

TEST(RaceDetector, ReadThenWriteInOnePhaseRaces) {
  begin();
  EXPECT_EQ(access(kGlobal, 4096, false, 0, 1), 0);
  EXPECT_EQ(access(kGlobal, 4096, false, 0, 2), 0);
  EXPECT_EQ(access(kGlobal, 4096, true, 0, 1), kRace);
  EXPECT_NE(lastError().find("read by thread 2 of block 0 and written by "
                             "thread 1 of block 0"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(spconv_rt_emu_launch_end(), kRace);
}

TEST(RaceDetector, BarrierOrdersThreadsOfOneBlock) {
  begin();
  EXPECT_EQ(access(kShared, 4096, true, 0, 3), 0);
  EXPECT_EQ(spconv_rt_emu_barrier(), 0);
  EXPECT_EQ(access(kShared, 4096, false, 0, 5), 0);
  EXPECT_EQ(access(kShared, 4096, false, 0, 6), 0);
  EXPECT_EQ(spconv_rt_emu_barrier(), 0);
  EXPECT_EQ(access(kShared, 4096, true, 0, 7), 0);
  // A thread's own accesses never race.
  EXPECT_EQ(access(kShared, 4096, false, 0, 7), 0);
  EXPECT_EQ(access(kShared, 4096, true, 0, 7), 0);
  EXPECT_EQ(spconv_rt_emu_launch_end(), 0);
  EXPECT_EQ(lastError(), "");
}

TEST(RaceDetector, BlocksAreNeverOrdered) {
  begin();
  EXPECT_EQ(access(kGlobal, 4096, true, 0, 0), 0);
  EXPECT_EQ(spconv_rt_emu_barrier(), 0);
  EXPECT_EQ(access(kGlobal, 4096, false, 1, 0), kRace);
  EXPECT_NE(lastError().find("in different blocks"), std::string::npos)
      << lastError();
  EXPECT_EQ(spconv_rt_emu_launch_end(), kRace);
}

TEST(RaceDetector, WorkgroupMemoryIsPerBlock) {
  // Two blocks' workgroup buffers at the same address (the emulator reuses
  // the stack) are different memory.
  begin();
  EXPECT_EQ(access(kShared, 4096, true, 0, 0), 0);
  EXPECT_EQ(access(kShared, 4096, true, 1, 1), 0);
  EXPECT_EQ(spconv_rt_emu_launch_end(), 0);
}

TEST(RaceDetector, ElementsOfOneAccessAreCheckedEach) {
  begin();
  EXPECT_EQ(access(kGlobal, 4096, true, 0, 0, /*count=*/4), 0);
  EXPECT_EQ(access(kGlobal, 4108, false, 0, 1), kRace);
  EXPECT_NE(lastError().find("byte offset 12"), std::string::npos)
      << lastError();
  EXPECT_EQ(spconv_rt_emu_launch_end(), kRace);
}

TEST(RaceDetector, ANewLaunchForgetsTheLast) {
  begin();
  EXPECT_EQ(access(kGlobal, 4096, true, 0, 0), 0);
  EXPECT_EQ(spconv_rt_emu_launch_end(), 0);
  begin();
  EXPECT_EQ(access(kGlobal, 4096, true, 0, 1), 0);
  EXPECT_EQ(spconv_rt_emu_launch_end(), 0);
}

TEST(RaceDetector, PartialWarpIsReported) {
  spconv_rt_clear_error();
  EXPECT_EQ(spconv_rt_emu_report_partial_warp(
                static_cast<int64_t>(reinterpret_cast<intptr_t>(kNames)),
                sizeof(kNames) - 1, 48),
            kRace);
  EXPECT_EQ(lastError(), "kernel @k uses warp-level operations but was "
                         "launched with 48 threads per block, not a whole "
                         "number of 32-thread warps");
}

} // namespace
