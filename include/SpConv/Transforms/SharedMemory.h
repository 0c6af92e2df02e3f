//===- SharedMemory.h - CUDA's shared-memory limits -------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// What a CUDA block may hold in shared memory, for the lowering that sizes
// workgroup buffers (the implicit GEMM's tiles) and the pass that moves the
// larger ones to dynamic shared memory (spconv-gpu-dynamic-shared-memory).
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TRANSFORMS_SHAREDMEMORY_H
#define SPCONV_TRANSFORMS_SHAREDMEMORY_H

#include <cstdint>

namespace mlir::spconv {

/// The static shared memory a kernel may declare: CUDA's limit on every
/// chip; past it a kernel must take dynamic shared memory.
constexpr int64_t kMaxStaticSharedMemoryBytes = 48 * 1024;

} // namespace mlir::spconv

#endif // SPCONV_TRANSFORMS_SHAREDMEMORY_H
