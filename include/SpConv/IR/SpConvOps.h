//===- SpConvOps.h - SpConv operations --------------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SPCONVOPS_H
#define SPCONV_IR_SPCONVOPS_H

#include "SpConv/IR/SpConvAttrs.h"
#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/IR/SpConvTypes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "SpConv/IR/SpConvOps.h.inc"

#endif // SPCONV_IR_SPCONVOPS_H
