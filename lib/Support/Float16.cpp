//===- Float16.cpp - IEEE binary16 conversions ----------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Bit-level conversions, so that the result does not depend on the host
// compiler's _Float16 support or on the FPU rounding mode.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Support/Npy.h"

#include <cmath>

using namespace spconv::npy;

float spconv::npy::halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits >> 15) << 31;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  uint32_t out;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31)
    out = sign | 0x7f800000u | (mantissa << 13); // Inf or NaN (payload kept).
  else
    out = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  float result;
  std::memcpy(&result, &out, sizeof(result));
  return result;
}

uint16_t spconv::npy::doubleToHalf(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 48) & 0x8000);
  int64_t biased = static_cast<int64_t>((bits >> 52) & 0x7ff);
  uint64_t mantissa = bits & ((uint64_t(1) << 52) - 1);

  if (biased == 0x7ff) {
    if (mantissa == 0)
      return sign | 0x7c00;
    // Quiet NaN keeping the top payload bits.
    return sign | 0x7e00 | static_cast<uint16_t>((mantissa >> 42) & 0x3ff);
  }
  // Double subnormals (and zero) are far below half's smallest subnormal.
  if (biased == 0)
    return sign;
  int64_t e = biased - 1023;
  if (e > 15)
    return sign | 0x7c00;
  if (e < -25)
    return sign;

  // value = m * 2^(e - 52) with a 53-bit significand m. Keep 11 bits for a
  // normal half, fewer for a subnormal one (units of 2^-24), and round the
  // dropped bits to nearest even.
  uint64_t m = (uint64_t(1) << 52) | mantissa;
  int shift = e >= -14 ? 42 : static_cast<int>(42 + (-14 - e));
  uint64_t q = m >> shift;
  uint64_t rem = m & ((uint64_t(1) << shift) - 1);
  uint64_t half = uint64_t(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  if (e < -14)
    return sign | static_cast<uint16_t>(q); // May carry into the min normal.
  // q holds the implicit bit at bit 10, so a rounding carry moves into the
  // exponent (and into infinity from 65504), as it should.
  return sign | static_cast<uint16_t>(((e + 14) << 10) + q);
}

uint16_t spconv::npy::floatToHalf(float value) {
  // float -> double is exact, so this rounds once.
  return doubleToHalf(static_cast<double>(value));
}
