//===- MemRefAPI.cpp - CUDA primitives on MLIR memref descriptors ---------===//
//
// The _mlir_ciface_spconv_rt_cuda_memref_* twins of the CPU entry points
// that the CUDA target's host code calls (spconv-gpu-runtime-calls): the
// same descriptors and results, computed by the CUDA primitives. Buffers
// are device or managed memory; the scalar outputs (totals, counts, the
// duplicate row) are copied to the host pointers given. They run on the
// calling thread's stream, the one compiled code chains its launches on.
//
//===----------------------------------------------------------------------===//

#include "MemRefViews.h"

using namespace spconv::rt;

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_hash_build(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *duplicateIndex) {
  HashBuildBuffers b;
  SPCONV_RT_CHECK(viewHashBuild("spconv_rt_cuda_memref_hash_build", keys,
                                tableKeys, tableValues, duplicateIndex, b));
  return spconv_rt_cuda_hash_build(b.keys, b.n, b.tableKeys, b.tableValues,
                                   b.capacity, b.duplicateIndex,
                                   spconv_rt_cuda_thread_stream());
}

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_unique(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *uniqueKeys,
    StridedMemRefType<int32_t, 1> *firstIndex,
    StridedMemRefType<int32_t, 1> *inverse,
    StridedMemRefType<int64_t, 1> *numUnique) {
  UniqueBuffers b;
  SPCONV_RT_CHECK(viewUnique("spconv_rt_cuda_memref_unique", keys, uniqueKeys,
                             firstIndex, inverse, numUnique, b));
  return spconv_rt_cuda_unique(b.keys, b.n, b.uniqueKeys, b.firstIndex,
                               b.inverse, b.numUnique,
                               spconv_rt_cuda_thread_stream());
}

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_sort_pairs_bits(
    StridedMemRefType<int64_t, 1> *keys, StridedMemRefType<int32_t, 1> *values,
    int64_t endBit) {
  const char *fn = "spconv_rt_cuda_memref_sort_pairs_bits";
  int64_t *k, n;
  int32_t *v;
  SPCONV_RT_CHECK(viewSortPairs(fn, keys, values, &k, &v, &n));
  return spconv_rt_cuda_sort_pairs_bits(k, v, n, endBit,
                                        spconv_rt_cuda_thread_stream());
}

template <typename T, int (*Scan)(const T *, int64_t, T *, T *, void *)>
static int scanMemRef(const char *fn, StridedMemRefType<T, 1> *in,
                      StridedMemRefType<T, 1> *out,
                      StridedMemRefType<T, 1> *total) {
  ScanBuffers<T> b;
  SPCONV_RT_CHECK(viewScan(fn, in, out, total, b));
  return Scan(b.in, b.n, b.out, b.total, spconv_rt_cuda_thread_stream());
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
