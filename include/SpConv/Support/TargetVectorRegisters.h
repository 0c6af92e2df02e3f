//===- TargetVectorRegisters.h - A subtarget's vector registers -*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// What spconv-run (for the CPU its JIT targets) and spconv-compile (for
// --mcpu) pass to the CPU pipeline's vector-bits and vector-registers.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_SUPPORT_TARGETVECTORREGISTERS_H
#define SPCONV_SUPPORT_TARGETVECTORREGISTERS_H

#include "SpConv/Support/VectorWidth.h"

#include "llvm/MC/MCSubtargetInfo.h"

namespace mlir::spconv {

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

#endif // SPCONV_SUPPORT_TARGETVECTORREGISTERS_H
