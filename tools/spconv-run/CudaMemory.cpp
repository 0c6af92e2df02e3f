//===- CudaMemory.cpp - Managed buffers for spconv-run --target cuda ------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "CudaMemory.h"
#include "spconv-rt/SpConvRuntime.h"

#include <cstring>

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

void *spconv::run::copyToManaged(const void *data, size_t bytes) {
  if (bytes == 0)
    return nullptr;
  void *copy = mgpuMemAlloc(bytes, /*stream=*/nullptr, /*isHostShared=*/true);
  if (copy)
    std::memcpy(copy, data, bytes); // managed memory is host-accessible
  return copy;
}

void spconv::run::freeManaged(void *pointer) {
  mgpuMemFree(pointer, /*stream=*/nullptr);
}

#else

std::string spconv::run::cudaUnavailable() {
  return "this build has no CUDA runtime library (no CUDA toolkit was found "
         "when it was configured)";
}

void *spconv::run::copyToManaged(const void *, size_t) { return nullptr; }

void spconv::run::freeManaged(void *) {}

#endif
