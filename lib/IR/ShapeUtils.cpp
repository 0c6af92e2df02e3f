//===- ShapeUtils.cpp - Shape helpers for diagnostics ---------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string mlir::spconv::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t extent) {
    if (ShapedType::isDynamic(extent))
      os << '?';
    else
      os << extent;
  });
  os << ']';
  return text;
}
