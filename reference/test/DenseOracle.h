//===- DenseOracle.h - Dense PyTorch-style conv for tests -------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Dense N-d cross-correlation and transposed convolution with PyTorch's
// semantics and weight layouts, over small dense grids: the exact oracle
// DESIGN.md names for the sparse ops. Dense tensors are N x C x S... in a
// ref::Tensor.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_REF_TEST_DENSEORACLE_H
#define SPCONV_REF_TEST_DENSEORACLE_H

#include "spconv-ref/Reference.h"

namespace spconv {
namespace ref {
namespace test {

/// Our K x Cin x Cout weight as torch.nn.functional.conv's
/// Cout x Cin x k0 x ... x k(D-1).
Tensor toTorchConvWeight(const Tensor &weight,
                         const std::vector<int64_t> &kernel);

/// Our K x Cin x Cout weight as conv_transpose's Cin x Cout x k0 x ...
Tensor toTorchConvTransposeWeight(const Tensor &weight,
                                  const std::vector<int64_t> &kernel);

/// torch conv: out[n, co, o] = sum_{ci, j} in[n, ci, o*s - p + j*d] *
/// w[co, ci, j], reading zero outside the input.
Tensor denseConv(const Tensor &input, const Tensor &torchWeight,
                 const std::vector<int64_t> &stride,
                 const std::vector<int64_t> &padding,
                 const std::vector<int64_t> &dilation);

/// torch conv_transpose: in[n, ci, x] * w[ci, co, j] is added to
/// out[n, co, x*s - p + j*d] when that lies inside `outputSize` (which
/// conv_transpose's output_padding selects).
Tensor denseConvTranspose(const Tensor &input, const Tensor &torchWeight,
                          const std::vector<int64_t> &stride,
                          const std::vector<int64_t> &padding,
                          const std::vector<int64_t> &dilation,
                          const std::vector<int64_t> &outputSize);

/// Sparse features scattered onto a zero `batches x C x grid` tensor.
Tensor scatterToDense(const Coords &coords, const Tensor &features,
                      int64_t batches, const std::vector<int64_t> &grid);

/// dense[site batch, channel, site spatial].
double sampleDense(const Tensor &dense, const std::vector<int32_t> &site,
                   int64_t channel);

/// Row-major multi-index of `flat` in `extents`.
std::vector<int64_t> unravelIndex(int64_t flat,
                                  const std::vector<int64_t> &extents);

} // namespace test
} // namespace ref
} // namespace spconv

#endif // SPCONV_REF_TEST_DENSEORACLE_H
