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

/// Product of `sizes`, or failure if it overflows int64.
FailureOr<int64_t> checkedProduct(ArrayRef<int64_t> sizes);

} // namespace mlir::spconv

#endif // SPCONV_IR_SPCONVATTRS_H
