//===- SpConvDialect.h - SpConv dialect -------------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SPCONVDIALECT_H
#define SPCONV_IR_SPCONVDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "SpConv/IR/SpConvOpsDialect.h.inc"

#endif // SPCONV_IR_SPCONVDIALECT_H
