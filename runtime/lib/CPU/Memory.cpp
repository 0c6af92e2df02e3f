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
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cstddef>
#include <malloc.h>
#include <mutex>

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
  // Never destroyed: buffers may be freed by other static destructors.
  static BlockCache *instance = new BlockCache;
  return *instance;
}

size_t roundUp(size_t bytes, size_t multiple) {
  return (bytes + multiple - 1) / multiple * multiple;
}
} // namespace

void *spconv::rt::allocateBuffer(size_t bytes, size_t alignment) {
  if (alignment < alignof(std::max_align_t))
    alignment = alignof(std::max_align_t);
  if (bytes < kMinCachedBytes || alignment > kBlockAlignment) {
    if (alignment <= alignof(std::max_align_t))
      return std::malloc(bytes);
    return std::aligned_alloc(alignment, roundUp(bytes, alignment));
  }
  if (void *ptr = cache().take(bytes, alignment))
    return ptr;
  return std::aligned_alloc(kBlockAlignment, roundUp(bytes, kBlockAlignment));
}

void spconv::rt::freeBuffer(void *ptr) {
  if (!ptr)
    return;
  size_t bytes = malloc_usable_size(ptr);
  if (bytes < kMinCachedBytes ||
      reinterpret_cast<uintptr_t>(ptr) % kBlockAlignment != 0 ||
      !cache().keep(ptr, bytes))
    std::free(ptr);
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
