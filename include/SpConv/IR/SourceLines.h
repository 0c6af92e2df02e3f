//===- SourceLines.h - The source line a run-time error reports -*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// Run-time errors name the source line of the op that failed. Code lowered
// inline bakes that line in as a constant; a kernel that
// spconv-outline-kernels made serves layers on several lines, so it takes
// the line as an argument (marked spconv.source_line) and reports that.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_IR_SOURCELINES_H
#define SPCONV_IR_SOURCELINES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::spconv {

/// The line of the first file location in `loc`, or 0 when it has none.
/// With `noLine` (the module's location, which ops that a builder function
/// made carry), 0 also where that is `loc` or its first file location:
/// such ops have no line of their own.
int64_t sourceLine(Location loc, LocationAttr noLine = {});

/// The argument of `function` marked spconv.source_line, or null (also
/// for a declaration).
Value sourceLineArgument(FunctionOpInterface function);

/// Whether `function` (a definition or a declaration) takes a source-line
/// argument: a kernel of spconv-outline-kernels.
bool takesSourceLine(FunctionOpInterface function);

/// The location spconv-outline-kernels gives the op inside `kernel`: no
/// line of its own, and the kernel's name, so that code lowered from the op
/// finds the kernel's source-line argument (sourceLineValue).
Location kernelBodyLoc(FunctionOpInterface kernel);

/// The line (i64) to report for an op at `loc`: the source-line argument
/// of the kernel `loc` names (kernelBodyLoc), else `loc`'s line as a
/// constant built at `b`'s insertion point. `module` holds the kernel.
/// (By location, not by the insertion point: code is often built in the
/// region of an op that is not in its function yet.)
Value sourceLineValue(OpBuilder &b, Location loc, ModuleOp module);

} // namespace mlir::spconv

#endif // SPCONV_IR_SOURCELINES_H
