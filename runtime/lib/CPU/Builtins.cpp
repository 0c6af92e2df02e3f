//===- Builtins.cpp - Compiler builtins compiled code may call ------------===//
//
// Part of the spconv-mlir project.
//
// LLVM lowers a float -> bfloat truncation to a call of `__truncsfbf2` on a
// CPU without a native conversion (x86 below AVX512-BF16, which is what a
// portable object, spconv-compile --mcpu x86-64-v2, targets). GCC 12's
// libgcc, Debian 12's, has no such function (GCC 13's does), so without this
// definition such an object would not link. Defined weak, so that a newer
// libgcc's or compiler-rt's copy may win: all compute the same value.
//
//===----------------------------------------------------------------------===//

#include "spconv-rt/SpConvRuntime.h"

#include <cstdint>
#include <cstring>

extern "C" {

/// float -> bfloat, rounded to nearest even; a NaN stays a (quiet) NaN of
/// the same sign. The result is returned the way the psABIs return a
/// bfloat: in the low 16 bits of the first floating-point register
/// (xmm0 on x86-64, h0/s0 on AArch64), so it is written as a float whose
/// low 16 bits are the bfloat's (GCC 12 has no __bf16 type on x86).
SPCONV_RT_EXPORT __attribute__((weak)) float __truncsfbf2(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint32_t result;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    result = (bits >> 16) | 0x40u;
  else
    result = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  float out;
  std::memcpy(&out, &result, sizeof(out));
  return out;
}

} // extern "C"
