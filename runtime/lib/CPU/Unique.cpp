//===- Unique.cpp - Sorted unique keys with first index and inverse ------===//
//
// Radix-sorts (key, original index) pairs; stability makes the first element
// of each run of equal keys its first occurrence in the input. Runs are then
// numbered with a per-thread count and prefix, so the output does not depend
// on the thread count.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cstdio>
#include <cstring>

using namespace spconv::rt;

int spconv::rt::unique(const int64_t *keys, int64_t n, int64_t *uniqueKeys,
                       int32_t *firstIndex, int32_t *inverse,
                       int64_t *numUnique) {
  const char *fn = "spconv_rt_unique";
  if (!numUnique)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: numUnique is a null pointer", fn);
  *numUnique = 0;
  if (int status = checkCount(fn, n, "keys"))
    return status;
  if (n > INT32_MAX)
    return setError(SPCONV_RT_ERR_OVERFLOW,
                    "%s: %lld keys do not fit int32 indices", fn,
                    static_cast<long long>(n));
  if (n == 0)
    return SPCONV_RT_OK;
  if (!keys || !uniqueKeys)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: %s is a null pointer", fn,
                    !keys ? "keys" : "uniqueKeys");

  Buffer<int64_t> sortedKeys;
  Buffer<int32_t> order;
  if (!sortedKeys.allocate(n, fn) || !order.allocate(n, fn))
    return SPCONV_RT_ERR_OUT_OF_MEMORY;
  int threads = threadsFor(n);
  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(n, threads, tid);
    std::memcpy(sortedKeys.data() + begin, keys + begin,
                (end - begin) * sizeof(int64_t));
    for (int64_t i = begin; i < end; ++i)
      order[i] = static_cast<int32_t>(i);
  });
  if (int status = sortPairs(sortedKeys.data(), order.data(), n)) {
    // Re-label the message: the failing call is ours.
    char message[1024];
    std::snprintf(message, sizeof(message), "%s: %s", fn,
                  spconv_rt_last_error());
    return spconv_rt_internal_set_error(status, message);
  }

  int64_t heads[kMaxThreads];
  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(n, threads, tid);
    int64_t count = 0;
    for (int64_t i = begin; i < end; ++i)
      count += i == 0 || sortedKeys[i] != sortedKeys[i - 1];
    heads[tid] = count;
  });
  int64_t running = 0;
  for (int t = 0; t < threads; ++t) {
    int64_t count = heads[t];
    heads[t] = running;
    running += count;
  }
  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(n, threads, tid);
    int64_t u = heads[tid] - 1;
    for (int64_t i = begin; i < end; ++i) {
      int64_t key = sortedKeys[i];
      if (i == 0 || key != sortedKeys[i - 1]) {
        ++u;
        uniqueKeys[u] = key;
        if (firstIndex)
          firstIndex[u] = order[i];
      }
      if (inverse)
        inverse[order[i]] = static_cast<int32_t>(u);
    }
  });
  *numUnique = running;
  return SPCONV_RT_OK;
}

extern "C" int spconv_rt_unique(const int64_t *keys, int64_t n,
                                int64_t *uniqueKeys, int32_t *firstIndex,
                                int32_t *inverse, int64_t *numUnique) {
  return unique(keys, n, uniqueKeys, firstIndex, inverse, numUnique);
}
