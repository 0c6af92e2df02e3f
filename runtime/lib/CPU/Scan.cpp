//===- Scan.cpp - Exclusive prefix sums with overflow detection -----------===//
//
// Two passes: per-thread range sums, then a rescan of each range from its
// offset. Sums are accumulated in a wider type (int64 for int32 input,
// __int128 for int64 input), so overflow is detected exactly, at the first
// partial sum that leaves the element type, for any thread count.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <algorithm>
#include <limits>

using namespace spconv::rt;

namespace {
template <typename T, typename Wide>
int exclusiveScan(const char *fn, const T *in, int64_t n, T *out, T *total) {
  if (total)
    *total = 0;
  if (int status = checkCount(fn, n, "elements"))
    return status;
  if (n == 0)
    return SPCONV_RT_OK;
  if (!in || !out)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: %s is a null pointer", fn, !in ? "in" : "out");

  int threads = threadsFor(n, 1 << 17);
  Wide sums[kMaxThreads];
  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(n, threads, tid);
    Wide sum = 0;
    for (int64_t i = begin; i < end; ++i)
      sum += in[i];
    sums[tid] = sum;
  });
  Wide running = 0;
  for (int t = 0; t < threads; ++t) {
    Wide sum = sums[t];
    sums[t] = running;
    running += sum;
  }
  // firstOverflow[t]: first position in range t whose inclusive sum leaves T.
  constexpr Wide lo = std::numeric_limits<T>::min();
  constexpr Wide hi = std::numeric_limits<T>::max();
  int64_t firstOverflow[kMaxThreads];
  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(n, threads, tid);
    Wide sum = sums[tid];
    firstOverflow[tid] = -1;
    for (int64_t i = begin; i < end; ++i) {
      T value = in[i]; // Read before the write: `out` may alias `in`.
      out[i] = static_cast<T>(sum);
      sum += value;
      if (sum < lo || sum > hi) {
        firstOverflow[tid] = i;
        return;
      }
    }
  });
  for (int t = 0; t < threads; ++t)
    if (firstOverflow[t] >= 0)
      return setError(SPCONV_RT_ERR_OVERFLOW,
                      "%s: the sum of elements [0, %lld] overflows the "
                      "element type",
                      fn, static_cast<long long>(firstOverflow[t]));
  if (total)
    *total = static_cast<T>(running);
  return SPCONV_RT_OK;
}
} // namespace

int spconv::rt::exclusiveScanI32(const int32_t *in, int64_t n, int32_t *out,
                                 int32_t *total) {
  return exclusiveScan<int32_t, int64_t>("spconv_rt_exclusive_scan_i32", in, n,
                                         out, total);
}

int spconv::rt::exclusiveScanI64(const int64_t *in, int64_t n, int64_t *out,
                                 int64_t *total) {
  return exclusiveScan<int64_t, __int128>("spconv_rt_exclusive_scan_i64", in,
                                          n, out, total);
}

extern "C" int spconv_rt_exclusive_scan_i32(const int32_t *in, int64_t n,
                                            int32_t *out, int32_t *total) {
  return exclusiveScanI32(in, n, out, total);
}

extern "C" int spconv_rt_exclusive_scan_i64(const int64_t *in, int64_t n,
                                            int64_t *out, int64_t *total) {
  return exclusiveScanI64(in, n, out, total);
}
