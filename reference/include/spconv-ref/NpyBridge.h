//===- NpyBridge.h - .npy arrays to reference operands ----------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Conversions between SpConvNpy's arrays and the reference's operands, with
// messages that name the operand (`what`).
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_REF_NPYBRIDGE_H
#define SPCONV_REF_NPYBRIDGE_H

#include "SpConv/Support/Npy.h"
#include "spconv-ref/Reference.h"

namespace spconv {
namespace ref {

/// A float array (f2/f4/f8) of rank `rank` (or any rank when -1), exactly.
bool npyToTensor(const npy::NpyArray &array, int64_t rank,
                 const std::string &what, Tensor &out, std::string &error);

/// An i4 array of shape N x (1 + dims), dims >= 1.
bool npyToCoords(const npy::NpyArray &array, const std::string &what,
                 Coords &out, std::string &error);

/// An i4 or i8 array of rank `rank`, flattened.
bool npyToIndex(const npy::NpyArray &array, int64_t rank,
                const std::string &what, std::vector<int64_t> &out,
                std::string &error);

/// `tensor` rounded once to `dtype`.
npy::NpyArray tensorToNpy(const Tensor &tensor, npy::DType dtype);

/// N x (1 + dims) int32.
npy::NpyArray coordsToNpy(const Coords &coords);

} // namespace ref
} // namespace spconv

#endif // SPCONV_REF_NPYBRIDGE_H
