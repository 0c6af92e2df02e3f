//===- Support.h - Internal helpers of the spconv runtime -------*- C++ -*-===//
//
// Error reporting, the thread-count policy, a small fork-join helper and an
// allocation wrapper that reports failure instead of throwing. Nothing here
// is part of the public ABI; the spconv_rt_internal_* functions are exported
// only so that the CUDA library shares the CPU library's last-error slot,
// allocation-failure record, injection counter and buffer cache.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_RT_LIB_SUPPORT_H
#define SPCONV_RT_LIB_SUPPORT_H

#include "spconv-rt/SpConvRuntime.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>

extern "C" {
/// Records `message` and `status` as the calling thread's last error;
/// returns `status`. Records nothing while an allocation failure is recorded
/// (out of memory is sticky until spconv_rt_clear_error).
SPCONV_RT_EXPORT int spconv_rt_internal_set_error(int status,
                                                  const char *message);
/// Records a failed allocation on the calling thread: the flag of
/// spconv_rt_alloc_failed, the byte count (when `hasBytes`), `message` and
/// SPCONV_RT_ERR_OUT_OF_MEMORY. The first failure wins until
/// spconv_rt_clear_error. Returns SPCONV_RT_ERR_OUT_OF_MEMORY.
SPCONV_RT_EXPORT int spconv_rt_internal_set_alloc_failure(int hasBytes,
                                                          uint64_t bytes,
                                                          const char *message);
/// Counts one allocation request (spconv_rt_test_allocation_count); nonzero
/// if failure injection says this one must fail.
SPCONV_RT_EXPORT int spconv_rt_internal_count_allocation(void);
/// Memory.cpp's allocation (see allocateBuffer); a failure is recorded as
/// "out of memory: <size> of scratch memory for <what>", or "out of memory:
/// <size>" for a null `what`.
SPCONV_RT_EXPORT void *
spconv_rt_internal_allocate(size_t bytes, size_t alignment, const char *what);
SPCONV_RT_EXPORT void spconv_rt_internal_free(void *ptr);
/// Validates a grid of `numSpatialDims` extents `shape` and `batchSize`
/// batches; returns its volume B * prod(S) (checked for int64 overflow) in
/// *volume.
SPCONV_RT_EXPORT int spconv_rt_internal_check_grid(const char *fn,
                                                   int32_t numSpatialDims,
                                                   const int64_t *shape,
                                                   int64_t batchSize,
                                                   int64_t *volume);
/// Whether every coordinate of the grid fits int32 (delinearizing writes
/// int32 coordinates).
SPCONV_RT_EXPORT int spconv_rt_internal_check_int32_grid(const char *fn,
                                                         int32_t numSpatialDims,
                                                         const int64_t *shape,
                                                         int64_t batchSize);
/// Records "fn: row i: ... is outside [0, bound)" for the out-of-grid site
/// `row` (column stride `colStride`) and returns its status.
SPCONV_RT_EXPORT int spconv_rt_internal_report_bad_site(
    const char *fn, int64_t i, const int32_t *row, int64_t colStride,
    int32_t numSpatialDims, const int64_t *shape, int64_t batchSize);
/// Records "fn: key K at index I is outside the grid [0, volume)".
SPCONV_RT_EXPORT int spconv_rt_internal_report_bad_key(const char *fn,
                                                       int64_t key,
                                                       int64_t index,
                                                       int64_t volume);
}

namespace spconv {
namespace rt {

/// Upper bound of the thread count (sizes per-thread arrays on the stack).
constexpr int kMaxThreads = 256;

/// printf-style wrapper of spconv_rt_internal_set_error; returns `status`.
/// Inline so that the CUDA library can use it without a private export.
__attribute__((format(printf, 2, 3))) inline int setError(int status,
                                                          const char *fmt,
                                                          ...) {
  char message[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  return spconv_rt_internal_set_error(status, message);
}

/// A byte count for messages: "512 bytes", "1.2 GiB (1288490188 bytes)".
struct HumanBytes {
  explicit HumanBytes(uint64_t bytes) {
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
      std::snprintf(text, sizeof(text), "%llu bytes",
                    static_cast<unsigned long long>(bytes));
      return;
    }
    double value = static_cast<double>(bytes) / 1024;
    int unit = 0;
    // Switch units where one decimal would round up to 1024.0.
    for (; unit < 3 && value >= 1023.95; ++unit)
      value /= 1024;
    std::snprintf(text, sizeof(text), "%.1f %s (%llu bytes)", value,
                  units[unit], static_cast<unsigned long long>(bytes));
  }
  const char *c_str() const { return text; }

private:
  char text[64];
};

/// Records "out of memory: <size><suffix>" for a failed allocation of
/// `bytes` (see spconv_rt_internal_set_alloc_failure).
inline int setOutOfMemory(uint64_t bytes, const char *suffix = "") {
  char message[1024];
  std::snprintf(message, sizeof(message), "out of memory: %s%s",
                HumanBytes(bytes).c_str(), suffix);
  return spconv_rt_internal_set_alloc_failure(1, bytes, message);
}

/// Fails with SPCONV_RT_ERR_INVALID_ARGUMENT when `n`, a number of `what`
/// (keys, sites, ...), is negative.
inline int checkCount(const char *fn, int64_t n, const char *what) {
  if (n < 0)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: negative number of %s %lld", fn, what,
                    static_cast<long long>(n));
  return SPCONV_RT_OK;
}

/// Number of threads to use for `work` items of roughly equal cost: 1 below
/// a threshold where spawning threads costs more than it saves.
int threadsFor(int64_t work, int64_t minPerThread = 1 << 15);

/// Runs body(tid) for tid in [0, numThreads) concurrently; the caller runs
/// tid 0. Falls back to running the bodies in sequence if a thread cannot be
/// created, so callers must not rely on the bodies overlapping in time.
void runThreadsImpl(int numThreads, void (*body)(void *, int), void *ctx);

template <typename Fn> void runThreads(int numThreads, Fn &&fn) {
  if (numThreads <= 1) {
    fn(0);
    return;
  }
  auto trampoline = [](void *ctx, int tid) { (*static_cast<Fn *>(ctx))(tid); };
  runThreadsImpl(numThreads, trampoline, &fn);
}

/// [begin, end) of part `tid` out of `parts` equal parts of [0, n).
inline std::pair<int64_t, int64_t> splitRange(int64_t n, int parts, int tid) {
  int64_t base = n / parts, rem = n % parts;
  int64_t begin = tid * base + (tid < rem ? tid : rem);
  return {begin, begin + base + (tid < rem ? 1 : 0)};
}

/// Memory.cpp's cached allocation (any power-of-two `alignment`). Counted
/// for failure injection; on failure it frees the cached blocks and tries
/// again, then records the failure ("out of memory: <size>", see
/// spconv_rt_alloc_failed) and returns null. A zero-byte request is
/// malloc(0), whose null is no failure. freeBuffer takes its blocks.
inline void *allocateBuffer(size_t bytes, size_t alignment) {
  return spconv_rt_internal_allocate(bytes, alignment, nullptr);
}
inline void freeBuffer(void *ptr) { spconv_rt_internal_free(ptr); }

/// Rewrites the last error to "out of memory: <size> for <what> at line
/// <line>" (_mlir_ciface_spconv_rt_memref_report_alloc_failure); `what` is
/// `length` bytes, not NUL-terminated.
int reportAllocFailure(const char *what, int64_t length, int64_t line);

/// Heap array that reports allocation failure instead of throwing.
template <typename T> class Buffer {
public:
  Buffer() = default;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer() { freeBuffer(ptr); }

  /// Allocates `n` uninitialised elements; false (and an error) on failure.
  bool allocate(int64_t n, const char *what) {
    freeBuffer(ptr);
    ptr = nullptr;
    if (n == 0)
      n = 1;
    if (n < 0 || static_cast<uint64_t>(n) > SIZE_MAX / sizeof(T)) {
      setError(SPCONV_RT_ERR_OVERFLOW, "%s: %lld elements do not fit memory",
               what, static_cast<long long>(n));
      return false;
    }
    // Records "out of memory: <size> of scratch memory for <what>".
    ptr = static_cast<T *>(spconv_rt_internal_allocate(
        static_cast<size_t>(n) * sizeof(T), alignof(T), what));
    return ptr != nullptr;
  }
  T *data() const { return ptr; }
  T &operator[](int64_t i) const { return ptr[i]; }

private:
  T *ptr = nullptr;
};

/// Internal entry points shared by the C and memref wrappers. They validate
/// their arguments like the public functions.
int linearizeCoords(const int32_t *coords, int64_t n, int64_t rowStride,
                    int64_t colStride, int32_t numSpatialDims,
                    const int64_t *shape, int64_t batchSize, int64_t *keys);
/// Coords.cpp's grid checks and messages (the spconv_rt_internal_*
/// exports, shared with the CUDA library's twins).
inline int checkGrid(const char *fn, int32_t numSpatialDims,
                     const int64_t *shape, int64_t batchSize,
                     int64_t *volume) {
  return spconv_rt_internal_check_grid(fn, numSpatialDims, shape, batchSize,
                                       volume);
}
inline int checkInt32Grid(const char *fn, int32_t numSpatialDims,
                          const int64_t *shape, int64_t batchSize) {
  return spconv_rt_internal_check_int32_grid(fn, numSpatialDims, shape,
                                             batchSize);
}
inline int reportBadSite(const char *fn, int64_t i, const int32_t *row,
                         int64_t colStride, int32_t numSpatialDims,
                         const int64_t *shape, int64_t batchSize) {
  return spconv_rt_internal_report_bad_site(fn, i, row, colStride,
                                            numSpatialDims, shape, batchSize);
}
inline int reportBadKey(const char *fn, int64_t key, int64_t index,
                        int64_t volume) {
  return spconv_rt_internal_report_bad_key(fn, key, index, volume);
}
int delinearizeKeys(const int64_t *keys, int64_t n, int32_t numSpatialDims,
                    const int64_t *shape, int64_t batchSize, int32_t *coords,
                    int64_t rowStride, int64_t colStride);
int hashBuild(const int64_t *keys, int64_t n, int64_t *tableKeys,
              int32_t *tableValues, int64_t capacity, int64_t *duplicateIndex);
int hashLookup(const int64_t *tableKeys, const int32_t *tableValues,
               int64_t capacity, const int64_t *queries, int64_t m,
               int32_t *out);
int sortPairs(int64_t *keys, int32_t *values, int64_t n);
int unique(const int64_t *keys, int64_t n, int64_t *uniqueKeys,
           int32_t *firstIndex, int32_t *inverse, int64_t *numUnique);
int exclusiveScanI32(const int32_t *in, int64_t n, int32_t *out,
                     int32_t *total);
int exclusiveScanI64(const int64_t *in, int64_t n, int64_t *out,
                     int64_t *total);

} // namespace rt
} // namespace spconv

#endif // SPCONV_RT_LIB_SUPPORT_H
