//===- MemoryTest.cpp - The cache of large freed buffers ------------------===//

#include "TestUtil.h"

#include <cstdlib>
#include <cstring>

using namespace spconv_rt_test;

namespace {
/// Empties the cache and restores a 1 GiB limit around each test.
class BufferCache : public ::testing::Test {
protected:
  void SetUp() override { reset(); }
  void TearDown() override { reset(); }
  static void reset() {
    ASSERT_EQ(spconv_rt_set_buffer_cache_limit(0), 0);
    ASSERT_EQ(spconv_rt_set_buffer_cache_limit(int64_t(1) << 30), 0);
  }
  static std::pair<int64_t, int64_t> stats() {
    int64_t blocks = -1, bytes = -1;
    EXPECT_EQ(spconv_rt_get_buffer_cache_stats(&blocks, &bytes), 0);
    return {blocks, bytes};
  }
};
} // namespace

constexpr size_t kLarge = size_t(3) << 20;

TEST_F(BufferCache, ReusesAFreedBlockOfTheSameSize) {
  void *first = _mlir_memref_to_llvm_alloc(kLarge);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, kLarge);
  _mlir_memref_to_llvm_free(first);
  auto [blocks, bytes] = stats();
  EXPECT_EQ(blocks, 1);
  EXPECT_GE(bytes, static_cast<int64_t>(kLarge));
  void *second = _mlir_memref_to_llvm_alloc(kLarge);
  EXPECT_EQ(second, first);
  EXPECT_EQ(stats().first, 0);
  _mlir_memref_to_llvm_free(second);
}

TEST_F(BufferCache, TakesTheSmallestBlockWithAtMostTwiceTheSize) {
  void *big = _mlir_memref_to_llvm_alloc(4 * kLarge);
  void *mid = _mlir_memref_to_llvm_alloc(2 * kLarge);
  _mlir_memref_to_llvm_free(big);
  _mlir_memref_to_llvm_free(mid);
  ASSERT_EQ(stats().first, 2);
  // 1.5x: both are large enough, the 2x block is within the slack.
  void *taken = _mlir_memref_to_llvm_alloc(kLarge + kLarge / 2);
  EXPECT_EQ(taken, mid);
  // A quarter of the big block is too little use of it: a fresh block.
  void *fresh = _mlir_memref_to_llvm_alloc(kLarge);
  EXPECT_NE(fresh, big);
  EXPECT_EQ(stats().first, 1);
  _mlir_memref_to_llvm_free(taken);
  _mlir_memref_to_llvm_free(fresh);
}

TEST_F(BufferCache, SmallBlocksAreMallocsBusiness) {
  void *small = _mlir_memref_to_llvm_alloc(1000);
  ASSERT_NE(small, nullptr);
  _mlir_memref_to_llvm_free(small);
  EXPECT_EQ(stats().first, 0);
  _mlir_memref_to_llvm_free(nullptr);
}

TEST_F(BufferCache, HonoursAlignment) {
  for (size_t alignment : {16, 64, 128, 4096}) {
    void *ptr = _mlir_memref_to_llvm_aligned_alloc(alignment, kLarge);
    ASSERT_NE(ptr, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % alignment, 0u) << alignment;
    _mlir_memref_to_llvm_free(ptr);
  }
  // Every cached block is 64-byte aligned.
  void *again = _mlir_memref_to_llvm_aligned_alloc(64, kLarge);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(again) % 64, 0u);
  _mlir_memref_to_llvm_free(again);
}

TEST_F(BufferCache, KeepsNoMoreThanTheLimit) {
  ASSERT_EQ(spconv_rt_set_buffer_cache_limit(static_cast<int64_t>(kLarge) +
                                             (int64_t(1) << 20)),
            0);
  void *a = _mlir_memref_to_llvm_alloc(kLarge);
  void *b = _mlir_memref_to_llvm_alloc(kLarge);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  EXPECT_EQ(stats().first, 1);
  // Lowering the limit frees what is above it; 0 caches nothing.
  ASSERT_EQ(spconv_rt_set_buffer_cache_limit(0), 0);
  EXPECT_EQ(stats(), std::make_pair(int64_t(0), int64_t(0)));
  void *c = _mlir_memref_to_llvm_alloc(kLarge);
  _mlir_memref_to_llvm_free(c);
  EXPECT_EQ(stats().first, 0);
}

TEST_F(BufferCache, ReturnedBuffersAreFreedWithFree) {
  // The AOT contract: a result buffer belongs to the caller, who frees it
  // with free(), cached block or not.
  void *cached = _mlir_memref_to_llvm_alloc(kLarge);
  _mlir_memref_to_llvm_free(cached);
  void *result = _mlir_memref_to_llvm_alloc(kLarge);
  ASSERT_EQ(result, cached);
  std::free(result);
  EXPECT_EQ(stats().first, 0);
}

TEST_F(BufferCache, RejectsBadArguments) {
  EXPECT_EQ(spconv_rt_set_buffer_cache_limit(-1),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("negative limit"), std::string::npos);
  int64_t blocks;
  EXPECT_EQ(spconv_rt_get_buffer_cache_stats(&blocks, nullptr),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
}
