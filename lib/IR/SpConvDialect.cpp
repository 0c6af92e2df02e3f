//===- SpConvDialect.cpp - SpConv dialect ---------------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/IR/SpConvOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::spconv;

#include "SpConv/IR/SpConvOpsDialect.cpp.inc"

namespace {
/// Functions holding a spconv.null_buffer (guarded code, after
/// bufferization: the rulebook builders) inline as before; the
/// tensor-level ops keep the functions that hold them, as they always did.
struct SpConvInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *op, Region *, bool,
                       IRMapping &) const final {
    return isa<NullBufferOp>(op);
  }
};
} // namespace

void SpConvDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "SpConv/IR/SpConvOps.cpp.inc"
      >();
  addInterfaces<SpConvInlinerInterface>();
}

/// Whether `role` can be part of a kernel's symbol name.
static bool isKernelRole(StringRef role) {
  return !role.empty() && llvm::all_of(role, [](char c) {
    return llvm::isAlnum(c) || c == '_';
  });
}

/// Checks a `spconv.tile` dictionary: each entry a known key with a
/// positive integer, or `math` with one of the kernels' maths.
static LogicalResult verifyTile(Operation *op, DictionaryAttr tile) {
  static constexpr StringLiteral kSizes[] = {
      "threads",       "rows",        "cols",        "depth",     "stages",
      "max_registers", "thread_rows", "thread_cols", "warp_rows", "warp_cols"};
  for (NamedAttribute entry : tile) {
    StringRef key = entry.getName().strref();
    if (key == "math") {
      auto math = dyn_cast<StringAttr>(entry.getValue());
      if (!math ||
          !llvm::is_contained(
              ArrayRef<StringRef>{"fma", "mma-f16", "mma-bf16", "mma-tf32"},
              math.getValue()))
        return op->emitOpError()
               << SpConvDialect::kTileAttrName
               << " entry 'math' must be \"fma\", \"mma-f16\", "
                  "\"mma-bf16\" or \"mma-tf32\", got "
               << entry.getValue();
      continue;
    }
    if (!llvm::is_contained(kSizes, key))
      return op->emitOpError() << SpConvDialect::kTileAttrName
                               << " has an unknown entry '" << key << "'";
    auto size = dyn_cast<IntegerAttr>(entry.getValue());
    if (!size || !size.getType().isSignlessInteger(64) || size.getInt() < 1)
      return op->emitOpError()
             << SpConvDialect::kTileAttrName << " entry '" << key
             << "' must be a positive i64, got " << entry.getValue();
  }
  return success();
}

LogicalResult SpConvDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  Attribute value = attr.getValue();
  if (name == kKernelAttrName) {
    auto role = dyn_cast<StringAttr>(value);
    if (!role || !isKernelRole(role.getValue()))
      return op->emitOpError()
             << name
             << " must be a non-empty string of letters, digits and '_' "
                "(kernels are named after it), got "
             << value;
    return success();
  }
  if (name == kTileAttrName) {
    auto tile = dyn_cast<DictionaryAttr>(value);
    if (!tile)
      return op->emitOpError()
             << name << " must be a dictionary, got " << value;
    return verifyTile(op, tile);
  }
  if (name == kDynamicSharedMemoryAttrName) {
    if (!isa<FunctionOpInterface>(op))
      return op->emitOpError() << name << " applies to kernels only";
    auto size = dyn_cast<IntegerAttr>(value);
    if (!size || !size.getType().isSignlessInteger(64) || size.getInt() < 1)
      return op->emitOpError()
             << name << " must be a positive i64 (bytes), got " << value;
    return success();
  }
  if (name == kBackwardAttrName) {
    if (!isa<FunctionOpInterface>(op))
      return op->emitOpError() << name << " applies to functions only";
    if (!isa<FlatSymbolRefAttr>(value))
      return op->emitOpError()
             << name
             << " must name the function to generate, as a symbol reference "
                "(@name), got "
             << value;
    return success();
  }
  if (name == kProfileLabelsAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitOpError() << name << " applies to a module only";
    auto labels = dyn_cast<ArrayAttr>(value);
    if (!labels || !llvm::all_of(labels, llvm::IsaPred<StringAttr>))
      return op->emitOpError()
             << name << " must be an array of strings, got " << value;
    return success();
  }
  return op->emitOpError("has an unknown spconv attribute '")
         << name << "' (known: " << kKernelAttrName << ", " << kTileAttrName
         << ", " << kBackwardAttrName << ", " << kProfileLabelsAttrName << ")";
}

LogicalResult SpConvDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name != kSourceLineAttrName)
    return op->emitOpError("has an unknown spconv argument attribute '")
           << name << "' (known: " << kSourceLineAttrName << ")";
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function || regionIndex != 0)
    return op->emitOpError()
           << name << " applies to a function's arguments only";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitOpError()
           << name << " must be a unit attribute, got " << attr.getValue();
  if (!function.getArgumentTypes()[argIndex].isSignlessInteger(64))
    return op->emitOpError()
           << name << " must mark an i64 argument, argument " << argIndex
           << " is " << function.getArgumentTypes()[argIndex];
  for (unsigned other = 0; other < argIndex; ++other)
    if (function.getArgAttr(other, kSourceLineAttrName))
      return op->emitOpError() << name << " marks more than one argument ("
                               << other << " and " << argIndex << ")";
  return success();
}
