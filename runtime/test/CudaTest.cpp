//===- CudaTest.cpp - CUDA primitives and mgpu* wrappers ------------------===//
//
// Without a driver or device: every entry point fails cleanly (these tests
// run on the CPU-only CI machines). With a device: the primitives match the
// CPU implementation.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <dlfcn.h>
#include <numeric>
#include <thread>

using namespace spconv_rt_test;

namespace {
bool haveDevice() {
  int32_t count = 0;
  return spconv_rt_cuda_device_count(&count) == 0 && count > 0;
}

#define REQUIRE_DEVICE()                                                       \
  do {                                                                         \
    if (!haveDevice()) {                                                       \
      std::printf("SKIP: no CUDA device\n");                                   \
      GTEST_SKIP() << "SKIP: no CUDA device";                                  \
    }                                                                          \
  } while (false)

/// Device copy of a host vector, through the mgpu* wrappers.
template <typename T> struct DeviceVector {
  explicit DeviceVector(const std::vector<T> &host) : size(host.size()) {
    ptr = static_cast<T *>(mgpuMemAlloc(bytes(), nullptr, false));
    if (size)
      mgpuMemcpy(ptr, const_cast<T *>(host.data()), bytes(), nullptr);
    mgpuStreamSynchronize(nullptr);
  }
  explicit DeviceVector(size_t n) : DeviceVector(std::vector<T>(n)) {}
  ~DeviceVector() { mgpuMemFree(ptr, nullptr); }
  std::vector<T> toHost() const {
    std::vector<T> host(size);
    if (size)
      mgpuMemcpy(host.data(), ptr, bytes(), nullptr);
    mgpuStreamSynchronize(nullptr);
    return host;
  }
  size_t bytes() const { return size * sizeof(T); }
  size_t size;
  T *ptr = nullptr;
};
} // namespace

TEST(CudaNoDevice, EntryPointsFailCleanly) {
  if (haveDevice())
    GTEST_SKIP() << "a CUDA device is present";
  spconv_rt_clear_error();
  char image[16] = {};
  EXPECT_EQ(mgpuModuleLoad(image, sizeof(image)), nullptr);
  EXPECT_NE(lastError().find("mgpuModuleLoad"), std::string::npos)
      << lastError();
  std::printf("last error: %s\n", lastError().c_str());
  EXPECT_EQ(mgpuModuleLoadJIT(image, 2), nullptr);
  EXPECT_EQ(mgpuModuleGetFunction(nullptr, "kernel"), nullptr);
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  EXPECT_EQ(spconv_rt_cuda_thread_stream(), nullptr);
  EXPECT_EQ(mgpuEventCreate(), nullptr);
  EXPECT_EQ(mgpuMemAlloc(1024, nullptr, false), nullptr);
  EXPECT_EQ(mgpuMemAlloc(1024, nullptr, true), nullptr);
  // The void entry points return without crashing.
  void *params[1] = {nullptr};
  mgpuLaunchKernel(nullptr, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr, 0);
  mgpuModuleUnload(nullptr);
  mgpuStreamSynchronize(nullptr);
  // Compiled code's waits are counted even when they fail; the caller's
  // own (mgpuStreamSynchronize) are not.
  int64_t waits = spconv_rt_cuda_host_wait_count();
  spconv_rt_cuda_stream_synchronize(nullptr);
  EXPECT_EQ(spconv_rt_cuda_host_wait_count(), waits + 1);
  mgpuStreamDestroy(nullptr);
  mgpuStreamWaitEvent(nullptr, nullptr);
  mgpuEventRecord(nullptr, nullptr);
  mgpuEventSynchronize(nullptr);
  mgpuEventDestroy(nullptr);
  mgpuMemFree(nullptr, nullptr);
  int buffer[4] = {};
  mgpuMemcpy(buffer, buffer + 2, 8, nullptr);
  mgpuMemset32(buffer, 7, 4, nullptr);
  mgpuMemset16(buffer, 7, 4, nullptr);
  mgpuMemHostRegister(buffer, sizeof(buffer));
  mgpuMemHostUnregister(buffer);
  StridedMemRefType<int, 1> desc = {buffer, buffer, 0, {4}, {1}};
  mgpuMemHostRegisterMemRef(1, &desc, sizeof(int));
  mgpuMemHostUnregisterMemRef(1, &desc, sizeof(int));
  mgpuSetDefaultDevice(0);
  EXPECT_EQ(buffer[0], 0) << "host memory must be untouched";
  EXPECT_FALSE(lastError().empty());

  // The primitives report SPCONV_RT_ERR_CUDA.
  int32_t count = -1;
  EXPECT_NE(spconv_rt_cuda_device_count(&count), 0);
  EXPECT_EQ(count, 0);
  int64_t keys[2] = {1, 2}, tk[16], dup;
  int32_t tv[16];
  EXPECT_EQ(spconv_rt_cuda_hash_build(keys, 2, tk, tv, 16, &dup, nullptr),
            SPCONV_RT_ERR_CUDA);
  EXPECT_NE(lastError().find("spconv_rt_cuda_hash_build"), std::string::npos);
  int64_t numUnique;
  EXPECT_EQ(
      spconv_rt_cuda_unique(keys, 2, tk, nullptr, nullptr, &numUnique, nullptr),
      SPCONV_RT_ERR_CUDA);
  // Argument errors are reported before the device is needed.
  EXPECT_EQ(spconv_rt_cuda_hash_build(keys, 2, tk, tv, 12, &dup, nullptr),
            SPCONV_RT_ERR_CAPACITY);
  EXPECT_EQ(spconv_rt_cuda_sort_pairs(nullptr, nullptr, 0, nullptr), 0);
}

TEST(CudaDevice, MemoryWrappersRoundTrip) {
  REQUIRE_DEVICE();
  std::vector<int32_t> host(1000);
  std::iota(host.begin(), host.end(), 0);
  DeviceVector<int32_t> d(host);
  EXPECT_EQ(d.toHost(), host);
  void *stream = mgpuStreamCreate();
  ASSERT_NE(stream, nullptr) << lastError();
  mgpuMemset32(d.ptr, 0xdeadbeef, 10, stream);
  mgpuMemset16(d.ptr + 10, 0x1234, 4, stream); // 4 halves: 2 words
  void *event = mgpuEventCreate();
  mgpuEventRecord(event, stream);
  mgpuEventSynchronize(event);
  mgpuEventDestroy(event);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  auto back = d.toHost();
  EXPECT_EQ(uint32_t(back[0]), 0xdeadbeefu);
  EXPECT_EQ(uint32_t(back[10]), 0x12341234u);
  EXPECT_EQ(back[11], 0x12341234);
  EXPECT_EQ(back[12], 12);
}

TEST(CudaDevice, OneStreamPerThreadAndPoolMemory) {
  REQUIRE_DEVICE();
  spconv_rt_clear_error();
  // Every "created" stream is the thread's, and destroying it keeps it.
  void *stream = mgpuStreamCreate();
  ASSERT_NE(stream, nullptr) << lastError();
  EXPECT_EQ(mgpuStreamCreate(), stream);
  EXPECT_EQ(spconv_rt_cuda_thread_stream(), stream);
  mgpuStreamDestroy(stream);
  void *other = nullptr;
  std::thread([&] { other = mgpuStreamCreate(); }).join();
  EXPECT_NE(other, nullptr);
  EXPECT_NE(other, stream) << "each thread has its own stream";
  // Device memory in stream order, from the pool; managed memory too.
  auto *d = static_cast<int32_t *>(mgpuMemAlloc(64, stream, false));
  ASSERT_NE(d, nullptr) << lastError();
  mgpuMemset32(d, 7, 16, stream);
  int32_t back[16] = {};
  mgpuMemcpy(back, d, sizeof(back), stream);
  mgpuMemFree(d, stream);
  spconv_rt_cuda_stream_synchronize(stream);
  EXPECT_EQ(back[0], 7);
  EXPECT_EQ(back[15], 7);
  auto *m = static_cast<int32_t *>(mgpuMemAlloc(64, stream, true));
  ASSERT_NE(m, nullptr) << lastError();
  m[0] = 3;
  mgpuMemFree(m, stream);
  EXPECT_TRUE(lastError().empty()) << lastError();
}

TEST(CudaDevice, PoolMemoryFreedInsideStreamCapture) {
  REQUIRE_DEVICE();
  // The capture calls come from the driver itself: the runtime exports none.
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(cuda, nullptr);
  using BeginFn = int (*)(void *, int);
  using EndFn = int (*)(void *, void **);
  using DestroyFn = int (*)(void *);
  auto begin =
      reinterpret_cast<BeginFn>(dlsym(cuda, "cuStreamBeginCapture_v2"));
  auto end = reinterpret_cast<EndFn>(dlsym(cuda, "cuStreamEndCapture"));
  auto destroy = reinterpret_cast<DestroyFn>(dlsym(cuda, "cuGraphDestroy"));
  ASSERT_TRUE(begin && end && destroy);
  spconv_rt_clear_error();
  void *stream = spconv_rt_cuda_thread_stream();
  ASSERT_NE(stream, nullptr) << lastError();
  // A pool allocation made in a capture has no memory behind it until the
  // graph runs: freeing it must not ask the driver what it is.
  const int relaxed = 2; // CU_STREAM_CAPTURE_MODE_RELAXED
  ASSERT_EQ(begin(stream, relaxed), 0);
  void *d = mgpuMemAlloc(256, stream, false);
  mgpuMemset32(d, 1, 64, stream);
  mgpuMemFree(d, stream);
  void *graph = nullptr;
  EXPECT_EQ(end(stream, &graph), 0);
  EXPECT_NE(d, nullptr);
  EXPECT_TRUE(lastError().empty()) << lastError();
  if (graph)
    destroy(graph);
}

TEST(CudaDevice, LinearizeTwinsMatchCpu) {
  REQUIRE_DEVICE();
  spconv_rt_clear_error();
  // Strided coordinates (every other column of an 8-wide array), as a view
  // of an argument would be.
  const int64_t n = 50000, batch = 3, shape[3] = {41, 1600, 1408};
  std::vector<int32_t> wide(size_t(n) * 8, -7);
  uint64_t state = 11;
  for (int64_t i = 0; i < n; ++i) {
    wide[i * 8] = int32_t(splitmix(state) % batch);
    for (int d = 0; d < 3; ++d)
      wide[i * 8 + 2 * (d + 1)] =
          int32_t(splitmix(state) % uint64_t(shape[d]));
  }
  std::vector<int32_t> coords(size_t(n) * 4);
  for (int64_t i = 0; i < n; ++i)
    for (int c = 0; c < 4; ++c)
      coords[i * 4 + c] = wide[i * 8 + 2 * c];
  std::vector<int64_t> want(static_cast<size_t>(n));
  ASSERT_EQ(spconv_rt_linearize_coords(coords.data(), n, 3, shape, batch,
                                       want.data()),
            0)
      << lastError();
  DeviceVector<int32_t> dWide(wide);
  DeviceVector<int64_t> dKeys(static_cast<size_t>(n));
  ASSERT_EQ(spconv_rt_cuda_linearize_coords(dWide.ptr, n, 8, 2, 3, shape,
                                            batch, dKeys.ptr, nullptr),
            0)
      << lastError();
  EXPECT_TRUE(dKeys.toHost() == want);
  DeviceVector<int32_t> dBack(size_t(n) * 4);
  ASSERT_EQ(spconv_rt_cuda_delinearize_keys(dKeys.ptr, n, 3, shape, batch,
                                            dBack.ptr, 4, 1, nullptr),
            0)
      << lastError();
  EXPECT_TRUE(dBack.toHost() == coords);

  // The first site outside the grid and the first key outside it are
  // reported as the CPU reports them, whatever the thread order.
  wide[size_t(40000) * 8 + 4] = 1600;
  wide[size_t(30000) * 8] = -1;
  DeviceVector<int32_t> dBad(wide);
  EXPECT_EQ(spconv_rt_cuda_linearize_coords(dBad.ptr, n, 8, 2, 3, shape,
                                            batch, dKeys.ptr, nullptr),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("row 30000: batch index -1 is outside [0, 3)"),
            std::string::npos)
      << lastError();
  spconv_rt_clear_error();
  want[45000] = batch * 41 * 1600 * 1408;
  want[47000] = -5;
  DeviceVector<int64_t> dBadKeys(want);
  EXPECT_EQ(spconv_rt_cuda_delinearize_keys(dBadKeys.ptr, n, 3, shape, batch,
                                            dBack.ptr, 4, 1, nullptr),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("key 277094400 at index 45000 is outside the "
                             "grid [0, 277094400)"),
            std::string::npos)
      << lastError();
  spconv_rt_clear_error();
}

TEST(CudaDevice, HashTableMatchesCpu) {
  REQUIRE_DEVICE();
  auto keys = makeLidarScene(300000, 21).keys;
  auto queries = subm27Queries(keys);
  queries.push_back(-1);
  Table cpu;
  ASSERT_EQ(cpu.build(keys), 0);
  auto want = cpu.lookup(queries);

  DeviceVector<int64_t> dKeys(keys), dTk(size_t(cpu.capacity)),
      dQueries(queries);
  DeviceVector<int32_t> dTv(size_t(cpu.capacity)), dOut(queries.size());
  int64_t dup = 0;
  ASSERT_EQ(spconv_rt_cuda_hash_build(dKeys.ptr, int64_t(keys.size()), dTk.ptr,
                                      dTv.ptr, cpu.capacity, &dup, nullptr),
            0)
      << lastError();
  EXPECT_EQ(dup, -1);
  ASSERT_EQ(spconv_rt_cuda_hash_lookup(dTk.ptr, dTv.ptr, cpu.capacity,
                                       dQueries.ptr, int64_t(queries.size()),
                                       dOut.ptr, nullptr),
            0)
      << lastError();
  EXPECT_TRUE(dOut.toHost() == want);
  // The device table follows the layout: the CPU inline probe reads it.
  auto tk = dTk.toHost();
  auto tv = dTv.toHost();
  for (size_t i = 0; i < keys.size(); i += 97)
    EXPECT_EQ(spconv_ht_lookup(tk.data(), tv.data(), cpu.capacity, keys[i]),
              int32_t(i));

  keys[200000] = keys[5];
  keys[250000] = keys[6];
  DeviceVector<int64_t> dDup(keys);
  EXPECT_EQ(spconv_rt_cuda_hash_build(dDup.ptr, int64_t(keys.size()), dTk.ptr,
                                      dTv.ptr, cpu.capacity, &dup, nullptr),
            SPCONV_RT_ERR_DUPLICATE_KEY);
  EXPECT_EQ(dup, 200000);
}

TEST(CudaDevice, SortUniqueScanMatchCpu) {
  REQUIRE_DEVICE();
  auto keys = makeLidarScene(400000, 22).keys;
  for (auto &k : keys)
    k /= 4;
  int64_t n = int64_t(keys.size());
  std::vector<int32_t> values(keys.size());
  std::iota(values.begin(), values.end(), 0);

  auto cpuKeys = keys;
  auto cpuValues = values;
  ASSERT_EQ(spconv_rt_sort_pairs(cpuKeys.data(), cpuValues.data(), n), 0);
  DeviceVector<int64_t> dKeys(keys);
  DeviceVector<int32_t> dValues(values);
  ASSERT_EQ(spconv_rt_cuda_sort_pairs(dKeys.ptr, dValues.ptr, n, nullptr), 0)
      << lastError();
  EXPECT_TRUE(dKeys.toHost() == cpuKeys);
  EXPECT_TRUE(dValues.toHost() == cpuValues);

  std::vector<int64_t> u(keys.size());
  std::vector<int32_t> first(keys.size()), inv(keys.size());
  int64_t count;
  ASSERT_EQ(spconv_rt_unique(keys.data(), n, u.data(), first.data(), inv.data(),
                             &count),
            0);
  DeviceVector<int64_t> dIn(keys), dU(keys.size());
  DeviceVector<int32_t> dFirst(keys.size()), dInv(keys.size());
  int64_t dCount = -1;
  ASSERT_EQ(spconv_rt_cuda_unique(dIn.ptr, n, dU.ptr, dFirst.ptr, dInv.ptr,
                                  &dCount, nullptr),
            0)
      << lastError();
  ASSERT_EQ(dCount, count);
  auto gu = dU.toHost();
  auto gf = dFirst.toHost();
  EXPECT_TRUE(std::equal(u.begin(), u.begin() + count, gu.begin()));
  EXPECT_TRUE(std::equal(first.begin(), first.begin() + count, gf.begin()));
  EXPECT_TRUE(dInv.toHost() == inv);

  std::vector<int32_t> counts(keys.size());
  for (size_t i = 0; i < counts.size(); ++i)
    counts[i] = int32_t(keys[i] % 50);
  std::vector<int32_t> offsets(counts.size());
  int32_t total;
  ASSERT_EQ(
      spconv_rt_exclusive_scan_i32(counts.data(), n, offsets.data(), &total),
      0);
  DeviceVector<int32_t> dCounts(counts);
  int32_t dTotal = -1;
  ASSERT_EQ(spconv_rt_cuda_exclusive_scan_i32(dCounts.ptr, n, dCounts.ptr,
                                              &dTotal, nullptr),
            0)
      << lastError();
  EXPECT_EQ(dTotal, total);
  EXPECT_TRUE(dCounts.toHost() == offsets);
  std::vector<int32_t> big = {INT32_MAX, 0, 1, 5};
  DeviceVector<int32_t> dBig(big);
  EXPECT_EQ(spconv_rt_cuda_exclusive_scan_i32(dBig.ptr, 4, dBig.ptr, &dTotal,
                                              nullptr),
            SPCONV_RT_ERR_OVERFLOW);
  EXPECT_NE(lastError().find("[0, 2]"), std::string::npos) << lastError();
}

namespace {
template <typename T> StridedMemRefType<T, 1> view(T *data, int64_t n) {
  return {data, data, 0, {n}, {1}};
}

/// A managed copy of `host` (the CUDA target's buffers), freed on scope exit.
template <typename T> struct ManagedVector {
  explicit ManagedVector(const std::vector<T> &host) : size(host.size()) {
    ptr = static_cast<T *>(
        mgpuMemAlloc(std::max<size_t>(1, size) * sizeof(T), nullptr, true));
    if (size)
      std::copy(host.begin(), host.end(), ptr);
  }
  ~ManagedVector() { mgpuMemFree(ptr, nullptr); }
  std::vector<T> toHost() const { return std::vector<T>(ptr, ptr + size); }
  StridedMemRefType<T, 1> memref() { return view(ptr, int64_t(size)); }
  size_t size;
  T *ptr = nullptr;
};
} // namespace

// The descriptor checks of the memref twins run before any device work, so
// bad descriptors are reported the same way with or without a GPU.
TEST(CudaMemRef, BadDescriptorsFailBeforeTheDevice) {
  std::vector<int64_t> keys = {1, 2, 3}, tableKeys(16), dup(1);
  std::vector<int32_t> tableValues(8);
  auto k = view(keys.data(), 3), tk = view(tableKeys.data(), 16),
       d = view(dup.data(), 1);
  auto tv = view(tableValues.data(), 8);
  spconv_rt_clear_error();
  EXPECT_EQ(_mlir_ciface_spconv_rt_cuda_memref_hash_build(&k, &tk, &tv, &d),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("spconv_rt_cuda_memref_hash_build: tableKeys has "
                             "16 elements but tableValues has 8"),
            std::string::npos)
      << lastError();

  std::vector<int32_t> in(6), out(6), total(1);
  StridedMemRefType<int32_t, 1> strided = {in.data(), in.data(), 0, {3}, {2}};
  auto o = view(out.data(), 6), t = view(total.data(), 1);
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_cuda_memref_exclusive_scan_i32(&strided, &o, &t),
      SPCONV_RT_ERR_UNSUPPORTED);
  EXPECT_NE(lastError().find("only unit stride"), std::string::npos)
      << lastError();

  std::vector<int64_t> u(2), count(1);
  std::vector<int32_t> first(3), inverse(3);
  auto uu = view(u.data(), 2), c = view(count.data(), 1);
  auto f = view(first.data(), 3), inv = view(inverse.data(), 3);
  EXPECT_EQ(_mlir_ciface_spconv_rt_cuda_memref_unique(&k, &uu, &f, &inv, &c),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("'uniqueKeys' has 2 elements, needs at least 3"),
            std::string::npos)
      << lastError();
}

// On managed memory, the twins give what the CPU entry points give.
TEST(CudaDevice, MemRefTwinsMatchCpu) {
  REQUIRE_DEVICE();
  auto keys = makeLidarScene(100000, 5).keys;
  int64_t n = int64_t(keys.size());
  int64_t capacity = spconv_ht_capacity_for(n);

  std::vector<int64_t> cpuTableKeys(capacity), cpuDup(1);
  std::vector<int32_t> cpuTableValues(capacity);
  auto k = view(keys.data(), n), ctk = view(cpuTableKeys.data(), capacity),
       cd = view(cpuDup.data(), 1);
  auto ctv = view(cpuTableValues.data(), capacity);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_hash_build(&k, &ctk, &ctv, &cd), 0);

  ManagedVector<int64_t> mKeys(keys), mTableKeys(cpuTableKeys),
      mDup(std::vector<int64_t>(1));
  ManagedVector<int32_t> mTableValues(cpuTableValues);
  auto mk = mKeys.memref(), mtk = mTableKeys.memref(), md = mDup.memref();
  auto mtv = mTableValues.memref();
  ASSERT_EQ(_mlir_ciface_spconv_rt_cuda_memref_hash_build(&mk, &mtk, &mtv, &md),
            0)
      << lastError();
  // Slots may differ (insertion order); every key finds its row.
  std::vector<int32_t> cpuRows(keys.size()), gpuRows(keys.size());
  auto cr = view(cpuRows.data(), n), gr = view(gpuRows.data(), n);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_hash_lookup(&ctk, &ctv, &k, &cr), 0);
  auto gtk = view(mTableKeys.ptr, capacity);
  auto gtv = view(mTableValues.ptr, capacity);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_hash_lookup(&gtk, &gtv, &k, &gr), 0);
  EXPECT_TRUE(cpuRows == gpuRows);

  std::vector<int32_t> counts(keys.size()), offsets(keys.size()), total(1);
  for (size_t i = 0; i < counts.size(); ++i)
    counts[i] = int32_t(keys[i] % 27);
  auto ci = view(counts.data(), n), co = view(offsets.data(), n),
       ct = view(total.data(), 1);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_exclusive_scan_i32(&ci, &co, &ct), 0);
  ManagedVector<int32_t> mCounts(counts), mTotal(std::vector<int32_t>(1));
  auto mc = mCounts.memref(), mt = mTotal.memref();
  ASSERT_EQ(
      _mlir_ciface_spconv_rt_cuda_memref_exclusive_scan_i32(&mc, &mc, &mt), 0)
      << lastError();
  EXPECT_TRUE(mCounts.toHost() == offsets);
  EXPECT_EQ(mTotal.ptr[0], total[0]);
}

// The deferred twins leave their results in device memory (here managed, so
// the test reads them after a wait) and match the CPU forms.
TEST(CudaDevice, DeferredTwinsMatchCpu) {
  REQUIRE_DEVICE();
  auto keys = makeLidarScene(20000, 7).keys;
  keys.push_back(keys[100]); // one repeat, at the last index
  int64_t n = int64_t(keys.size());
  int64_t capacity = spconv_ht_capacity_for(n);
  ManagedVector<int64_t> mKeys(keys),
      mTableKeys{std::vector<int64_t>(capacity)},
      mRepeat{std::vector<int64_t>{INT64_MAX}};
  ManagedVector<int32_t> mTableValues{std::vector<int32_t>(capacity)};
  auto mk = mKeys.memref(), mtk = mTableKeys.memref(), mr = mRepeat.memref();
  auto mtv = mTableValues.memref();
  ASSERT_EQ(_mlir_ciface_spconv_rt_cuda_memref_hash_build_deferred(&mk, &mtk,
                                                                   &mtv, &mr),
            0)
      << lastError();
  mgpuStreamSynchronize(spconv_rt_cuda_thread_stream());
  EXPECT_EQ(mRepeat.ptr[0], n - 1);

  std::vector<int64_t> counts(keys.size());
  for (size_t i = 0; i < counts.size(); ++i)
    counts[i] = keys[i] % 27;
  std::vector<int64_t> offsets(counts.size()), total(1);
  auto ci = view(counts.data(), n), co = view(offsets.data(), n),
       ct = view(total.data(), 1);
  ASSERT_EQ(
      _mlir_ciface_spconv_rt_memref_exclusive_scan_i64_deferred(&ci, &co, &ct),
      0);
  ManagedVector<int64_t> mCounts(counts), mTotal(std::vector<int64_t>(1));
  auto mc = mCounts.memref(), mt = mTotal.memref();
  ASSERT_EQ(_mlir_ciface_spconv_rt_cuda_memref_exclusive_scan_i64_deferred(
                &mc, &mc, &mt),
            0)
      << lastError();
  mgpuStreamSynchronize(spconv_rt_cuda_thread_stream());
  EXPECT_TRUE(mCounts.toHost() == offsets);
  EXPECT_EQ(mTotal.ptr[0], total[0]);

  std::vector<int64_t> unique(keys.size()), count(1);
  std::vector<int32_t> first(keys.size()), inverse(keys.size());
  auto k = view(keys.data(), n), u = view(unique.data(), n),
       c = view(count.data(), 1);
  auto f = view(first.data(), n), inv = view(inverse.data(), n);
  ASSERT_EQ(
      _mlir_ciface_spconv_rt_memref_unique_deferred(&k, &u, &f, &inv, &c, 62),
      0);
  ManagedVector<int64_t> mUnique(unique), mCount(std::vector<int64_t>(1));
  ManagedVector<int32_t> mFirst(first), mInverse(inverse);
  auto mu = mUnique.memref(), mn = mCount.memref();
  auto mf = mFirst.memref(), mi = mInverse.memref();
  ASSERT_EQ(_mlir_ciface_spconv_rt_cuda_memref_unique_deferred(&mk, &mu, &mf,
                                                               &mi, &mn, 62),
            0)
      << lastError();
  mgpuStreamSynchronize(spconv_rt_cuda_thread_stream());
  EXPECT_EQ(mCount.ptr[0], count[0]);
  EXPECT_TRUE(mUnique.toHost() == unique);
  EXPECT_TRUE(mInverse.toHost() == inverse);
}

// The report twin copies what it names from device memory.
TEST(CudaDevice, ReportBuildErrorReadsDeviceMemory) {
  REQUIRE_DEVICE();
  std::vector<int32_t> coords = {0, 1, 2, 3, 0, 8, 0, 0, 0, 1, 2, 3};
  std::vector<int64_t> keys = {83, 512, 83}, shape = {8, 8, 8};
  DeviceVector<int32_t> dCoords(coords);
  DeviceVector<int64_t> dKeys(keys);
  StridedMemRefType<int32_t, 2> c = {
      dCoords.ptr, dCoords.ptr, 0, {3, 4}, {4, 1}};
  auto k = view(dKeys.ptr, 3), s = view(shape.data(), 3);
  EXPECT_EQ(_mlir_ciface_spconv_rt_cuda_memref_report_build_error(
                &c, &k, &s, 1, INT64_MAX, 2, 10),
            SPCONV_RT_ERR_DUPLICATE_KEY);
  EXPECT_EQ(lastError(), "duplicate input site (0, 1, 2, 3) at rows 0 and 2");
  EXPECT_EQ(_mlir_ciface_spconv_rt_cuda_memref_report_build_error(&c, &k, &s, 1,
                                                                  1, 2, 10),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(lastError(), "input coordinates: row 1: coordinate 0 (column 1) = "
                         "8 is outside [0, 8)");
}

// Device allocations are counted for failure injection, which fails them
// before the driver is asked: the same with or without a GPU.
TEST(CudaOutOfMemory, InjectedMemAllocFailureIsOutOfMemory) {
  spconv_rt_clear_error();
  int64_t count = spconv_rt_test_allocation_count();
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(mgpuMemAlloc(size_t(3) << 20, nullptr, false), nullptr);
  EXPECT_EQ(spconv_rt_test_allocation_count(), count + 1);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(),
            "out of memory: 3.0 MiB (3145728 bytes) of device memory");
  spconv_rt_clear_error();
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(mgpuMemAlloc(100, nullptr, true), nullptr);
  EXPECT_EQ(lastError(), "out of memory: 100 bytes of managed memory");
  spconv_rt_clear_error();
}

namespace {
/// A caller's allocator for the tests: hands out host blocks (without a
/// device) or slices of one device block (with one), and records what it
/// was asked.
struct RecordingAllocator {
  char *arena = nullptr; // null: host blocks from malloc
  size_t used = 0, capacity = 0;
  int allocs = 0, frees = 0;
  void *lastStream = nullptr;
  bool refuse = false;

  static void *alloc(uint64_t bytes, void *stream, void *user) {
    auto *self = static_cast<RecordingAllocator *>(user);
    ++self->allocs;
    self->lastStream = stream;
    if (self->refuse)
      return nullptr;
    if (!self->arena)
      return std::malloc(bytes);
    size_t start = (self->used + 255) / 256 * 256;
    if (start + bytes > self->capacity)
      return nullptr;
    self->used = start + bytes;
    return self->arena + start;
  }
  static void free(void *ptr, void *stream, void *user) {
    auto *self = static_cast<RecordingAllocator *>(user);
    ++self->frees;
    self->lastStream = stream;
    if (!self->arena)
      std::free(ptr);
  }
  SpConvRtCudaAllocator handle() { return {alloc, free, this}; }
};
} // namespace

// The caller's stream and allocator need no device of their own: they are
// handed out, and asked, before the driver is.
TEST(CudaCallerResources, StreamAndAllocatorAreTheThreads) {
  spconv_rt_clear_error();
  int token = 0;
  void *mine = &token; // stands in for a caller's stream handle
  EXPECT_EQ(spconv_rt_cuda_set_thread_stream(mine), nullptr);
  EXPECT_EQ(mgpuStreamCreate(), mine);
  EXPECT_EQ(spconv_rt_cuda_thread_stream(), mine);
  void *other = mine;
  std::thread([&] {
    other = spconv_rt_cuda_set_thread_stream(nullptr);
  }).join();
  EXPECT_EQ(other, nullptr) << "another thread has no caller's stream";

  RecordingAllocator recording;
  SpConvRtCudaAllocator handle = recording.handle(), previous = {};
  ASSERT_EQ(spconv_rt_cuda_set_thread_allocator(&handle, &previous),
            SPCONV_RT_OK);
  EXPECT_EQ(previous.alloc, nullptr);
  int64_t counted = spconv_rt_test_allocation_count();
  void *p = mgpuMemAlloc(100, mgpuStreamCreate(), false);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(recording.allocs, 1);
  EXPECT_EQ(recording.lastStream, mine);
  EXPECT_EQ(spconv_rt_test_allocation_count(), counted + 1)
      << "the caller's allocations are counted too";
  EXPECT_EQ(mgpuMemAlloc(0, mine, false), nullptr) << "zero bytes: no call";
  EXPECT_EQ(recording.allocs, 1);
  std::free(p); // without a device, mgpuMemFree cannot tell managed memory

  // Injection fails a request before the caller's allocator is asked; the
  // caller's own failure is out of memory too.
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(mgpuMemAlloc(64, mine, false), nullptr);
  EXPECT_EQ(recording.allocs, 1);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  spconv_rt_clear_error();
  recording.refuse = true;
  EXPECT_EQ(mgpuMemAlloc(size_t(3) << 20, mine, false), nullptr);
  EXPECT_EQ(recording.allocs, 2);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(),
            "out of memory: 3.0 MiB (3145728 bytes) of device memory");
  spconv_rt_clear_error();

  // Half an allocator is refused and changes nothing; null restores.
  SpConvRtCudaAllocator half = {RecordingAllocator::alloc, nullptr, nullptr};
  EXPECT_EQ(spconv_rt_cuda_set_thread_allocator(&half, &previous),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "spconv_rt_cuda_set_thread_allocator: an allocator "
                         "needs both its alloc and its free function");
  spconv_rt_clear_error();
  ASSERT_EQ(spconv_rt_cuda_set_thread_allocator(nullptr, &previous),
            SPCONV_RT_OK);
  EXPECT_EQ(previous.alloc, &RecordingAllocator::alloc);
  EXPECT_EQ(previous.user, &recording);
  EXPECT_EQ(spconv_rt_cuda_set_thread_stream(nullptr), mine);
  void *own = mgpuStreamCreate();
  EXPECT_NE(own, mine) << "the runtime's own stream again";
  if (!haveDevice()) {
    EXPECT_EQ(own, nullptr);
  }
  spconv_rt_clear_error();
}

// With a device: compiled code's calls run on the caller's stream with the
// caller's memory, leave its stream alive, and give back what they took.
TEST(CudaDevice, CallerStreamAndAllocator) {
  REQUIRE_DEVICE();
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(cuda, nullptr);
  using CreateFn = int (*)(void **, unsigned);
  using QueryFn = int (*)(void *);
  auto create = reinterpret_cast<CreateFn>(dlsym(cuda, "cuStreamCreate"));
  auto query = reinterpret_cast<QueryFn>(dlsym(cuda, "cuStreamQuery"));
  auto destroy = reinterpret_cast<QueryFn>(dlsym(cuda, "cuStreamDestroy_v2"));
  using DeviceFn = int (*)(int *, int);
  using RetainFn = int (*)(void **, int);
  using PushFn = int (*)(void *);
  using PopFn = int (*)(void **);
  auto device = reinterpret_cast<DeviceFn>(dlsym(cuda, "cuDeviceGet"));
  auto retain =
      reinterpret_cast<RetainFn>(dlsym(cuda, "cuDevicePrimaryCtxRetain"));
  auto push = reinterpret_cast<PushFn>(dlsym(cuda, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<PopFn>(dlsym(cuda, "cuCtxPopCurrent_v2"));
  ASSERT_TRUE(create && query && destroy && device && retain && push && pop);
  spconv_rt_clear_error();
  void *pool = mgpuMemAlloc(1 << 20, nullptr, false);
  ASSERT_NE(pool, nullptr) << lastError();
  mgpuStreamSynchronize(nullptr);
  // The caller's stream, made in the context the runtime uses: device 0's
  // primary one.
  int dev = -1;
  void *context = nullptr, *popped = nullptr, *stream = nullptr;
  ASSERT_EQ(device(&dev, 0), 0);
  ASSERT_EQ(retain(&context, dev), 0);
  ASSERT_EQ(push(context), 0);
  ASSERT_EQ(create(&stream, 1 /* CU_STREAM_NON_BLOCKING */), 0);

  RecordingAllocator recording;
  recording.arena = static_cast<char *>(pool);
  recording.capacity = 1 << 20;
  SpConvRtCudaAllocator handle = recording.handle();
  spconv_rt_cuda_set_thread_stream(stream);
  ASSERT_EQ(spconv_rt_cuda_set_thread_allocator(&handle, nullptr),
            SPCONV_RT_OK);
  void *s = mgpuStreamCreate();
  EXPECT_EQ(s, stream);
  auto *d = static_cast<int32_t *>(mgpuMemAlloc(64, s, false));
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(static_cast<void *>(d), pool) << "the caller's memory";
  mgpuMemset32(d, 9, 16, s);
  int32_t back[16] = {};
  mgpuMemcpy(back, d, sizeof(back), s);
  auto *m = static_cast<int32_t *>(mgpuMemAlloc(64, s, true));
  ASSERT_NE(m, nullptr) << "managed memory stays the driver's";
  mgpuMemFree(m, s);
  mgpuMemFree(d, s);
  spconv_rt_cuda_stream_synchronize(s);
  mgpuStreamDestroy(s);
  EXPECT_EQ(back[0], 9);
  EXPECT_EQ(back[15], 9);
  EXPECT_EQ(recording.allocs, 1);
  EXPECT_EQ(recording.frees, 1) << "the managed buffer is not the caller's";
  EXPECT_EQ(recording.lastStream, stream);
  EXPECT_EQ(query(stream), 0) << "the caller's stream outlives the call";
  EXPECT_TRUE(lastError().empty()) << lastError();
  // The legacy default stream, by its explicit handle (PyTorch's default
  // stream): used, and never destroyed.
  void *legacy = reinterpret_cast<void *>(uintptr_t(1)); // CU_STREAM_LEGACY
  spconv_rt_cuda_set_thread_stream(legacy);
  EXPECT_EQ(mgpuStreamCreate(), legacy);
  d = static_cast<int32_t *>(mgpuMemAlloc(64, legacy, false));
  ASSERT_NE(d, nullptr);
  mgpuMemset32(d, 5, 16, legacy);
  mgpuMemcpy(back, d, sizeof(back), legacy);
  mgpuMemFree(d, legacy);
  spconv_rt_cuda_stream_synchronize(legacy);
  mgpuStreamDestroy(legacy);
  EXPECT_EQ(back[15], 5);
  EXPECT_EQ(recording.allocs, 2);
  EXPECT_TRUE(lastError().empty()) << lastError();
  spconv_rt_cuda_set_thread_allocator(nullptr, nullptr);
  spconv_rt_cuda_set_thread_stream(nullptr);
  EXPECT_EQ(destroy(stream), 0);
  EXPECT_EQ(pop(&popped), 0);
  mgpuMemFree(pool, nullptr);
  mgpuStreamSynchronize(nullptr);
}

TEST(CudaOutOfMemory, InjectedModuleLoadFailureIsReportedAtLaunch) {
  // In a process of its own: the first failed load of a process is the
  // one reported, and other tests' loads fail here too (no driver).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        spconv_rt_test_fail_allocation(1);
        char image[64] = {};
        bool ok = mgpuModuleLoad(image, sizeof(image)) == nullptr;
        spconv_rt_clear_error();
        ok = ok && mgpuModuleGetFunction(nullptr, "kernel") == nullptr;
        ok = ok && spconv_rt_last_status() == SPCONV_RT_ERR_OUT_OF_MEMORY;
        ok = ok && spconv_rt_alloc_failed() == 1;
        ok = ok && lastError() == "kernel module could not be loaded: "
                                  "mgpuModuleLoad: out of memory: 64 bytes "
                                  "of device memory for a kernel module";
        if (!ok)
          std::fprintf(stderr, "got: %s\n", lastError().c_str());
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(CudaOutOfMemory, DeviceFailuresAreOutOfMemory) {
  REQUIRE_DEVICE();
  spconv_rt_clear_error();
  void *stream = spconv_rt_cuda_thread_stream();
  // More than any device has: the driver's out of memory, with the size.
  EXPECT_EQ(mgpuMemAlloc(uint64_t(1) << 50, stream, false), nullptr);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(lastError(), "out of memory: 1024.0 TiB (1125899906842624 bytes) "
                         "of device memory");
  spconv_rt_clear_error();
  // The primitives' scratch: an injected failure, then the same call works
  // (nothing is left pending in the CUDA runtime).
  std::vector<int64_t> keys = randomKeys(10000, 1 << 20, 5);
  std::vector<int32_t> values(keys.size());
  std::iota(values.begin(), values.end(), 0);
  DeviceVector<int64_t> dKeys(keys);
  DeviceVector<int32_t> dValues(values);
  int64_t n = int64_t(keys.size());
  spconv_rt_test_fail_allocation(1);
  EXPECT_EQ(spconv_rt_cuda_sort_pairs(dKeys.ptr, dValues.ptr, n, nullptr),
            SPCONV_RT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(spconv_rt_alloc_failed(), 1);
  EXPECT_EQ(lastError().rfind("out of memory: ", 0), 0u) << lastError();
  EXPECT_NE(lastError().find("of device scratch memory"), std::string::npos)
      << lastError();
  spconv_rt_clear_error();
  ASSERT_EQ(spconv_rt_cuda_sort_pairs(dKeys.ptr, dValues.ptr, n, nullptr), 0)
      << lastError();
  auto cpuKeys = keys;
  auto cpuValues = values;
  ASSERT_EQ(spconv_rt_sort_pairs(cpuKeys.data(), cpuValues.data(), n), 0);
  EXPECT_TRUE(dKeys.toHost() == cpuKeys);
  EXPECT_TRUE(dValues.toHost() == cpuValues);
  EXPECT_EQ(spconv_rt_last_status(), SPCONV_RT_OK) << lastError();
}
