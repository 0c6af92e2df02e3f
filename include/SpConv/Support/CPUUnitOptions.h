//===- CPUUnitOptions.h - Checks of the CPU passes' target options -*- C++ -*-//
//
// Part of the spconv-mlir project.
//
// The passes that block loops for the CPU's registers and FMA units
// (convert-spconv-to-scf, spconv-matmul-to-row-loops) take the same four
// options, `vector-bits`, `vector-registers`, `fma-pipes` and `fma-latency`,
// and refuse the same values, with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_SUPPORT_CPUUNITOPTIONS_H
#define SPCONV_SUPPORT_CPUUNITOPTIONS_H

#include "SpConv/Support/VectorWidth.h"

#include <cstdint>
#include <string>

namespace mlir::spconv {

/// What is wrong with the CPU unit options, or an empty string: a register
/// width of 128, 256 or 512 bits, at least 4 registers, at least one FMA
/// pipe and a latency of at least one cycle.
inline std::string checkCPUUnitOptions(int64_t vectorBits,
                                       int64_t vectorRegisters,
                                       int64_t fmaPipes, int64_t fmaLatency) {
  if (!isSupportedVectorBits(vectorBits))
    return "vector-bits must be 128, 256 or 512, got " +
           std::to_string(vectorBits);
  if (vectorRegisters < 4)
    return "vector-registers must be at least 4, got " +
           std::to_string(vectorRegisters);
  if (fmaPipes < 1 || fmaLatency < 1)
    return "fma-pipes and fma-latency must be at least 1, got " +
           std::to_string(fmaPipes) + " and " + std::to_string(fmaLatency);
  return "";
}

} // namespace mlir::spconv

#endif // SPCONV_SUPPORT_CPUUNITOPTIONS_H
