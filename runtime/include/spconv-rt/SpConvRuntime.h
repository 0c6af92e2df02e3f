/*===- SpConvRuntime.h - spconv-mlir runtime C ABI ----------------*- C -*-===*\
|*                                                                            *|
|* The C ABI of the spconv-mlir runtime: coordinate keys, the coordinate hash *|
|* table, radix sort, unique and prefix sums, on the CPU (libspconv_runtime)  *|
|* and on CUDA devices (libspconv_runtime_cuda, which also provides the       *|
|* mgpu* wrappers that MLIR's gpu-to-llvm lowering calls).                    *|
|*                                                                            *|
|* Conventions:                                                               *|
|*   - every spconv_rt_* entry point returns an int status (SPCONV_RT_OK = 0) *|
|*     and never aborts or throws; on failure spconv_rt_last_error() returns  *|
|*     a message for the calling thread;                                      *|
|*   - sizes are int64_t; N = 0 is valid and produces empty outputs;          *|
|*   - site indices are int32_t, so N is limited to INT32_MAX where indices   *|
|*     are produced;                                                          *|
|*   - outputs may be partially written when an entry point fails.            *|
|* See docs/Runtime.md.                                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SPCONV_RT_SPCONVRUNTIME_H
#define SPCONV_RT_SPCONVRUNTIME_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include "spconv-rt/HashTableLayout.h"

#if defined(_WIN32)
#define SPCONV_RT_EXPORT __declspec(dllexport)
#else
#define SPCONV_RT_EXPORT __attribute__((visibility("default")))
#endif

/* Largest number of spatial dimensions D accepted by the key helpers. */
#define SPCONV_RT_MAX_SPATIAL_DIMS 8

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Status codes and errors
 *===----------------------------------------------------------------------===*/

enum SpConvRtStatus {
  SPCONV_RT_OK = 0,
  /* Null pointer, negative size, malformed descriptor, size mismatch. */
  SPCONV_RT_ERR_INVALID_ARGUMENT = 1,
  /* Coordinate or key outside the declared grid, negative key. */
  SPCONV_RT_ERR_OUT_OF_RANGE = 2,
  /* A size, grid volume or prefix sum does not fit its integer type. */
  SPCONV_RT_ERR_OVERFLOW = 3,
  /* The same key occurs twice in a hash table build. */
  SPCONV_RT_ERR_DUPLICATE_KEY = 4,
  /* Hash table capacity not a power of two or too small for N. */
  SPCONV_RT_ERR_CAPACITY = 5,
  SPCONV_RT_ERR_OUT_OF_MEMORY = 6,
  /* A valid request this build cannot serve (e.g. a non-unit stride). */
  SPCONV_RT_ERR_UNSUPPORTED = 7,
  /* No CUDA driver or device, or a CUDA call failed. */
  SPCONV_RT_ERR_CUDA = 8,
  /* The GPU emulator's race detector saw two unordered accesses, one a
   * write, or a warp-level op ran in a partial or divergent warp. */
  SPCONV_RT_ERR_EMULATION = 9,
};

/* Message of the last failure on the calling thread ("" if none). The
 * pointer stays valid until the next runtime call on this thread. */
SPCONV_RT_EXPORT const char *spconv_rt_last_error(void);
/* Clears the calling thread's last error. */
SPCONV_RT_EXPORT void spconv_rt_clear_error(void);
/* Records that position `position` of an index operand holds `value`,
 * outside [0, bound), and returns SPCONV_RT_ERR_OUT_OF_RANGE. Lowered code
 * calls it when it finds such an index (the rows of spconv.gather_rows, the
 * segment ids of spconv.segment_max). */
SPCONV_RT_EXPORT int spconv_rt_report_bad_index(int64_t position, int64_t value,
                                                int64_t bound);

/* Records "features have <rows> rows but <expected> sites (<what>)" and
 * returns SPCONV_RT_ERR_INVALID_ARGUMENT. Lowered code calls it when the
 * features of a convolution or pooling do not have one row per site of the
 * coordinates they belong to (what: 0 input sites, 1 output sites of the
 * inverted convolution). */
SPCONV_RT_EXPORT int spconv_rt_report_row_mismatch(int64_t rows,
                                                   int64_t expected,
                                                   int64_t what);

/* What spconv_rt_report_size_mismatch reports: a size known only at run
 * time that contradicts a static size in an op's types (the verifier checks
 * the sizes that are static on both sides). */
enum SpConvRtSizeCheck {
  /* spconv.sort_unique: unique keys vs the static size of unique/first. */
  SPCONV_RT_SIZE_SORT_UNIQUE_COUNT = 0,
  /* spconv.sort_unique: keys vs the static size of the inverse map. */
  SPCONV_RT_SIZE_SORT_UNIQUE_INVERSE = 1,
  /* spconv.linearize: coordinate rows vs the static number of keys. */
  SPCONV_RT_SIZE_LINEARIZE_KEYS = 2,
  /* spconv.delinearize: keys vs the static number of coordinate rows. */
  SPCONV_RT_SIZE_DELINEARIZE_ROWS = 3,
  /* spconv.hash_lookup: queries vs the static size of the result. */
  SPCONV_RT_SIZE_HASH_LOOKUP_ROWS = 4,
  /* spconv.gather_rows: row indices vs the static rows of the result. */
  SPCONV_RT_SIZE_GATHER_ROWS = 5,
  /* spconv.gather_rows: feature channels vs the result's static channels. */
  SPCONV_RT_SIZE_GATHER_CHANNELS = 6,
  /* spconv.unfold: input batch vs the result's static batch. */
  SPCONV_RT_SIZE_UNFOLD_BATCH = 7,
  /* spconv.unfold: input channels x kernel volume vs static result rows. */
  SPCONV_RT_SIZE_UNFOLD_ROWS = 8,
  /* spconv.unfold: window positions vs the result's static columns. */
  SPCONV_RT_SIZE_UNFOLD_COLUMNS = 9,
  /* spconv.fold: input batch vs the result's static batch. */
  SPCONV_RT_SIZE_FOLD_BATCH = 10,
  /* spconv.fold: input rows vs result channels x kernel volume. */
  SPCONV_RT_SIZE_FOLD_ROWS = 11,
  /* spconv.fold: input columns vs the window positions of the output size. */
  SPCONV_RT_SIZE_FOLD_COLUMNS = 12,
  /* spconv.fold: input rows vs the kernel volume they must be a multiple of
   * (expected: the kernel volume). */
  SPCONV_RT_SIZE_FOLD_ROWS_MULTIPLE = 13,
  /* spconv.build_rulebook (regular, transposed): output sites vs the static
   * rows of its output coordinates. */
  SPCONV_RT_SIZE_OUTPUT_SITES = 14,
  /* spconv.rulebook_conv: output rows vs the static rows of its result. */
  SPCONV_RT_SIZE_CONV_ROWS = 15,
  /* spconv.rulebook_pool: output sites vs the static rows of its result. */
  SPCONV_RT_SIZE_POOL_ROWS = 16,
};

/* Records "<op> at line <line>: <actual> <things> but <the static size>
 * <expected>" for the check `what` (SpConvRtSizeCheck; `line` is the op's
 * source line, 0 when unknown) and returns SPCONV_RT_ERR_INVALID_ARGUMENT.
 * Lowered code calls it when a run-time size contradicts a static one; it
 * then skips the op's work and leaves its results zero (never reading or
 * writing past a buffer). */
SPCONV_RT_EXPORT int spconv_rt_report_size_mismatch(int64_t what,
                                                    int64_t actual,
                                                    int64_t expected,
                                                    int64_t line);

/* Records that spconv.unfold's window does not fit in spatial dimension
 * `dim` (extent + 2 * padding < dilated kernel extent, so there would be no
 * window position; PyTorch's unfold rejects it too) and returns
 * SPCONV_RT_ERR_INVALID_ARGUMENT. Lowered code calls it for a dynamic
 * extent; the verifier rejects a static one. */
SPCONV_RT_EXPORT int spconv_rt_report_empty_window(int64_t dim, int64_t extent,
                                                   int64_t padding,
                                                   int64_t kernelExtent,
                                                   int64_t line);

/*===----------------------------------------------------------------------===*
 * GPU emulator support (spconv-gpu-kernels-to-cpu)
 *
 * Called by emulated kernels, not by users. Strings are (address, length)
 * pairs of constant bytes: the kernel's name, then with the race detector
 * one line per buffer ("argument 0 (memref<?xf32>)", ...).
 *===----------------------------------------------------------------------===*/

/* Records that a kernel using warp-level ops was launched with `threads`
 * threads per block, not a multiple of 32; returns SPCONV_RT_ERR_EMULATION. */
SPCONV_RT_EXPORT int spconv_rt_emu_report_partial_warp(int64_t names,
                                                       int64_t namesLength,
                                                       int64_t threads);
/* Records that the lanes of one warp disagreed on a branch around warp-level
 * ops (`thread` differs from its warp's first lane); returns
 * SPCONV_RT_ERR_EMULATION. */
SPCONV_RT_EXPORT int spconv_rt_emu_report_divergent_warp(int64_t names,
                                                         int64_t namesLength,
                                                         int64_t thread);
/* Records that the threads of one block disagreed on a condition or loop
 * bound read from memory around a barrier (`thread` differs from thread 0);
 * returns SPCONV_RT_ERR_EMULATION. */
SPCONV_RT_EXPORT int spconv_rt_emu_report_divergent_block(int64_t names,
                                                          int64_t namesLength,
                                                          int64_t thread);
/* Starts race checking of one launch: forgets all earlier accesses. Buffers
 * numbered `numArguments` and above are workgroup memory, private to each
 * block. The blocks of the launch must then run one after another, on the
 * calling thread. */
SPCONV_RT_EXPORT int spconv_rt_emu_launch_begin(int64_t names,
                                                int64_t namesLength,
                                                int64_t numArguments);
/* One access of `count` consecutive elements of `elementBytes` bytes at
 * `address` (`offset` bytes into buffer `buffer`) by thread `thread` of
 * block `block` (linear ids). Records SPCONV_RT_ERR_EMULATION with both
 * threads and the buffer at the launch's first race: an element written by
 * one thread and read or written by another of a different block, or of
 * the same block with no barrier between. */
SPCONV_RT_EXPORT int spconv_rt_emu_access(int64_t buffer, int64_t address,
                                          int64_t offset, int64_t elementBytes,
                                          int64_t count, int64_t isWrite,
                                          int64_t block, int64_t thread);
/* A barrier of the block that is running: later accesses are ordered after
 * the block's earlier ones. */
SPCONV_RT_EXPORT int spconv_rt_emu_barrier(void);
/* Ends race checking of the launch; returns SPCONV_RT_ERR_EMULATION if it
 * raced. */
SPCONV_RT_EXPORT int spconv_rt_emu_launch_end(void);

/* Name of a status code, e.g. "SPCONV_RT_ERR_DUPLICATE_KEY". */
SPCONV_RT_EXPORT const char *spconv_rt_status_name(int status);

/*===----------------------------------------------------------------------===*
 * Threads
 *===----------------------------------------------------------------------===*/

/* Sets the number of CPU threads used by later calls (process-wide). 0 picks
 * the default: $SPCONV_RT_NUM_THREADS, else the hardware concurrency. The
 * results never depend on the thread count. */
SPCONV_RT_EXPORT int spconv_rt_set_num_threads(int32_t numThreads);
SPCONV_RT_EXPORT int spconv_rt_get_num_threads(int32_t *numThreads);

/*===----------------------------------------------------------------------===*
 * Profiling (called by code compiled with the spconv-profile pass)
 *===----------------------------------------------------------------------===*/

/* Entry ids are in [0, SPCONV_RT_PROFILE_MAX_ENTRIES). The spconv-profile
 * pass numbers the timed ops of a module 0, 1, ... and rejects a module with
 * more of them. The table grows to the largest id begun (about 40 bytes per
 * entry). */
#define SPCONV_RT_PROFILE_MAX_ENTRIES (INT64_C(1) << 20)

/* Start and stop the wall-clock timer of op `id`; `rows` is what it made.
 * Times of repeated begin/end pairs add up; a second begin restarts the
 * timer. An id outside [0, SPCONV_RT_PROFILE_MAX_ENTRIES) fails with
 * SPCONV_RT_ERR_OUT_OF_RANGE, an end without its begin with
 * SPCONV_RT_ERR_INVALID_ARGUMENT; neither changes any entry. */
SPCONV_RT_EXPORT int spconv_rt_profile_begin(int64_t id);
SPCONV_RT_EXPORT int spconv_rt_profile_end(int64_t id, int64_t rows);
/* Forget every entry (and free the table). */
SPCONV_RT_EXPORT void spconv_rt_profile_reset(void);
/* Number of entries (the largest id begun, plus one). */
SPCONV_RT_EXPORT int64_t spconv_rt_profile_count(void);
/* Total milliseconds, last row count and number of calls of op `id`;
 * SPCONV_RT_ERR_OUT_OF_RANGE for an id at or past the count. */
SPCONV_RT_EXPORT int spconv_rt_profile_get(int64_t id, double *milliseconds,
                                           int64_t *rows, int64_t *calls);

/*===----------------------------------------------------------------------===*
 * Coordinate keys
 *===----------------------------------------------------------------------===*/

/* Linear keys of N sites. `coords` is row-major N x (1 + D): the batch index,
 * then D spatial indices. key = ((b * S0 + x0) * S1 + x1) ... in int64.
 * Fails (naming the first bad row) on negative or out-of-grid coordinates and
 * on a batch index outside [0, batchSize); fails if batchSize * prod(S)
 * overflows int64. */
SPCONV_RT_EXPORT int spconv_rt_linearize_coords(const int32_t *coords,
                                                int64_t n,
                                                int32_t numSpatialDims,
                                                const int64_t *spatialShape,
                                                int64_t batchSize,
                                                int64_t *keys);

/* Inverse of spconv_rt_linearize_coords; fails on keys outside
 * [0, batchSize * prod(S)). */
SPCONV_RT_EXPORT int spconv_rt_delinearize_keys(const int64_t *keys, int64_t n,
                                                int32_t numSpatialDims,
                                                const int64_t *spatialShape,
                                                int64_t batchSize,
                                                int32_t *coords);

/*===----------------------------------------------------------------------===*
 * Coordinate hash table (layout: spconv-rt/HashTableLayout.h)
 *===----------------------------------------------------------------------===*/

/* Capacity of a table for n keys (spconv_ht_capacity_for); fails with
 * SPCONV_RT_ERR_CAPACITY if n > SPCONV_HT_MAX_ENTRIES. */
SPCONV_RT_EXPORT int spconv_rt_hash_capacity(int64_t n, int64_t *capacity);

/* Clears the table and inserts keys[i] -> i for i in [0, n). The caller owns
 * both arrays (`capacity` elements each); capacity must be a power of two
 * >= max(16, 2n). Keys must be nonnegative. If a key repeats, fails with
 * SPCONV_RT_ERR_DUPLICATE_KEY and sets *duplicateIndex to the smallest i such
 * that keys[i] == keys[j] for some j < i (the table contents are then
 * unspecified); otherwise sets it to -1. `duplicateIndex` may be null.
 * Deterministic: the same keys give the same arrays for any thread count. */
SPCONV_RT_EXPORT int spconv_rt_hash_build(const int64_t *keys, int64_t n,
                                          int64_t *tableKeys,
                                          int32_t *tableValues,
                                          int64_t capacity,
                                          int64_t *duplicateIndex);

/* out[i] = site index of queries[i], or -1 if absent (negative queries are
 * absent). */
SPCONV_RT_EXPORT int spconv_rt_hash_lookup(const int64_t *tableKeys,
                                           const int32_t *tableValues,
                                           int64_t capacity,
                                           const int64_t *queries, int64_t m,
                                           int32_t *out);

/*===----------------------------------------------------------------------===*
 * Sort, unique, scan
 *===----------------------------------------------------------------------===*/

/* Stable LSD radix sort, in place, of nonnegative keys; `values` (may be
 * null) is permuted along. Only the bits below the largest key are sorted. */
SPCONV_RT_EXPORT int spconv_rt_sort_pairs(int64_t *keys, int32_t *values,
                                          int64_t n);
SPCONV_RT_EXPORT int spconv_rt_sort_keys(int64_t *keys, int64_t n);

/* Unique of nonnegative keys. Writes the *numUnique distinct keys in
 * ascending order to uniqueKeys (room for n), for each the index of its first
 * occurrence in `keys` to firstIndex (room for n, may be null), and for each
 * input position the index of its key in uniqueKeys to inverse (room for n,
 * may be null). n <= INT32_MAX. */
SPCONV_RT_EXPORT int spconv_rt_unique(const int64_t *keys, int64_t n,
                                      int64_t *uniqueKeys, int32_t *firstIndex,
                                      int32_t *inverse, int64_t *numUnique);

/* Exclusive prefix sum: out[i] = in[0] + ... + in[i-1]; *total (may be null)
 * = the sum of all n. `out` may equal `in`. Fails with SPCONV_RT_ERR_OVERFLOW
 * (naming the first position) if a partial sum leaves the element type. */
SPCONV_RT_EXPORT int spconv_rt_exclusive_scan_i32(const int32_t *in, int64_t n,
                                                  int32_t *out,
                                                  int32_t *total);
SPCONV_RT_EXPORT int spconv_rt_exclusive_scan_i64(const int64_t *in, int64_t n,
                                                  int64_t *out,
                                                  int64_t *total);

/*===----------------------------------------------------------------------===*
 * CUDA primitives (libspconv_runtime_cuda only)
 *
 * The same operations on device memory, synchronous with respect to `stream`
 * (a CUstream / cudaStream_t; null is the default stream). Pointers prefixed
 * with `d` are device pointers, the others host pointers. They use the CUDA
 * runtime's current device. Without a driver or device they fail with
 * SPCONV_RT_ERR_CUDA.
 *===----------------------------------------------------------------------===*/

/* Number of usable CUDA devices; fails if there is no driver. */
SPCONV_RT_EXPORT int spconv_rt_cuda_device_count(int32_t *count);
SPCONV_RT_EXPORT int spconv_rt_cuda_hash_build(const int64_t *dKeys, int64_t n,
                                               int64_t *dTableKeys,
                                               int32_t *dTableValues,
                                               int64_t capacity,
                                               int64_t *duplicateIndex,
                                               void *stream);
SPCONV_RT_EXPORT int spconv_rt_cuda_hash_lookup(const int64_t *dTableKeys,
                                                const int32_t *dTableValues,
                                                int64_t capacity,
                                                const int64_t *dQueries,
                                                int64_t m, int32_t *dOut,
                                                void *stream);
SPCONV_RT_EXPORT int spconv_rt_cuda_sort_pairs(int64_t *dKeys,
                                               int32_t *dValues, int64_t n,
                                               void *stream);
/* Stable sort of n keys known to lie in [0, 2^endBit) (not checked), values
 * (may be null) permuted along; stream-ordered, no host synchronisation. */
SPCONV_RT_EXPORT int spconv_rt_cuda_sort_pairs_bits(int64_t *dKeys,
                                                    int32_t *dValues, int64_t n,
                                                    int64_t endBit,
                                                    void *stream);
SPCONV_RT_EXPORT int spconv_rt_cuda_unique(const int64_t *dKeys, int64_t n,
                                           int64_t *dUniqueKeys,
                                           int32_t *dFirstIndex,
                                           int32_t *dInverse,
                                           int64_t *numUnique, void *stream);
SPCONV_RT_EXPORT int spconv_rt_cuda_exclusive_scan_i32(const int32_t *dIn,
                                                       int64_t n,
                                                       int32_t *dOut,
                                                       int32_t *total,
                                                       void *stream);
SPCONV_RT_EXPORT int spconv_rt_cuda_exclusive_scan_i64(const int64_t *dIn,
                                                       int64_t n,
                                                       int64_t *dOut,
                                                       int64_t *total,
                                                       void *stream);
/* Deferred forms (see the memref entry points): the data-dependent result
 * is written to device memory (dFirstRepeat lowered to the smallest
 * repeating index; dTotal the sum or -1 on overflow; dNumUnique the count)
 * in stream order, and the call returns without synchronising. Keys must
 * be non-negative (hash build) or lie in [0, 2^endBit) (unique); neither is
 * checked. */
SPCONV_RT_EXPORT int spconv_rt_cuda_hash_build_deferred(
    const int64_t *dKeys, int64_t n, int64_t *dTableKeys, int32_t *dTableValues,
    int64_t capacity, int64_t *dFirstRepeat, void *stream);
SPCONV_RT_EXPORT int
spconv_rt_cuda_exclusive_scan_i64_deferred(const int64_t *dIn, int64_t n,
                                           int64_t *dOut, int64_t *dTotal,
                                           void *stream);
SPCONV_RT_EXPORT int spconv_rt_cuda_unique_deferred(
    const int64_t *dKeys, int64_t n, int64_t *dUniqueKeys, int32_t *dFirstIndex,
    int32_t *dInverse, int64_t *dNumUnique, int64_t endBit, void *stream);

/*===----------------------------------------------------------------------===*
 * mgpu* wrappers (libspconv_runtime_cuda only)
 *
 * The host-side functions that MLIR 22's gpu-to-llvm lowering and
 * gpu.binary translation call, over the CUDA driver API loaded with
 * dlopen("libcuda.so.1") at first use. Their signatures are fixed by MLIR, so
 * they report failures on stderr and through spconv_rt_last_error(); those
 * that return a handle return null on failure.
 *===----------------------------------------------------------------------===*/

SPCONV_RT_EXPORT void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
SPCONV_RT_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel);
SPCONV_RT_EXPORT void mgpuModuleUnload(void *module);
SPCONV_RT_EXPORT void *mgpuModuleGetFunction(void *module, const char *name);
SPCONV_RT_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                       intptr_t gridY, intptr_t gridZ,
                                       intptr_t blockX, intptr_t blockY,
                                       intptr_t blockZ, int32_t smem,
                                       void *stream, void **params,
                                       void **extra, size_t paramsCount);
SPCONV_RT_EXPORT void *mgpuStreamCreate(void);
SPCONV_RT_EXPORT void mgpuStreamDestroy(void *stream);
SPCONV_RT_EXPORT void mgpuStreamSynchronize(void *stream);
SPCONV_RT_EXPORT void mgpuStreamWaitEvent(void *stream, void *event);
SPCONV_RT_EXPORT void *mgpuEventCreate(void);
SPCONV_RT_EXPORT void mgpuEventDestroy(void *event);
SPCONV_RT_EXPORT void mgpuEventSynchronize(void *event);
SPCONV_RT_EXPORT void mgpuEventRecord(void *event, void *stream);
SPCONV_RT_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                                    bool isHostShared);
SPCONV_RT_EXPORT void mgpuMemFree(void *ptr, void *stream);
SPCONV_RT_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                 void *stream);
SPCONV_RT_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                                   void *stream);
SPCONV_RT_EXPORT void mgpuMemset16(void *dst, unsigned short value,
                                   size_t count, void *stream);
SPCONV_RT_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes);
SPCONV_RT_EXPORT void mgpuMemHostUnregister(void *ptr);
/* `descriptor` points to a ranked memref descriptor of rank `rank` (MLIR
 * passes it typed as rank 1 whatever the rank). */
SPCONV_RT_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                                int64_t elementSizeBytes);
SPCONV_RT_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank,
                                                  void *descriptor,
                                                  int64_t elementSizeBytes);
SPCONV_RT_EXPORT void mgpuSetDefaultDevice(int32_t device);

/* The stream that compiled code and the memref primitives use on the
 * calling thread (what mgpuStreamCreate hands out), created at first use;
 * null on failure. */
SPCONV_RT_EXPORT void *spconv_rt_cuda_thread_stream(void);
/* Waits for `stream`: where compiled code's host reads what its kernels
 * wrote (spconv-gpu-stream-order). */
SPCONV_RT_EXPORT void spconv_rt_cuda_stream_synchronize(void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

/*===----------------------------------------------------------------------===*
 * Memref entry points for MLIR-lowered code (C++ declarations only)
 *
 * MLIR declares these as, e.g.,
 *   func.func private @spconv_rt_memref_hash_build(memref<?xi64>,
 *       memref<?xi64>, memref<?xi32>, memref<1xi64>) -> i32
 *       attributes {llvm.emit_c_interface}
 * and calls _mlir_ciface_spconv_rt_memref_hash_build with descriptor
 * pointers. 1-D arguments must have unit stride (SPCONV_RT_ERR_UNSUPPORTED
 * otherwise); the 2-D coordinate arguments may have any strides. Outputs must
 * be at least as large as the result.
 *===----------------------------------------------------------------------===*/

#if defined(__cplusplus) && defined(__has_include)
#if __has_include("mlir/ExecutionEngine/CRunnerUtils.h")
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#define SPCONV_RT_HAS_MEMREF_API 1

extern "C" {
/* Scalar arguments only; the C-interface name lowered code calls. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_report_bad_index(int64_t position,
                                                             int64_t value,
                                                             int64_t bound);
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_report_row_mismatch(
    int64_t rows, int64_t expected, int64_t what);
SPCONV_RT_EXPORT int
_mlir_ciface_spconv_rt_report_size_mismatch(int64_t what, int64_t actual,
                                            int64_t expected, int64_t line);
SPCONV_RT_EXPORT int
_mlir_ciface_spconv_rt_report_empty_window(int64_t dim, int64_t extent,
                                           int64_t padding,
                                           int64_t kernelExtent, int64_t line);
/* coords: N x (1 + D), spatialShape: D, keys: >= N. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_linearize_coords(
    StridedMemRefType<int32_t, 2> *coords,
    StridedMemRefType<int64_t, 1> *spatialShape, int64_t batchSize,
    StridedMemRefType<int64_t, 1> *keys);
/* keys: N, coords: >= N x (1 + D). */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_delinearize_keys(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *spatialShape, int64_t batchSize,
    StridedMemRefType<int32_t, 2> *coords);
/* Records "duplicate input site (b, x0, ...) at rows j and i" for the row
 * i = duplicateIndex that spconv_rt_memref_hash_build reported, j being the
 * first row with the same key; returns SPCONV_RT_ERR_DUPLICATE_KEY. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_report_duplicate_site(
    StridedMemRefType<int32_t, 2> *coords, StridedMemRefType<int64_t, 1> *keys,
    int64_t duplicateIndex);
/* capacity: 1 element. */
SPCONV_RT_EXPORT int
_mlir_ciface_spconv_rt_memref_hash_capacity(int64_t n,
                                            StridedMemRefType<int64_t, 1> *capacity);
/* tableKeys and tableValues: the same power-of-two size; duplicateIndex: 1. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_hash_build(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *duplicateIndex);
/* out: >= size of queries. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_hash_lookup(
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *queries,
    StridedMemRefType<int32_t, 1> *out);
SPCONV_RT_EXPORT int
_mlir_ciface_spconv_rt_memref_sort_keys(StridedMemRefType<int64_t, 1> *keys);
/* values: the same size as keys. */
SPCONV_RT_EXPORT int
_mlir_ciface_spconv_rt_memref_sort_pairs(StridedMemRefType<int64_t, 1> *keys,
                                         StridedMemRefType<int32_t, 1> *values);
/* Stable sort of keys in [0, 2^endBit), 1 <= endBit <= 63, with values
 * (the same size) permuted along; the CPU checks the keys' range, the CUDA
 * twin trusts it and does not synchronise. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_sort_pairs_bits(
    StridedMemRefType<int64_t, 1> *keys, StridedMemRefType<int32_t, 1> *values,
    int64_t endBit);
/* uniqueKeys, firstIndex, inverse: >= N; numUnique: 1. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_unique(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *uniqueKeys,
    StridedMemRefType<int32_t, 1> *firstIndex,
    StridedMemRefType<int32_t, 1> *inverse,
    StridedMemRefType<int64_t, 1> *numUnique);
/* out: >= N (may alias in); total: 1. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_exclusive_scan_i32(
    StridedMemRefType<int32_t, 1> *in, StridedMemRefType<int32_t, 1> *out,
    StridedMemRefType<int32_t, 1> *total);
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_exclusive_scan_i64(
    StridedMemRefType<int64_t, 1> *in, StridedMemRefType<int64_t, 1> *out,
    StridedMemRefType<int64_t, 1> *total);

/* Deferred forms, for compiled rulebook builders: a data-dependent result
 * goes to a 1-element memref (device memory on the GPU) that the caller
 * reads back when it needs it, so the CUDA twins enqueue their work and
 * return without synchronising. The call itself reports and returns only
 * argument errors.
 *
 * hash_build_deferred: builds the table like hash_build; if a key repeats
 * an earlier one, lowers firstRepeat[0] to the smallest such index (the
 * caller initialises it, e.g. to INT64_MAX). */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_hash_build_deferred(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *firstRepeat);
/* exclusive_scan_i64_deferred: total[0] is the sum, or -1 if a prefix
 * overflows int64. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_exclusive_scan_i64_deferred(
    StridedMemRefType<int64_t, 1> *in, StridedMemRefType<int64_t, 1> *out,
    StridedMemRefType<int64_t, 1> *total);
/* unique_deferred: unique of keys in [0, 2^endBit), 1 <= endBit <= 63 (the
 * CPU checks the range, the CUDA twin trusts it); numUnique[0] is the
 * number of unique keys. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_unique_deferred(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *uniqueKeys,
    StridedMemRefType<int32_t, 1> *firstIndex,
    StridedMemRefType<int32_t, 1> *inverse,
    StridedMemRefType<int64_t, 1> *numUnique, int64_t endBit);
/* Records the first error a deferred build read back: the out-of-grid site
 * at badRow, else the site at repeatRow repeating an earlier one (keys are
 * the sites' keys), else a pair total that overflowed (pairTotal < 0).
 * Rows outside [0, N) mean "none". Returns the error's status. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_memref_report_build_error(
    StridedMemRefType<int32_t, 2> *coords, StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *spatialShape, int64_t batchSize,
    int64_t badRow, int64_t repeatRow, int64_t pairTotal);

/* libspconv_runtime_cuda only: the same contracts as the entry points
 * above, computed on the GPU by the CUDA primitives on the calling thread's
 * stream; every buffer must be device-accessible (device or managed
 * memory). The synchronous forms copy their scalar outputs (totals, counts,
 * the duplicate row) to the host pointers given. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_cuda_memref_hash_build(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *duplicateIndex);
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_cuda_memref_sort_pairs_bits(
    StridedMemRefType<int64_t, 1> *keys, StridedMemRefType<int32_t, 1> *values,
    int64_t endBit);
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_cuda_memref_unique(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *uniqueKeys,
    StridedMemRefType<int32_t, 1> *firstIndex,
    StridedMemRefType<int32_t, 1> *inverse,
    StridedMemRefType<int64_t, 1> *numUnique);
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_cuda_memref_exclusive_scan_i32(
    StridedMemRefType<int32_t, 1> *in, StridedMemRefType<int32_t, 1> *out,
    StridedMemRefType<int32_t, 1> *total);
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_cuda_memref_exclusive_scan_i64(
    StridedMemRefType<int64_t, 1> *in, StridedMemRefType<int64_t, 1> *out,
    StridedMemRefType<int64_t, 1> *total);
/* The deferred twins: results stay in device memory, no synchronisation.
 * The report twin (an error path) waits for the stream and copies the
 * coordinates and keys to the host; spatialShape is host memory. */
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_cuda_memref_hash_build_deferred(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *tableKeys,
    StridedMemRefType<int32_t, 1> *tableValues,
    StridedMemRefType<int64_t, 1> *firstRepeat);
SPCONV_RT_EXPORT int
_mlir_ciface_spconv_rt_cuda_memref_exclusive_scan_i64_deferred(
    StridedMemRefType<int64_t, 1> *in, StridedMemRefType<int64_t, 1> *out,
    StridedMemRefType<int64_t, 1> *total);
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_cuda_memref_unique_deferred(
    StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *uniqueKeys,
    StridedMemRefType<int32_t, 1> *firstIndex,
    StridedMemRefType<int32_t, 1> *inverse,
    StridedMemRefType<int64_t, 1> *numUnique, int64_t endBit);
SPCONV_RT_EXPORT int _mlir_ciface_spconv_rt_cuda_memref_report_build_error(
    StridedMemRefType<int32_t, 2> *coords, StridedMemRefType<int64_t, 1> *keys,
    StridedMemRefType<int64_t, 1> *spatialShape, int64_t batchSize,
    int64_t badRow, int64_t repeatRow, int64_t pairTotal);
} // extern "C"

#endif /* __has_include(CRunnerUtils.h) */
#endif /* __cplusplus */

#endif /* SPCONV_RT_SPCONVRUNTIME_H */
