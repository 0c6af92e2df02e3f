//===- TargetCPUTest.cpp - What the tools read of their target CPU --------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Support/TargetCPU.h"

#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

using namespace mlir::spconv;

namespace {

struct VectorUnits {
  VectorRegisters registers;
  FmaUnits fma;
};

/// What spconv-run and spconv-compile read of x86-64 CPU `cpu`, or nothing
/// where this LLVM has no x86 target.
std::optional<VectorUnits> x86UnitsOf(llvm::StringRef cpu) {
  llvm::InitializeAllTargetInfos();
  llvm::InitializeAllTargetMCs();
  llvm::Triple triple("x86_64-pc-linux-gnu");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return std::nullopt;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, cpu, ""));
  std::unique_ptr<llvm::MCInstrInfo> instructions(target->createMCInstrInfo());
  VectorUnits units;
  units.registers = vectorRegistersOf(*subtarget);
  units.fma = fmaUnitsOf(*subtarget, *instructions, units.registers);
  return units;
}

TEST(TargetCPU, FmaUnitsFromLLVMsSchedulingModel) {
  std::optional<VectorUnits> zen4 = x86UnitsOf("znver4");
  if (!zen4)
    GTEST_SKIP() << "this LLVM has no x86 target";
  // One 512-bit FMA a cycle (two 256-bit pipes, double-pumped), latency 4.
  EXPECT_EQ(zen4->registers.bits, 512);
  EXPECT_EQ(zen4->registers.count, 32);
  EXPECT_EQ(zen4->fma.pipes, 1);
  EXPECT_EQ(zen4->fma.latency, 4);
  // Cascade Lake: two 512-bit FMA pipes, latency 4.
  std::optional<VectorUnits> cascadeLake = x86UnitsOf("cascadelake");
  EXPECT_EQ(cascadeLake->fma.pipes, 2);
  EXPECT_EQ(cascadeLake->fma.latency, 4);
  // Haswell: AVX2's 16 registers, two 256-bit pipes of latency 5.
  std::optional<VectorUnits> haswell = x86UnitsOf("haswell");
  EXPECT_EQ(haswell->registers.bits, 256);
  EXPECT_EQ(haswell->registers.count, 16);
  EXPECT_EQ(haswell->fma.pipes, 2);
  EXPECT_EQ(haswell->fma.latency, 5);
}

} // namespace
