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
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
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

/// Whether every use of `value` is as the accumulator of a linalg op on
/// tensors.
bool onlyAccumulates(Value value) {
  return !value.use_empty() &&
         llvm::all_of(value.getUses(), [](OpOperand &use) {
           auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
           return user && user.hasPureTensorSemantics() && user.isDpsInit(&use);
         });
}

/// The ops that make `init`, the accumulator of a linalg op, if it is a
/// fresh tensor: a tensor.empty, or a linalg op into one (a fill, a bias
/// broadcast) whose result only ever starts accumulators. Appended to
/// `ops` in order: the kernel makes its own copy of them, as each user
/// would otherwise copy the shared one before accumulating into it; the
/// original goes once every user has its kernel. False if `init` is
/// another value.
bool appendFreshInit(Value init, SmallVectorImpl<Operation *> &ops) {
  if (auto empty = init.getDefiningOp<tensor::EmptyOp>()) {
    ops.push_back(empty);
    return true;
  }
  auto maker = init.getDefiningOp<linalg::LinalgOp>();
  if (!maker || !maker.hasPureTensorSemantics() ||
      maker->getNumResults() != 1 || !onlyAccumulates(init))
    return false;
  auto inits = maker.getDpsInits();
  auto empty = inits.size() == 1 ? inits[0].getDefiningOp<tensor::EmptyOp>()
                                 : tensor::EmptyOp();
  if (!empty)
    return false;
  ops.append({empty, maker});
  return true;
}

/// Whether `op` (a linalg op) makes another linalg op's accumulator: it
/// goes into that op's kernel, or stays with it, never a kernel alone.
bool initialisesAnother(Operation *op) {
  return llvm::any_of(op->getUses(), [](OpOperand &use) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    return user && user.isDpsInit(&use);
  });
}

/// The ops of the kernel `op` roots, in order, `op` last, or none. A
/// layer's rulebook op alone: each lowers to a specialised loop nest (or a
/// builder), the code worth sharing. A linalg op on tensors (a pointwise
/// conv's matmul, BatchNorm's maps and reductions, a transpose) whose
/// accumulators are fresh tensors, after the ops that make them
/// (appendFreshInit), so that the kernel allocates its results and writes
/// none of its arguments. A concatenation.
SmallVector<Operation *> kernelOps(Operation *op) {
  if (isa<BuildRulebookOp, RulebookConvOp, RulebookPoolOp, RulebookPoolGradOp,
          RulebookWeightGradOp, tensor::ConcatOp>(op))
    return {op};
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() || initialisesAnother(op))
    return {};
  SmallVector<Operation *> ops;
  for (Value init : linalgOp.getDpsInits())
    if (!appendFreshInit(init, ops))
      return {};
  ops.push_back(op);
  return ops;
}

/// Values cloned into a kernel rather than passed to it: constants.
bool isRematerializable(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>();
}

class Outliner {
public:
  explicit Outliner(ModuleOp module) : module(module), symbols(module) {}

  /// Takes the module's kernels (an earlier run's) as made here.
  void adoptExisting();
  void outline(ArrayRef<Operation *> ops);

private:
  /// The text a kernel is named after: `kernel` printed under a fixed name.
  static std::string textOf(func::FuncOp kernel);

  /// A function holding a copy of `ops` (a kernel's, kernelOps), taking
  /// `arguments` and a copy of `constants` (what they use from outside) and
  /// returning `results`, its locations dropped: a kernel depends on its
  /// text only.
  func::FuncOp makeKernel(ArrayRef<Operation *> ops, ArrayRef<Value> arguments,
                          ArrayRef<Value> constants, ArrayRef<Value> results);
  /// The kernel of this text: `kernel` itself, named and inserted, or an
  /// equal one made before (then `kernel` is erased).
  func::FuncOp deduplicate(func::FuncOp kernel, StringRef mnemonic);

  ModuleOp module;
  SymbolTable symbols;
  llvm::StringMap<func::FuncOp> kernelsByText;
};

func::FuncOp Outliner::makeKernel(ArrayRef<Operation *> ops,
                                  ArrayRef<Value> arguments,
                                  ArrayRef<Value> constants,
                                  ArrayRef<Value> results) {
  MLIRContext *context = ops.front()->getContext();
  Location unknown = UnknownLoc::get(context);
  SmallVector<Type> argumentTypes{IntegerType::get(context, 64)};
  llvm::append_range(argumentTypes, ValueRange(arguments).getTypes());
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
  mapping.map(arguments, entry->getArguments().drop_front());
  for (Value constant : constants)
    mapping.map(constant, builder.clone(*constant.getDefiningOp())->getResult(0));
  for (Operation *op : ops)
    builder.clone(*op, mapping);
  SmallVector<Value> returned;
  for (Value result : results)
    returned.push_back(mapping.lookup(result));
  func::ReturnOp::create(builder, unknown, returned);
  // No location of one use: a kernel is its text (deduplicate names it).
  kernel.walk([&](Operation *inner) { inner->setLoc(unknown); });
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

void Outliner::outline(ArrayRef<Operation *> ops) {
  Operation *root = ops.back();
  llvm::SmallPtrSet<Operation *, 4> members(ops.begin(), ops.end());
  auto inKernel = [&](Operation *user) {
    while (user && !members.contains(user))
      user = user->getParentOp();
    return user != nullptr;
  };
  // What the ops use from outside, in their operands or their regions:
  // constants are cloned into the kernel, the rest passed to it.
  llvm::SetVector<Value> arguments, constants;
  for (Operation *op : ops) {
    llvm::SetVector<Value> used(llvm::from_range, op->getOperands());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    for (Value value : used) {
      Operation *def = value.getDefiningOp();
      if (def && members.contains(def))
        continue;
      (isRematerializable(value) ? constants : arguments).insert(value);
    }
  }
  // The root's results that are used. The ops before it make its
  // accumulators, which the kernel makes its own copy of.
  SmallVector<Value> results;
  for (Value result : root->getResults())
    if (llvm::any_of(result.getUsers(),
                     [&](Operation *user) { return !inKernel(user); }))
      results.push_back(result);
  func::FuncOp kernel =
      deduplicate(makeKernel(ops, arguments.getArrayRef(),
                             constants.getArrayRef(), results),
                  root->getName().stripDialect());

  OpBuilder builder(root);
  Location loc = root->getLoc();
  int64_t line = sourceLine(loc, module.getLoc());
  SmallVector<Value> callArguments{
      arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(line))};
  llvm::append_range(callArguments, arguments);
  auto call = func::CallOp::create(builder, loc, kernel, callArguments);
  call.setNoInline(true);
  for (auto [result, replacement] : llvm::zip(results, call.getResults()))
    result.replaceAllUsesWith(replacement);
  root->erase();
  // An accumulator other ops use too stays for them.
  for (Operation *op : llvm::reverse(ops.drop_back()))
    if (op->use_empty())
      op->erase();
}

struct OutlineKernelsPass
    : spconv::impl::SpConvOutlineKernelsPassBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<SmallVector<Operation *>> kernels;
    for (auto function : module.getOps<func::FuncOp>()) {
      // A kernel of an earlier run holds its op already.
      if (sourceLineArgument(function))
        continue;
      function.walk([&](Operation *op) {
        if (SmallVector<Operation *> ops = kernelOps(op); !ops.empty())
          kernels.push_back(std::move(ops));
      });
    }
    Outliner outliner(module);
    outliner.adoptExisting();
    for (ArrayRef<Operation *> ops : kernels)
      outliner.outline(ops);
  }
};

} // namespace
