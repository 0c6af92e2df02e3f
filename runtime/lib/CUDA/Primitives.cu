//===- Primitives.cu - Hash table, sort, unique and scan on CUDA ----------===//
//
// Device versions of the CPU primitives, with the same validation and the
// same results (the hash table follows HashTableLayout.h; its slot
// assignment within a probe run may differ from the CPU builder). Sorting
// and scans use CUB. The synchronous entry points wait for their stream
// before they return, because they report results and errors to the host;
// the deferred ones (and sort_pairs_bits) only enqueue, leaving their
// results in device memory.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdio>
#include <limits>

using namespace spconv::rt;

namespace {

constexpr int kBlock = 256;

int cudaFail(const char *fn, const char *call, cudaError_t err) {
  char message[512];
  std::snprintf(message, sizeof(message), "%s: %s failed with %s (%s)", fn,
                call, cudaGetErrorName(err), cudaGetErrorString(err));
  std::fprintf(stderr, "spconv-rt: %s\n", message);
  // Out of memory (DeviceBuffer::allocate has recorded its size already;
  // the record is sticky).
  if (err == cudaErrorMemoryAllocation)
    return spconv_rt_internal_set_alloc_failure(0, 0, message);
  return spconv_rt_internal_set_error(SPCONV_RT_ERR_CUDA, message);
}

#define CUDA_CHECK(fn, call)                                                   \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess)                                                   \
      return cudaFail(fn, #call, err_);                                        \
  } while (false)

unsigned blocksFor(int64_t n) {
  int64_t blocks = (n + kBlock - 1) / kBlock;
  return unsigned(blocks > 65535 * 16 ? 65535 * 16 : (blocks < 1 ? 1 : blocks));
}

/// Device scratch memory from the device's memory pool, in the order of
/// `stream`, released on scope exit: no per-call cudaMalloc / cudaFree (each
/// of which would synchronise the device).
class DeviceBuffer {
public:
  explicit DeviceBuffer(cudaStream_t stream) : stream(stream) {}
  ~DeviceBuffer() {
    if (ptr)
      cudaFreeAsync(ptr, stream);
  }
  /// Counted for failure injection; out of memory (real or injected) is
  /// recorded with its size and returned as cudaErrorMemoryAllocation.
  cudaError_t allocate(size_t bytes) {
    bool inject = spconv_rt_internal_count_allocation() != 0;
    cudaError_t err = inject ? cudaErrorMemoryAllocation
                             : cudaMallocAsync(&ptr, bytes ? bytes : 1, stream);
    if (err == cudaErrorMemoryAllocation) {
      // Not left pending as the thread's last error for a launch check.
      if (!inject)
        cudaGetLastError();
      setOutOfMemory(bytes, " of device scratch memory");
    }
    return err;
  }
  template <typename T> T *as() const { return static_cast<T *>(ptr); }

private:
  cudaStream_t stream;
  void *ptr = nullptr;
};

// Grid-stride loops: the grid is capped, so every kernel loops.
#define GRID_LOOP(i, n)                                                        \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);    \
       i += int64_t(gridDim.x) * blockDim.x)

struct Status {
  unsigned long long maxKey;
  long long firstNegative; // INT64_MAX if none
  long long firstBad;      // first repeat / overflow; INT64_MAX if none
  int sawDuplicate;
};

__global__ void scanKeys(const int64_t *keys, int64_t n, Status *status) {
  unsigned long long localMax = 0;
  GRID_LOOP(i, n) {
    int64_t key = keys[i];
    if (key < 0)
      atomicMin(&status->firstNegative, (long long)i);
    else if ((unsigned long long)key > localMax)
      localMax = (unsigned long long)key;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    unsigned long long other = __shfl_down_sync(0xffffffffu, localMax, offset);
    localMax = other > localMax ? other : localMax;
  }
  if ((threadIdx.x & 31) == 0 && localMax)
    atomicMax(&status->maxKey, localMax);
}

__global__ void fillTable(int64_t *tableKeys, int32_t *tableValues,
                          int64_t capacity, int32_t value) {
  GRID_LOOP(i, capacity) {
    tableKeys[i] = SPCONV_HT_EMPTY_KEY;
    tableValues[i] = value;
  }
}

// Claims a slot per key with a 64-bit CAS; the value is the smallest index
// holding the key, so a repeat can be told apart from its first occurrence.
__global__ void insertKeys(const int64_t *keys, int64_t n, int64_t *tableKeys,
                           int32_t *tableValues, int64_t capacity,
                           Status *status) {
  auto *slots = reinterpret_cast<unsigned long long *>(tableKeys);
  GRID_LOOP(i, n) {
    int64_t key = keys[i];
    int64_t slot = spconv_ht_home_slot(key, capacity);
    for (int64_t p = 0; p < capacity; ++p) {
      unsigned long long prev =
          atomicCAS(slots + slot, (unsigned long long)SPCONV_HT_EMPTY_KEY,
                    (unsigned long long)key);
      if (prev == (unsigned long long)SPCONV_HT_EMPTY_KEY ||
          prev == (unsigned long long)key) {
        atomicMin(tableValues + slot, int32_t(i));
        if (prev == (unsigned long long)key)
          status->sawDuplicate = 1;
        break;
      }
      slot = spconv_ht_next_slot(slot, capacity);
    }
  }
}

__global__ void clearEmptyValues(const int64_t *tableKeys,
                                 int32_t *tableValues, int64_t capacity) {
  GRID_LOOP(i, capacity) {
    if (tableKeys[i] == SPCONV_HT_EMPTY_KEY)
      tableValues[i] = SPCONV_HT_EMPTY_VALUE;
  }
}

// Lowers *firstRepeat to the smallest index whose key an earlier index
// holds; nothing to do unless the insertion saw a repeat.
__global__ void findRepeats(const int64_t *keys, int64_t n,
                            const int64_t *tableKeys,
                            const int32_t *tableValues, int64_t capacity,
                            const Status *inserted, long long *firstRepeat) {
  if (!inserted->sawDuplicate)
    return;
  GRID_LOOP(i, n) {
    if (spconv_ht_lookup(tableKeys, tableValues, capacity, keys[i]) != i)
      atomicMin(firstRepeat, (long long)i);
  }
}

__global__ void lookupKeys(const int64_t *tableKeys,
                           const int32_t *tableValues, int64_t capacity,
                           const int64_t *queries, int64_t m, int32_t *out) {
  GRID_LOOP(i, m) {
    out[i] = spconv_ht_lookup(tableKeys, tableValues, capacity, queries[i]);
  }
}

/// A grid's spatial extents, passed to kernels by value.
struct GridExtents {
  int64_t extent[SPCONV_RT_MAX_SPATIAL_DIMS];
};

// The CPU's linearizeCoords: a site outside the grid gets no key and lowers
// status->firstBad to its row.
__global__ void linearizeRows(const int32_t *coords, int64_t n,
                              int64_t rowStride, int64_t colStride,
                              int32_t dims, GridExtents shape,
                              int64_t batchSize, int64_t *keys,
                              Status *status) {
  GRID_LOOP(i, n) {
    const int32_t *row = coords + i * rowStride;
    bool inside = row[0] >= 0 && row[0] < batchSize;
    int64_t key = row[0];
    for (int32_t d = 0; d < dims && inside; ++d) {
      int32_t x = row[(d + 1) * colStride];
      inside = x >= 0 && x < shape.extent[d];
      key = key * shape.extent[d] + x;
    }
    if (inside)
      keys[i] = key;
    else
      atomicMin(&status->firstBad, (long long)i);
  }
}

// The CPU's delinearizeKeys: a key outside [0, volume) writes no row and
// lowers status->firstBad to its index.
__global__ void delinearizeRows(const int64_t *keys, int64_t n, int32_t dims,
                                GridExtents shape, int64_t volume,
                                int32_t *coords, int64_t rowStride,
                                int64_t colStride, Status *status) {
  GRID_LOOP(i, n) {
    int64_t key = keys[i];
    if (key < 0 || key >= volume) {
      atomicMin(&status->firstBad, (long long)i);
      continue;
    }
    int32_t *row = coords + i * rowStride;
    for (int32_t d = dims - 1; d >= 0; --d) {
      row[(d + 1) * colStride] = int32_t(key % shape.extent[d]);
      key /= shape.extent[d];
    }
    row[0] = int32_t(key);
  }
}

__global__ void iota(int32_t *out, int64_t n) {
  GRID_LOOP(i, n) { out[i] = int32_t(i); }
}

__global__ void markHeads(const unsigned long long *sorted, int64_t n,
                          unsigned long long *heads) {
  GRID_LOOP(i, n) { heads[i] = i == 0 || sorted[i] != sorted[i - 1]; }
}

__global__ void scatterUnique(const unsigned long long *sorted,
                              const int32_t *order,
                              const unsigned long long *headPrefix, int64_t n,
                              int64_t *uniqueKeys, int32_t *firstIndex,
                              int32_t *inverse) {
  GRID_LOOP(i, n) {
    bool head = i == 0 || sorted[i] != sorted[i - 1];
    int64_t u = int64_t(headPrefix[i]) + (head ? 0 : -1);
    if (head) {
      uniqueKeys[u] = int64_t(sorted[i]);
      if (firstIndex)
        firstIndex[u] = order[i];
    }
    if (inverse)
      inverse[order[i]] = int32_t(u);
  }
}

template <typename T>
__global__ void widen(const T *in, int64_t n, unsigned long long *out) {
  GRID_LOOP(i, n) { out[i] = (unsigned long long)(long long)in[i]; }
}

// prefix holds the wrapped exclusive sums; the first i whose inclusive sum
// leaves [lo, hi] (exactly, since all earlier sums are exact) is recorded.
// Each thread reads in[i] before writing out[i], so out may alias in.
template <typename T>
__global__ void checkAndNarrow(const T *in, const unsigned long long *prefix,
                               int64_t n, long long lo, long long hi, T *out,
                               Status *status) {
  GRID_LOOP(i, n) {
    long long before = (long long)prefix[i], value = (long long)in[i];
    long long after =
        (long long)((unsigned long long)before + (unsigned long long)value);
    bool wrapped = ((before ^ after) & (value ^ after)) < 0;
    if (wrapped || after < lo || after > hi || before < lo || before > hi)
      atomicMin(&status->firstBad, (long long)i);
    out[i] = T(before);
  }
}

__global__ void initStatus(Status *status) {
  *status = Status{0, INT64_MAX, INT64_MAX, 0};
}

// The sum of n values whose exclusive prefix sums are `prefix`: the last
// prefix plus the last value (0 if n == 0), or -1 if the scan recorded an
// overflow in `status` (when given).
__global__ void writeSum(const unsigned long long *prefix,
                         const unsigned long long *values, int64_t n,
                         const Status *status, long long *sum) {
  *sum = n == 0 ? 0
         : status && status->firstBad != INT64_MAX
             ? -1
             : (long long)(prefix[n - 1] + values[n - 1]);
}

/// Allocates and initialises the status block, in stream order (a kernel:
/// a copy from pageable host memory may synchronise).
int newStatus(const char *fn, DeviceBuffer &buffer, cudaStream_t stream) {
  CUDA_CHECK(fn, buffer.allocate(sizeof(Status)));
  initStatus<<<1, 1, 0, stream>>>(buffer.as<Status>());
  return SPCONV_RT_OK;
}

int readStatus(const char *fn, const DeviceBuffer &buffer, Status *out,
               cudaStream_t stream) {
  CUDA_CHECK(fn, cudaGetLastError());
  CUDA_CHECK(fn, cudaMemcpyAsync(out, buffer.as<Status>(), sizeof(Status),
                                 cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(fn, cudaStreamSynchronize(stream));
  return SPCONV_RT_OK;
}

int checkDevice(const char *fn) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
    return cudaFail(fn, "cudaGetDeviceCount", err);
  if (count == 0) {
    std::fprintf(stderr, "spconv-rt: %s: no CUDA device\n", fn);
    return setError(SPCONV_RT_ERR_CUDA, "%s: no CUDA device", fn);
  }
  return SPCONV_RT_OK;
}

/// Radix sort (keys as uint64, only the bits below maxKey) into out*.
int sortToBuffers(const char *fn, const unsigned long long *keysIn,
                  const int32_t *valuesIn, int64_t n, unsigned long long maxKey,
                  unsigned long long *keysOut, int32_t *valuesOut,
                  cudaStream_t stream) {
  int endBit = maxKey ? 64 - __builtin_clzll(maxKey) : 1;
  size_t bytes = 0;
  DeviceBuffer temp(stream);
  if (valuesIn) {
    CUDA_CHECK(fn, cub::DeviceRadixSort::SortPairs(
                       nullptr, bytes, keysIn, keysOut, valuesIn, valuesOut,
                       int(n), 0, endBit, stream));
    CUDA_CHECK(fn, temp.allocate(bytes));
    CUDA_CHECK(fn, cub::DeviceRadixSort::SortPairs(
                       temp.as<void>(), bytes, keysIn, keysOut, valuesIn,
                       valuesOut, int(n), 0, endBit, stream));
  } else {
    CUDA_CHECK(fn, cub::DeviceRadixSort::SortKeys(nullptr, bytes, keysIn,
                                                  keysOut, int(n), 0, endBit,
                                                  stream));
    CUDA_CHECK(fn, temp.allocate(bytes));
    CUDA_CHECK(fn, cub::DeviceRadixSort::SortKeys(temp.as<void>(), bytes,
                                                  keysIn, keysOut, int(n), 0,
                                                  endBit, stream));
  }
  return SPCONV_RT_OK;
}

/// The keys of a sort of n > 0 pairs: present, and few enough for CUB's
/// int item counts.
int checkSortKeys(const char *fn, const int64_t *dKeys, int64_t n) {
  if (!dKeys)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT, "%s: keys is null", fn);
  if (n > INT32_MAX)
    return setError(SPCONV_RT_ERR_UNSUPPORTED,
                    "%s: more than INT32_MAX keys", fn);
  return SPCONV_RT_OK;
}

/// Sorts dKeys (values along, if any) in place through stream-ordered
/// scratch buffers; only the bits below maxKey. Does not synchronise.
int sortInPlace(const char *fn, int64_t *dKeys, int32_t *dValues, int64_t n,
                unsigned long long maxKey, cudaStream_t stream) {
  DeviceBuffer keysOut(stream), valuesOut(stream);
  CUDA_CHECK(fn, keysOut.allocate(n * sizeof(int64_t)));
  if (dValues)
    CUDA_CHECK(fn, valuesOut.allocate(n * sizeof(int32_t)));
  auto *k = reinterpret_cast<unsigned long long *>(dKeys);
  if (int s = sortToBuffers(fn, k, dValues, n, maxKey,
                            keysOut.as<unsigned long long>(),
                            valuesOut.as<int32_t>(), stream))
    return s;
  CUDA_CHECK(fn, cudaMemcpyAsync(dKeys, keysOut.as<void>(), n * sizeof(int64_t),
                                 cudaMemcpyDeviceToDevice, stream));
  if (dValues)
    CUDA_CHECK(fn, cudaMemcpyAsync(dValues, valuesOut.as<void>(),
                                   n * sizeof(int32_t),
                                   cudaMemcpyDeviceToDevice, stream));
  return SPCONV_RT_OK;
}

/// Validates keys on the device: fails on a negative key, else *maxKey.
int validateKeys(const char *fn, const int64_t *dKeys, int64_t n,
                 unsigned long long *maxKey, cudaStream_t stream) {
  DeviceBuffer status(stream);
  if (int s = newStatus(fn, status, stream))
    return s;
  scanKeys<<<blocksFor(n), kBlock, 0, stream>>>(dKeys, n, status.as<Status>());
  Status host;
  if (int s = readStatus(fn, status, &host, stream))
    return s;
  if (host.firstNegative != INT64_MAX)
    return setError(SPCONV_RT_ERR_OUT_OF_RANGE,
                    "%s: key at index %lld is negative", fn,
                    host.firstNegative);
  *maxKey = host.maxKey;
  return SPCONV_RT_OK;
}

/// Enqueues CUB's exclusive sum of n (<= INT32_MAX) values, its scratch
/// memory from the pool in stream order.
int exclusiveSum(const char *fn, const unsigned long long *in,
                 unsigned long long *out, int64_t n, cudaStream_t stream) {
  size_t bytes = 0;
  CUDA_CHECK(fn, cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, int(n),
                                               stream));
  DeviceBuffer temp(stream);
  CUDA_CHECK(fn, temp.allocate(bytes));
  CUDA_CHECK(fn, cub::DeviceScan::ExclusiveSum(temp.as<void>(), bytes, in, out,
                                               int(n), stream));
  return SPCONV_RT_OK;
}

/// Checks a scan's arguments (the device only if there is work).
int checkScan(const char *fn, const void *dIn, int64_t n, const void *dOut) {
  if (int status = checkCount(fn, n, "elements"))
    return status;
  if (n == 0)
    return SPCONV_RT_OK;
  if (!dIn || !dOut)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: %s is a null pointer", fn, !dIn ? "in" : "out");
  if (n > INT32_MAX)
    return setError(SPCONV_RT_ERR_UNSUPPORTED,
                    "%s: more than INT32_MAX elements", fn);
  return checkDevice(fn);
}

/// Enqueues the exclusive scan of n elements of dIn into dOut (which may
/// alias dIn) and its total into *dTotal (-1 if a prefix leaves T's range;
/// the first such index in dStatus->firstBad). Scratch memory comes from
/// the pool in stream order; nothing synchronises.
template <typename T>
int enqueueScan(const char *fn, const T *dIn, int64_t n, T *dOut,
                long long *dTotal, Status *dStatus, cudaStream_t stream) {
  if (n == 0) {
    writeSum<<<1, 1, 0, stream>>>(nullptr, nullptr, 0, dStatus, dTotal);
    CUDA_CHECK(fn, cudaGetLastError());
    return SPCONV_RT_OK;
  }
  DeviceBuffer wide(stream), prefix(stream);
  CUDA_CHECK(fn, wide.allocate(n * sizeof(unsigned long long)));
  CUDA_CHECK(fn, prefix.allocate(n * sizeof(unsigned long long)));
  auto *w = wide.as<unsigned long long>(), *p = prefix.as<unsigned long long>();
  widen<<<blocksFor(n), kBlock, 0, stream>>>(dIn, n, w);
  if (int s = exclusiveSum(fn, w, p, n, stream))
    return s;
  long long lo = (long long)std::numeric_limits<T>::min();
  long long hi = (long long)std::numeric_limits<T>::max();
  checkAndNarrow<<<blocksFor(n), kBlock, 0, stream>>>(dIn, p, n, lo, hi, dOut,
                                                      dStatus);
  writeSum<<<1, 1, 0, stream>>>(p, w, n, dStatus, dTotal);
  CUDA_CHECK(fn, cudaGetLastError());
  return SPCONV_RT_OK;
}

/// The synchronous scan: the total and any overflow reach the host.
template <typename T>
int deviceScan(const char *fn, const T *dIn, int64_t n, T *dOut, T *total,
               cudaStream_t stream) {
  if (total)
    *total = 0;
  if (int s = checkScan(fn, dIn, n, dOut))
    return s;
  if (n == 0)
    return SPCONV_RT_OK;
  DeviceBuffer status(stream), deviceTotal(stream);
  if (int s = newStatus(fn, status, stream))
    return s;
  CUDA_CHECK(fn, deviceTotal.allocate(sizeof(long long)));
  if (int s = enqueueScan(fn, dIn, n, dOut, deviceTotal.as<long long>(),
                          status.as<Status>(), stream))
    return s;
  long long sum = 0;
  CUDA_CHECK(fn, cudaMemcpyAsync(&sum, deviceTotal.as<long long>(),
                                 sizeof(sum), cudaMemcpyDeviceToHost, stream));
  Status host;
  if (int s = readStatus(fn, status, &host, stream))
    return s;
  if (host.firstBad != INT64_MAX)
    return setError(SPCONV_RT_ERR_OVERFLOW,
                    "%s: the sum of elements [0, %lld] overflows the element "
                    "type",
                    fn, host.firstBad);
  if (total)
    *total = T(sum);
  return SPCONV_RT_OK;
}

/// Checks a hash build's arguments (as the CPU builder does).
int checkHashBuild(const char *fn, const int64_t *dKeys, int64_t n,
                   const int64_t *dTableKeys, const int32_t *dTableValues,
                   int64_t capacity) {
  if (int status = checkCount(fn, n, "keys"))
    return status;
  if (n > SPCONV_HT_MAX_ENTRIES)
    return setError(SPCONV_RT_ERR_CAPACITY,
                    "%s: %lld keys exceed the table limit", fn, (long long)n);
  if (capacity < SPCONV_HT_MIN_CAPACITY || (capacity & (capacity - 1)) ||
      capacity > (int64_t(1) << 40))
    return setError(SPCONV_RT_ERR_CAPACITY,
                    "%s: capacity %lld is not a power of two >= 16", fn,
                    (long long)capacity);
  if (2 * n > capacity)
    return setError(SPCONV_RT_ERR_CAPACITY,
                    "%s: capacity %lld is too small for %lld keys (need >= "
                    "%lld)",
                    fn, (long long)capacity, (long long)n,
                    (long long)spconv_ht_capacity_for(n));
  if (!dTableKeys || !dTableValues || (n > 0 && !dKeys))
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: a device pointer is null", fn);
  return checkDevice(fn);
}

/// Enqueues the table's fill and the insertion of n non-negative keys;
/// dStatus->sawDuplicate says whether a key repeated.
void enqueueHashBuild(const int64_t *dKeys, int64_t n, int64_t *dTableKeys,
                      int32_t *dTableValues, int64_t capacity, Status *dStatus,
                      cudaStream_t stream) {
  fillTable<<<blocksFor(capacity), kBlock, 0, stream>>>(
      dTableKeys, dTableValues, capacity, n > 0 ? INT32_MAX : -1);
  if (n == 0)
    return;
  insertKeys<<<blocksFor(n), kBlock, 0, stream>>>(
      dKeys, n, dTableKeys, dTableValues, capacity, dStatus);
  clearEmptyValues<<<blocksFor(capacity), kBlock, 0, stream>>>(
      dTableKeys, dTableValues, capacity);
}

/// Checks a unique's arguments (the device only if there is work).
int checkUnique(const char *fn, const int64_t *dKeys, int64_t n,
                const int64_t *dUniqueKeys) {
  if (n < 0 || n > INT32_MAX)
    return setError(n < 0 ? SPCONV_RT_ERR_INVALID_ARGUMENT
                          : SPCONV_RT_ERR_OVERFLOW,
                    "%s: number of keys %lld outside [0, INT32_MAX]", fn,
                    (long long)n);
  if (n == 0)
    return SPCONV_RT_OK;
  if (!dKeys || !dUniqueKeys)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: a device pointer is null", fn);
  return checkDevice(fn);
}

/// Enqueues the unique of n keys in [0, maxKey] and its count into
/// *dNumUnique; nothing synchronises.
int enqueueUnique(const char *fn, const int64_t *dKeys, int64_t n,
                  int64_t *dUniqueKeys, int32_t *dFirstIndex,
                  int32_t *dInverse, unsigned long long maxKey,
                  long long *dNumUnique, cudaStream_t stream) {
  if (n == 0) {
    writeSum<<<1, 1, 0, stream>>>(nullptr, nullptr, 0, nullptr, dNumUnique);
    CUDA_CHECK(fn, cudaGetLastError());
    return SPCONV_RT_OK;
  }
  DeviceBuffer order(stream), sortedKeys(stream), sortedOrder(stream),
      heads(stream), prefix(stream);
  CUDA_CHECK(fn, order.allocate(n * sizeof(int32_t)));
  CUDA_CHECK(fn, sortedOrder.allocate(n * sizeof(int32_t)));
  CUDA_CHECK(fn, sortedKeys.allocate(n * sizeof(unsigned long long)));
  CUDA_CHECK(fn, heads.allocate(n * sizeof(unsigned long long)));
  CUDA_CHECK(fn, prefix.allocate(n * sizeof(unsigned long long)));
  iota<<<blocksFor(n), kBlock, 0, stream>>>(order.as<int32_t>(), n);
  auto *sorted = sortedKeys.as<unsigned long long>();
  if (int s = sortToBuffers(fn,
                            reinterpret_cast<const unsigned long long *>(dKeys),
                            order.as<int32_t>(), n, maxKey, sorted,
                            sortedOrder.as<int32_t>(), stream))
    return s;
  auto *h = heads.as<unsigned long long>(), *p = prefix.as<unsigned long long>();
  markHeads<<<blocksFor(n), kBlock, 0, stream>>>(sorted, n, h);
  if (int s = exclusiveSum(fn, h, p, n, stream))
    return s;
  scatterUnique<<<blocksFor(n), kBlock, 0, stream>>>(
      sorted, sortedOrder.as<int32_t>(), p, n, dUniqueKeys, dFirstIndex,
      dInverse);
  writeSum<<<1, 1, 0, stream>>>(p, h, n, nullptr, dNumUnique);
  CUDA_CHECK(fn, cudaGetLastError());
  return SPCONV_RT_OK;
}

/// A coordinate conversion's grid, checked.
struct Conversion {
  GridExtents extents{}; ///< For the kernel.
  int64_t volume = 0;
  bool empty = true; ///< Nothing to do (no rows).
};

/// What both coordinate conversions check before they launch, in the
/// order of the CPU's (Coords.cpp): the grid, the count, the pointers,
/// int32 coordinates where they are written, and the device.
int checkConversion(const char *fn, int32_t dims, const int64_t *shape,
                    int64_t batchSize, int64_t n, const char *what,
                    const int32_t *dCoords, const int64_t *dKeys,
                    bool writesCoords, Conversion *c) {
  if (int s = checkGrid(fn, dims, shape, batchSize, &c->volume))
    return s;
  if (int s = checkCount(fn, n, what))
    return s;
  if (n == 0)
    return SPCONV_RT_OK;
  if (!dCoords || !dKeys)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: %s is a null pointer", fn,
                    !dCoords ? "coords" : "keys");
  if (writesCoords)
    if (int s = checkInt32Grid(fn, dims, shape, batchSize))
      return s;
  if (int s = checkDevice(fn))
    return s;
  for (int32_t d = 0; d < dims; ++d)
    c->extents.extent[d] = shape[d];
  c->empty = false;
  return SPCONV_RT_OK;
}

/// Runs `launch(status)` on `stream` and returns in *firstBad the smallest
/// index its kernel recorded (INT64_MAX: none); waits for the stream.
template <typename Launch>
int firstBadOf(const char *fn, cudaStream_t stream, int64_t *firstBad,
               Launch launch) {
  DeviceBuffer status(stream);
  if (int s = newStatus(fn, status, stream))
    return s;
  launch(status.as<Status>());
  Status found;
  if (int s = readStatus(fn, status, &found, stream))
    return s;
  *firstBad = found.firstBad;
  return SPCONV_RT_OK;
}

} // namespace

extern "C" {

int spconv_rt_cuda_device_count(int32_t *count) {
  const char *fn = "spconv_rt_cuda_device_count";
  if (!count)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: null output pointer", fn);
  *count = 0;
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess)
    return cudaFail(fn, "cudaGetDeviceCount", err);
  *count = n;
  return SPCONV_RT_OK;
}

int spconv_rt_cuda_hash_build(const int64_t *dKeys, int64_t n,
                              int64_t *dTableKeys, int32_t *dTableValues,
                              int64_t capacity, int64_t *duplicateIndex,
                              void *streamPtr) {
  const char *fn = "spconv_rt_cuda_hash_build";
  auto stream = static_cast<cudaStream_t>(streamPtr);
  if (duplicateIndex)
    *duplicateIndex = -1;
  if (int s =
          checkHashBuild(fn, dKeys, n, dTableKeys, dTableValues, capacity))
    return s;
  unsigned long long maxKey = 0;
  if (n > 0)
    if (int s = validateKeys(fn, dKeys, n, &maxKey, stream))
      return s;
  DeviceBuffer status(stream);
  if (int s = newStatus(fn, status, stream))
    return s;
  enqueueHashBuild(dKeys, n, dTableKeys, dTableValues, capacity,
                   status.as<Status>(), stream);
  Status host;
  if (int s = readStatus(fn, status, &host, stream))
    return s;
  if (host.sawDuplicate) {
    findRepeats<<<blocksFor(n), kBlock, 0, stream>>>(
        dKeys, n, dTableKeys, dTableValues, capacity, status.as<Status>(),
        &status.as<Status>()->firstBad);
    if (int s = readStatus(fn, status, &host, stream))
      return s;
    if (duplicateIndex)
      *duplicateIndex = host.firstBad;
    return setError(SPCONV_RT_ERR_DUPLICATE_KEY,
                    "%s: key at index %lld repeats an earlier key", fn,
                    host.firstBad);
  }
  return SPCONV_RT_OK;
}

int spconv_rt_cuda_hash_build_deferred(const int64_t *dKeys, int64_t n,
                                       int64_t *dTableKeys,
                                       int32_t *dTableValues, int64_t capacity,
                                       int64_t *dFirstRepeat,
                                       void *streamPtr) {
  const char *fn = "spconv_rt_cuda_hash_build_deferred";
  auto stream = static_cast<cudaStream_t>(streamPtr);
  if (int s =
          checkHashBuild(fn, dKeys, n, dTableKeys, dTableValues, capacity))
    return s;
  if (!dFirstRepeat)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: firstRepeat is null", fn);
  DeviceBuffer status(stream);
  if (int s = newStatus(fn, status, stream))
    return s;
  enqueueHashBuild(dKeys, n, dTableKeys, dTableValues, capacity,
                   status.as<Status>(), stream);
  if (n > 0)
    findRepeats<<<blocksFor(n), kBlock, 0, stream>>>(
        dKeys, n, dTableKeys, dTableValues, capacity, status.as<Status>(),
        reinterpret_cast<long long *>(dFirstRepeat));
  CUDA_CHECK(fn, cudaGetLastError());
  return SPCONV_RT_OK;
}

int spconv_rt_cuda_hash_lookup(const int64_t *dTableKeys,
                               const int32_t *dTableValues, int64_t capacity,
                               const int64_t *dQueries, int64_t m,
                               int32_t *dOut, void *streamPtr) {
  const char *fn = "spconv_rt_cuda_hash_lookup";
  auto stream = static_cast<cudaStream_t>(streamPtr);
  if (capacity < SPCONV_HT_MIN_CAPACITY || (capacity & (capacity - 1)))
    return setError(SPCONV_RT_ERR_CAPACITY,
                    "%s: capacity %lld is not a power of two >= 16", fn,
                    (long long)capacity);
  if (m < 0)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: negative number of queries", fn);
  if (m == 0)
    return SPCONV_RT_OK;
  if (!dTableKeys || !dTableValues || !dQueries || !dOut)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: a device pointer is null", fn);
  if (int s = checkDevice(fn))
    return s;
  lookupKeys<<<blocksFor(m), kBlock, 0, stream>>>(dTableKeys, dTableValues,
                                                   capacity, dQueries, m, dOut);
  CUDA_CHECK(fn, cudaGetLastError());
  CUDA_CHECK(fn, cudaStreamSynchronize(stream));
  return SPCONV_RT_OK;
}

int spconv_rt_cuda_linearize_coords(const int32_t *dCoords, int64_t n,
                                    int64_t rowStride, int64_t colStride,
                                    int32_t numSpatialDims,
                                    const int64_t *shape, int64_t batchSize,
                                    int64_t *dKeys, void *streamPtr) {
  const char *fn = "spconv_rt_cuda_linearize_coords";
  auto stream = static_cast<cudaStream_t>(streamPtr);
  Conversion c;
  if (int s = checkConversion(fn, numSpatialDims, shape, batchSize, n, "sites",
                              dCoords, dKeys, false, &c))
    return s;
  if (c.empty)
    return SPCONV_RT_OK;
  int64_t i;
  if (int s = firstBadOf(fn, stream, &i, [&](Status *status) {
        linearizeRows<<<blocksFor(n), kBlock, 0, stream>>>(
            dCoords, n, rowStride, colStride, numSpatialDims, c.extents,
            batchSize, dKeys, status);
      }))
    return s;
  if (i == INT64_MAX)
    return SPCONV_RT_OK;
  // The first bad row, for the CPU's message.
  int32_t row[SPCONV_RT_MAX_SPATIAL_DIMS + 1];
  for (int32_t c = 0; c <= numSpatialDims; ++c)
    CUDA_CHECK(fn, cudaMemcpyAsync(&row[c],
                                   dCoords + i * rowStride + c * colStride,
                                   sizeof(int32_t), cudaMemcpyDeviceToHost,
                                   stream));
  CUDA_CHECK(fn, cudaStreamSynchronize(stream));
  return reportBadSite(fn, i, row, 1, numSpatialDims, shape, batchSize);
}

int spconv_rt_cuda_delinearize_keys(const int64_t *dKeys, int64_t n,
                                    int32_t numSpatialDims,
                                    const int64_t *shape, int64_t batchSize,
                                    int32_t *dCoords, int64_t rowStride,
                                    int64_t colStride, void *streamPtr) {
  const char *fn = "spconv_rt_cuda_delinearize_keys";
  auto stream = static_cast<cudaStream_t>(streamPtr);
  Conversion c;
  if (int s = checkConversion(fn, numSpatialDims, shape, batchSize, n, "keys",
                              dCoords, dKeys, true, &c))
    return s;
  if (c.empty)
    return SPCONV_RT_OK;
  int64_t i;
  if (int s = firstBadOf(fn, stream, &i, [&](Status *status) {
        delinearizeRows<<<blocksFor(n), kBlock, 0, stream>>>(
            dKeys, n, numSpatialDims, c.extents, c.volume, dCoords, rowStride,
            colStride, status);
      }))
    return s;
  if (i == INT64_MAX)
    return SPCONV_RT_OK;
  int64_t key = 0;
  CUDA_CHECK(fn, cudaMemcpyAsync(&key, dKeys + i, sizeof(key),
                                 cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(fn, cudaStreamSynchronize(stream));
  return reportBadKey(fn, key, i, c.volume);
}

int spconv_rt_cuda_sort_pairs(int64_t *dKeys, int32_t *dValues, int64_t n,
                              void *streamPtr) {
  const char *fn = "spconv_rt_cuda_sort_pairs";
  auto stream = static_cast<cudaStream_t>(streamPtr);
  if (n < 0)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: negative number of keys", fn);
  if (n == 0)
    return SPCONV_RT_OK;
  if (int s = checkSortKeys(fn, dKeys, n))
    return s;
  if (int s = checkDevice(fn))
    return s;
  unsigned long long maxKey;
  if (int s = validateKeys(fn, dKeys, n, &maxKey, stream))
    return s;
  if (int s = sortInPlace(fn, dKeys, dValues, n, maxKey, stream))
    return s;
  CUDA_CHECK(fn, cudaStreamSynchronize(stream));
  return SPCONV_RT_OK;
}

int spconv_rt_cuda_sort_pairs_bits(int64_t *dKeys, int32_t *dValues,
                                   int64_t n, int64_t endBit,
                                   void *streamPtr) {
  const char *fn = "spconv_rt_cuda_sort_pairs_bits";
  auto stream = static_cast<cudaStream_t>(streamPtr);
  if (n < 0)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: negative number of keys", fn);
  if (endBit < 1 || endBit > 63)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: key width %lld is not in [1, 63]", fn,
                    static_cast<long long>(endBit));
  if (n == 0)
    return SPCONV_RT_OK;
  if (int s = checkSortKeys(fn, dKeys, n))
    return s;
  if (int s = sortInPlace(fn, dKeys, dValues, n, (1ull << endBit) - 1, stream))
    return s;
  return SPCONV_RT_OK;
}

int spconv_rt_cuda_unique(const int64_t *dKeys, int64_t n,
                          int64_t *dUniqueKeys, int32_t *dFirstIndex,
                          int32_t *dInverse, int64_t *numUnique,
                          void *streamPtr) {
  const char *fn = "spconv_rt_cuda_unique";
  auto stream = static_cast<cudaStream_t>(streamPtr);
  if (!numUnique)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: numUnique is null", fn);
  *numUnique = 0;
  if (int s = checkUnique(fn, dKeys, n, dUniqueKeys))
    return s;
  if (n == 0)
    return SPCONV_RT_OK;
  unsigned long long maxKey;
  if (int s = validateKeys(fn, dKeys, n, &maxKey, stream))
    return s;
  DeviceBuffer count(stream);
  CUDA_CHECK(fn, count.allocate(sizeof(long long)));
  if (int s = enqueueUnique(fn, dKeys, n, dUniqueKeys, dFirstIndex, dInverse,
                            maxKey, count.as<long long>(), stream))
    return s;
  long long host = 0;
  CUDA_CHECK(fn, cudaMemcpyAsync(&host, count.as<long long>(), sizeof(host),
                                 cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(fn, cudaStreamSynchronize(stream));
  *numUnique = host;
  return SPCONV_RT_OK;
}

int spconv_rt_cuda_unique_deferred(const int64_t *dKeys, int64_t n,
                                   int64_t *dUniqueKeys, int32_t *dFirstIndex,
                                   int32_t *dInverse, int64_t *dNumUnique,
                                   int64_t endBit, void *streamPtr) {
  const char *fn = "spconv_rt_cuda_unique_deferred";
  auto stream = static_cast<cudaStream_t>(streamPtr);
  if (endBit < 1 || endBit > 63)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: key width %lld is not in [1, 63]", fn,
                    static_cast<long long>(endBit));
  if (!dNumUnique)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: numUnique is null", fn);
  if (int s = checkUnique(fn, dKeys, n, dUniqueKeys))
    return s;
  return enqueueUnique(fn, dKeys, n, dUniqueKeys, dFirstIndex, dInverse,
                       (1ull << endBit) - 1,
                       reinterpret_cast<long long *>(dNumUnique), stream);
}

int spconv_rt_cuda_exclusive_scan_i32(const int32_t *dIn, int64_t n,
                                      int32_t *dOut, int32_t *total,
                                      void *stream) {
  return deviceScan("spconv_rt_cuda_exclusive_scan_i32", dIn, n, dOut, total,
                    static_cast<cudaStream_t>(stream));
}

int spconv_rt_cuda_exclusive_scan_i64(const int64_t *dIn, int64_t n,
                                      int64_t *dOut, int64_t *total,
                                      void *stream) {
  return deviceScan("spconv_rt_cuda_exclusive_scan_i64", dIn, n, dOut, total,
                    static_cast<cudaStream_t>(stream));
}

int spconv_rt_cuda_exclusive_scan_i64_deferred(const int64_t *dIn, int64_t n,
                                               int64_t *dOut, int64_t *dTotal,
                                               void *streamPtr) {
  const char *fn = "spconv_rt_cuda_exclusive_scan_i64_deferred";
  auto stream = static_cast<cudaStream_t>(streamPtr);
  if (!dTotal)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT, "%s: total is null", fn);
  if (int s = checkScan(fn, dIn, n, dOut))
    return s;
  DeviceBuffer status(stream);
  if (int s = newStatus(fn, status, stream))
    return s;
  return enqueueScan(fn, dIn, n, dOut, reinterpret_cast<long long *>(dTotal),
                     status.as<Status>(), stream);
}

} // extern "C"
