//===- Memory.h - Where the example's buffers live ------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The same program drives both targets: for the CPU (net.o compiled with
// --target cpu) buffers are the program's own and results are freed with
// free(); for CUDA (SPCONV_AOT_CUDA, --target cuda) arguments are copied to
// managed memory and results are freed with mgpuMemFree, as net.h's notes
// say.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_EXAMPLES_AOT_MEMORY_H
#define SPCONV_EXAMPLES_AOT_MEMORY_H

#include "spconv-rt/SpConvRuntime.h"

#include <algorithm>
#include <cstdlib>
#include <string>
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
/// managed copies (freed with this object) for CUDA.
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
    auto *copy = static_cast<T *>(mgpuMemAlloc(bytes, nullptr, true));
    if (!copy)
      return nullptr;
    std::copy(values.begin(), values.end(), copy);
    copies.push_back(copy);
    return copy;
#else
    return values.data();
#endif
  }

private:
  std::vector<void *> copies;
};

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
