//===- TargetCPU.h - The CPU the tools compile for --------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// What spconv-run (for the CPU its JIT targets) and spconv-compile (for
// --mcpu) know of their target CPU: this machine's features, the vector
// registers they pass to the CPU pipeline's vector-bits and
// vector-registers, and the FMA units (LLVM's scheduling model of the CPU)
// they pass to its fma-pipes and fma-latency.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_SUPPORT_TARGETCPU_H
#define SPCONV_SUPPORT_TARGETCPU_H

#include "SpConv/Support/VectorWidth.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCSchedule.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/TargetParser/Host.h"

#include <cmath>
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

/// The FMA units of `subtarget` for vectors of one of `registers`, as
/// LLVM's scheduling model of its CPU has them: the latency and the
/// reciprocal throughput of the register form of the FP32 FMA of that
/// width (x86's VFMADD231PS, AArch64's FMLA on four lanes). LLVM's models
/// are what the code generator itself schedules by; a CPU without one (or
/// whose FMA is a variant class, resolved only per instruction) gets
/// FmaUnits' defaults.
inline FmaUnits fmaUnitsOf(const llvm::MCSubtargetInfo &subtarget,
                           const llvm::MCInstrInfo &instructions,
                           const VectorRegisters &registers) {
  FmaUnits units;
  const llvm::MCSchedModel &model = subtarget.getSchedModel();
  if (!model.hasInstrSchedModel())
    return units;
  llvm::StringRef name = registers.bits == 512   ? "VFMADD231PSZr"
                         : registers.bits == 256 ? "VFMADD231PSYr"
                                                 : "VFMADD231PSr";
  if (subtarget.getTargetTriple().isAArch64())
    name = "FMLAv4f32";
  for (unsigned opcode = 0, e = instructions.getNumOpcodes(); opcode < e;
       ++opcode) {
    if (instructions.getName(opcode) != name)
      continue;
    const llvm::MCSchedClassDesc *sched =
        model.getSchedClassDesc(instructions.get(opcode).getSchedClass());
    if (!sched || !sched->isValid() || sched->isVariant())
      return units;
    double reciprocal =
        llvm::MCSchedModel::getReciprocalThroughput(subtarget, *sched);
    int latency = llvm::MCSchedModel::computeInstrLatency(subtarget, *sched);
    if (reciprocal > 0)
      units.pipes = std::max<int64_t>(1, std::lround(1 / reciprocal));
    if (latency > 0)
      units.latency = latency;
    return units;
  }
  return units;
}

} // namespace mlir::spconv

#endif // SPCONV_SUPPORT_TARGETCPU_H
