//===- Coords.cpp - Linear coordinate keys --------------------------------===//
//
// key = ((b * S0 + x0) * S1 + x1) ... in int64. Every coordinate is range
// checked before it is used, and the grid volume B * prod(S) is checked for
// int64 overflow first, so no key can wrap around onto another site's key.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <climits>

using namespace spconv::rt;

int spconv_rt_internal_check_grid(const char *fn, int32_t numSpatialDims,
                                  const int64_t *shape, int64_t batchSize,
                                  int64_t *volume) {
  if (numSpatialDims < 1 || numSpatialDims > SPCONV_RT_MAX_SPATIAL_DIMS)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: number of spatial dims %d is outside [1, %d]", fn,
                    numSpatialDims, SPCONV_RT_MAX_SPATIAL_DIMS);
  if (!shape)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: spatial shape is a null pointer", fn);
  if (batchSize < 1)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: batch size %lld must be positive", fn,
                    static_cast<long long>(batchSize));
  int64_t v = batchSize;
  for (int32_t d = 0; d < numSpatialDims; ++d) {
    if (shape[d] < 1)
      return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                      "%s: spatial shape[%d] = %lld must be positive", fn, d,
                      static_cast<long long>(shape[d]));
    if (__builtin_mul_overflow(v, shape[d], &v))
      return setError(SPCONV_RT_ERR_OVERFLOW,
                      "%s: grid volume batch size * prod(spatial shape) "
                      "overflows int64 (at spatial dim %d)",
                      fn, d);
  }
  *volume = v;
  return SPCONV_RT_OK;
}

int spconv_rt_internal_check_int32_grid(const char *fn,
                                        int32_t numSpatialDims,
                                        const int64_t *shape,
                                        int64_t batchSize) {
  // Coordinates are int32: a dim (or batch) past INT32_MAX cannot be written.
  if (batchSize > INT32_MAX)
    return setError(SPCONV_RT_ERR_OVERFLOW,
                    "%s: batch size %lld does not fit int32 coordinates", fn,
                    static_cast<long long>(batchSize));
  for (int32_t d = 0; d < numSpatialDims; ++d)
    if (shape[d] > INT32_MAX)
      return setError(SPCONV_RT_ERR_OVERFLOW,
                      "%s: spatial shape[%d] = %lld does not fit int32 "
                      "coordinates",
                      fn, d, static_cast<long long>(shape[d]));
  return SPCONV_RT_OK;
}

int spconv_rt_internal_report_bad_key(const char *fn, int64_t key,
                                      int64_t index, int64_t volume) {
  return setError(SPCONV_RT_ERR_OUT_OF_RANGE,
                  "%s: key %lld at index %lld is outside the grid [0, %lld)",
                  fn, static_cast<long long>(key),
                  static_cast<long long>(index),
                  static_cast<long long>(volume));
}

namespace {
/// Index of the first out-of-range column of a row, or -1.
inline int badColumn(const int32_t *row, int64_t colStride, int32_t dims,
                     const int64_t *shape, int64_t batchSize) {
  if (row[0] < 0 || row[0] >= batchSize)
    return 0;
  for (int32_t d = 0; d < dims; ++d) {
    int32_t x = row[(d + 1) * colStride];
    if (x < 0 || x >= shape[d])
      return d + 1;
  }
  return -1;
}
} // namespace

int spconv::rt::linearizeCoords(const int32_t *coords, int64_t n,
                                int64_t rowStride, int64_t colStride,
                                int32_t dims, const int64_t *shape,
                                int64_t batchSize, int64_t *keys) {
  const char *fn = "spconv_rt_linearize_coords";
  int64_t volume;
  if (int status = checkGrid(fn, dims, shape, batchSize, &volume))
    return status;
  if (int status = checkCount(fn, n, "sites"))
    return status;
  if (n == 0)
    return SPCONV_RT_OK;
  if (!coords || !keys)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: %s is a null pointer", fn, !coords ? "coords" : "keys");

  // Each thread remembers its first bad row; the smallest one is reported so
  // the message does not depend on the thread count.
  int threads = threadsFor(n);
  int64_t firstBad[kMaxThreads];
  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(n, threads, tid);
    firstBad[tid] = -1;
    for (int64_t i = begin; i < end; ++i) {
      const int32_t *row = coords + i * rowStride;
      if (badColumn(row, colStride, dims, shape, batchSize) >= 0) {
        firstBad[tid] = i;
        return;
      }
      int64_t key = row[0];
      for (int32_t d = 0; d < dims; ++d)
        key = key * shape[d] + row[(d + 1) * colStride];
      keys[i] = key;
    }
  });
  for (int t = 0; t < threads; ++t) {
    int64_t i = firstBad[t];
    if (i >= 0)
      return reportBadSite(fn, i, coords + i * rowStride, colStride, dims,
                           shape, batchSize);
  }
  return SPCONV_RT_OK;
}

int spconv_rt_internal_report_bad_site(const char *fn, int64_t i,
                                       const int32_t *row, int64_t colStride,
                                       int32_t dims, const int64_t *shape,
                                       int64_t batchSize) {
  int col = badColumn(row, colStride, dims, shape, batchSize);
  if (col < 0)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: row %lld is inside the grid", fn,
                    static_cast<long long>(i));
  if (col == 0)
    return setError(SPCONV_RT_ERR_OUT_OF_RANGE,
                    "%s: row %lld: batch index %d is outside [0, %lld)", fn,
                    static_cast<long long>(i), row[0],
                    static_cast<long long>(batchSize));
  return setError(SPCONV_RT_ERR_OUT_OF_RANGE,
                  "%s: row %lld: coordinate %d (column %d) = %d is outside "
                  "[0, %lld)",
                  fn, static_cast<long long>(i), col - 1, col,
                  row[col * colStride], static_cast<long long>(shape[col - 1]));
}

int spconv::rt::delinearizeKeys(const int64_t *keys, int64_t n, int32_t dims,
                                const int64_t *shape, int64_t batchSize,
                                int32_t *coords, int64_t rowStride,
                                int64_t colStride) {
  const char *fn = "spconv_rt_delinearize_keys";
  int64_t volume;
  if (int status = checkGrid(fn, dims, shape, batchSize, &volume))
    return status;
  if (int status = checkCount(fn, n, "keys"))
    return status;
  if (n == 0)
    return SPCONV_RT_OK;
  if (!coords || !keys)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: %s is a null pointer", fn, !coords ? "coords" : "keys");
  if (int status = checkInt32Grid(fn, dims, shape, batchSize))
    return status;

  int threads = threadsFor(n);
  int64_t firstBad[kMaxThreads];
  runThreads(threads, [&](int tid) {
    auto [begin, end] = splitRange(n, threads, tid);
    firstBad[tid] = -1;
    for (int64_t i = begin; i < end; ++i) {
      int64_t key = keys[i];
      if (key < 0 || key >= volume) {
        firstBad[tid] = i;
        return;
      }
      int32_t *row = coords + i * rowStride;
      for (int32_t d = dims - 1; d >= 0; --d) {
        row[(d + 1) * colStride] = static_cast<int32_t>(key % shape[d]);
        key /= shape[d];
      }
      row[0] = static_cast<int32_t>(key);
    }
  });
  for (int t = 0; t < threads; ++t)
    if (firstBad[t] >= 0)
      return reportBadKey(fn, keys[firstBad[t]], firstBad[t], volume);
  return SPCONV_RT_OK;
}

extern "C" int spconv_rt_linearize_coords(const int32_t *coords, int64_t n,
                                          int32_t numSpatialDims,
                                          const int64_t *spatialShape,
                                          int64_t batchSize, int64_t *keys) {
  return linearizeCoords(coords, n, numSpatialDims + 1, 1, numSpatialDims,
                         spatialShape, batchSize, keys);
}

extern "C" int spconv_rt_delinearize_keys(const int64_t *keys, int64_t n,
                                          int32_t numSpatialDims,
                                          const int64_t *spatialShape,
                                          int64_t batchSize, int32_t *coords) {
  return delinearizeKeys(keys, n, numSpatialDims, spatialShape, batchSize,
                         coords, numSpatialDims + 1, 1);
}
