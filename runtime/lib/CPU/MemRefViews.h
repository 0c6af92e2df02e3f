//===- MemRefViews.h - Checked views of memref descriptors ------*- C++ -*-===//
//
// The descriptor checks shared by the CPU and CUDA _mlir_ciface_* entry
// points: null descriptors, negative sizes, unit stride for 1-D buffers.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_RT_LIB_MEMREFVIEWS_H
#define SPCONV_RT_LIB_MEMREFVIEWS_H

#include "Support.h"

namespace spconv {
namespace rt {

/// Checks a 1-D descriptor and returns its first element in *ptr and its size
/// in *size. Size 0 and 1 memrefs may have any stride.
template <typename T>
inline int view1D(const char *fn, const char *name, StridedMemRefType<T, 1> *m,
                  T **ptr, int64_t *size) {
  *ptr = nullptr;
  *size = 0;
  if (!m)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref '%s' is a null descriptor", fn, name);
  if (m->sizes[0] < 0)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref '%s' has negative size %lld", fn, name,
                    static_cast<long long>(m->sizes[0]));
  if (m->sizes[0] > 1 && m->strides[0] != 1)
    return setError(SPCONV_RT_ERR_UNSUPPORTED,
                    "%s: memref '%s' has stride %lld; only unit stride is "
                    "supported (copy it to a contiguous memref)",
                    fn, name, static_cast<long long>(m->strides[0]));
  if (m->sizes[0] > 0 && !m->data)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref '%s' has a null data pointer", fn, name);
  *ptr = m->sizes[0] > 0 ? m->data + m->offset : nullptr;
  *size = m->sizes[0];
  return SPCONV_RT_OK;
}

template <typename T>
inline int needAtLeast(const char *fn, const char *name, int64_t size,
                       int64_t need) {
  if (size < need)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "%s: memref '%s' has %lld elements, needs at least %lld",
                    fn, name, static_cast<long long>(size),
                    static_cast<long long>(need));
  return SPCONV_RT_OK;
}

} // namespace rt
} // namespace spconv

/// Returns from the calling function when `expr` (a status) is not OK.
#define SPCONV_RT_CHECK(expr)                                                  \
  do {                                                                         \
    if (int status_ = (expr))                                                  \
      return status_;                                                          \
  } while (false)

#endif // SPCONV_RT_LIB_MEMREFVIEWS_H
