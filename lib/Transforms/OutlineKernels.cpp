//===- OutlineKernels.cpp - One function per distinct layer ---------------===//
//
// Part of the spconv-mlir project.
//
// A network repeats layers: the same conv (geometry, channels, epilogue)
// on the same rulebook type, several times. Lowered inline, each copy is
// lowered, optimised and compiled again. Moving each layer's rulebook op
// into a function named after its text makes equal layers one kernel, and
// gives later stages a unit (and a name) to compile and cache on its own.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SourceLines.h"
#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/IR/SpConvOps.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/xxhash.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVOUTLINEKERNELSPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// The ops that become kernels: each lowers to a specialised loop nest
/// (or a builder), the code worth sharing.
bool isKernelOp(Operation *op) {
  return isa<BuildRulebookOp, RulebookConvOp, RulebookPoolOp,
             RulebookPoolGradOp, RulebookWeightGradOp>(op);
}

class Outliner {
public:
  explicit Outliner(ModuleOp module) : module(module), symbols(module) {}

  /// Takes the module's kernels (an earlier run's) as made here.
  void adoptExisting();
  void outline(Operation *op);

private:
  /// The text a kernel is named after: `kernel` printed under a fixed name.
  static std::string textOf(func::FuncOp kernel);

  /// A function holding a copy of `op` alone, returning `results` (of
  /// `op`), its locations dropped: a kernel depends on its text only.
  func::FuncOp makeKernel(Operation *op, ArrayRef<Value> results);
  /// The kernel of this text: `kernel` itself, named and inserted, or an
  /// equal one made before (then `kernel` is erased).
  func::FuncOp deduplicate(func::FuncOp kernel, StringRef mnemonic);

  ModuleOp module;
  SymbolTable symbols;
  llvm::StringMap<func::FuncOp> kernelsByText;
};

func::FuncOp Outliner::makeKernel(Operation *op, ArrayRef<Value> results) {
  MLIRContext *context = op->getContext();
  Location unknown = UnknownLoc::get(context);
  SmallVector<Type> argumentTypes{IntegerType::get(context, 64)};
  llvm::append_range(argumentTypes, op->getOperandTypes());
  SmallVector<Type> resultTypes =
      llvm::to_vector(ValueRange(results).getTypes());
  OpBuilder builder(context);
  auto kernel =
      func::FuncOp::create(builder, unknown, "spconv_kernel",
                           builder.getFunctionType(argumentTypes, resultTypes));
  kernel.setPrivate();
  kernel.setArgAttr(0, SpConvDialect::kSourceLineAttrName,
                    builder.getUnitAttr());
  // A kernel reads its tensors, never writes them: said for when it is a
  // declaration (compiled on its own), so that bufferizing its callers
  // does not copy what they pass.
  for (unsigned i = 1, e = argumentTypes.size(); i < e; ++i)
    if (isa<TensorType>(argumentTypes[i]))
      kernel.setArgAttr(
          i, bufferization::BufferizationDialect::kBufferAccessAttrName,
          builder.getStringAttr("read"));
  Block *entry = kernel.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  IRMapping mapping;
  mapping.map(op->getOperands(), entry->getArguments().drop_front());
  Operation *copy = builder.clone(*op, mapping);
  // No location of one use: a kernel is its text (deduplicate names it).
  copy->walk([&](Operation *inner) { inner->setLoc(unknown); });
  SmallVector<Value> returned;
  for (Value result : results)
    returned.push_back(
        copy->getResult(cast<OpResult>(result).getResultNumber()));
  func::ReturnOp::create(builder, unknown, returned);
  return kernel;
}

std::string Outliner::textOf(func::FuncOp kernel) {
  std::string name = kernel.getSymName().str();
  kernel.setSymName("spconv_kernel");
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(os, OpPrintingFlags().useLocalScope());
  kernel.setSymName(name);
  return text;
}

void Outliner::adoptExisting() {
  for (auto function : module.getOps<func::FuncOp>())
    if (sourceLineArgument(function))
      kernelsByText.try_emplace(textOf(function), function);
}

func::FuncOp Outliner::deduplicate(func::FuncOp kernel, StringRef mnemonic) {
  std::string text = textOf(kernel);
  auto [found, inserted] = kernelsByText.try_emplace(text, kernel);
  if (!inserted) {
    kernel.erase();
    return found->second;
  }
  kernel.setSymName(("spconv_kernel_" + mnemonic + "_" +
                     llvm::utohexstr(llvm::xxh3_64bits(text),
                                     /*LowerCase=*/true, /*Width=*/16))
                        .str());
  // Renamed with a suffix if the module already has the name (an earlier
  // run's kernel, or another text of the same hash).
  symbols.insert(kernel);
  // Code lowered from the op reports the caller's line, which the kernel's
  // name leads to.
  Location bodyLoc = kernelBodyLoc(kernel);
  kernel.walk([&](Operation *inner) {
    if (inner != kernel.getOperation())
      inner->setLoc(bodyLoc);
  });
  return kernel;
}

void Outliner::outline(Operation *op) {
  SmallVector<Value> results;
  for (Value result : op->getResults())
    if (!result.use_empty())
      results.push_back(result);
  func::FuncOp kernel =
      deduplicate(makeKernel(op, results), op->getName().stripDialect());

  OpBuilder builder(op);
  Location loc = op->getLoc();
  int64_t line = sourceLine(loc, module.getLoc());
  SmallVector<Value> arguments{
      arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(line))};
  llvm::append_range(arguments, op->getOperands());
  auto call = func::CallOp::create(builder, loc, kernel, arguments);
  call.setNoInline(true);
  for (auto [result, replacement] : llvm::zip(results, call.getResults()))
    result.replaceAllUsesWith(replacement);
  op->erase();
}

struct OutlineKernelsPass
    : spconv::impl::SpConvOutlineKernelsPassBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    for (auto function : module.getOps<func::FuncOp>()) {
      // A kernel of an earlier run holds its op already.
      if (sourceLineArgument(function))
        continue;
      function.walk([&](Operation *op) {
        if (isKernelOp(op))
          ops.push_back(op);
      });
    }
    Outliner outliner(module);
    outliner.adoptExisting();
    for (Operation *op : ops)
      outliner.outline(op);
  }
};

} // namespace
