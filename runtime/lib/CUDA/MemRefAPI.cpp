//===- MemRefAPI.cpp - CUDA primitives on MLIR memref descriptors ---------===//
//
// The _mlir_ciface_spconv_rt_cuda_memref_* twins of the CPU entry points
// that the CUDA target's host code calls (spconv-gpu-runtime-calls): the
// same descriptors and results, computed by the CUDA primitives. Buffers
// are managed memory, so the scalar outputs (totals, counts, the duplicate
// row) are written where the host reads them.
//
//===----------------------------------------------------------------------===//

#include "MemRefViews.h"

using namespace spconv::rt;

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_hash_build(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *duplicateIndex) {
  const char *fn = "spconv_rt_cuda_memref_hash_build";
  int64_t *k, n, *tk, capacity, *dup, dupSize, numValues;
  int32_t *tv;
  SPCONV_RT_CHECK(view1D(fn, "keys", keys, &k, &n));
  SPCONV_RT_CHECK(view1D(fn, "tableKeys", tableKeys, &tk, &capacity));
  SPCONV_RT_CHECK(view1D(fn, "tableValues", tableValues, &tv, &numValues));
  SPCONV_RT_CHECK(
      view1D(fn, "duplicateIndex", duplicateIndex, &dup, &dupSize));
  SPCONV_RT_CHECK(needAtLeast<int64_t>(fn, "duplicateIndex", dupSize, 1));
  if (numValues != capacity)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: tableKeys has %lld elements but tableValues has %lld",
                    fn, static_cast<long long>(capacity),
                    static_cast<long long>(numValues));
  return spconv_rt_cuda_hash_build(k, n, tk, tv, capacity, dup,
                                   /*stream=*/nullptr);
}

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_unique(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *uniqueKeys,
    StridedMemRefType<int32_t, 1> *firstIndex,
    StridedMemRefType<int32_t, 1> *inverse,
    StridedMemRefType<int64_t, 1> *numUnique) {
  const char *fn = "spconv_rt_cuda_memref_unique";
  int64_t *k, n, *u, numU, *count, numCount, numFirst, numInverse;
  int32_t *first, *inv;
  SPCONV_RT_CHECK(view1D(fn, "keys", keys, &k, &n));
  SPCONV_RT_CHECK(view1D(fn, "uniqueKeys", uniqueKeys, &u, &numU));
  SPCONV_RT_CHECK(view1D(fn, "firstIndex", firstIndex, &first, &numFirst));
  SPCONV_RT_CHECK(view1D(fn, "inverse", inverse, &inv, &numInverse));
  SPCONV_RT_CHECK(view1D(fn, "numUnique", numUnique, &count, &numCount));
  SPCONV_RT_CHECK(needAtLeast<int64_t>(fn, "uniqueKeys", numU, n));
  SPCONV_RT_CHECK(needAtLeast<int32_t>(fn, "firstIndex", numFirst, n));
  SPCONV_RT_CHECK(needAtLeast<int32_t>(fn, "inverse", numInverse, n));
  SPCONV_RT_CHECK(needAtLeast<int64_t>(fn, "numUnique", numCount, 1));
  return spconv_rt_cuda_unique(k, n, u, first, inv, count, /*stream=*/nullptr);
}

template <typename T, int (*Scan)(const T *, int64_t, T *, T *, void *)>
static int scanMemRef(const char *fn, StridedMemRefType<T, 1> *in,
                      StridedMemRefType<T, 1> *out,
                      StridedMemRefType<T, 1> *total) {
  T *i, *o, *t;
  int64_t n, numOut, numTotal;
  SPCONV_RT_CHECK(view1D(fn, "in", in, &i, &n));
  SPCONV_RT_CHECK(view1D(fn, "out", out, &o, &numOut));
  SPCONV_RT_CHECK(view1D(fn, "total", total, &t, &numTotal));
  SPCONV_RT_CHECK(needAtLeast<T>(fn, "out", numOut, n));
  SPCONV_RT_CHECK(needAtLeast<T>(fn, "total", numTotal, 1));
  return Scan(i, n, o, t, /*stream=*/nullptr);
}

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_exclusive_scan_i32(
    StridedMemRefType<int32_t, 1> *in, StridedMemRefType<int32_t, 1> *out,
    StridedMemRefType<int32_t, 1> *total) {
  return scanMemRef<int32_t, spconv_rt_cuda_exclusive_scan_i32>(
      "spconv_rt_cuda_memref_exclusive_scan_i32", in, out, total);
}

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_exclusive_scan_i64(
    StridedMemRefType<int64_t, 1> *in, StridedMemRefType<int64_t, 1> *out,
    StridedMemRefType<int64_t, 1> *total) {
  return scanMemRef<int64_t, spconv_rt_cuda_exclusive_scan_i64>(
      "spconv_rt_cuda_memref_exclusive_scan_i64", in, out, total);
}
