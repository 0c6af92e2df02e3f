//===- Memory.cpp - A cache of large freed buffers ------------------------===//
//
// glibc gives large freed blocks back to the kernel (munmap, or a trimmed
// heap top), so every call of a compiled network used to fault in and zero
// its buffers afresh: about a quarter of VoxelBackBone8x's run time at 100k
// sites. The CPU pipelines lower memref.alloc / memref.dealloc to MLIR's
// generic entry points (finalize-memref-to-llvm use-generic-functions),
// defined here, and the runtime's own scratch buffers use the same cache:
// a freed block of at least kMinCachedBytes is kept and handed out again
// to a request it fits with at most 2x slack. Blocks are plain malloc
// blocks (their size is malloc_usable_size), so a buffer that a compiled
// function returns is still the caller's to free() (the AOT contract).
//
// Out of memory is an error, never a crash: a failed request first gives
// the cached blocks back and tries again, then records the failure (sticky,
// spconv_rt_alloc_failed) and returns null for the caller to check. Every
// request is counted, so that a test can make the N-th one fail
// (spconv_rt_test_fail_allocation, $SPCONV_RT_FAIL_ALLOC).
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <atomic>
#include <cstddef>
#include <malloc.h>
#include <mutex>
#include <new>

using namespace spconv::rt;

namespace {
/// Smaller blocks are malloc's business (its bins keep them).
constexpr size_t kMinCachedBytes = size_t(1) << 16;
/// Every cached block is aligned to this, so any request aligned to it or
/// less can take any block.
constexpr size_t kBlockAlignment = 64;
constexpr int kMaxCachedBlocks = 256;
constexpr int64_t kDefaultLimitBytes = int64_t(1) << 30;

struct Block {
  void *ptr;
  size_t bytes;
};

class BlockCache {
public:
  /// A cached block of at least `bytes` (aligned to `alignment`) and at
  /// most twice that, the smallest such, or null.
  void *take(size_t bytes, size_t alignment) {
    std::lock_guard<std::mutex> lock(mutex);
    int best = -1;
    for (int i = 0; i < count; ++i) {
      const Block &block = blocks[i];
      if (block.bytes < bytes || block.bytes / 2 > bytes ||
          reinterpret_cast<uintptr_t>(block.ptr) % alignment != 0)
        continue;
      if (best < 0 || block.bytes < blocks[best].bytes)
        best = i;
    }
    if (best < 0)
      return nullptr;
    void *ptr = blocks[best].ptr;
    cachedBytes -= blocks[best].bytes;
    blocks[best] = blocks[--count];
    return ptr;
  }

  /// Keeps `ptr` (of `bytes`) if it fits under the limit; false otherwise.
  bool keep(void *ptr, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    if (count == kMaxCachedBlocks ||
        static_cast<int64_t>(cachedBytes + bytes) > limit())
      return false;
    blocks[count++] = {ptr, bytes};
    cachedBytes += bytes;
    return true;
  }

  /// Sets the limit and frees the blocks above it (all of them for 0).
  void setLimit(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    limitBytes = bytes;
    while (count > 0 && static_cast<int64_t>(cachedBytes) > limitBytes) {
      --count;
      cachedBytes -= blocks[count].bytes;
      std::free(blocks[count].ptr);
    }
  }

  /// Frees every cached block, keeping the limit.
  void flush() {
    std::lock_guard<std::mutex> lock(mutex);
    while (count > 0) {
      --count;
      std::free(blocks[count].ptr);
    }
    cachedBytes = 0;
  }

  void stats(int64_t *numBlocks, int64_t *bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    *numBlocks = count;
    *bytes = static_cast<int64_t>(cachedBytes);
  }

private:
  int64_t limit() {
    if (limitBytes < 0) {
      limitBytes = kDefaultLimitBytes;
      if (const char *env = std::getenv("SPCONV_RT_BUFFER_CACHE_BYTES")) {
        char *end = nullptr;
        long long value = std::strtoll(env, &end, 10);
        if (end != env && *end == '\0' && value >= 0)
          limitBytes = value;
      }
    }
    return limitBytes;
  }

  std::mutex mutex;
  Block blocks[kMaxCachedBlocks];
  int count = 0;
  size_t cachedBytes = 0;
  /// -1 until read from the environment or set.
  int64_t limitBytes = -1;
};

BlockCache &cache() {
  // In static storage, so that the first allocation cannot fail itself, and
  // never destroyed: buffers may be freed by other static destructors.
  alignas(BlockCache) static unsigned char storage[sizeof(BlockCache)];
  static BlockCache *instance = new (storage) BlockCache;
  return *instance;
}

/// `bytes` rounded up to a multiple of `multiple`; false if that overflows.
bool roundUp(size_t bytes, size_t multiple, size_t *rounded) {
  size_t sum;
  if (__builtin_add_overflow(bytes, multiple - 1, &sum))
    return false;
  *rounded = sum / multiple * multiple;
  return true;
}

/// One try at a block; null on failure.
void *tryAllocate(size_t bytes, size_t alignment) {
  size_t rounded;
  if (bytes < kMinCachedBytes || alignment > kBlockAlignment) {
    if (alignment <= alignof(std::max_align_t))
      return std::malloc(bytes);
    if (!roundUp(bytes, alignment, &rounded))
      return nullptr;
    return std::aligned_alloc(alignment, rounded);
  }
  if (void *ptr = cache().take(bytes, alignment))
    return ptr;
  if (!roundUp(bytes, kBlockAlignment, &rounded))
    return nullptr;
  return std::aligned_alloc(kBlockAlignment, rounded);
}

/// Requests since process start, and the one that must fail (0: none).
/// Process-wide: allocations happen on the thread that calls a compiled
/// function, so the N-th is the same whatever the thread count.
std::atomic<int64_t> allocationRequests{0};
std::atomic<int64_t> failingRequest{0};
/// Blocks handed out by spconv_rt_internal_allocate and not yet freed.
std::atomic<int64_t> liveBuffers{0};

/// Reads $SPCONV_RT_FAIL_ALLOC, once.
void readFailureInjection() {
  static const bool done = [] {
    if (const char *env = std::getenv("SPCONV_RT_FAIL_ALLOC")) {
      char *end = nullptr;
      long long value = std::strtoll(env, &end, 10);
      if (end != env && *end == '\0' && value > 0)
        failingRequest.store(value);
    }
    return true;
  }();
  (void)done;
}
} // namespace

extern "C" int spconv_rt_internal_count_allocation(void) {
  readFailureInjection();
  int64_t request = allocationRequests.fetch_add(1) + 1;
  return request == failingRequest.load() ? 1 : 0;
}

extern "C" void *spconv_rt_internal_allocate(size_t bytes, size_t alignment,
                                             const char *what) {
  if (alignment < alignof(std::max_align_t))
    alignment = alignof(std::max_align_t);
  // Counted before the cache is asked, so that N does not depend on what
  // earlier calls left in it.
  bool inject = spconv_rt_internal_count_allocation() != 0;
  void *ptr = inject ? nullptr : tryAllocate(bytes, alignment);
  if (!ptr && !inject && bytes == 0)
    return nullptr; // malloc(0) may return null: nothing failed.
  if (!ptr) {
    // The cached blocks may be the memory this request needs. An injected
    // failure flushes too, to leave the state a real one would.
    cache().flush();
    if (!inject)
      ptr = tryAllocate(bytes, alignment);
  }
  if (ptr) {
    liveBuffers.fetch_add(1, std::memory_order_relaxed);
    return ptr;
  }
  if (!what) {
    setOutOfMemory(bytes);
    return nullptr;
  }
  char message[1024];
  std::snprintf(message, sizeof(message),
                "out of memory: %s of scratch memory for %s",
                HumanBytes(bytes).c_str(), what);
  spconv_rt_internal_set_alloc_failure(1, bytes, message);
  return nullptr;
}

extern "C" void spconv_rt_internal_free(void *ptr) {
  if (!ptr)
    return;
  liveBuffers.fetch_sub(1, std::memory_order_relaxed);
  size_t bytes = malloc_usable_size(ptr);
  if (bytes < kMinCachedBytes ||
      reinterpret_cast<uintptr_t>(ptr) % kBlockAlignment != 0 ||
      !cache().keep(ptr, bytes))
    std::free(ptr);
}

extern "C" void spconv_rt_test_fail_allocation(int64_t n) {
  readFailureInjection();
  failingRequest.store(n > 0 ? allocationRequests.load() + n : 0);
}

extern "C" int64_t spconv_rt_test_allocation_count(void) {
  return allocationRequests.load();
}

extern "C" int64_t spconv_rt_test_live_buffers(void) {
  return liveBuffers.load();
}

extern "C" void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return allocateBuffer(bytes, alignof(std::max_align_t));
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t bytes) {
  return allocateBuffer(bytes, alignment);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) { freeBuffer(ptr); }

extern "C" int spconv_rt_set_buffer_cache_limit(int64_t bytes) {
  if (bytes < 0)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "spconv_rt_set_buffer_cache_limit: negative limit %lld",
                    static_cast<long long>(bytes));
  cache().setLimit(bytes);
  return SPCONV_RT_OK;
}

extern "C" int spconv_rt_get_buffer_cache_stats(int64_t *numBlocks,
                                                int64_t *bytes) {
  if (!numBlocks || !bytes)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "spconv_rt_get_buffer_cache_stats: null output pointer");
  cache().stats(numBlocks, bytes);
  return SPCONV_RT_OK;
}
