//===- SpConvTypes.h - SpConv types -----------------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SPCONVTYPES_H
#define SPCONV_IR_SPCONVTYPES_H

#include "SpConv/IR/SpConvAttrs.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "SpConv/IR/SpConvOpsTypes.h.inc"

#endif // SPCONV_IR_SPCONVTYPES_H
