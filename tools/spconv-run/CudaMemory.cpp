//===- CudaMemory.cpp - Device buffers for spconv-run --target cuda -------===//
//
// Part of the spconv-mlir project.
//
// The copies run on the default stream and wait for it: the compiled
// functions return only when their own stream is done, so the copies see
// complete results, and inputs are complete before a function starts.
//
//===----------------------------------------------------------------------===//

#include "CudaMemory.h"
#include "spconv-rt/SpConvRuntime.h"

using namespace spconv::run;

#ifdef SPCONV_RUN_HAS_CUDA

std::string spconv::run::cudaUnavailable() {
  int32_t count = 0;
  spconv_rt_clear_error();
  if (spconv_rt_cuda_device_count(&count) != 0)
    return std::string("no usable CUDA driver: ") + spconv_rt_last_error();
  if (count == 0)
    return "no CUDA device is visible";
  return "";
}

/// Whether the runtime's mgpu* wrappers reported no error since the last
/// spconv_rt_clear_error().
static bool succeeded() { return *spconv_rt_last_error() == '\0'; }

void *spconv::run::copyToDevice(const void *data, size_t bytes) {
  if (bytes == 0)
    return nullptr;
  spconv_rt_clear_error();
  void *copy = mgpuMemAlloc(bytes, /*stream=*/nullptr, /*isHostShared=*/false);
  if (!copy)
    return nullptr;
  mgpuMemcpy(copy, const_cast<void *>(data), bytes, /*stream=*/nullptr);
  mgpuStreamSynchronize(/*stream=*/nullptr);
  if (!succeeded()) {
    mgpuMemFree(copy, /*stream=*/nullptr);
    return nullptr;
  }
  return copy;
}

bool spconv::run::copyToHost(void *target, const void *source, size_t bytes) {
  if (bytes == 0)
    return true;
  spconv_rt_clear_error();
  mgpuMemcpy(target, const_cast<void *>(source), bytes, /*stream=*/nullptr);
  mgpuStreamSynchronize(/*stream=*/nullptr);
  return succeeded();
}

void spconv::run::freeDevice(void *pointer) {
  mgpuMemFree(pointer, /*stream=*/nullptr);
}

#else

std::string spconv::run::cudaUnavailable() {
  return "this build has no CUDA runtime library (no CUDA toolkit was found "
         "when it was configured)";
}

void *spconv::run::copyToDevice(const void *, size_t) { return nullptr; }

bool spconv::run::copyToHost(void *, const void *, size_t) { return false; }

void spconv::run::freeDevice(void *) {}

#endif
