//===- OutOfMemoryTest.cpp - Allocation failures are errors, not crashes --===//
//
// Failure injection (spconv_rt_test_fail_allocation), the sticky
// out-of-memory record and its messages, the cache flush before failing,
// and the live-buffer count that leak checks use.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cstdint>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

using namespace spconv_rt_test;

// ASan reports (and aborts on) a request it cannot serve unless
// allocator_may_return_null=1; injected failures need no real one.
#if defined(__SANITIZE_ADDRESS__)
#define SPCONV_RT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPCONV_RT_TEST_ASAN 1
#endif
#endif

namespace {
constexpr size_t kLarge = size_t(3) << 20;

/// Clears the error, injection and the cache around each test.
class OutOfMemory : public ::testing::Test {
protected:
  void SetUp() override { reset(); }
  void TearDown() override { reset(); }
  static void reset() {
    spconv_rt_test_fail_allocation(0);
    spconv_rt_clear_error();
    ASSERT_EQ(spconv_rt_set_buffer_cache_limit(0), 0);
    ASSERT_EQ(spconv_rt_set_buffer_cache_limit(int64_t(1) << 30), 0);
  }
  static int64_t cachedBlocks() {
    int64_t blocks = -1, bytes = -1;
    EXPECT_EQ(spconv_rt_get_buffer_cache_stats(&blocks, &bytes), 0);
    return blocks;
  }
  static bool startsWith(const std::string &text, const std::string &prefix) {
    return text.compare(0, prefix.size(), prefix) == 0;
  }
  /// The message that _mlir_memref_to_llvm_alloc(bytes) records when it is
  /// made to fail.
  static std::string injectedMessage(size_t bytes) {
    spconv_rt_clear_error();
    spconv_rt_test_fail_allocation(1);
    EXPECT_EQ(_mlir_memref_to_llvm_alloc(bytes), nullptr);
    std::string message = lastError();
    spconv_rt_clear_error();
    return message;
  }
  static int reportAllocFailure(std::string what, int64_t line) {
    StridedMemRefType<int8_t, 1> desc;
    desc.basePtr = desc.data = reinterpret_cast<int8_t *>(what.data());
    desc.offset = 0;
    desc.sizes[0] = static_cast<int64_t>(what.size());
    desc.strides[0] = 1;
    return _mlir_ciface_spconv_rt_memref_report_alloc_failure(&desc, line);
  }
};
} // namespace

TEST_F(OutOfMemory, InjectionFailsTheNthAllocation) {
  int64_t count = spconv_rt_test_allocation_count();
  spconv_rt_test_fail_allocation(3);
  void *first = _mlir_memref_to_llvm_alloc(100);
  void *second = _mlir_memref_to_llvm_aligned_alloc(64, kLarge);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(spconv_rt_alloc_failed(), 0);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(100), nullptr);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(), "out of memory: 100 bytes");
  // Only the n-th fails.
  void *fourth = _mlir_memref_to_llvm_alloc(100);
  EXPECT_NE(fourth, nullptr);
  EXPECT_EQ(spconv_rt_test_allocation_count(), count + 4);
  _mlir_memref_to_llvm_free(first);
  _mlir_memref_to_llvm_free(second);
  _mlir_memref_to_llvm_free(fourth);
}

TEST_F(OutOfMemory, CacheHitsAreCounted) {
  void *block = _mlir_memref_to_llvm_alloc(kLarge);
  _mlir_memref_to_llvm_free(block);
  ASSERT_EQ(cachedBlocks(), 1);
  int64_t count = spconv_rt_test_allocation_count();
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(kLarge), nullptr);
  EXPECT_EQ(spconv_rt_test_allocation_count(), count + 1);
}

TEST_F(OutOfMemory, ClearErrorResetsFlagAndStatus) {
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(64), nullptr);
  ASSERT_EQ(spconv_rt_alloc_failed(), 1);
  spconv_rt_clear_error();
  EXPECT_EQ(spconv_rt_alloc_failed(), 0);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_OK);
  EXPECT_EQ(lastError(), "");
}

TEST_F(OutOfMemory, LastStatusFollowsEveryError) {
  EXPECT_EQ(spconv_rt_set_buffer_cache_limit(-1),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_report_bad_index(1, 5, 3), SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(spconv_rt_alloc_failed(), 0);
}

TEST_F(OutOfMemory, IsStickyUntilCleared) {
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(kLarge), nullptr);
  std::string message = lastError();
  ASSERT_TRUE(startsWith(message, "out of memory: ")) << message;
  // Later errors are returned but do not replace the failure.
  EXPECT_EQ(spconv_rt_set_buffer_cache_limit(-1),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_report_bad_index(1, 5, 3), SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(lastError(), message);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  // A second failure keeps the first one's record.
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(100), nullptr);
  EXPECT_EQ(lastError(), message);
  spconv_rt_clear_error();
  EXPECT_EQ(spconv_rt_set_buffer_cache_limit(-1),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("negative limit"), std::string::npos);
}

TEST_F(OutOfMemory, MessagesUseHumanUnits) {
  EXPECT_EQ(injectedMessage(512), "out of memory: 512 bytes");
  EXPECT_EQ(injectedMessage(1024), "out of memory: 1.0 KiB (1024 bytes)");
  EXPECT_EQ(injectedMessage(kLarge), "out of memory: 3.0 MiB (3145728 bytes)");
  EXPECT_EQ(injectedMessage(1288490188),
            "out of memory: 1.2 GiB (1288490188 bytes)");
  EXPECT_EQ(injectedMessage(size_t(3) << 40),
            "out of memory: 3.0 TiB (3298534883328 bytes)");
  // Rounding up to 1024.0 KiB moves to the next unit.
  EXPECT_EQ(injectedMessage((size_t(1) << 20) - 1),
            "out of memory: 1.0 MiB (1048575 bytes)");
}

TEST_F(OutOfMemory, ReportAllocFailureNamesTheAllocation) {
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(kLarge), nullptr);
  EXPECT_EQ(reportAllocFailure("the pairs", 7), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(),
            "out of memory: 3.0 MiB (3145728 bytes) for the pairs at line 7");
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(reportAllocFailure("the hash table", 0),
            SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(),
            "out of memory: 3.0 MiB (3145728 bytes) for the hash table");
  // The description is not NUL-terminated: only sizes[0] bytes count.
  std::string text = "output features and more";
  StridedMemRefType<int8_t, 1> desc;
  desc.basePtr = reinterpret_cast<int8_t *>(text.data());
  desc.data = desc.basePtr;
  desc.offset = 7;
  desc.sizes[0] = 8;
  desc.strides[0] = 1;
  _mlir_ciface_spconv_rt_memref_report_alloc_failure(&desc, 55);
  EXPECT_EQ(lastError(),
            "out of memory: 3.0 MiB (3145728 bytes) for features at line 55");
  // With no failure recorded, no size.
  spconv_rt_clear_error();
  EXPECT_EQ(reportAllocFailure("the pairs", 7), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(), "out of memory for the pairs at line 7");
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_report_alloc_failure(nullptr, -1),
            SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(), "out of memory");
}

TEST_F(OutOfMemory, ScratchBuffersKeepTheirWording) {
  std::vector<int64_t> keys = randomKeys(1000, 1 << 20, 7);
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(spconv_rt_sort_keys(keys.data(), int64_t(keys.size())),
            SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  EXPECT_EQ(lastError(), "out of memory: 7.8 KiB (8000 bytes) of scratch "
                         "memory for spconv_rt_sort_keys");
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(reportAllocFailure("sort scratch", 3), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(),
            "out of memory: 7.8 KiB (8000 bytes) for sort scratch at line 3");
  // The next call in the same process succeeds.
  spconv_rt_clear_error();
  EXPECT_EQ(spconv_rt_sort_keys(keys.data(), int64_t(keys.size())), 0);
}

TEST_F(OutOfMemory, LiveBuffersReturnToTheirStart) {
  int64_t live = spconv_rt_test_live_buffers();
  void *small = _mlir_memref_to_llvm_alloc(100);
  void *large = _mlir_memref_to_llvm_aligned_alloc(128, kLarge);
  EXPECT_EQ(spconv_rt_test_live_buffers(), live + 2);
  _mlir_memref_to_llvm_free(small);
  _mlir_memref_to_llvm_free(large);
  _mlir_memref_to_llvm_free(nullptr);
  EXPECT_EQ(spconv_rt_test_live_buffers(), live);
  // Cached again and handed out again: still one live buffer.
  void *again = _mlir_memref_to_llvm_alloc(kLarge);
  EXPECT_EQ(spconv_rt_test_live_buffers(), live + 1);
  _mlir_memref_to_llvm_free(again);
  // Failed requests hand out nothing; scratch buffers are freed.
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(100), nullptr);
  std::vector<int64_t> keys = randomKeys(100000, 1 << 30, 3);
  EXPECT_EQ(spconv_rt_sort_keys(keys.data(), int64_t(keys.size())), 0);
  EXPECT_EQ(spconv_rt_test_live_buffers(), live);
}

TEST_F(OutOfMemory, AFailedRequestFreesTheCachedBlocks) {
  void *a = _mlir_memref_to_llvm_alloc(kLarge);
  void *b = _mlir_memref_to_llvm_alloc(2 * kLarge);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  ASSERT_EQ(cachedBlocks(), 2);
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(kLarge), nullptr);
  EXPECT_EQ(cachedBlocks(), 0);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
}

TEST_F(OutOfMemory, ARealFailureFlushesTriesAgainAndReports) {
#ifdef SPCONV_RT_TEST_ASAN
  GTEST_SKIP() << "ASan aborts on a request it cannot serve";
#endif
  void *a = _mlir_memref_to_llvm_alloc(kLarge);
  _mlir_memref_to_llvm_free(a);
  ASSERT_EQ(cachedBlocks(), 1);
  // No machine has 2^62 bytes.
  size_t huge = size_t(1) << 62;
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(huge), nullptr);
  EXPECT_EQ(cachedBlocks(), 0);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(), "out of memory: 4194304.0 TiB (4611686018427387904 "
                         "bytes)");
}

TEST_F(OutOfMemory, ZeroBytesIsNoFailure) {
  int64_t live = spconv_rt_test_live_buffers();
  void *zero = _mlir_memref_to_llvm_alloc(0);
  void *aligned = _mlir_memref_to_llvm_aligned_alloc(128, 0);
  EXPECT_EQ(spconv_rt_alloc_failed(), 0);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_OK);
  _mlir_memref_to_llvm_free(zero);
  _mlir_memref_to_llvm_free(aligned);
  EXPECT_EQ(spconv_rt_test_live_buffers(), live);
}

TEST_F(OutOfMemory, RoundingUpNeverWraps) {
  EXPECT_EQ(_mlir_memref_to_llvm_aligned_alloc(128, SIZE_MAX - 10), nullptr);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_TRUE(startsWith(lastError(), "out of memory: ")) << lastError();
  EXPECT_NE(lastError().find("(18446744073709551605 bytes)"), std::string::npos)
      << lastError();
  spconv_rt_clear_error();
  // The cached path rounds to 64 bytes.
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(SIZE_MAX - 10), nullptr);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
}

TEST_F(OutOfMemory, ProfileTableGrowthIsCounted) {
  spconv_rt_profile_reset();
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(spconv_rt_profile_begin(0), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  EXPECT_TRUE(startsWith(lastError(), "out of memory: ")) << lastError();
  EXPECT_EQ(spconv_rt_profile_count(), 0);
  spconv_rt_clear_error();
  EXPECT_EQ(spconv_rt_profile_begin(0), 0);
  EXPECT_EQ(spconv_rt_profile_end(0, 1), 0);
  spconv_rt_profile_reset();
}

TEST_F(OutOfMemory, RaceCheckerReportsInsteadOfAborting) {
#ifdef SPCONV_RT_TEST_ASAN
  GTEST_SKIP() << "ASan aborts on a request it cannot serve";
#endif
  // A names string too long to copy: its std::string throws bad_alloc
  // before reading it.
  const char names[] = "kernel\nbuffer";
  EXPECT_EQ(spconv_rt_emu_launch_begin(reinterpret_cast<int64_t>(names),
                                       int64_t(1) << 61, 1),
            SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  EXPECT_EQ(lastError(), "race checker: out of memory");
  EXPECT_EQ(spconv_rt_emu_launch_end(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  spconv_rt_clear_error();
  EXPECT_EQ(spconv_rt_emu_report_partial_warp(reinterpret_cast<int64_t>(names),
                                              int64_t(1) << 61, 33),
            SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(), "race checker: out of memory");
  spconv_rt_clear_error();
  // Checking works again afterwards.
  EXPECT_EQ(spconv_rt_emu_launch_begin(reinterpret_cast<int64_t>(names),
                                       int64_t(sizeof(names) - 1), 1),
            0);
  EXPECT_EQ(spconv_rt_emu_launch_end(), 0);
}

// Run by EnvironmentVariableCountsFromProcessStart in a child process.
TEST(OutOfMemoryChild, FailAllocEnvironment) {
  if (!std::getenv("SPCONV_RT_FAIL_ALLOC_CHILD"))
    GTEST_SKIP() << "runs as a child of EnvironmentVariable";
  ASSERT_EQ(spconv_rt_test_allocation_count(), 0);
  void *first = _mlir_memref_to_llvm_alloc(100);
  EXPECT_NE(first, nullptr);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(100), nullptr);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  EXPECT_EQ(spconv_rt_test_allocation_count(), 2);
  _mlir_memref_to_llvm_free(first);
}

TEST(OutOfMemoryEnv, EnvironmentVariableCountsFromProcessStart) {
  std::string filter = "--gtest_filter=OutOfMemoryChild.FailAllocEnvironment";
  std::vector<std::string> env = {"SPCONV_RT_FAIL_ALLOC=2",
                                  "SPCONV_RT_FAIL_ALLOC_CHILD=1"};
  for (char **e = environ; *e; ++e)
    if (std::strncmp(*e, "SPCONV_RT_FAIL_ALLOC", 20) != 0)
      env.push_back(*e);
  std::vector<char *> envp, argv;
  for (std::string &e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe";
  argv = {self.data(), filter.data(), nullptr};
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(),
                        envp.data()),
            0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
