//===- Sort.cpp - Parallel LSD radix sort of int64 keys -------------------===//
//
// Stable least-significant-digit radix sort. Only the bits below the largest
// key are sorted (coordinate keys rarely use more than ~35 bits), with up to
// 11-bit digits, and passes in which every key has the same digit are
// skipped. Each pass splits the array into one contiguous range per thread;
// offsets are digit-major, thread-minor, which keeps the sort stable, so the
// result does not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <algorithm>
#include <cstring>

using namespace spconv::rt;

namespace {
constexpr int kMaxDigitBits = 11;

struct KeyStats {
  int64_t firstNegative = -1;
  int64_t maxKey = 0;
  bool sorted = true;
};
} // namespace

int spconv::rt::sortPairs(int64_t *keys, int32_t *values, int64_t n) {
  const char *fn = values ? "spconv_rt_sort_pairs" : "spconv_rt_sort_keys";
  if (int status = checkCount(fn, n, "keys"))
    return status;
  if (n == 0)
    return SPCONV_RT_OK;
  if (!keys)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: keys is a null pointer", fn);

  int threads = threadsFor(n);
  KeyStats stats[kMaxThreads];
  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(n, threads, tid);
    KeyStats s;
    int64_t prev = begin > 0 ? keys[begin - 1] : 0;
    for (int64_t i = begin; i < end; ++i) {
      int64_t key = keys[i];
      if (key < 0) {
        s.firstNegative = i;
        break;
      }
      s.sorted &= prev <= key;
      s.maxKey = std::max(s.maxKey, key);
      prev = key;
    }
    stats[tid] = s;
  });
  int64_t maxKey = 0;
  bool sorted = true;
  for (int t = 0; t < threads; ++t) {
    if (stats[t].firstNegative >= 0)
      return setError(SPCONV_RT_ERR_OUT_OF_RANGE,
                      "%s: key %lld at index %lld is negative", fn,
                      static_cast<long long>(keys[stats[t].firstNegative]),
                      static_cast<long long>(stats[t].firstNegative));
    maxKey = std::max(maxKey, stats[t].maxKey);
    sorted &= stats[t].sorted;
  }
  // A stable sort leaves sorted input (and its payload) unchanged.
  if (sorted)
    return SPCONV_RT_OK;

  const int bits = 64 - __builtin_clzll(static_cast<uint64_t>(maxKey));
  const int passes = (bits + kMaxDigitBits - 1) / kMaxDigitBits;
  const int digitBits = (bits + passes - 1) / passes;
  const int64_t radix = int64_t(1) << digitBits;
  const uint64_t digitMask = radix - 1;

  Buffer<int64_t> scratchKeys, offsets;
  Buffer<int32_t> scratchValues;
  if (!scratchKeys.allocate(n, fn) || !offsets.allocate(threads * radix, fn) ||
      (values && !scratchValues.allocate(n, fn)))
    return SPCONV_RT_ERR_OUT_OF_MEMORY;

  int64_t *srcK = keys, *dstK = scratchKeys.data();
  int32_t *srcV = values, *dstV = scratchValues.data();
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = pass * digitBits;
    runThreads(threads, [&](int tid) {
      auto [begin, end] = splitRange(n, threads, tid);
      int64_t *count = offsets.data() + tid * radix;
      std::memset(count, 0, radix * sizeof(int64_t));
      for (int64_t i = begin; i < end; ++i)
        ++count[(static_cast<uint64_t>(srcK[i]) >> shift) & digitMask];
    });
    int64_t running = 0;
    bool trivial = false;
    for (int64_t d = 0; d < radix; ++d) {
      int64_t digitTotal = 0;
      for (int t = 0; t < threads; ++t) {
        int64_t count = offsets[t * radix + d];
        offsets[t * radix + d] = running;
        running += count;
        digitTotal += count;
      }
      trivial |= digitTotal == n;
    }
    if (trivial)
      continue; // Every key has this digit: the pass would be the identity.
    runThreads(threads, [&](int tid) {
      auto [begin, end] = splitRange(n, threads, tid);
      int64_t *offset = offsets.data() + tid * radix;
      if (srcV) {
        for (int64_t i = begin; i < end; ++i) {
          int64_t key = srcK[i];
          int64_t pos = offset[(static_cast<uint64_t>(key) >> shift) & digitMask]++;
          dstK[pos] = key;
          dstV[pos] = srcV[i];
        }
      } else {
        for (int64_t i = begin; i < end; ++i) {
          int64_t key = srcK[i];
          dstK[offset[(static_cast<uint64_t>(key) >> shift) & digitMask]++] = key;
        }
      }
    });
    std::swap(srcK, dstK);
    std::swap(srcV, dstV);
  }
  if (srcK != keys) {
    runThreads(threads, [&](int tid) {
      auto [begin, end] = splitRange(n, threads, tid);
      std::memcpy(keys + begin, srcK + begin, (end - begin) * sizeof(int64_t));
      if (values)
        std::memcpy(values + begin, srcV + begin,
                    (end - begin) * sizeof(int32_t));
    });
  }
  return SPCONV_RT_OK;
}

extern "C" int spconv_rt_sort_pairs(int64_t *keys, int32_t *values,
                                    int64_t n) {
  return sortPairs(keys, values, n);
}

extern "C" int spconv_rt_sort_keys(int64_t *keys, int64_t n) {
  return sortPairs(keys, nullptr, n);
}
