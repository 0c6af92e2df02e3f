//===- Memory.h - Where the example's buffers live ------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The same program drives both targets: for the CPU (net.o compiled with
// --target cpu) buffers are the program's own and results are freed with
// free(); for CUDA (SPCONV_AOT_CUDA, --target cuda) arguments are copied to
// device memory, results are device memory copied back to the host to be
// read, and freed with mgpuMemFree, as net.h's notes say: explicit copies
// at the network's edges only.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_EXAMPLES_AOT_MEMORY_H
#define SPCONV_EXAMPLES_AOT_MEMORY_H

#include "spconv-rt/SpConvRuntime.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

namespace aot {

/// Why this target cannot run here, or "" when it can.
inline std::string targetUnavailable() {
#ifdef SPCONV_AOT_CUDA
  int32_t count = 0;
  if (spconv_rt_cuda_device_count(&count) != 0)
    return std::string("no usable CUDA driver: ") + spconv_rt_last_error();
  if (count == 0)
    return "no CUDA device is visible";
#endif
  return "";
}

/// Arguments the compiled code can read: the vectors themselves on the CPU,
/// device copies (freed with this object) for CUDA.
class ArgumentMemory {
public:
  ArgumentMemory() = default;
  ArgumentMemory(const ArgumentMemory &) = delete;
  ArgumentMemory &operator=(const ArgumentMemory &) = delete;
  ~ArgumentMemory() {
#ifdef SPCONV_AOT_CUDA
    for (void *copy : copies)
      mgpuMemFree(copy, nullptr);
#endif
  }

  template <typename T> T *place(std::vector<T> &values) {
#ifdef SPCONV_AOT_CUDA
    size_t bytes = std::max<size_t>(1, values.size()) * sizeof(T);
    auto *copy = static_cast<T *>(mgpuMemAlloc(bytes, nullptr, false));
    if (!copy)
      return nullptr;
    copies.push_back(copy);
    // Upload, then wait: the compiled code runs on a stream of its own.
    spconv_rt_clear_error();
    mgpuMemcpy(copy, values.data(), values.size() * sizeof(T), nullptr);
    mgpuStreamSynchronize(nullptr);
    return *spconv_rt_last_error() ? nullptr : copy;
#else
    return values.data();
#endif
  }

private:
  std::vector<void *> copies;
};

/// A descriptor of `memref`'s elements that the host can read: `memref`
/// itself on the CPU; for CUDA, a copy of the span they cover (from the
/// aligned pointer to the last element) in `staging`. Null data on a failed
/// copy.
template <typename Memref>
Memref readableOnHost(const Memref &memref,
                      std::vector<unsigned char> &staging) {
#ifdef SPCONV_AOT_CUDA
  using T = std::remove_pointer_t<decltype(memref.aligned)>;
  constexpr int rank = sizeof(memref.sizes) / sizeof(memref.sizes[0]);
  int64_t last = memref.offset;
  for (int d = 0; d < rank; ++d)
    last += (memref.sizes[d] - 1) * memref.strides[d];
  bool empty = false;
  for (int d = 0; d < rank; ++d)
    empty |= memref.sizes[d] == 0;
  size_t bytes = empty ? 0 : size_t(last + 1) * sizeof(T);
  staging.resize(bytes);
  Memref copy = memref;
  copy.allocated = copy.aligned = reinterpret_cast<T *>(staging.data());
  if (bytes) {
    spconv_rt_clear_error();
    mgpuMemcpy(staging.data(), memref.aligned, bytes, nullptr);
    mgpuStreamSynchronize(nullptr);
    if (*spconv_rt_last_error())
      copy.allocated = copy.aligned = nullptr;
  }
  return copy;
#else
  (void)staging;
  return memref;
#endif
}

/// Frees a result buffer of the compiled code.
inline void releaseResult(void *buffer) {
#ifdef SPCONV_AOT_CUDA
  mgpuMemFree(buffer, nullptr);
#else
  std::free(buffer);
#endif
}

} // namespace aot

#endif // SPCONV_EXAMPLES_AOT_MEMORY_H
