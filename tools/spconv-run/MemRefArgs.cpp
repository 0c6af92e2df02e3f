//===- MemRefArgs.cpp - .npy arrays as memref descriptors -----------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "MemRefArgs.h"

#include <cstring>

using namespace spconv;
using namespace spconv::run;

std::vector<int64_t> run::makeDescriptor(npy::NpyArray &array) {
  int64_t rank = array.rank();
  std::vector<int64_t> words(descriptorWords(rank));
  auto pointer = reinterpret_cast<int64_t>(array.data.data());
  words[0] = pointer;
  words[1] = pointer;
  words[2] = 0;
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    words[3 + d] = array.shape[d];
    words[3 + rank + d] = stride;
    stride *= array.shape[d];
  }
  return words;
}

int64_t run::spanElements(const int64_t *descriptor, int64_t rank) {
  int64_t last = descriptor[2];
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = descriptor[3 + d];
    if (size == 0)
      return 0;
    last += (size - 1) * descriptor[3 + rank + d];
  }
  return last + 1;
}

npy::NpyArray run::copyResult(const int64_t *descriptor, int64_t rank,
                              npy::DType dtype) {
  std::vector<int64_t> shape(descriptor + 3, descriptor + 3 + rank);
  npy::NpyArray array = npy::NpyArray::zeros(dtype, shape);
  size_t item = array.itemSize();
  auto *base = reinterpret_cast<const uint8_t *>(descriptor[1]);
  int64_t offset = descriptor[2];
  const int64_t *strides = descriptor + 3 + rank;
  int64_t count = array.numElements();
  std::vector<int64_t> index(rank, 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t element = offset;
    for (int64_t d = 0; d < rank; ++d)
      element += index[d] * strides[d];
    std::memcpy(array.data.data() + flat * item, base + element * item, item);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return array;
}
