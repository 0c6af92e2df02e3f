//===- VectorWidth.h - Vector widths that tile a row exactly ----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The lowerings that keep chunks of a feature row in vector registers (the
// rulebook conv, the pointwise-conv matmul) pick their chunks here, so that
// chunks tile any channel count without masking.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_SUPPORT_VECTORWIDTH_H
#define SPCONV_SUPPORT_VECTORWIDTH_H

#include <algorithm>
#include <cstdint>

namespace mlir::spconv {

/// The widest vector, of at most `maxWidth` lanes, that tiles `channels`
/// exactly (odd channel counts need no masking); 1 if none wider does.
inline int64_t exactVectorWidth(int64_t channels, int64_t maxWidth) {
  for (int64_t width = std::min(channels, maxWidth); width > 1; --width)
    if (channels % width == 0)
      return width;
  return 1;
}

} // namespace mlir::spconv

#endif // SPCONV_SUPPORT_VECTORWIDTH_H
