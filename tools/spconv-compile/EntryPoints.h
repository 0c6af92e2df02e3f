//===- EntryPoints.h - The C signatures of a module's entries ---*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The functions spconv-compile exports, and the C types of their arguments
// and results, taken from the func.func signatures before lowering. The
// header writer and the object emitter both work from this description.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TOOLS_SPCONVCOMPILE_ENTRYPOINTS_H
#define SPCONV_TOOLS_SPCONVCOMPILE_ENTRYPOINTS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace spconv::compile {

/// A ranked tensor (or memref) passed as a memref descriptor.
struct MemRefParam {
  int64_t rank = 0;
  /// Short element name used in struct names: "f32", "i32", "bf16", ...
  std::string elementName;
  /// C element type: "float", "int32_t", "uint16_t" (f16 and bf16 bits).
  std::string cElementType;
  /// The MLIR type as written, for comments.
  std::string mlirType;

  /// spconv_memref_<rank>d_<element>.
  std::string structName() const;
};

struct EntryPoint {
  /// The func.func symbol.
  std::string mlirName;
  /// The C symbol of the entry point: prefix + mlirName.
  std::string symbol;
  llvm::SmallVector<MemRefParam> arguments;
  llvm::SmallVector<MemRefParam> results;
};

/// Picks the entry points of `module`: the public functions with a body
/// named in `requested`, or all of them when `requested` is empty. Fails
/// with a message in `error` on an unknown name, a type with no C
/// descriptor, or a symbol that is not a C identifier.
mlir::LogicalResult collectEntryPoints(mlir::ModuleOp module,
                                       llvm::ArrayRef<std::string> requested,
                                       llvm::StringRef prefix,
                                       std::vector<EntryPoint> &entries,
                                       std::string &error);

} // namespace spconv::compile

#endif // SPCONV_TOOLS_SPCONVCOMPILE_ENTRYPOINTS_H
