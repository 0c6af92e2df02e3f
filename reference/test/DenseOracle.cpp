//===- DenseOracle.cpp - Dense PyTorch-style conv for tests ---------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "DenseOracle.h"

using namespace spconv::ref;
using namespace spconv::ref::test;

static int64_t product(const std::vector<int64_t> &v) {
  int64_t p = 1;
  for (int64_t x : v)
    p *= x;
  return p;
}

std::vector<int64_t>
spconv::ref::test::unravelIndex(int64_t flat,
                                const std::vector<int64_t> &extents) {
  std::vector<int64_t> index(extents.size());
  for (int64_t i = static_cast<int64_t>(extents.size()) - 1; i >= 0; --i) {
    index[i] = flat % extents[i];
    flat /= extents[i];
  }
  return index;
}

/// Flat offset of `pos` in `extents`, or -1 when outside.
static int64_t flatten(const std::vector<int64_t> &pos,
                       const std::vector<int64_t> &extents) {
  int64_t flat = 0;
  for (size_t i = 0; i < pos.size(); ++i) {
    if (pos[i] < 0 || pos[i] >= extents[i])
      return -1;
    flat = flat * extents[i] + pos[i];
  }
  return flat;
}

static Tensor permuteWeight(const Tensor &weight,
                            const std::vector<int64_t> &kernel,
                            bool transposed) {
  int64_t k = weight.shape[0], cin = weight.shape[1], cout = weight.shape[2];
  std::vector<int64_t> shape = transposed ? std::vector<int64_t>{cin, cout}
                                          : std::vector<int64_t>{cout, cin};
  shape.insert(shape.end(), kernel.begin(), kernel.end());
  Tensor out(shape);
  for (int64_t j = 0; j < k; ++j)
    for (int64_t ci = 0; ci < cin; ++ci)
      for (int64_t co = 0; co < cout; ++co) {
        int64_t lead = transposed ? ci * cout + co : co * cin + ci;
        out.data[lead * k + j] = weight.at(j, ci, co);
      }
  return out;
}

Tensor spconv::ref::test::toTorchConvWeight(
    const Tensor &weight, const std::vector<int64_t> &kernel) {
  return permuteWeight(weight, kernel, /*transposed=*/false);
}

Tensor spconv::ref::test::toTorchConvTransposeWeight(
    const Tensor &weight, const std::vector<int64_t> &kernel) {
  return permuteWeight(weight, kernel, /*transposed=*/true);
}

Tensor spconv::ref::test::denseConv(const Tensor &input, const Tensor &w,
                                    const std::vector<int64_t> &stride,
                                    const std::vector<int64_t> &padding,
                                    const std::vector<int64_t> &dilation) {
  size_t dims = stride.size();
  std::vector<int64_t> in(input.shape.begin() + 2, input.shape.end());
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  std::vector<int64_t> out(dims);
  for (size_t i = 0; i < dims; ++i)
    out[i] = (in[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) /
                 stride[i] +
             1;
  int64_t n = input.shape[0], cin = w.shape[1], cout = w.shape[0];
  int64_t inVol = product(in), outVol = product(out), k = product(kernel);
  std::vector<int64_t> shape = {n, cout};
  shape.insert(shape.end(), out.begin(), out.end());
  Tensor result(shape);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t o = 0; o < outVol; ++o) {
        std::vector<int64_t> oi = unravelIndex(o, out);
        double sum = 0;
        for (int64_t ci = 0; ci < cin; ++ci)
          for (int64_t j = 0; j < k; ++j) {
            std::vector<int64_t> ji = unravelIndex(j, kernel), x(dims);
            for (size_t i = 0; i < dims; ++i)
              x[i] = oi[i] * stride[i] - padding[i] + ji[i] * dilation[i];
            int64_t xf = flatten(x, in);
            if (xf >= 0)
              sum += input.data[(b * cin + ci) * inVol + xf] *
                     w.data[(co * cin + ci) * k + j];
          }
        result.data[(b * cout + co) * outVol + o] = sum;
      }
  return result;
}

Tensor spconv::ref::test::denseConvTranspose(
    const Tensor &input, const Tensor &w, const std::vector<int64_t> &stride,
    const std::vector<int64_t> &padding, const std::vector<int64_t> &dilation,
    const std::vector<int64_t> &outputSize) {
  size_t dims = stride.size();
  std::vector<int64_t> in(input.shape.begin() + 2, input.shape.end());
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  int64_t n = input.shape[0], cin = w.shape[0], cout = w.shape[1];
  int64_t inVol = product(in), outVol = product(outputSize),
          k = product(kernel);
  std::vector<int64_t> shape = {n, cout};
  shape.insert(shape.end(), outputSize.begin(), outputSize.end());
  Tensor result(shape);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ci = 0; ci < cin; ++ci)
      for (int64_t x = 0; x < inVol; ++x) {
        double v = input.data[(b * cin + ci) * inVol + x];
        if (v == 0)
          continue;
        std::vector<int64_t> xi = unravelIndex(x, in);
        for (int64_t j = 0; j < k; ++j) {
          std::vector<int64_t> ji = unravelIndex(j, kernel), o(dims);
          for (size_t i = 0; i < dims; ++i)
            o[i] = xi[i] * stride[i] - padding[i] + ji[i] * dilation[i];
          int64_t of = flatten(o, outputSize);
          if (of < 0)
            continue;
          for (int64_t co = 0; co < cout; ++co)
            result.data[(b * cout + co) * outVol + of] +=
                v * w.data[(ci * cout + co) * k + j];
        }
      }
  return result;
}

Tensor spconv::ref::test::scatterToDense(const Coords &coords,
                                         const Tensor &features,
                                         int64_t batches,
                                         const std::vector<int64_t> &grid) {
  int64_t c = features.shape[1];
  std::vector<int64_t> shape = {batches, c};
  shape.insert(shape.end(), grid.begin(), grid.end());
  Tensor dense(shape);
  for (int64_t r = 0; r < coords.rows(); ++r)
    for (int64_t ch = 0; ch < c; ++ch) {
      std::vector<int32_t> site = coords.site(r);
      int64_t flat = site[0] * c + ch;
      for (size_t i = 0; i < grid.size(); ++i)
        flat = flat * grid[i] + site[i + 1];
      dense.data[flat] = features.at(r, ch);
    }
  return dense;
}

double spconv::ref::test::sampleDense(const Tensor &dense,
                                      const std::vector<int32_t> &site,
                                      int64_t channel) {
  int64_t flat = site[0] * dense.shape[1] + channel;
  for (size_t i = 1; i < site.size(); ++i)
    flat = flat * dense.shape[i + 1] + site[i];
  return dense.data[flat];
}
