//===- TargetCPU.h - The CPU the tools compile for --------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// What spconv-run (for the CPU its JIT targets) and spconv-compile (for
// --mcpu) know of their target CPU: this machine's features, and the vector
// registers they pass to the CPU pipeline's vector-bits and
// vector-registers.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_SUPPORT_TARGETCPU_H
#define SPCONV_SUPPORT_TARGETCPU_H

#include "SpConv/Support/VectorWidth.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/TargetParser/Host.h"

#include <string>
#include <vector>

namespace mlir::spconv {

/// This machine's CPU features as an LLVM feature string ("+avx2,-amx-tile,
/// ..."), sorted: equal feature sets give equal strings (cache keys).
inline std::string hostCPUFeatures() {
  std::vector<std::string> features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features.push_back((feature.getValue() ? "+" : "-") +
                       feature.getKey().str());
  llvm::sort(features);
  return llvm::join(features, ",");
}

/// The vector register file of `subtarget`, from its features.
inline VectorRegisters
vectorRegistersOf(const llvm::MCSubtargetInfo &subtarget) {
  // Features of another architecture are not in this one's table.
  return vectorRegistersFromFeatures([&](llvm::StringRef name) {
    for (const llvm::SubtargetFeatureKV &feature :
         subtarget.getAllProcessorFeatures())
      if (name == feature.Key)
        return subtarget.getFeatureBits().test(feature.Value);
    return false;
  });
}

} // namespace mlir::spconv

#endif // SPCONV_SUPPORT_TARGETCPU_H
