//===- Passes.h - SpConv conversion passes ----------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_CONVERSION_PASSES_H
#define SPCONV_CONVERSION_PASSES_H

#include "SpConv/Conversion/LoweringOptions.h"
#include "SpConv/IR/SpConvDialect.h"

// Declarations only: each pass's .cpp includes the dialects it loads, so a
// file that includes this header does not parse every dialect's ops (that
// took half of the compiler's build time).
#include "mlir/Pass/Pass.h"

namespace mlir::spconv {

/// The discardable attributes of the conversions (declared and verified by
/// the dialect: SpConvBase.td).
constexpr llvm::StringLiteral kKernelRoleAttrName =
    SpConvDialect::kKernelAttrName;
constexpr llvm::StringLiteral kTileAttrName = SpConvDialect::kTileAttrName;

/// Gives `gpu.barrier`, `nvgpu.device_async_create_group` and
/// `nvgpu.device_async_wait` memory effects (they read and write the memory
/// that the block's threads share) as external models. Upstream declares
/// none, so the ownership-based buffer deallocation rejects a host function
/// whose `gpu.launch` holds one; convert-spconv-to-scf emits such launches
/// before deallocation and outlining, so they need the effects.
/// convert-spconv-to-scf adds them to the registry of its context itself.
void registerGPUSyncEffects(DialectRegistry &registry);

#define GEN_PASS_DECL
#include "SpConv/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "SpConv/Conversion/Passes.h.inc"

} // namespace mlir::spconv

#endif // SPCONV_CONVERSION_PASSES_H
