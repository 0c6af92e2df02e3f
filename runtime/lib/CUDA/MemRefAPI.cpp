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

#include <cuda_runtime.h>

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

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_hash_lookup(
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *queries,
    StridedMemRefType<int32_t, 1> *out) {
  HashLookupBuffers b;
  SPCONV_RT_CHECK(viewHashLookup("spconv_rt_cuda_memref_hash_lookup",
                                 tableKeys, tableValues, queries, out, b));
  return spconv_rt_cuda_hash_lookup(b.tableKeys, b.tableValues, b.capacity,
                                    b.queries, b.m, b.out,
                                    spconv_rt_cuda_thread_stream());
}

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_linearize_coords(
    StridedMemRefType<int32_t, 2> *coords,
    StridedMemRefType<int64_t, 1> *spatialShape, int64_t batchSize,
    StridedMemRefType<int64_t, 1> *keys) {
  KeyCoordBuffers b;
  SPCONV_RT_CHECK(viewLinearize("spconv_rt_cuda_memref_linearize_coords",
                                coords, spatialShape, keys, b));
  return spconv_rt_cuda_linearize_coords(
      b.coords, b.n, b.rowStride, b.colStride, b.dims, b.shape, batchSize,
      b.keys, spconv_rt_cuda_thread_stream());
}

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_delinearize_keys(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *spatialShape, int64_t batchSize,
    StridedMemRefType<int32_t, 2> *coords) {
  KeyCoordBuffers b;
  SPCONV_RT_CHECK(viewDelinearize("spconv_rt_cuda_memref_delinearize_keys",
                                  keys, spatialShape, coords, b));
  return spconv_rt_cuda_delinearize_keys(
      b.keys, b.n, b.dims, b.shape, batchSize, b.coords, b.rowStride,
      b.colStride, spconv_rt_cuda_thread_stream());
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

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_hash_build_deferred(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *firstRepeat) {
  HashBuildBuffers b;
  SPCONV_RT_CHECK(viewHashBuild("spconv_rt_cuda_memref_hash_build_deferred",
                                keys, tableKeys, tableValues, firstRepeat, b));
  return spconv_rt_cuda_hash_build_deferred(
      b.keys, b.n, b.tableKeys, b.tableValues, b.capacity, b.duplicateIndex,
      spconv_rt_cuda_thread_stream());
}

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_exclusive_scan_i64_deferred(
    StridedMemRefType<int64_t, 1> *in, StridedMemRefType<int64_t, 1> *out,
    StridedMemRefType<int64_t, 1> *total) {
  return scanMemRef<int64_t, spconv_rt_cuda_exclusive_scan_i64_deferred>(
      "spconv_rt_cuda_memref_exclusive_scan_i64_deferred", in, out, total);
}

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_unique_deferred(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *uniqueKeys,
    StridedMemRefType<int32_t, 1> *firstIndex,
    StridedMemRefType<int32_t, 1> *inverse,
    StridedMemRefType<int64_t, 1> *numUnique, int64_t endBit) {
  UniqueBuffers b;
  SPCONV_RT_CHECK(viewUnique("spconv_rt_cuda_memref_unique_deferred", keys,
                             uniqueKeys, firstIndex, inverse, numUnique, b));
  return spconv_rt_cuda_unique_deferred(b.keys, b.n, b.uniqueKeys, b.firstIndex,
                                        b.inverse, b.numUnique, endBit,
                                        spconv_rt_cuda_thread_stream());
}

/// A host copy of the device memory a descriptor spans, with a descriptor
/// of the same shape and strides pointing into it (an error path: copies
/// synchronously).
template <typename T, int Rank> class HostCopy {
public:
  int copy(const char *fn, const StridedMemRefType<T, Rank> *device) {
    view = *device;
    int64_t span = 1;
    for (int d = 0; d < Rank; ++d) {
      if (device->sizes[d] == 0)
        span = 0;
      if (device->strides[d] < 0)
        return setError(SPCONV_RT_ERR_UNSUPPORTED,
                        "%s: negative strides are not supported", fn);
    }
    for (int d = 0; d < Rank && span; ++d)
      span += (device->sizes[d] - 1) * device->strides[d];
    // The runtime's buffer: a failure is reported, never thrown.
    if (!data.allocate(span, fn))
      return SPCONV_RT_ERR_OUT_OF_MEMORY;
    if (span) {
      cudaError_t err = cudaMemcpy(data.data(), device->data + device->offset,
                                   span * sizeof(T), cudaMemcpyDeviceToHost);
      if (err != cudaSuccess)
        return setError(SPCONV_RT_ERR_CUDA, "%s: cudaMemcpy failed with %s", fn,
                        cudaGetErrorName(err));
    }
    view.basePtr = view.data = data.data();
    view.offset = 0;
    return SPCONV_RT_OK;
  }
  StridedMemRefType<T, Rank> view;

private:
  Buffer<T> data;
};

extern "C" int _mlir_ciface_spconv_rt_cuda_memref_report_build_error(
    StridedMemRefType<int32_t, 2> *coords, StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *spatialShape, int64_t batchSize,
    int64_t badRow, int64_t repeatRow, int64_t pairTotal) {
  const char *fn = "spconv_rt_cuda_memref_report_build_error";
  if (!coords || !keys)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT, "%s: a descriptor is null",
                    fn);
  spconv_rt_cuda_stream_synchronize(spconv_rt_cuda_thread_stream());
  HostCopy<int32_t, 2> hostCoords;
  HostCopy<int64_t, 1> hostKeys;
  SPCONV_RT_CHECK(hostCoords.copy(fn, coords));
  SPCONV_RT_CHECK(hostKeys.copy(fn, keys));
  return _mlir_ciface_spconv_rt_memref_report_build_error(
      &hostCoords.view, &hostKeys.view, spatialShape, batchSize, badRow,
      repeatRow, pairTotal);
}
