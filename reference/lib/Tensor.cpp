//===- Tensor.cpp - Dense double tensors of the reference -----------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "spconv-ref/Reference.h"

using namespace spconv::ref;

Tensor::Tensor(std::vector<int64_t> shape) : shape(std::move(shape)) {
  data.assign(static_cast<size_t>(numElements()), 0.0);
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t extent : shape)
    n *= extent;
  return n;
}

int64_t Rulebook::numPairs() const {
  int64_t n = 0;
  for (const std::vector<Pair> &offsetPairs : pairs)
    n += static_cast<int64_t>(offsetPairs.size());
  return n;
}
