//===- Npy.h - NumPy .npy file reading and writing --------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Reads and writes NumPy `.npy` files: format versions 1.0, 2.0 and 3.0 on
// read, 1.0 (or 2.0 when the header does not fit) on write; little-endian,
// C order. Plain C++17 with no MLIR/LLVM dependency and no exceptions, so
// that the runtime tests, the reference and the runner can all use it.
//
// Also the IEEE binary16 <-> float conversions (round to nearest even) that
// f16 feature files need; float16 data is stored as raw uint16_t bits.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_SUPPORT_NPY_H
#define SPCONV_SUPPORT_NPY_H

#include <cassert>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace spconv {
namespace npy {

/// Element types. The names follow NumPy's `descr` codes.
enum class DType {
  Bool,    // |b1
  Int8,    // |i1
  UInt8,   // |u1
  Int16,   // <i2
  UInt16,  // <u2
  Int32,   // <i4
  UInt32,  // <u4
  Int64,   // <i8
  UInt64,  // <u8
  Float16, // <f2, stored as raw uint16_t bits
  Float32, // <f4
  Float64, // <f8
};

/// Size of one element in bytes.
size_t dtypeSize(DType dtype);
/// NumPy's type code without byte order, e.g. "f4".
const char *dtypeName(DType dtype);
/// Parses a type code such as "f4", "i8" or "b1" (no byte-order character).
bool parseDTypeName(const std::string &name, DType &dtype);
bool isFloat(DType dtype);
/// Bool and the signed/unsigned integers.
bool isInteger(DType dtype);

/// An n-dimensional array in C order. A 0-d array (empty shape) has one
/// element.
struct NpyArray {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// A zero-filled array; the caller guarantees the element count fits.
  static NpyArray zeros(DType dtype, std::vector<int64_t> shape);

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const;
  size_t itemSize() const { return dtypeSize(dtype); }

  /// Raw typed view; `T` must have the element size (uint16_t for Float16).
  template <typename T> T *dataAs() {
    assert(sizeof(T) == itemSize() && "element size mismatch");
    return reinterpret_cast<T *>(data.data());
  }
  template <typename T> const T *dataAs() const {
    assert(sizeof(T) == itemSize() && "element size mismatch");
    return reinterpret_cast<const T *>(data.data());
  }

  /// Element `i` (flat, C order) converted to double. Exact for every float
  /// type and for integers up to 2^53.
  double getDouble(int64_t i) const;
  /// Element `i` of an integer or bool array, exactly (UInt64 wraps).
  int64_t getInt(int64_t i) const;
  /// Stores `v` converted to the element type (round to nearest even for
  /// floats, truncation toward zero for integers, `v != 0` for bool).
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);

  /// "f4[3, 4]", for messages.
  std::string describe() const;
};

/// Reads `path`. On failure returns false and sets `error` to a message that
/// names the file and what is wrong with it.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// Parses the bytes of a whole .npy file (`name` is used in messages).
bool parseNpy(const uint8_t *bytes, size_t size, const std::string &name,
              NpyArray &out, std::string &error);

/// Writes `a` to `path` (format 1.0, or 2.0 if the header needs it).
bool writeNpy(const std::string &path, const NpyArray &a, std::string &error);

/// The bytes `writeNpy` would write.
bool serializeNpy(const NpyArray &a, std::vector<uint8_t> &bytes,
                  std::string &error);

/// Product of `shape`, or false if an extent is negative or it overflows
/// int64.
bool checkedElementCount(const std::vector<int64_t> &shape, int64_t &count);

//===----------------------------------------------------------------------===//
// float16
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t bits);
/// Rounds to nearest even; overflow gives infinity, NaN stays a quiet NaN.
uint16_t floatToHalf(float value);
/// Rounds `value` once, directly from double (no double rounding through
/// float).
uint16_t doubleToHalf(double value);

} // namespace npy
} // namespace spconv

#endif // SPCONV_SUPPORT_NPY_H
