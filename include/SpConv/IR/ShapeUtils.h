//===- ShapeUtils.h - Shape helpers for diagnostics -------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SHAPEUTILS_H
#define SPCONV_IR_SHAPEUTILS_H

#include "mlir/Support/LLVM.h"
#include <string>

namespace mlir::spconv {

/// Formats a shape as `[41, 1600, 1408]`, with `?` for dynamic extents.
std::string formatShape(ArrayRef<int64_t> shape);

} // namespace mlir::spconv

#endif // SPCONV_IR_SHAPEUTILS_H
