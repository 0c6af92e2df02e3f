//===- MemRefArgs.h - .npy arrays as memref descriptors ---------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The C interface of a lowered function passes every memref as a pointer
// to a descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}
// (all 8-byte fields) and returns results through a pointer to a struct of
// such descriptors. These helpers build and read them for any rank.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TOOLS_SPCONVRUN_MEMREFARGS_H
#define SPCONV_TOOLS_SPCONVRUN_MEMREFARGS_H

#include "SpConv/Support/Npy.h"

#include <cstdint>
#include <vector>

namespace spconv::run {

/// Number of 8-byte words in a descriptor of `rank`.
inline size_t descriptorWords(int64_t rank) { return 3 + 2 * rank; }

/// A descriptor of a contiguous, row-major view of `array`'s data.
std::vector<int64_t> makeDescriptor(npy::NpyArray &array);

/// Elements from the memref's aligned pointer to its last element (0 when
/// it has none): what a copy of its contents must cover.
int64_t spanElements(const int64_t *descriptor, int64_t rank);

/// Copies the memref described at `descriptor` (any strides) into a new
/// array of `dtype`.
npy::NpyArray copyResult(const int64_t *descriptor, int64_t rank,
                         npy::DType dtype);

} // namespace spconv::run

#endif // SPCONV_TOOLS_SPCONVRUN_MEMREFARGS_H
