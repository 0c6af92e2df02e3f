//===- MemRefViews.h - Checked views of memref descriptors ------*- C++ -*-===//
//
// The descriptor checks shared by the CPU and CUDA _mlir_ciface_* entry
// points: null descriptors, negative sizes, unit stride for 1-D buffers.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_RT_LIB_MEMREFVIEWS_H
#define SPCONV_RT_LIB_MEMREFVIEWS_H

#include "Support.h"

/// Returns from the calling function when `expr` (a status) is not OK.
#define SPCONV_RT_CHECK(expr)                                                  \
  do {                                                                         \
    if (int status_ = (expr))                                                  \
      return status_;                                                          \
  } while (false)

namespace spconv {
namespace rt {

/// Checks a 1-D descriptor and returns its first element in *ptr and its size
/// in *size. Size 0 and 1 memrefs may have any stride.
template <typename T>
inline int view1D(const char *fn, const char *name, StridedMemRefType<T, 1> *m,
                  T **ptr, int64_t *size) {
  *ptr = nullptr;
  *size = 0;
  if (!m)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref '%s' is a null descriptor", fn, name);
  if (m->sizes[0] < 0)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref '%s' has negative size %lld", fn, name,
                    static_cast<long long>(m->sizes[0]));
  if (m->sizes[0] > 1 && m->strides[0] != 1)
    return setError(SPCONV_RT_ERR_UNSUPPORTED,
                    "%s: memref '%s' has stride %lld; only unit stride is "
                    "supported (copy it to a contiguous memref)",
                    fn, name, static_cast<long long>(m->strides[0]));
  if (m->sizes[0] > 0 && !m->data)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref '%s' has a null data pointer", fn, name);
  *ptr = m->sizes[0] > 0 ? m->data + m->offset : nullptr;
  *size = m->sizes[0];
  return SPCONV_RT_OK;
}

/// Checks the keys and values of a sort (1-D, the same size).
inline int viewSortPairs(const char *fn, StridedMemRefType<int64_t, 1> *keys,
                         StridedMemRefType<int32_t, 1> *values, int64_t **k,
                         int32_t **v, int64_t *n) {
  int64_t numValues;
  SPCONV_RT_CHECK(view1D(fn, "keys", keys, k, n));
  SPCONV_RT_CHECK(view1D(fn, "values", values, v, &numValues));
  if (numValues != *n)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: keys has %lld elements but values has %lld", fn,
                    static_cast<long long>(*n),
                    static_cast<long long>(numValues));
  return SPCONV_RT_OK;
}

template <typename T>
inline int needAtLeast(const char *fn, const char *name, int64_t size,
                       int64_t need) {
  if (size < need)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref '%s' has %lld elements, needs at least %lld",
                    fn, name, static_cast<long long>(size),
                    static_cast<long long>(need));
  return SPCONV_RT_OK;
}
/// A hash table's two halves (HashTableLayout.h), checked: one capacity.
inline int viewTable(const char *fn, StridedMemRefType<int64_t, 1> *tableKeys,
                     StridedMemRefType<int32_t, 1> *tableValues,
                     int64_t **keys, int32_t **values, int64_t *capacity) {
  int64_t numValues;
  SPCONV_RT_CHECK(view1D(fn, "tableKeys", tableKeys, keys, capacity));
  SPCONV_RT_CHECK(view1D(fn, "tableValues", tableValues, values, &numValues));
  if (numValues != *capacity)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: tableKeys has %lld elements but tableValues has %lld",
                    fn, static_cast<long long>(*capacity),
                    static_cast<long long>(numValues));
  return SPCONV_RT_OK;
}


/// The buffers of a hash build, checked: equal table sizes, one slot for
/// the duplicate row.
struct HashBuildBuffers {
  int64_t *keys, n, *tableKeys, capacity, *duplicateIndex;
  int32_t *tableValues;
};
inline int viewHashBuild(const char *fn, StridedMemRefType<int64_t, 1> *keys,
                         StridedMemRefType<int64_t, 1> *tableKeys,
                         StridedMemRefType<int32_t, 1> *tableValues,
                         StridedMemRefType<int64_t, 1> *duplicateIndex,
                         HashBuildBuffers &b) {
  int64_t dupSize;
  SPCONV_RT_CHECK(view1D(fn, "keys", keys, &b.keys, &b.n));
  SPCONV_RT_CHECK(viewTable(fn, tableKeys, tableValues, &b.tableKeys,
                            &b.tableValues, &b.capacity));
  SPCONV_RT_CHECK(view1D(fn, "duplicateIndex", duplicateIndex,
                         &b.duplicateIndex, &dupSize));
  return needAtLeast<int64_t>(fn, "duplicateIndex", dupSize, 1);
}

/// The buffers of a unique, checked: outputs at least as long as the keys.
struct UniqueBuffers {
  int64_t *keys, n, *uniqueKeys, *numUnique;
  int32_t *firstIndex, *inverse;
};
inline int viewUnique(const char *fn, StridedMemRefType<int64_t, 1> *keys,
                      StridedMemRefType<int64_t, 1> *uniqueKeys,
                      StridedMemRefType<int32_t, 1> *firstIndex,
                      StridedMemRefType<int32_t, 1> *inverse,
                      StridedMemRefType<int64_t, 1> *numUnique,
                      UniqueBuffers &b) {
  int64_t numU, numFirst, numInverse, numCount;
  SPCONV_RT_CHECK(view1D(fn, "keys", keys, &b.keys, &b.n));
  SPCONV_RT_CHECK(view1D(fn, "uniqueKeys", uniqueKeys, &b.uniqueKeys, &numU));
  SPCONV_RT_CHECK(
      view1D(fn, "firstIndex", firstIndex, &b.firstIndex, &numFirst));
  SPCONV_RT_CHECK(view1D(fn, "inverse", inverse, &b.inverse, &numInverse));
  SPCONV_RT_CHECK(view1D(fn, "numUnique", numUnique, &b.numUnique, &numCount));
  SPCONV_RT_CHECK(needAtLeast<int64_t>(fn, "uniqueKeys", numU, b.n));
  SPCONV_RT_CHECK(needAtLeast<int32_t>(fn, "firstIndex", numFirst, b.n));
  SPCONV_RT_CHECK(needAtLeast<int32_t>(fn, "inverse", numInverse, b.n));
  SPCONV_RT_CHECK(needAtLeast<int64_t>(fn, "numUnique", numCount, 1));
  return SPCONV_RT_OK;
}

/// The buffers of an exclusive scan, checked: `out` (which may alias `in`)
/// at least as long as `in`, one slot for the total.
template <typename T> struct ScanBuffers {
  T *in, *out, *total;
  int64_t n;
};
template <typename T>
inline int viewScan(const char *fn, StridedMemRefType<T, 1> *in,
                    StridedMemRefType<T, 1> *out,
                    StridedMemRefType<T, 1> *total, ScanBuffers<T> &b) {
  int64_t numOut, numTotal;
  SPCONV_RT_CHECK(view1D(fn, "in", in, &b.in, &b.n));
  SPCONV_RT_CHECK(view1D(fn, "out", out, &b.out, &numOut));
  SPCONV_RT_CHECK(view1D(fn, "total", total, &b.total, &numTotal));
  SPCONV_RT_CHECK(needAtLeast<T>(fn, "out", numOut, b.n));
  SPCONV_RT_CHECK(needAtLeast<T>(fn, "total", numTotal, 1));
  return SPCONV_RT_OK;
}

/// Checks a N x (1 + D) coordinate descriptor (any strides).
inline int viewCoords(const char *fn, StridedMemRefType<int32_t, 2> *m,
                      int32_t dims, int64_t minRows, bool exactRows) {
  if (!m)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref 'coords' is a null descriptor", fn);
  if (m->sizes[0] < 0 || m->sizes[1] != dims + 1)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref 'coords' has shape %lldx%lld, expected Nx%d",
                    fn, static_cast<long long>(m->sizes[0]),
                    static_cast<long long>(m->sizes[1]), dims + 1);
  if (exactRows ? m->sizes[0] != minRows : m->sizes[0] < minRows)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref 'coords' has %lld rows, expected %s%lld", fn,
                    static_cast<long long>(m->sizes[0]),
                    exactRows ? "" : ">= ", static_cast<long long>(minRows));
  if (m->sizes[0] > 0 && !m->data)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref 'coords' has a null data pointer", fn);
  return SPCONV_RT_OK;
}

inline int viewShape(const char *fn,
                     StridedMemRefType<int64_t, 1> *shapeDesc,
                     const int64_t **shape, int32_t *dims) {
  *shape = nullptr;
  *dims = 0;
  int64_t *ptr;
  int64_t size;
  if (int status = view1D(fn, "spatialShape", shapeDesc, &ptr, &size))
    return status;
  if (size < 1 || size > SPCONV_RT_MAX_SPATIAL_DIMS)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref 'spatialShape' has %lld elements, expected "
                    "[1, %d]",
                    fn, static_cast<long long>(size),
                    SPCONV_RT_MAX_SPATIAL_DIMS);
  *shape = ptr;
  *dims = static_cast<int32_t>(size);
  return SPCONV_RT_OK;
}


/// The buffers of a hash lookup, checked: the table's two halves of one
/// capacity, an output row per query.
struct HashLookupBuffers {
  int64_t *tableKeys, capacity, *queries, m;
  int32_t *tableValues, *out;
};
inline int viewHashLookup(const char *fn,
                          StridedMemRefType<int64_t, 1> *tableKeys,
                          StridedMemRefType<int32_t, 1> *tableValues,
                          StridedMemRefType<int64_t, 1> *queries,
                          StridedMemRefType<int32_t, 1> *out,
                          HashLookupBuffers &b) {
  int64_t numOut;
  SPCONV_RT_CHECK(viewTable(fn, tableKeys, tableValues, &b.tableKeys,
                            &b.tableValues, &b.capacity));
  SPCONV_RT_CHECK(view1D(fn, "queries", queries, &b.queries, &b.m));
  SPCONV_RT_CHECK(view1D(fn, "out", out, &b.out, &numOut));
  return needAtLeast<int32_t>(fn, "out", numOut, b.m);
}

/// The buffers of a conversion between N x (1 + D) coordinates (any
/// strides) and N keys, checked: `coords` points at the first coordinate
/// (null for N = 0), `rowStride` and `colStride` are its strides.
struct KeyCoordBuffers {
  const int64_t *shape;
  int32_t dims, *coords;
  int64_t *keys, n, rowStride, colStride;
};
/// For linearize: N is the coordinates' row count; `keys` holds at least N.
inline int viewLinearize(const char *fn, StridedMemRefType<int32_t, 2> *coords,
                         StridedMemRefType<int64_t, 1> *spatialShape,
                         StridedMemRefType<int64_t, 1> *keys,
                         KeyCoordBuffers &b) {
  int64_t numKeys;
  SPCONV_RT_CHECK(viewShape(fn, spatialShape, &b.shape, &b.dims));
  SPCONV_RT_CHECK(view1D(fn, "keys", keys, &b.keys, &numKeys));
  SPCONV_RT_CHECK(viewCoords(fn, coords, b.dims, 0, false));
  b.n = coords->sizes[0];
  SPCONV_RT_CHECK(needAtLeast<int64_t>(fn, "keys", numKeys, b.n));
  b.coords = b.n ? coords->data + coords->offset : nullptr;
  b.rowStride = coords->strides[0];
  b.colStride = coords->strides[1];
  return SPCONV_RT_OK;
}
/// For delinearize: N is the key count; `coords` holds at least N rows.
inline int viewDelinearize(const char *fn, StridedMemRefType<int64_t, 1> *keys,
                           StridedMemRefType<int64_t, 1> *spatialShape,
                           StridedMemRefType<int32_t, 2> *coords,
                           KeyCoordBuffers &b) {
  SPCONV_RT_CHECK(viewShape(fn, spatialShape, &b.shape, &b.dims));
  SPCONV_RT_CHECK(view1D(fn, "keys", keys, &b.keys, &b.n));
  SPCONV_RT_CHECK(viewCoords(fn, coords, b.dims, b.n, false));
  b.coords = b.n ? coords->data + coords->offset : nullptr;
  b.rowStride = coords->strides[0];
  b.colStride = coords->strides[1];
  return SPCONV_RT_OK;
}

} // namespace rt
} // namespace spconv

#endif // SPCONV_RT_LIB_MEMREFVIEWS_H
