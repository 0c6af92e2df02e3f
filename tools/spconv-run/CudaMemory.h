//===- CudaMemory.h - Managed buffers for spconv-run --target cuda -*- C++
//-*-===//
//
// Part of the spconv-mlir project.
//
// The CUDA target's functions take device-accessible buffers and return
// managed ones (see spconv-gpu-memory): the runner copies its inputs into
// managed memory and frees the results there. Without the runtime's CUDA
// library, every function here reports why.
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

/// A managed copy of `bytes` bytes at `data`; null on failure (the
/// runtime's last error says why) or when `bytes` is 0.
void *copyToManaged(const void *data, size_t bytes);

/// Frees what copyToManaged or the compiled code allocated.
void freeManaged(void *pointer);

} // namespace spconv::run

#endif // SPCONV_TOOLS_SPCONV_RUN_CUDAMEMORY_H
