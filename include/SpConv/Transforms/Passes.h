//===- Passes.h - SpConv transformation passes ------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TRANSFORMS_PASSES_H
#define SPCONV_TRANSFORMS_PASSES_H

#include "SpConv/IR/SpConvDialect.h"
// Declarations only: each pass's .cpp includes the dialects it loads, so a
// file that includes this header does not parse every dialect's ops (that
// took half of the compiler's build time).
#include "mlir/Pass/Pass.h"

namespace mlir::spconv {

#define GEN_PASS_DECL
#include "SpConv/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "SpConv/Transforms/Passes.h.inc"

} // namespace mlir::spconv

#endif // SPCONV_TRANSFORMS_PASSES_H
