//===- CudaMemory.h - Device buffers for spconv-run --target cuda -*- C++ -*-//
//
// Part of the spconv-mlir project.
//
// The CUDA target's functions take device-accessible buffers and return
// device buffers (managed ones where the function's host code touches them;
// see spconv-gpu-memory): the runner uploads its inputs to device memory
// and copies the results back, explicit copies at the network's edges.
// Without the runtime's CUDA library, every function here reports why.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TOOLS_SPCONV_RUN_CUDAMEMORY_H
#define SPCONV_TOOLS_SPCONV_RUN_CUDAMEMORY_H

#include <cstddef>
#include <string>

namespace spconv::run {

/// Why --target cuda cannot run here (no CUDA library in this build, no
/// driver, no device), or empty when it can.
std::string cudaUnavailable();

/// A device copy of `bytes` bytes at `data`, complete when this returns;
/// null on failure (the runtime's last error says why) or when `bytes` is 0.
void *copyToDevice(const void *data, size_t bytes);

/// Copies `bytes` bytes of device (or managed) memory at `source` to host
/// memory at `target`; false on failure (the runtime's last error says why).
bool copyToHost(void *target, const void *source, size_t bytes);

/// Frees what copyToDevice or the compiled code allocated (device or
/// managed memory).
void freeDevice(void *pointer);

} // namespace spconv::run

#endif // SPCONV_TOOLS_SPCONV_RUN_CUDAMEMORY_H
