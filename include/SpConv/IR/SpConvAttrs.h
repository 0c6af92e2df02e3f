//===- SpConvAttrs.h - SpConv attributes ------------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SPCONVATTRS_H
#define SPCONV_IR_SPCONVATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"

#include "SpConv/IR/SpConvEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "SpConv/IR/SpConvAttrs.h.inc"

namespace mlir::spconv {

/// Returns the grid encoding of a coordinates tensor type, or null.
GridAttr getGrid(Type coordsType);

/// The most kernel offsets a geometry may have (e.g. 40x40x40). Builders keep
/// an i32 pair count per (offset, block of sites) and CSR offsets per
/// offset, and weights hold `K x Cin x Cout` elements: past this the
/// bookkeeping alone would outgrow the data it serves. docs/Limits.md lists
/// this and the other limits.
constexpr int64_t kMaxKernelVolume = int64_t(1) << 16;

/// Product of `sizes`, or failure if it overflows int64.
FailureOr<int64_t> checkedProduct(ArrayRef<int64_t> sizes);

} // namespace mlir::spconv

#endif // SPCONV_IR_SPCONVATTRS_H
