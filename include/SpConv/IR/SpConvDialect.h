//===- SpConvDialect.h - SpConv dialect -------------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SPCONVDIALECT_H
#define SPCONV_IR_SPCONVDIALECT_H

// The dependent dialects (arith, linalg, tensor) are loaded by
// SpConvDialect.cpp; users of this header include what they use.
#include "mlir/IR/Dialect.h"

#include "SpConv/IR/SpConvOpsDialect.h.inc"

#endif // SPCONV_IR_SPCONVDIALECT_H
