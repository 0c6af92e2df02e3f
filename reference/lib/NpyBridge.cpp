//===- NpyBridge.cpp - .npy arrays to reference operands ------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "spconv-ref/NpyBridge.h"

using namespace spconv;
using namespace spconv::ref;

bool spconv::ref::npyToTensor(const npy::NpyArray &array, int64_t rank,
                              const std::string &what, Tensor &out,
                              std::string &error) {
  if (!npy::isFloat(array.dtype) || (rank >= 0 && array.rank() != rank)) {
    error = what + ": expected a float (f2, f4 or f8) array" +
            (rank >= 0 ? " of rank " + std::to_string(rank) : "") + ", got " +
            array.describe();
    return false;
  }
  out.shape = array.shape;
  out.data.resize(static_cast<size_t>(array.numElements()));
  for (int64_t i = 0; i < array.numElements(); ++i)
    out.data[i] = array.getDouble(i);
  return true;
}

bool spconv::ref::npyToCoords(const npy::NpyArray &array,
                              const std::string &what, Coords &out,
                              std::string &error) {
  if (array.dtype != npy::DType::Int32 || array.rank() != 2 ||
      array.shape[1] < 2) {
    error = what + ": expected an i4 array of shape N x (1 + D), got " +
            array.describe();
    return false;
  }
  out = Coords(array.shape[1] - 1);
  const int32_t *p = array.dataAs<int32_t>();
  out.data.assign(p, p + array.numElements());
  return true;
}

bool spconv::ref::npyToIndex(const npy::NpyArray &array, int64_t rank,
                             const std::string &what,
                             std::vector<int64_t> &out, std::string &error) {
  if ((array.dtype != npy::DType::Int32 && array.dtype != npy::DType::Int64) ||
      array.rank() != rank) {
    error = what + ": expected an i4 or i8 array of rank " +
            std::to_string(rank) + ", got " + array.describe();
    return false;
  }
  out.resize(static_cast<size_t>(array.numElements()));
  for (int64_t i = 0; i < array.numElements(); ++i)
    out[i] = array.getInt(i);
  return true;
}

npy::NpyArray spconv::ref::tensorToNpy(const Tensor &tensor,
                                       npy::DType dtype) {
  npy::NpyArray array = npy::NpyArray::zeros(dtype, tensor.shape);
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    array.setDouble(i, tensor.data[i]);
  return array;
}

npy::NpyArray spconv::ref::coordsToNpy(const Coords &coords) {
  npy::NpyArray array =
      npy::NpyArray::zeros(npy::DType::Int32, {coords.rows(), coords.dims + 1});
  if (!coords.data.empty())
    std::memcpy(array.data.data(), coords.data.data(),
                coords.data.size() * sizeof(int32_t));
  return array;
}
