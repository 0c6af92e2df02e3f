//===- MemRefAPI.cpp - Entry points on MLIR memref descriptors ------------===//
//
// _mlir_ciface_* wrappers for functions declared with llvm.emit_c_interface.
// Each checks the descriptors (null, sizes, unit stride for 1-D arguments)
// and forwards to the pointer-based implementation.
//
//===----------------------------------------------------------------------===//

#include "MemRefViews.h"
#include "Support.h"

#include <cstdio>

using namespace spconv::rt;


extern "C" int _mlir_ciface_spconv_rt_memref_linearize_coords(
    StridedMemRefType<int32_t, 2> *coords,
    StridedMemRefType<int64_t, 1> *spatialShape, int64_t batchSize,
    StridedMemRefType<int64_t, 1> *keys) {
  KeyCoordBuffers b;
  SPCONV_RT_CHECK(viewLinearize("spconv_rt_memref_linearize_coords", coords,
                                spatialShape, keys, b));
  return linearizeCoords(b.coords, b.n, b.rowStride, b.colStride, b.dims,
                         b.shape, batchSize, b.keys);
}

extern "C" int _mlir_ciface_spconv_rt_memref_delinearize_keys(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *spatialShape, int64_t batchSize,
    StridedMemRefType<int32_t, 2> *coords) {
  KeyCoordBuffers b;
  SPCONV_RT_CHECK(viewDelinearize("spconv_rt_memref_delinearize_keys", keys,
                                  spatialShape, coords, b));
  return delinearizeKeys(b.keys, b.n, b.dims, b.shape, batchSize, b.coords,
                         b.rowStride, b.colStride);
}

extern "C" int _mlir_ciface_spconv_rt_memref_report_duplicate_site(
    StridedMemRefType<int32_t, 2> *coords, StridedMemRefType<int64_t, 1> *keys,
    int64_t duplicateIndex) {
  const char *fn = "spconv_rt_memref_report_duplicate_site";
  int64_t *keysPtr, n;
  SPCONV_RT_CHECK(view1D(fn, "keys", keys, &keysPtr, &n));
  if (duplicateIndex < 0 || duplicateIndex >= n || coords->sizes[0] < n ||
      coords->sizes[1] < 1)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: duplicate index %lld outside [0, %lld)", fn,
                    static_cast<long long>(duplicateIndex),
                    static_cast<long long>(n));
  int64_t first = 0;
  while (keysPtr[first] != keysPtr[duplicateIndex])
    ++first;
  // "(b, x0, x1, ...)" of the repeated site.
  char site[256];
  int length = 0;
  for (int64_t c = 0; c < coords->sizes[1] && length < 200; ++c) {
    int32_t value =
        coords->data[coords->offset + duplicateIndex * coords->strides[0] +
                     c * coords->strides[1]];
    length += std::snprintf(site + length, sizeof(site) - length, "%s%d",
                            c ? ", " : "(", value);
  }
  std::snprintf(site + length, sizeof(site) - length, ")");
  return setError(SPCONV_RT_ERR_DUPLICATE_KEY,
                  "duplicate input site %s at rows %lld and %lld", site,
                  static_cast<long long>(first),
                  static_cast<long long>(duplicateIndex));
}

extern "C" int _mlir_ciface_spconv_rt_report_bad_index(int64_t position,
                                                       int64_t value,
                                                       int64_t bound) {
  return spconv_rt_report_bad_index(position, value, bound);
}

extern "C" int _mlir_ciface_spconv_rt_report_row_mismatch(int64_t rows,
                                                          int64_t expected,
                                                          int64_t what) {
  return spconv_rt_report_row_mismatch(rows, expected, what);
}

extern "C" int _mlir_ciface_spconv_rt_report_size_mismatch(int64_t what,
                                                           int64_t actual,
                                                           int64_t expected,
                                                           int64_t line) {
  return spconv_rt_report_size_mismatch(what, actual, expected, line);
}

extern "C" int _mlir_ciface_spconv_rt_report_empty_window(int64_t dim,
                                                          int64_t extent,
                                                          int64_t padding,
                                                          int64_t kernelExtent,
                                                          int64_t line) {
  return spconv_rt_report_empty_window(dim, extent, padding, kernelExtent,
                                       line);
}

extern "C" int _mlir_ciface_spconv_rt_memref_report_alloc_failure(
    StridedMemRefType<int8_t, 1> *what, int64_t line) {
  // A description from lowered code: bytes, not NUL-terminated. An
  // unusable descriptor leaves it out rather than hiding the failure.
  char text[512];
  int64_t length = 0;
  if (what && what->data && what->sizes[0] > 0) {
    length = what->sizes[0] < int64_t(sizeof(text)) ? what->sizes[0]
                                                    : int64_t(sizeof(text));
    const int8_t *begin = what->data + what->offset;
    for (int64_t i = 0; i < length; ++i)
      text[i] = static_cast<char>(begin[i * what->strides[0]]);
  }
  return reportAllocFailure(text, length, line);
}

extern "C" int _mlir_ciface_spconv_rt_memref_hash_capacity(
    int64_t n, StridedMemRefType<int64_t, 1> *capacity) {
  const char *fn = "spconv_rt_memref_hash_capacity";
  int64_t *out, size;
  SPCONV_RT_CHECK(view1D(fn, "capacity", capacity, &out, &size));
  SPCONV_RT_CHECK(needAtLeast<int64_t>(fn, "capacity", size, 1));
  return spconv_rt_hash_capacity(n, out);
}

extern "C" int _mlir_ciface_spconv_rt_memref_hash_build(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *duplicateIndex) {
  HashBuildBuffers b;
  SPCONV_RT_CHECK(viewHashBuild("spconv_rt_memref_hash_build", keys, tableKeys,
                                tableValues, duplicateIndex, b));
  return hashBuild(b.keys, b.n, b.tableKeys, b.tableValues, b.capacity,
                   b.duplicateIndex);
}

extern "C" int _mlir_ciface_spconv_rt_memref_hash_lookup(
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *queries,
    StridedMemRefType<int32_t, 1> *out) {
  HashLookupBuffers b;
  SPCONV_RT_CHECK(viewHashLookup("spconv_rt_memref_hash_lookup", tableKeys,
                                 tableValues, queries, out, b));
  return hashLookup(b.tableKeys, b.tableValues, b.capacity, b.queries, b.m,
                    b.out);
}

extern "C" int
_mlir_ciface_spconv_rt_memref_sort_keys(StridedMemRefType<int64_t, 1> *keys) {
  int64_t *k, n;
  SPCONV_RT_CHECK(view1D("spconv_rt_memref_sort_keys", "keys", keys, &k, &n));
  return sortPairs(k, nullptr, n);
}

extern "C" int _mlir_ciface_spconv_rt_memref_sort_pairs(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int32_t, 1> *values) {
  const char *fn = "spconv_rt_memref_sort_pairs";
  int64_t *k, n;
  int32_t *v;
  SPCONV_RT_CHECK(viewSortPairs(fn, keys, values, &k, &v, &n));
  return sortPairs(k, v, n);
}

extern "C" int _mlir_ciface_spconv_rt_memref_sort_pairs_bits(
    StridedMemRefType<int64_t, 1> *keys, StridedMemRefType<int32_t, 1> *values,
    int64_t endBit) {
  const char *fn = "spconv_rt_memref_sort_pairs_bits";
  int64_t *k, n;
  int32_t *v;
  SPCONV_RT_CHECK(viewSortPairs(fn, keys, values, &k, &v, &n));
  if (endBit < 1 || endBit > 63)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: key width %lld is not in [1, 63]", fn,
                    static_cast<long long>(endBit));
  // The CPU sort finds the keys' width itself; it also rejects a key past
  // the promised one, which the CUDA twin does not check.
  for (int64_t i = 0; i < n; ++i)
    if (k[i] < 0 || (k[i] >> endBit) != 0)
      return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                      "%s: key %lld at %lld is not in [0, 2^%lld)", fn,
                      static_cast<long long>(k[i]), static_cast<long long>(i),
                      static_cast<long long>(endBit));
  return sortPairs(k, v, n);
}

extern "C" int
_mlir_ciface_spconv_rt_memref_unique(StridedMemRefType<int64_t, 1> *keys,
                                     StridedMemRefType<int64_t, 1> *uniqueKeys,
                                     StridedMemRefType<int32_t, 1> *firstIndex,
                                     StridedMemRefType<int32_t, 1> *inverse,
                                     StridedMemRefType<int64_t, 1> *numUnique) {
  UniqueBuffers b;
  SPCONV_RT_CHECK(viewUnique("spconv_rt_memref_unique", keys, uniqueKeys,
                             firstIndex, inverse, numUnique, b));
  return unique(b.keys, b.n, b.uniqueKeys, b.firstIndex, b.inverse,
                b.numUnique);
}

template <typename T, int (*Scan)(const T *, int64_t, T *, T *)>
static int scanMemRef(const char *fn, StridedMemRefType<T, 1> *in,
                      StridedMemRefType<T, 1> *out,
                      StridedMemRefType<T, 1> *total) {
  ScanBuffers<T> b;
  SPCONV_RT_CHECK(viewScan(fn, in, out, total, b));
  return Scan(b.in, b.n, b.out, b.total);
}

extern "C" int _mlir_ciface_spconv_rt_memref_exclusive_scan_i32(
    StridedMemRefType<int32_t, 1> *in, StridedMemRefType<int32_t, 1> *out,
    StridedMemRefType<int32_t, 1> *total) {
  return scanMemRef<int32_t, exclusiveScanI32>(
      "spconv_rt_memref_exclusive_scan_i32", in, out, total);
}

extern "C" int _mlir_ciface_spconv_rt_memref_exclusive_scan_i64(
    StridedMemRefType<int64_t, 1> *in, StridedMemRefType<int64_t, 1> *out,
    StridedMemRefType<int64_t, 1> *total) {
  return scanMemRef<int64_t, exclusiveScanI64>(
      "spconv_rt_memref_exclusive_scan_i64", in, out, total);
}

//===----------------------------------------------------------------------===//
// Deferred forms: data-dependent results go to memory, read back later
//===----------------------------------------------------------------------===//

/// Runs `call`. A failure with status `outcome` is a result of the deferred
/// form, not an error of the call: the error recorded before it is kept, and
/// the call succeeds.
template <typename Call> static int deferOutcome(int outcome, Call call) {
  char before[1024];
  std::snprintf(before, sizeof(before), "%s", spconv_rt_last_error());
  int status = call();
  if (status != outcome)
    return status;
  spconv_rt_internal_set_error(SPCONV_RT_OK, before);
  return SPCONV_RT_OK;
}

extern "C" int _mlir_ciface_spconv_rt_memref_hash_build_deferred(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *firstRepeat) {
  HashBuildBuffers b;
  SPCONV_RT_CHECK(viewHashBuild("spconv_rt_memref_hash_build_deferred", keys,
                                tableKeys, tableValues, firstRepeat, b));
  int64_t repeat = -1;
  SPCONV_RT_CHECK(deferOutcome(SPCONV_RT_ERR_DUPLICATE_KEY, [&] {
    return hashBuild(b.keys, b.n, b.tableKeys, b.tableValues, b.capacity,
                     &repeat);
  }));
  if (repeat >= 0 && repeat < *b.duplicateIndex)
    *b.duplicateIndex = repeat;
  return SPCONV_RT_OK;
}

extern "C" int _mlir_ciface_spconv_rt_memref_exclusive_scan_i64_deferred(
    StridedMemRefType<int64_t, 1> *in, StridedMemRefType<int64_t, 1> *out,
    StridedMemRefType<int64_t, 1> *total) {
  ScanBuffers<int64_t> b;
  SPCONV_RT_CHECK(viewScan("spconv_rt_memref_exclusive_scan_i64_deferred", in,
                           out, total, b));
  bool overflowed = true;
  SPCONV_RT_CHECK(deferOutcome(SPCONV_RT_ERR_OVERFLOW, [&] {
    int status = exclusiveScanI64(b.in, b.n, b.out, b.total);
    overflowed = status == SPCONV_RT_ERR_OVERFLOW;
    return status;
  }));
  if (overflowed)
    *b.total = -1;
  return SPCONV_RT_OK;
}

extern "C" int _mlir_ciface_spconv_rt_memref_unique_deferred(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *uniqueKeys,
    StridedMemRefType<int32_t, 1> *firstIndex,
    StridedMemRefType<int32_t, 1> *inverse,
    StridedMemRefType<int64_t, 1> *numUnique, int64_t endBit) {
  const char *fn = "spconv_rt_memref_unique_deferred";
  UniqueBuffers b;
  SPCONV_RT_CHECK(
      viewUnique(fn, keys, uniqueKeys, firstIndex, inverse, numUnique, b));
  // The CUDA twin sorts only the bits below endBit: hold the CPU to the
  // same contract.
  if (endBit < 1 || endBit > 63)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: key width %lld is not in [1, 63]", fn,
                    static_cast<long long>(endBit));
  for (int64_t i = 0; i < b.n; ++i)
    if (b.keys[i] < 0 || (b.keys[i] >> endBit) != 0)
      return setError(SPCONV_RT_ERR_OUT_OF_RANGE,
                      "%s: key %lld at index %lld is outside [0, 2^%lld)", fn,
                      static_cast<long long>(b.keys[i]),
                      static_cast<long long>(i),
                      static_cast<long long>(endBit));
  return unique(b.keys, b.n, b.uniqueKeys, b.firstIndex, b.inverse,
                b.numUnique);
}

extern "C" int _mlir_ciface_spconv_rt_memref_report_build_error(
    StridedMemRefType<int32_t, 2> *coords, StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *spatialShape, int64_t batchSize,
    int64_t badRow, int64_t repeatRow, int64_t pairTotal) {
  const char *fn = "spconv_rt_memref_report_build_error";
  const int64_t *shape;
  int32_t dims;
  SPCONV_RT_CHECK(viewShape(fn, spatialShape, &shape, &dims));
  SPCONV_RT_CHECK(viewCoords(fn, coords, dims, 0, false));
  int64_t n = coords->sizes[0];
  // The first error a builder meets: a site outside the grid (its key is a
  // placeholder, so it may also look repeated), then a repeated site, then
  // too many pairs.
  if (badRow >= 0 && badRow < n)
    return reportBadSite("input coordinates", badRow,
                         coords->data + coords->offset +
                             badRow * coords->strides[0],
                         coords->strides[1], dims, shape, batchSize);
  if (repeatRow >= 0 && repeatRow < n)
    return _mlir_ciface_spconv_rt_memref_report_duplicate_site(coords, keys,
                                                               repeatRow);
  if (pairTotal < 0)
    return setError(SPCONV_RT_ERR_OVERFLOW,
                    "the number of rulebook pairs overflows int64");
  return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                  "%s: no error to report (bad row %lld, repeated row %lld, "
                  "%lld pairs for %lld sites)",
                  fn, static_cast<long long>(badRow),
                  static_cast<long long>(repeatRow),
                  static_cast<long long>(pairTotal), static_cast<long long>(n));
}
