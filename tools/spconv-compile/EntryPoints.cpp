//===- EntryPoints.cpp - The C signatures of a module's entries -----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "EntryPoints.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace spconv::compile;

std::string MemRefParam::structName() const {
  return "spconv_memref_" + std::to_string(rank) + "d_" + elementName;
}

namespace {
/// The descriptor of `type`, if it is a ranked tensor or memref whose
/// elements C can name.
std::optional<MemRefParam> describeParam(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank() || !isa<RankedTensorType, MemRefType>(type))
    return std::nullopt;
  Type element = shaped.getElementType();
  MemRefParam param;
  param.rank = shaped.getRank();
  llvm::raw_string_ostream(param.mlirType) << type;
  if (element.isF32()) {
    param.elementName = "f32";
    param.cElementType = "float";
  } else if (element.isF64()) {
    param.elementName = "f64";
    param.cElementType = "double";
  } else if (element.isF16() || element.isBF16()) {
    // C has no portable 16-bit float: the caller sees the bits.
    param.elementName = element.isF16() ? "f16" : "bf16";
    param.cElementType = "uint16_t";
  } else if (element.isSignlessInteger(8) || element.isSignlessInteger(16) ||
             element.isSignlessInteger(32) || element.isSignlessInteger(64)) {
    unsigned width = element.getIntOrFloatBitWidth();
    param.elementName = "i" + std::to_string(width);
    param.cElementType = "int" + std::to_string(width) + "_t";
  } else {
    return std::nullopt;
  }
  return param;
}

/// C and C++ keywords, and `main`, which a program defines itself.
bool isReservedName(StringRef name) {
  static const llvm::StringSet<> keywords = {
      "auto",      "break",    "case",     "char",   "const",    "continue",
      "default",   "do",       "double",   "else",   "enum",     "extern",
      "float",     "for",      "goto",     "if",     "inline",   "int",
      "long",      "register", "restrict", "return", "short",    "signed",
      "sizeof",    "static",   "struct",   "switch", "typedef",  "union",
      "unsigned",  "void",     "volatile", "while",  "bool",     "true",
      "false",     "class",    "delete",   "new",    "operator", "private",
      "public",    "template", "this",     "throw",  "try",      "virtual",
      "namespace", "main"};
  return keywords.contains(name);
}

bool isCIdentifier(StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

std::string publicNames(ArrayRef<func::FuncOp> functions) {
  std::string names;
  for (func::FuncOp function : functions)
    names += (names.empty() ? "" : ", ") + function.getSymName().str();
  return names.empty() ? "none" : names;
}

LogicalResult describeEntry(func::FuncOp function, StringRef prefix,
                            EntryPoint &entry, std::string &error) {
  entry.mlirName = function.getSymName().str();
  entry.symbol = (prefix + entry.mlirName).str();
  if (!isCIdentifier(entry.symbol) || isReservedName(entry.symbol)) {
    error = "@" + entry.mlirName + ": '" + entry.symbol +
            "' is not a usable C function name; rename the function or "
            "choose a --prefix";
    return failure();
  }
  FunctionType type = function.getFunctionType();
  auto describeAll = [&](TypeRange types, const char *what,
                         SmallVectorImpl<MemRefParam> &params) {
    for (auto [i, type] : llvm::enumerate(types)) {
      std::optional<MemRefParam> param = describeParam(type);
      if (!param) {
        llvm::raw_string_ostream os(error);
        os << "@" << entry.mlirName << ": " << what << " " << i << " has type "
           << type
           << "; entry points take and return ranked tensors of f16, bf16, "
              "f32, f64, i8, i16, i32 or i64";
        return failure();
      }
      params.push_back(std::move(*param));
    }
    return success();
  };
  if (failed(describeAll(type.getInputs(), "argument", entry.arguments)) ||
      failed(describeAll(type.getResults(), "result", entry.results)))
    return failure();
  return success();
}
} // namespace

LogicalResult spconv::compile::collectEntryPoints(
    ModuleOp module, ArrayRef<std::string> requested, StringRef prefix,
    std::vector<EntryPoint> &entries, std::string &error) {
  SmallVector<func::FuncOp> candidates;
  for (auto function : module.getOps<func::FuncOp>())
    if (function.isPublic() && !function.isExternal())
      candidates.push_back(function);
  if (candidates.empty()) {
    error = "the module has no public function with a body; nothing to "
            "export (private functions are only callable from the module)";
    return failure();
  }

  SmallVector<func::FuncOp> selected;
  if (requested.empty())
    selected = candidates;
  llvm::StringSet<> seen;
  for (const std::string &name : requested) {
    auto it = llvm::find_if(candidates, [&](func::FuncOp function) {
      return function.getSymName() == name;
    });
    if (it == candidates.end()) {
      error =
          "unknown --entry '" + name +
          "'; the module's public functions are: " + publicNames(candidates);
      return failure();
    }
    if (seen.insert(name).second)
      selected.push_back(*it);
  }

  for (func::FuncOp function : selected) {
    EntryPoint entry;
    if (failed(describeEntry(function, prefix, entry, error)))
      return failure();
    entries.push_back(std::move(entry));
  }
  return success();
}
