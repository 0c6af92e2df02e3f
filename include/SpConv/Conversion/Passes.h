//===- Passes.h - SpConv conversion passes ----------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_CONVERSION_PASSES_H
#define SPCONV_CONVERSION_PASSES_H

#include "SpConv/Conversion/LoweringOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::spconv {

/// The discardable attribute (a string) with which convert-spconv-to-scf
/// names the role of each parallel loop it emits (`count_pairs`,
/// `conv_f32_16x32`, ...); spconv-parallel-loops-to-gpu names kernels after
/// it.
constexpr llvm::StringLiteral kKernelRoleAttrName = "spconv.kernel";

/// The discardable attribute (a dictionary) on which a tiled kernel's
/// `gpu.launch` records its tile sizes; it stays on the outlined kernel for
/// the static report, and its `max_registers`, when present, becomes the
/// kernel's `nvvm.maxnreg`.
constexpr llvm::StringLiteral kTileAttrName = "spconv.tile";

/// Gives `gpu.barrier` its memory effects (it reads and writes the memory
/// that the block's threads share) as an external model. Upstream declares
/// none, so the ownership-based buffer deallocation rejects a host function
/// whose `gpu.launch` holds one; convert-spconv-to-scf emits such launches
/// before deallocation and outlining, so they need the effects.
/// convert-spconv-to-scf adds it to the registry of its context itself.
void registerGPUBarrierEffects(DialectRegistry &registry);

#define GEN_PASS_DECL
#include "SpConv/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "SpConv/Conversion/Passes.h.inc"

} // namespace mlir::spconv

#endif // SPCONV_CONVERSION_PASSES_H
