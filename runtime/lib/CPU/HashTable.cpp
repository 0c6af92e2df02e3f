//===- HashTable.cpp - Coordinate hash table build and lookup -------------===//
//
// Build: keys are bucketed by the 8192-slot chunk of the table that holds
// their home slot (a one-digit radix pass), then every chunk is filled by one
// thread in key-index order, so inserts hit a cache-resident slice of the
// table and threads never share a slot. A key whose probe runs past the end of
// its chunk is deferred to a short sequential pass that probes the whole
// table. Chunks do not depend on the thread count, so neither does the table.
//
// Lookup: queries are resolved in a software pipeline that prefetches the
// home slot of a query several iterations before probing it.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <algorithm>
#include <cstring>

using namespace spconv::rt;

namespace {
constexpr int kChunkShift = 13;
constexpr int kPrefetchDistance = 16;

int log2Exact(int64_t v) { return 63 - __builtin_clzll(static_cast<uint64_t>(v)); }

int checkCapacity(const char *fn, int64_t capacity) {
  if (capacity < SPCONV_HT_MIN_CAPACITY || (capacity & (capacity - 1)) != 0)
    return setError(SPCONV_RT_ERR_CAPACITY,
                    "%s: capacity %lld is not a power of two >= %lld", fn,
                    static_cast<long long>(capacity),
                    static_cast<long long>(SPCONV_HT_MIN_CAPACITY));
  if (static_cast<uint64_t>(capacity) > SIZE_MAX / sizeof(int64_t))
    return setError(SPCONV_RT_ERR_OVERFLOW,
                    "%s: capacity %lld does not fit memory", fn,
                    static_cast<long long>(capacity));
  return SPCONV_RT_OK;
}

/// Linear probe from `slot` for a nonnegative key. Returns the slot holding
/// `key`, or the empty slot where it belongs (as -2 - slot), or, if the probe
/// reaches `stop` first, kStopped.
constexpr int64_t kStopped = INT64_MIN;
inline int64_t probeForInsert(const int64_t *tableKeys, int64_t key,
                              int64_t slot, int64_t mask, int64_t stop,
                              int64_t maxProbes) {
  for (int64_t p = 0; p < maxProbes; ++p) {
    int64_t k = tableKeys[slot];
    if (k == key)
      return slot;
    if (k == SPCONV_HT_EMPTY_KEY)
      return -2 - slot;
    slot = (slot + 1) & mask;
    if (slot == stop)
      return kStopped;
  }
  return kStopped;
}

inline int32_t probeLookup(const int64_t *tableKeys, const int32_t *tableValues,
                           int64_t key, int64_t slot, int64_t mask) {
  if (key < 0)
    return SPCONV_HT_EMPTY_VALUE;
  // Bounded so that a corrupt (full) table cannot hang the caller.
  for (int64_t p = 0; p <= mask; ++p) {
    int64_t k = tableKeys[slot];
    if (k == key)
      return tableValues[slot];
    if (k == SPCONV_HT_EMPTY_KEY)
      return SPCONV_HT_EMPTY_VALUE;
    slot = (slot + 1) & mask;
  }
  return SPCONV_HT_EMPTY_VALUE;
}

void lookupRange(const int64_t *tableKeys, const int32_t *tableValues,
                 int64_t mask, const int64_t *queries, int64_t begin,
                 int64_t end, int32_t *out) {
  constexpr int D = kPrefetchDistance;
  int64_t ring[D];
  int64_t warm = std::min<int64_t>(end - begin, D);
  for (int64_t j = 0; j < warm; ++j) {
    int64_t slot = spconv_ht_home_slot(queries[begin + j], mask + 1);
    __builtin_prefetch(tableKeys + slot);
    __builtin_prefetch(tableValues + slot);
    ring[j] = slot;
  }
  for (int64_t i = begin; i < end; ++i) {
    int64_t slot = ring[(i - begin) % D];
    if (i + D < end) {
      int64_t next = spconv_ht_home_slot(queries[i + D], mask + 1);
      __builtin_prefetch(tableKeys + next);
      __builtin_prefetch(tableValues + next);
      ring[(i - begin) % D] = next;
    }
    out[i] = probeLookup(tableKeys, tableValues, queries[i], slot, mask);
  }
}
} // namespace

int spconv::rt::hashBuild(const int64_t *keys, int64_t n, int64_t *tableKeys,
                          int32_t *tableValues, int64_t capacity,
                          int64_t *duplicateIndex) {
  const char *fn = "spconv_rt_hash_build";
  if (duplicateIndex)
    *duplicateIndex = -1;
  if (int status = checkCount(fn, n, "keys"))
    return status;
  if (n > SPCONV_HT_MAX_ENTRIES)
    return setError(SPCONV_RT_ERR_CAPACITY,
                    "%s: %lld keys exceed the table limit of %lld (int32 "
                    "values)",
                    fn, static_cast<long long>(n),
                    static_cast<long long>(SPCONV_HT_MAX_ENTRIES));
  if (int status = checkCapacity(fn, capacity))
    return status;
  if (2 * n > capacity)
    return setError(SPCONV_RT_ERR_CAPACITY,
                    "%s: capacity %lld is too small for %lld keys (need >= "
                    "%lld)",
                    fn, static_cast<long long>(capacity),
                    static_cast<long long>(n),
                    static_cast<long long>(spconv_ht_capacity_for(n)));
  if (!tableKeys || !tableValues || (n > 0 && !keys))
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: %s is a null pointer", fn,
                    !tableKeys ? "tableKeys"
                               : (!tableValues ? "tableValues" : "keys"));

  // Clear the table (0xFF bytes give -1 in both arrays).
  {
    int threads = threadsFor(capacity, 1 << 18);
    runThreads(threads, [&](int tid) {
      auto [begin, end] = splitRange(capacity, threads, tid);
      std::memset(tableKeys + begin, 0xFF, (end - begin) * sizeof(int64_t));
      std::memset(tableValues + begin, 0xFF, (end - begin) * sizeof(int32_t));
    });
  }
  if (n == 0)
    return SPCONV_RT_OK;

  const int64_t mask = capacity - 1;
  const int shift = std::min(kChunkShift, log2Exact(capacity));
  const int64_t numChunks = capacity >> shift;
  const int threads = threadsFor(n);

  Buffer<int64_t> counts, chunkStart, bucketKeys;
  Buffer<int32_t> bucketIndex;
  if (!counts.allocate(threads * numChunks, fn) ||
      !chunkStart.allocate(numChunks + 1, fn) ||
      !bucketKeys.allocate(n, fn) || !bucketIndex.allocate(n, fn))
    return SPCONV_RT_ERR_OUT_OF_MEMORY;

  // Histogram of keys per chunk, per thread; also finds negative keys.
  int64_t firstNegative[kMaxThreads];
  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(n, threads, tid);
    int64_t *count = counts.data() + tid * numChunks;
    std::memset(count, 0, numChunks * sizeof(int64_t));
    firstNegative[tid] = -1;
    for (int64_t i = begin; i < end; ++i) {
      int64_t key = keys[i];
      if (key < 0) {
        firstNegative[tid] = i;
        return;
      }
      ++count[spconv_ht_home_slot(key, capacity) >> shift];
    }
  });
  for (int t = 0; t < threads; ++t)
    if (firstNegative[t] >= 0)
      return setError(SPCONV_RT_ERR_OUT_OF_RANGE,
                      "%s: key %lld at index %lld is negative", fn,
                      static_cast<long long>(keys[firstNegative[t]]),
                      static_cast<long long>(firstNegative[t]));

  // Chunk-major, thread-minor offsets keep every bucket in key-index order.
  int64_t running = 0;
  for (int64_t c = 0; c < numChunks; ++c) {
    chunkStart[c] = running;
    for (int t = 0; t < threads; ++t) {
      int64_t count = counts[t * numChunks + c];
      counts[t * numChunks + c] = running;
      running += count;
    }
  }
  chunkStart[numChunks] = running;

  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(n, threads, tid);
    int64_t *offset = counts.data() + tid * numChunks;
    for (int64_t i = begin; i < end; ++i) {
      int64_t key = keys[i];
      int64_t pos = offset[spconv_ht_home_slot(key, capacity) >> shift]++;
      bucketKeys[pos] = key;
      bucketIndex[pos] = static_cast<int32_t>(i);
    }
  });

  // Fill each chunk; deferred keys are compacted to the front of the bucket
  // (their count is kept in counts[c], whose offsets are no longer needed).
  int64_t minDuplicate[kMaxThreads];
  const int chunkThreads = static_cast<int>(std::min<int64_t>(threads, numChunks));
  int64_t *deferred = counts.data();
  runThreads(chunkThreads, [&](int tid) {
    auto [cBegin, cEnd] = splitRange(numChunks, chunkThreads, tid);
    int64_t minDup = INT64_MAX;
    for (int64_t c = cBegin; c < cEnd; ++c) {
      const int64_t stop = ((c + 1) << shift) & mask;
      const int64_t first = chunkStart[c], last = chunkStart[c + 1];
      int64_t numDeferred = 0;
      for (int64_t p = first; p < last; ++p) {
        int64_t key = bucketKeys[p];
        int32_t index = bucketIndex[p];
        int64_t home = spconv_ht_home_slot(key, capacity);
        int64_t r = probeForInsert(tableKeys, key, home, mask, stop,
                                   int64_t(1) << shift);
        if (r == kStopped) {
          bucketKeys[first + numDeferred] = key;
          bucketIndex[first + numDeferred] = index;
          ++numDeferred;
        } else if (r >= 0) {
          minDup = std::min<int64_t>(minDup, index);
        } else {
          tableKeys[-2 - r] = key;
          tableValues[-2 - r] = index;
        }
      }
      deferred[c] = numDeferred;
    }
    minDuplicate[tid] = minDup;
  });

  // Deferred keys, in chunk order, probing the whole table.
  int64_t minDup = INT64_MAX;
  for (int t = 0; t < chunkThreads; ++t)
    minDup = std::min(minDup, minDuplicate[t]);
  for (int64_t c = 0; c < numChunks; ++c) {
    for (int64_t p = chunkStart[c], e = p + deferred[c]; p < e; ++p) {
      int64_t key = bucketKeys[p];
      int64_t home = spconv_ht_home_slot(key, capacity);
      // stop = -1 never matches a slot: probe until found or empty.
      int64_t r = probeForInsert(tableKeys, key, home, mask, -1, capacity);
      if (r >= 0) {
        minDup = std::min<int64_t>(minDup, bucketIndex[p]);
      } else if (r != kStopped) {
        tableKeys[-2 - r] = key;
        tableValues[-2 - r] = bucketIndex[p];
      }
    }
  }

  if (minDup != INT64_MAX) {
    if (duplicateIndex)
      *duplicateIndex = minDup;
    return setError(SPCONV_RT_ERR_DUPLICATE_KEY,
                    "%s: key %lld at index %lld repeats an earlier key", fn,
                    static_cast<long long>(keys[minDup]),
                    static_cast<long long>(minDup));
  }
  return SPCONV_RT_OK;
}

int spconv::rt::hashLookup(const int64_t *tableKeys,
                           const int32_t *tableValues, int64_t capacity,
                           const int64_t *queries, int64_t m, int32_t *out) {
  const char *fn = "spconv_rt_hash_lookup";
  if (int status = checkCapacity(fn, capacity))
    return status;
  if (int status = checkCount(fn, m, "queries"))
    return status;
  if (!tableKeys || !tableValues)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: %s is a null pointer", fn,
                    !tableKeys ? "tableKeys" : "tableValues");
  if (m == 0)
    return SPCONV_RT_OK;
  if (!queries || !out)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: %s is a null pointer", fn,
                    !queries ? "queries" : "out");
  int threads = threadsFor(m);
  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(m, threads, tid);
    lookupRange(tableKeys, tableValues, capacity - 1, queries, begin, end, out);
  });
  return SPCONV_RT_OK;
}

extern "C" int spconv_rt_hash_capacity(int64_t n, int64_t *capacity) {
  if (!capacity)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "spconv_rt_hash_capacity: null output pointer");
  *capacity = -1;
  if (int status = checkCount("spconv_rt_hash_capacity", n, "keys"))
    return status;
  int64_t c = spconv_ht_capacity_for(n);
  if (c < 0)
    return setError(SPCONV_RT_ERR_CAPACITY,
                    "spconv_rt_hash_capacity: %lld keys exceed the table "
                    "limit of %lld (int32 values)",
                    static_cast<long long>(n),
                    static_cast<long long>(SPCONV_HT_MAX_ENTRIES));
  *capacity = c;
  return SPCONV_RT_OK;
}

extern "C" int spconv_rt_hash_build(const int64_t *keys, int64_t n,
                                    int64_t *tableKeys, int32_t *tableValues,
                                    int64_t capacity,
                                    int64_t *duplicateIndex) {
  return hashBuild(keys, n, tableKeys, tableValues, capacity, duplicateIndex);
}

extern "C" int spconv_rt_hash_lookup(const int64_t *tableKeys,
                                     const int32_t *tableValues,
                                     int64_t capacity, const int64_t *queries,
                                     int64_t m, int32_t *out) {
  return hashLookup(tableKeys, tableValues, capacity, queries, m, out);
}
