//===- CudaRuntimeWrappers.cpp - mgpu* host wrappers over the driver API --===//
//
// The functions that MLIR's gpu-to-llvm lowering (and the gpu.binary LLVM
// translation) call to load modules, launch kernels and manage memory,
// streams and events. The CUDA driver is opened with dlopen("libcuda.so.1")
// at first use, so the library links and loads on machines without one.
//
// MLIR fixes the signatures (mostly void), so failures go to stderr and to
// spconv_rt_last_error(); functions returning a handle return null. Nothing
// here aborts.
//
// Context handling: every call makes the primary context of the default
// device (mgpuSetDefaultDevice, 0 unless set) current for its duration, the
// same context the CUDA runtime (and so the spconv_rt_cuda_* primitives)
// uses on that device.
//
// Streams: compiled code chains a function's GPU work on one token, which
// gpu-to-llvm lowers to an mgpuStreamCreate at the function's entry. That
// hands out the calling thread's stream for the default device, created
// once, and mgpuStreamDestroy leaves it alive: no stream is created or
// destroyed per call, and the runtime's primitives (spconv_rt_cuda_memref_*)
// run on the same stream. A caller with its own stream (an ML framework's
// current stream) sets it for its thread (spconv_rt_cuda_set_thread_stream):
// that stream is handed out instead and never destroyed here.
//
// Memory: device buffers (gpu.alloc) come from the device's default memory
// pool in stream order (cuMemAllocAsync / cuMemFreeAsync), and the pool
// keeps what is freed (release threshold: unlimited), so allocation in the
// hot path neither reaches the driver's allocator nor synchronises. Managed
// buffers (gpu.alloc host_shared) are cuMemAllocManaged, freed by cuMemFree.
// A driver result of CUDA_ERROR_OUT_OF_MEMORY is recorded as out of memory
// (SPCONV_RT_ERR_OUT_OF_MEMORY, spconv_rt_alloc_failed), not as a CUDA
// error, and mgpuMemAlloc requests are counted for failure injection. A
// caller's allocator (spconv_rt_cuda_set_thread_allocator) replaces the pool
// for the device buffers of its thread; managed buffers stay the driver's.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cuda.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <mutex>

using namespace spconv::rt;

namespace {

/// The driver entry points used here, resolved by their versioned names.
struct Driver {
#define SPCONV_DRIVER_FN(name, symbol, ...) CUresult (*name)(__VA_ARGS__) = nullptr;
#include "DriverFunctions.def"
  bool ok = false;
  char failure[512] = "";
};

Driver &driver() {
  // Function-local static: initialised once, thread-safely, on first use.
  static Driver d = [] {
    Driver drv;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = dlerror();
      std::snprintf(drv.failure, sizeof(drv.failure),
                    "CUDA driver not available: dlopen(\"libcuda.so.1\") "
                    "failed: %s",
                    why ? why : "unknown error");
      return drv;
    }
#define SPCONV_DRIVER_FN(name, symbol, ...)                                    \
  drv.name = reinterpret_cast<decltype(drv.name)>(dlsym(lib, symbol));         \
  if (!drv.name) {                                                             \
    std::snprintf(drv.failure, sizeof(drv.failure),                            \
                  "CUDA driver too old: symbol %s missing in libcuda.so.1",    \
                  symbol);                                                     \
    return drv;                                                                \
  }
#include "DriverFunctions.def"
    CUresult init = drv.cuInit(0);
    if (init != CUDA_SUCCESS) {
      const char *name = nullptr;
      drv.cuGetErrorName(init, &name);
      std::snprintf(drv.failure, sizeof(drv.failure),
                    "cuInit failed with %s (no CUDA device?)",
                    name ? name : "an unknown error");
      return drv;
    }
    drv.ok = true;
    return drv;
  }();
  return d;
}

/// Records and prints a failure of `fn`: out of memory for `status`
/// SPCONV_RT_ERR_OUT_OF_MEMORY (with no byte count), else a CUDA error.
void report(const char *fn, const char *message,
            int status = SPCONV_RT_ERR_CUDA) {
  char text[768];
  std::snprintf(text, sizeof(text), "%s: %s", fn, message);
  std::fprintf(stderr, "spconv-rt: %s\n", text);
  if (status == SPCONV_RT_ERR_OUT_OF_MEMORY)
    spconv_rt_internal_set_alloc_failure(0, 0, text);
  else
    spconv_rt_internal_set_error(status, text);
}

/// "<call> failed with <name> (<description>)".
void describe(char (&message)[512], const char *call, CUresult result) {
  const char *name = nullptr, *description = nullptr;
  driver().cuGetErrorName(result, &name);
  driver().cuGetErrorString(result, &description);
  std::snprintf(message, sizeof(message), "%s failed with %s (%s)", call,
                name ? name : "?", description ? description : "?");
}

int statusOf(CUresult result) {
  return result == CUDA_ERROR_OUT_OF_MEMORY ? SPCONV_RT_ERR_OUT_OF_MEMORY
                                            : SPCONV_RT_ERR_CUDA;
}

/// Checks a driver result; reports and returns false on failure.
bool check(const char *fn, const char *call, CUresult result) {
  if (result == CUDA_SUCCESS)
    return true;
  char message[512];
  describe(message, call, result);
  report(fn, message, statusOf(result));
  return false;
}

/// Records and prints the failed allocation of `bytes` by `fn`.
void reportOutOfMemory(const char *fn, uint64_t bytes, bool managed) {
  setOutOfMemory(bytes, managed ? " of managed memory" : " of device memory");
  std::fprintf(stderr, "spconv-rt: %s: out of memory: %s of %s memory\n", fn,
               HumanBytes(bytes).c_str(), managed ? "managed" : "device");
}

/// The first failed module load of the process. Modules are loaded by
/// global constructors, before a caller clears the last error, so the
/// failure is kept here and repeated where the null module is used.
struct LoadFailure {
  std::mutex mutex;
  bool failed = false;
  int status = SPCONV_RT_OK;
  char message[768] = "";
};

LoadFailure &loadFailure() {
  static LoadFailure failure;
  return failure;
}

/// Keeps the first failed module load of the process.
void recordLoadFailure(const char *fn, int status, const char *message) {
  LoadFailure &failure = loadFailure();
  std::lock_guard<std::mutex> lock(failure.mutex);
  if (!failure.failed) {
    failure.failed = true;
    failure.status = status;
    std::snprintf(failure.message, sizeof(failure.message), "%s: %s", fn,
                  message);
  }
}

/// Checks a module load's driver result like check(), and keeps a failure.
bool checkLoad(const char *fn, const char *call, CUresult result) {
  if (check(fn, call, result))
    return true;
  char message[512];
  describe(message, call, result);
  recordLoadFailure(fn, statusOf(result), message);
  return false;
}

/// A module takes device memory: its load is counted like an allocation,
/// so that failure injection reaches it (loads run when a library is
/// loaded, and the first launch reports a failed one). True if injected.
bool injectLoadFailure(const char *fn, size_t bytes) {
  if (!spconv_rt_internal_count_allocation())
    return false;
  char message[256];
  std::snprintf(message, sizeof(message),
                "out of memory: %s of device memory for a kernel module",
                HumanBytes(bytes).c_str());
  std::fprintf(stderr, "spconv-rt: %s: %s\n", fn, message);
  recordLoadFailure(fn, SPCONV_RT_ERR_OUT_OF_MEMORY, message);
  return true;
}

/// Reports "kernel module could not be loaded: <its failure>" if a module
/// load failed; false if none did.
bool reportLoadFailure() {
  LoadFailure &failure = loadFailure();
  std::lock_guard<std::mutex> lock(failure.mutex);
  if (!failure.failed)
    return false;
  char text[1024];
  std::snprintf(text, sizeof(text), "kernel module could not be loaded: %s",
                failure.message);
  std::fprintf(stderr, "spconv-rt: %s\n", text);
  if (failure.status == SPCONV_RT_ERR_OUT_OF_MEMORY)
    spconv_rt_internal_set_alloc_failure(0, 0, text);
  else
    spconv_rt_internal_set_error(failure.status, text);
  return true;
}

std::atomic<int> defaultDevice{0};
/// Waits of compiled code for its stream (spconv_rt_cuda_host_wait_count).
std::atomic<int64_t> hostWaits{0};

/// Devices the per-device tables (contexts, streams, pools) have room for.
constexpr int kMaxDevices = 64;

/// Makes the default device's primary context current while alive.
class ScopedContext {
public:
  /// With `quiet`, a context that cannot be made current is no error (see
  /// mgpuModuleUnload); the guard is then false.
  explicit ScopedContext(const char *fn, bool quiet = false) {
    Driver &d = driver();
    if (!d.ok) {
      if (!quiet)
        report(fn, d.failure);
      return;
    }
    CUcontext ctx = primaryContext(fn, defaultDevice.load());
    if (!ctx)
      return;
    CUresult result = d.cuCtxPushCurrent(ctx);
    pushed = quiet ? result == CUDA_SUCCESS
                   : check(fn, "cuCtxPushCurrent", result);
  }
  ~ScopedContext() {
    if (pushed) {
      CUcontext ignored;
      driver().cuCtxPopCurrent(&ignored);
    }
  }
  explicit operator bool() const { return pushed; }

private:
  static CUcontext primaryContext(const char *fn, int device) {
    static CUcontext contexts[kMaxDevices] = {};
    static std::mutex mutex;
    if (device < 0 || device >= kMaxDevices) {
      char message[128];
      std::snprintf(message, sizeof(message), "invalid device index %d",
                    device);
      report(fn, message);
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (!contexts[device]) {
      CUdevice dev;
      if (!check(fn, "cuDeviceGet", driver().cuDeviceGet(&dev, device)))
        return nullptr;
      CUcontext ctx;
      if (!check(fn, "cuDevicePrimaryCtxRetain",
                 driver().cuDevicePrimaryCtxRetain(&ctx, dev)))
        return nullptr;
      contexts[device] = ctx;
    }
    return contexts[device];
  }

  bool pushed = false;
};

/// The calling thread's stream slot for `device` (null until created).
CUstream *threadStreamSlot(int device) {
  thread_local CUstream streams[kMaxDevices] = {};
  return device >= 0 && device < kMaxDevices ? &streams[device] : nullptr;
}

/// The caller's stream for this thread (spconv_rt_cuda_set_thread_stream),
/// null if none.
CUstream &externalStream() {
  thread_local CUstream stream = nullptr;
  return stream;
}

/// The caller's allocator for this thread's device buffers; `alloc` is null
/// if none.
SpConvRtCudaAllocator &externalAllocator() {
  thread_local SpConvRtCudaAllocator allocator = {nullptr, nullptr, nullptr};
  return allocator;
}

/// The calling thread's stream on the default device: the caller's (which
/// needs no driver call), or one created at first use and kept for the
/// thread's lifetime (destroying streams at exit would race the driver's
/// own teardown); null on failure, reported as `fn`'s.
CUstream threadStream(const char *fn) {
  if (CUstream external = externalStream())
    return external;
  ScopedContext ctx(fn);
  if (!ctx)
    return nullptr;
  CUstream *slot = threadStreamSlot(defaultDevice.load());
  if (!slot)
    return nullptr; // ScopedContext reported the bad index.
  if (!*slot && !check(fn, "cuStreamCreate",
                       driver().cuStreamCreate(slot, CU_STREAM_NON_BLOCKING)))
    return nullptr;
  return *slot;
}

/// Whether `stream` is one that outlives a call: the thread's own or the
/// caller's.
bool isThreadStream(CUstream stream) {
  if (stream && stream == externalStream())
    return true;
  CUstream *slot = threadStreamSlot(defaultDevice.load());
  return slot && stream == *slot;
}

/// Makes the default device's memory pool keep what is freed into it, once
/// per device.
bool retainPoolMemory(const char *fn) {
  static std::atomic<bool> done[kMaxDevices] = {};
  int device = defaultDevice.load();
  if (device < 0 || device >= kMaxDevices)
    return false;
  if (done[device].load())
    return true;
  CUdevice dev;
  CUmemoryPool pool;
  cuuint64_t unlimited = ~cuuint64_t(0);
  if (!check(fn, "cuDeviceGet", driver().cuDeviceGet(&dev, device)) ||
      !check(fn, "cuDeviceGetDefaultMemPool",
             driver().cuDeviceGetDefaultMemPool(&pool, dev)) ||
      !check(fn, "cuMemPoolSetAttribute",
             driver().cuMemPoolSetAttribute(
                 pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &unlimited)))
    return false;
  done[device].store(true);
  return true;
}

bool nonNull(const char *fn, const void *p, const char *what) {
  if (p)
    return true;
  char message[128];
  std::snprintf(message, sizeof(message), "%s is null", what);
  report(fn, message);
  return false;
}

/// Start and byte size of the memory a ranked memref descriptor spans.
bool memrefExtent(const char *fn, int64_t rank, void *descriptor,
                  int64_t elementSizeBytes, void **start, uint64_t *bytes) {
  if (!nonNull(fn, descriptor, "descriptor"))
    return false;
  if (rank < 0 || elementSizeBytes <= 0) {
    report(fn, "negative rank or non-positive element size");
    return false;
  }
  // Layout: allocated, aligned, offset, sizes[rank], strides[rank].
  auto *desc = static_cast<StridedMemRefType<char, 1> *>(descriptor);
  const int64_t *sizes = desc->sizes, *strides = desc->sizes + rank;
  int64_t span = 1; // elements from the first to one past the last
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0) {
      span = 0;
      break;
    }
    if (sizes[d] < 0 || strides[d] < 0) {
      report(fn, "negative size or stride");
      return false;
    }
    span += (sizes[d] - 1) * strides[d];
  }
  *start = desc->data + desc->offset * elementSizeBytes;
  *bytes = uint64_t(span) * uint64_t(elementSizeBytes);
  return true;
}

} // namespace

extern "C" {

void *mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  const char *fn = "mgpuModuleLoad";
  if (injectLoadFailure(fn, gpuBlobSize))
    return nullptr;
  ScopedContext ctx(fn);
  if (!ctx || !nonNull(fn, data, "module image"))
    return nullptr;
  CUmodule module = nullptr;
  if (!checkLoad(fn, "cuModuleLoadData",
                 driver().cuModuleLoadData(&module, data)))
    return nullptr;
  return module;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  const char *fn = "mgpuModuleLoadJIT";
  if (injectLoadFailure(fn, data ? std::strlen(static_cast<char *>(data)) : 0))
    return nullptr;
  ScopedContext ctx(fn);
  if (!ctx || !nonNull(fn, data, "PTX image"))
    return nullptr;
  char log[4096] = "";
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(intptr_t(optLevel)), log,
                    reinterpret_cast<void *>(uintptr_t(sizeof(log)))};
  CUmodule module = nullptr;
  if (!checkLoad(
          fn, "cuModuleLoadDataEx",
          driver().cuModuleLoadDataEx(&module, data, 3, options, values))) {
    if (log[0])
      std::fprintf(stderr, "spconv-rt: JIT log:\n%s\n", log);
    return nullptr;
  }
  return module;
}

void mgpuModuleUnload(void *module) {
  const char *fn = "mgpuModuleUnload";
  // Called by the objects' global destructors, at dlclose or process exit.
  // A driver already shut down by then (compute-sanitizer tears it down
  // first) took the module with its context: nothing is left to free.
  ScopedContext ctx(fn, /*quiet=*/true);
  if (ctx && nonNull(fn, module, "module"))
    check(fn, "cuModuleUnload",
          driver().cuModuleUnload(static_cast<CUmodule>(module)));
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  const char *fn = "mgpuModuleGetFunction";
  if (!module && reportLoadFailure())
    return nullptr;
  ScopedContext ctx(fn);
  if (!ctx || !nonNull(fn, module, "module") ||
      !nonNull(fn, name, "function name"))
    return nullptr;
  CUfunction function = nullptr;
  if (!check(fn, "cuModuleGetFunction",
             driver().cuModuleGetFunction(&function,
                                          static_cast<CUmodule>(module), name)))
    return nullptr;
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  const char *fn = "mgpuLaunchKernel";
  // The function of a module that did not load: say why, once more.
  if (!function && reportLoadFailure())
    return;
  ScopedContext ctx(fn);
  if (!ctx || !nonNull(fn, function, "function"))
    return;
  // An empty grid launches nothing (CUDA would reject it): the compiled
  // code launches without guarding, in straight-line code one stream chains.
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  intptr_t dims[6] = {gridX, gridY, gridZ, blockX, blockY, blockZ};
  for (intptr_t d : dims)
    if (d < 1 || d > intptr_t(UINT32_MAX)) {
      report(fn, "grid or block dimension outside [1, 2^32)");
      return;
    }
  auto f = static_cast<CUfunction>(function);
  // Dynamic shared memory beyond 48 KiB must be opted into per function.
  if (smem > 48 * 1024 &&
      !check(fn, "cuFuncSetAttribute",
             driver().cuFuncSetAttribute(
                 f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem)))
    return;
  check(fn, "cuLaunchKernel",
        driver().cuLaunchKernel(f, unsigned(gridX), unsigned(gridY),
                                unsigned(gridZ), unsigned(blockX),
                                unsigned(blockY), unsigned(blockZ),
                                unsigned(smem), static_cast<CUstream>(stream),
                                params, extra));
}

void *mgpuStreamCreate(void) { return threadStream("mgpuStreamCreate"); }

void mgpuStreamDestroy(void *stream) {
  const char *fn = "mgpuStreamDestroy";
  ScopedContext ctx(fn);
  if (!ctx || !nonNull(fn, stream, "stream"))
    return;
  // The thread's stream outlives every call; only a foreign one is
  // destroyed.
  if (!isThreadStream(static_cast<CUstream>(stream)))
    check(fn, "cuStreamDestroy",
          driver().cuStreamDestroy(static_cast<CUstream>(stream)));
}

void mgpuStreamSynchronize(void *stream) {
  const char *fn = "mgpuStreamSynchronize";
  ScopedContext ctx(fn);
  if (ctx)
    check(fn, "cuStreamSynchronize",
          driver().cuStreamSynchronize(static_cast<CUstream>(stream)));
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  const char *fn = "mgpuStreamWaitEvent";
  ScopedContext ctx(fn);
  if (ctx && nonNull(fn, event, "event"))
    check(fn, "cuStreamWaitEvent",
          driver().cuStreamWaitEvent(static_cast<CUstream>(stream),
                                     static_cast<CUevent>(event), 0));
}

void *mgpuEventCreate(void) {
  const char *fn = "mgpuEventCreate";
  ScopedContext ctx(fn);
  CUevent event = nullptr;
  if (!ctx || !check(fn, "cuEventCreate",
                     driver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING)))
    return nullptr;
  return event;
}

void mgpuEventDestroy(void *event) {
  const char *fn = "mgpuEventDestroy";
  ScopedContext ctx(fn);
  if (ctx && nonNull(fn, event, "event"))
    check(fn, "cuEventDestroy",
          driver().cuEventDestroy(static_cast<CUevent>(event)));
}

void mgpuEventSynchronize(void *event) {
  const char *fn = "mgpuEventSynchronize";
  ScopedContext ctx(fn);
  if (ctx && nonNull(fn, event, "event"))
    check(fn, "cuEventSynchronize",
          driver().cuEventSynchronize(static_cast<CUevent>(event)));
}

void mgpuEventRecord(void *event, void *stream) {
  const char *fn = "mgpuEventRecord";
  ScopedContext ctx(fn);
  if (ctx && nonNull(fn, event, "event"))
    check(fn, "cuEventRecord",
          driver().cuEventRecord(static_cast<CUevent>(event),
                                 static_cast<CUstream>(stream)));
}

void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared) {
  const char *fn = "mgpuMemAlloc";
  // Counted before the driver is asked, so injection needs no device.
  if (spconv_rt_internal_count_allocation()) {
    reportOutOfMemory(fn, sizeBytes, isHostShared);
    return nullptr;
  }
  if (sizeBytes == 0)
    return nullptr;
  // The caller's allocator makes its own context current.
  const SpConvRtCudaAllocator &external = externalAllocator();
  if (!isHostShared && external.alloc) {
    void *ptr = external.alloc(sizeBytes, stream, external.user);
    if (!ptr)
      reportOutOfMemory(fn, sizeBytes, /*managed=*/false);
    return ptr;
  }
  ScopedContext ctx(fn);
  if (!ctx)
    return nullptr;
  CUdeviceptr ptr = 0;
  if (!isHostShared && !retainPoolMemory(fn))
    return nullptr;
  CUresult result =
      isHostShared
          ? driver().cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL)
          : driver().cuMemAllocAsync(&ptr, sizeBytes,
                                     static_cast<CUstream>(stream));
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    reportOutOfMemory(fn, sizeBytes, isHostShared);
    return nullptr;
  }
  if (!check(fn, isHostShared ? "cuMemAllocManaged" : "cuMemAllocAsync",
             result))
    return nullptr;
  return reinterpret_cast<void *>(ptr);
}

void mgpuMemFree(void *ptr, void *stream) {
  const char *fn = "mgpuMemFree";
  if (!ptr)
    return; // Like free(nullptr); also what mgpuMemAlloc(0) returns.
  ScopedContext ctx(fn);
  if (!ctx)
    return;
  auto address = reinterpret_cast<CUdeviceptr>(ptr);
  // Managed memory (mgpuMemAlloc's isHostShared) is freed at once, pool
  // memory in stream order. A pool allocation made inside a stream capture
  // has no memory behind it yet and answers no attribute query: a failed
  // query means not managed, and cuMemFreeAsync judges the pointer.
  unsigned managed = 0;
  if (driver().cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                     address) != CUDA_SUCCESS)
    managed = 0;
  const SpConvRtCudaAllocator &external = externalAllocator();
  if (managed)
    check(fn, "cuMemFree", driver().cuMemFree(address));
  else if (external.alloc)
    external.free(ptr, stream, external.user);
  else
    check(fn, "cuMemFreeAsync",
          driver().cuMemFreeAsync(address, static_cast<CUstream>(stream)));
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  const char *fn = "mgpuMemcpy";
  if (sizeBytes == 0)
    return;
  ScopedContext ctx(fn);
  if (ctx && nonNull(fn, dst, "destination") && nonNull(fn, src, "source"))
    check(fn, "cuMemcpyAsync",
          driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                 reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                                 static_cast<CUstream>(stream)));
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  const char *fn = "mgpuMemset32";
  if (count == 0)
    return;
  ScopedContext ctx(fn);
  if (ctx && nonNull(fn, dst, "destination"))
    check(fn, "cuMemsetD32Async",
          driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                    count, static_cast<CUstream>(stream)));
}

void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  void *stream) {
  const char *fn = "mgpuMemset16";
  if (count == 0)
    return;
  ScopedContext ctx(fn);
  if (ctx && nonNull(fn, dst, "destination"))
    check(fn, "cuMemsetD16Async",
          driver().cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                    count, static_cast<CUstream>(stream)));
}

void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  const char *fn = "mgpuMemHostRegister";
  ScopedContext ctx(fn);
  if (ctx && nonNull(fn, ptr, "pointer") && sizeBytes > 0)
    check(fn, "cuMemHostRegister",
          driver().cuMemHostRegister(ptr, sizeBytes, 0));
}

void mgpuMemHostUnregister(void *ptr) {
  const char *fn = "mgpuMemHostUnregister";
  ScopedContext ctx(fn);
  if (ctx && nonNull(fn, ptr, "pointer"))
    check(fn, "cuMemHostUnregister", driver().cuMemHostUnregister(ptr));
}

void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSizeBytes) {
  void *start;
  uint64_t bytes;
  if (memrefExtent("mgpuMemHostRegisterMemRef", rank, descriptor,
                   elementSizeBytes, &start, &bytes) &&
      bytes > 0)
    mgpuMemHostRegister(start, bytes);
}

void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t elementSizeBytes) {
  void *start;
  uint64_t bytes;
  if (memrefExtent("mgpuMemHostUnregisterMemRef", rank, descriptor,
                   elementSizeBytes, &start, &bytes) &&
      bytes > 0)
    mgpuMemHostUnregister(start);
}

void *spconv_rt_cuda_set_thread_stream(void *stream) {
  CUstream previous = externalStream();
  externalStream() = static_cast<CUstream>(stream);
  return previous;
}

int spconv_rt_cuda_set_thread_allocator(const SpConvRtCudaAllocator *allocator,
                                        SpConvRtCudaAllocator *previous) {
  const char *fn = "spconv_rt_cuda_set_thread_allocator";
  if (allocator && (!allocator->alloc || !allocator->free)) {
    report(fn, "an allocator needs both its alloc and its free function",
           SPCONV_RT_ERR_INVALID_ARGUMENT);
    return SPCONV_RT_ERR_INVALID_ARGUMENT;
  }
  if (previous)
    *previous = externalAllocator();
  externalAllocator() =
      allocator ? *allocator : SpConvRtCudaAllocator{nullptr, nullptr, nullptr};
  return SPCONV_RT_OK;
}

void *spconv_rt_cuda_thread_stream(void) {
  return threadStream("spconv_rt_cuda_thread_stream");
}

void spconv_rt_cuda_stream_synchronize(void *stream) {
  const char *fn = "spconv_rt_cuda_stream_synchronize";
  hostWaits.fetch_add(1, std::memory_order_relaxed);
  ScopedContext ctx(fn);
  if (ctx && nonNull(fn, stream, "stream"))
    check(fn, "cuStreamSynchronize",
          driver().cuStreamSynchronize(static_cast<CUstream>(stream)));
}

int64_t spconv_rt_cuda_host_wait_count(void) {
  return hostWaits.load(std::memory_order_relaxed);
}

void mgpuSetDefaultDevice(int32_t device) {
  if (device < 0) {
    report("mgpuSetDefaultDevice", "negative device index");
    return;
  }
  defaultDevice.store(device);
}

} // extern "C"
