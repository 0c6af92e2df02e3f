//===- SourceLines.cpp - The source line a run-time error reports ---------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SourceLines.h"
#include "SpConv/IR/SpConvDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::spconv;

int64_t mlir::spconv::sourceLine(Location loc, LocationAttr noLine) {
  if (noLine && LocationAttr(loc) == noLine)
    return 0;
  int64_t line = 0;
  loc->walk([&](Location inner) {
    if (auto fileLoc = dyn_cast<FileLineColLoc>(inner)) {
      line = noLine && LocationAttr(inner) == noLine ? 0 : fileLoc.getLine();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return line;
}

/// The index of `function`'s source-line argument, if it has one.
static std::optional<unsigned> sourceLineIndex(FunctionOpInterface function) {
  if (!function)
    return std::nullopt;
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    if (function.getArgAttr(i, SpConvDialect::kSourceLineAttrName))
      return i;
  return std::nullopt;
}

Value mlir::spconv::sourceLineArgument(FunctionOpInterface function) {
  std::optional<unsigned> index = sourceLineIndex(function);
  if (!index || function.isExternal())
    return {};
  return function.getArgument(*index);
}

bool mlir::spconv::takesSourceLine(FunctionOpInterface function) {
  return sourceLineIndex(function).has_value();
}

Location mlir::spconv::kernelBodyLoc(FunctionOpInterface kernel) {
  MLIRContext *context = kernel.getContext();
  return FusedLoc::get(context, {UnknownLoc::get(context)},
                       FlatSymbolRefAttr::get(kernel.getNameAttr()));
}

Value mlir::spconv::sourceLineValue(OpBuilder &b, Location loc,
                                    ModuleOp module) {
  FlatSymbolRefAttr kernelName;
  loc->walk([&](Location inner) {
    if (auto fused = dyn_cast<FusedLoc>(inner))
      kernelName = dyn_cast_or_null<FlatSymbolRefAttr>(fused.getMetadata());
    return kernelName ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (kernelName)
    if (Value argument = sourceLineArgument(
            SymbolTable::lookupNearestSymbolFrom<FunctionOpInterface>(
                module, kernelName)))
      return argument;
  return arith::ConstantOp::create(b, loc,
                                   b.getI64IntegerAttr(sourceLine(loc)));
}
