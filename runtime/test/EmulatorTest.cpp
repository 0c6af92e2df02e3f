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

// Asynchronous copies: real memory, since they land.
int64_t addressOf(const void *p) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(p));
}

int copy(float *dst, const float *src, int64_t elements, int64_t srcElements,
         int64_t thread, const float *base) {
  return spconv_rt_emu_async_copy(
      kShared, addressOf(dst), addressOf(dst) - addressOf(base), addressOf(src),
      elements * 4, srcElements * 4, 4, 0, thread);
}

TEST(AsyncCopies, LandAtTheWaitInGroupOrderWithZeroFill) {
  spconv_rt_clear_error();
  float src[4] = {1, 2, 3, 4};
  float dst[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  ASSERT_EQ(copy(dst, src, 4, 4, 0, dst), 0);
  ASSERT_EQ(spconv_rt_emu_async_commit(0, 0), 0);
  ASSERT_EQ(copy(dst + 4, src, 4, 1, 0, dst), 0); // one element, then zeros
  ASSERT_EQ(spconv_rt_emu_async_commit(0, 0), 0);
  EXPECT_EQ(dst[0], -1); // nothing lands before a wait
  ASSERT_EQ(spconv_rt_emu_async_wait(1, 0, 0), 0); // all but the newest
  EXPECT_EQ(dst[3], 4);
  EXPECT_EQ(dst[4], -1);
  ASSERT_EQ(spconv_rt_emu_async_wait(0, 0, 0), 0);
  EXPECT_EQ(dst[4], 1);
  EXPECT_EQ(dst[5], 0);
  EXPECT_EQ(dst[7], 0);
  EXPECT_EQ(
      spconv_rt_emu_async_block_end(addressOf(kNames), sizeof(kNames) - 1, 0),
      0);
}

TEST(AsyncCopies, GroupsArePerThread) {
  spconv_rt_clear_error();
  float src[2] = {5, 6};
  float dst[2] = {0, 0};
  ASSERT_EQ(copy(dst, src, 1, 1, 0, dst), 0);
  ASSERT_EQ(spconv_rt_emu_async_commit(0, 0), 0);
  ASSERT_EQ(copy(dst + 1, src + 1, 1, 1, 1, dst), 0);
  ASSERT_EQ(spconv_rt_emu_async_commit(0, 1), 0);
  ASSERT_EQ(spconv_rt_emu_async_wait(0, 0, 1), 0); // thread 1's only
  EXPECT_EQ(dst[0], 0);
  EXPECT_EQ(dst[1], 6);
  // Thread 0 never waits: the block's end says so.
  EXPECT_EQ(
      spconv_rt_emu_async_block_end(addressOf(kNames), sizeof(kNames) - 1, 0),
      kRace);
  EXPECT_EQ(lastError(), "kernel @k: block 0 ended with 1 asynchronous "
                         "copies no thread waited for (the first of thread 0)");
  EXPECT_EQ(dst[0], 0); // dropped, not landed
}

TEST(AsyncCopies, AnAccessBeforeTheCopyLandsIsReported) {
  begin();
  float src[1] = {7};
  float dst[1] = {0};
  ASSERT_EQ(copy(dst, src, 1, 1, 2, dst), 0);
  ASSERT_EQ(spconv_rt_emu_async_commit(0, 2), 0);
  // Even its own thread may not read it before the wait.
  EXPECT_EQ(spconv_rt_emu_access(kShared, addressOf(dst), 0, 4, 1, 0, 0, 2),
            kRace);
  EXPECT_EQ(lastError(),
            "kernel @k: workgroup buffer 0 at byte offset 0 read by thread 2 "
            "of block 0 before the asynchronous copy of thread 2 that writes "
            "it landed (no nvgpu.device_async_wait of that thread covered it "
            "yet)");
  EXPECT_EQ(spconv_rt_emu_async_wait(0, 0, 2), 0);
  EXPECT_EQ(spconv_rt_emu_launch_end(), kRace);
  EXPECT_EQ(
      spconv_rt_emu_async_block_end(addressOf(kNames), sizeof(kNames) - 1, 0),
      0);
}

TEST(AsyncCopies, ALandedCopyIsItsThreadsWrite) {
  begin();
  float src[1] = {7};
  float dst[1] = {0};
  ASSERT_EQ(copy(dst, src, 1, 1, 2, dst), 0);
  ASSERT_EQ(spconv_rt_emu_async_commit(0, 2), 0);
  ASSERT_EQ(spconv_rt_emu_async_wait(0, 0, 2), 0);
  // Its own thread reads it after the wait; another needs a barrier.
  EXPECT_EQ(spconv_rt_emu_access(kShared, addressOf(dst), 0, 4, 1, 0, 0, 2), 0);
  EXPECT_EQ(spconv_rt_emu_access(kShared, addressOf(dst), 0, 4, 1, 0, 0, 3),
            kRace);
  EXPECT_NE(lastError().find("written by thread 2 of block 0 and read by "
                             "thread 3 of block 0 with no barrier"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(spconv_rt_emu_launch_end(), kRace);
  begin();
  ASSERT_EQ(copy(dst, src, 1, 1, 2, dst), 0);
  ASSERT_EQ(spconv_rt_emu_async_commit(0, 2), 0);
  ASSERT_EQ(spconv_rt_emu_async_wait(0, 0, 2), 0);
  ASSERT_EQ(spconv_rt_emu_barrier(), 0);
  EXPECT_EQ(spconv_rt_emu_access(kShared, addressOf(dst), 0, 4, 1, 0, 0, 3), 0);
  EXPECT_EQ(spconv_rt_emu_launch_end(), 0);
}

} // namespace
