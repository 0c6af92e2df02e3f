//===- OptimizeLLVM.cpp - LLVM's -O pipeline, in parallel parts -----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Pipelines/OptimizeLLVM.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/GlobalDCE.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

using namespace llvm;

namespace {

/// Instructions per part when the count is picked by size: below about
/// this, splitting costs more (cloning, bitcode, linking) than it saves.
constexpr size_t kInstructionsPerPart = 20000;
constexpr unsigned kMaxParts = 8;

/// Calls `visit` for every global value `root`'s operands reach, through
/// constant expressions and aggregates.
void forEachGlobalIn(const User *root,
                     function_ref<void(const GlobalValue *)> visit,
                     SmallPtrSetImpl<const Constant *> &seen) {
  for (const Use &use : root->operands()) {
    const auto *constant = dyn_cast<Constant>(use.get());
    if (!constant || !seen.insert(constant).second)
      continue;
    if (const auto *global = dyn_cast<GlobalValue>(constant))
      visit(global);
    else
      forEachGlobalIn(constant, visit, seen);
  }
}

/// Which part defines each global value, and which parts reference it.
struct Partition {
  DenseMap<const GlobalValue *, unsigned> owner;
  DenseMap<const GlobalValue *, SmallVector<unsigned, 2>> referencedBy;

  bool references(const GlobalValue *global, unsigned part) const {
    auto it = referencedBy.find(global);
    return it != referencedBy.end() && llvm::is_contained(it->second, part);
  }
};

/// Functions joined by direct calls go to one part; the parts are filled
/// largest cluster first, each into the lightest part (deterministic: sizes
/// and names only).
Partition splitIntoParts(const Module &module, unsigned parts) {
  EquivalenceClasses<const Function *> clusters;
  for (const Function &function : module) {
    if (function.isDeclaration())
      continue;
    clusters.insert(&function);
    for (const Instruction &inst : instructions(function))
      if (const auto *call = dyn_cast<CallBase>(&inst))
        if (const auto *callee = dyn_cast<Function>(
                call->getCalledOperand()->stripPointerCasts());
            callee && !callee->isDeclaration())
          clusters.unionSets(&function, callee);
  }
  struct Cluster {
    SmallVector<const Function *> functions;
    size_t size = 0;
  };
  std::vector<Cluster> sorted;
  for (auto it = clusters.begin(); it != clusters.end(); ++it) {
    if (!(*it)->isLeader())
      continue;
    Cluster cluster;
    for (auto member = clusters.member_begin(**it);
         member != clusters.member_end(); ++member) {
      cluster.functions.push_back(*member);
      cluster.size += (*member)->getInstructionCount();
    }
    // Members in module order, so that a cluster's name is its first.
    llvm::sort(cluster.functions, [&](const Function *a, const Function *b) {
      return a->getName() < b->getName();
    });
    sorted.push_back(std::move(cluster));
  }
  llvm::sort(sorted, [](const Cluster &a, const Cluster &b) {
    if (a.size != b.size)
      return a.size > b.size;
    return a.functions.front()->getName() < b.functions.front()->getName();
  });

  Partition result;
  std::vector<size_t> load(parts, 0);
  for (const Cluster &cluster : sorted) {
    unsigned lightest =
        std::min_element(load.begin(), load.end()) - load.begin();
    load[lightest] += cluster.size;
    for (const Function *function : cluster.functions)
      result.owner[function] = lightest;
  }

  // References from each part's functions; a global variable belongs to the
  // first part that reads it (part 0 if none does).
  auto reference = [&](const GlobalValue *global, unsigned part) {
    SmallVector<unsigned, 2> &by = result.referencedBy[global];
    if (!llvm::is_contained(by, part))
      by.push_back(part);
  };
  for (const Function &function : module) {
    if (function.isDeclaration())
      continue;
    unsigned part = result.owner.lookup(&function);
    SmallPtrSet<const Constant *, 32> seen;
    for (const Instruction &inst : instructions(function))
      forEachGlobalIn(
          &inst, [&](const GlobalValue *global) { reference(global, part); },
          seen);
  }
  for (const GlobalVariable &variable : module.globals()) {
    auto it = result.referencedBy.find(&variable);
    result.owner[&variable] =
        it == result.referencedBy.end()
            ? 0
            : *std::min_element(it->second.begin(), it->second.end());
  }
  // What the initializers reference is referenced by every part that has a
  // copy of them (their owner, and readers of constants); to a fixed point,
  // since a constant may point at another.
  for (bool changed = true; changed;) {
    changed = false;
    for (const GlobalVariable &variable : module.globals()) {
      if (!variable.hasInitializer())
        continue;
      SmallVector<unsigned, 2> copies = {result.owner.lookup(&variable)};
      if (variable.isConstant())
        for (unsigned part : result.referencedBy.lookup(&variable))
          if (!llvm::is_contained(copies, part))
            copies.push_back(part);
      SmallPtrSet<const Constant *, 32> seen;
      forEachGlobalIn(
          &variable,
          [&](const GlobalValue *global) {
            for (unsigned part : copies)
              if (!result.references(global, part)) {
                reference(global, part);
                changed = true;
              }
          },
          seen);
    }
  }
  return result;
}

/// The linkage and visibility a symbol had before the parts were split.
struct SavedLinkage {
  std::string name;
  GlobalValue::LinkageTypes linkage;
  GlobalValue::VisibilityTypes visibility;
};

/// Gives every local symbol that another part references external (hidden)
/// linkage, so that the parts link; returns what to restore.
std::vector<SavedLinkage> externalizeShared(Module &module,
                                            const Partition &partition) {
  std::vector<SavedLinkage> saved;
  unsigned unnamed = 0;
  auto visitGlobal = [&](GlobalValue &global) {
    if (!global.hasLocalLinkage() || global.isDeclaration())
      return;
    unsigned owner = partition.owner.lookup(&global);
    auto it = partition.referencedBy.find(&global);
    if (it == partition.referencedBy.end() ||
        llvm::all_of(it->second, [&](unsigned part) { return part == owner; }))
      return;
    if (!global.hasName())
      global.setName("spconv.part.shared." + Twine(unnamed++));
    saved.push_back(
        {global.getName().str(), global.getLinkage(), global.getVisibility()});
    global.setLinkage(GlobalValue::ExternalLinkage);
    global.setVisibility(GlobalValue::HiddenVisibility);
  };
  for (Function &function : module)
    visitGlobal(function);
  for (GlobalVariable &variable : module.globals())
    visitGlobal(variable);
  return saved;
}

/// Part `part` of `module`: the definitions it owns, copies of the
/// constants it reads, declarations of the rest.
std::unique_ptr<Module> clonePart(const Module &module,
                                  const Partition &partition, unsigned part) {
  ValueToValueMapTy map;
  std::unique_ptr<Module> clone =
      CloneModule(module, map, [&](const GlobalValue *global) {
        if (partition.owner.lookup(global) == part)
          return true;
        const auto *variable = dyn_cast<GlobalVariable>(global);
        return variable && variable->isConstant() &&
               !variable->hasAppendingLinkage() &&
               partition.references(global, part);
      });
  for (const GlobalVariable &original : module.globals()) {
    auto *variable = cast_or_null<GlobalVariable>(map.lookup(&original));
    if (!variable || partition.owner.lookup(&original) == part)
      continue;
    // llvm.global_ctors and friends: in their owner part only.
    if (original.hasAppendingLinkage()) {
      variable->eraseFromParent();
      continue;
    }
    // Another part's constant: readable here, emitted there.
    if (variable->hasInitializer())
      variable->setLinkage(GlobalValue::AvailableExternallyLinkage);
  }
  return clone;
}

/// Deletes the internal functions and variables nothing live references,
/// as the whole-module pipeline's GlobalDCE would have: what a part's
/// optimizer could not see was dead (its referrer was in another part).
void removeDeadGlobals(Module &module) {
  LoopAnalysisManager loops;
  FunctionAnalysisManager functions;
  CGSCCAnalysisManager sccs;
  ModuleAnalysisManager modules;
  PassBuilder builder;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  ModulePassManager passes;
  passes.addPass(GlobalDCEPass());
  passes.run(module, modules);
}

SmallVector<char, 0> toBitcode(const Module &module) {
  SmallVector<char, 0> buffer;
  raw_svector_ostream os(buffer);
  WriteBitcodeToFile(module, os);
  return buffer;
}

Expected<std::unique_ptr<Module>> fromBitcode(ArrayRef<char> bitcode,
                                              LLVMContext &context) {
  return parseBitcodeFile(
      MemoryBufferRef(StringRef(bitcode.data(), bitcode.size()), "part"),
      context);
}

} // namespace

unsigned
mlir::spconv::llvmOptimizationParts(const Module &module,
                                    const OptimizeLLVMOptions &options) {
  size_t defined = 0;
  for (const Function &function : module)
    defined += !function.isDeclaration();
  unsigned parts =
      options.parts
          ? options.parts
          : static_cast<unsigned>(std::min<size_t>(
                kMaxParts, std::max<size_t>(1, module.getInstructionCount() /
                                                   kInstructionsPerPart)));
  return std::max<unsigned>(1, std::min<size_t>(parts, defined));
}

Error mlir::spconv::optimizeLLVMModule(Module &module,
                                       const OptimizeLLVMOptions &options,
                                       TargetMachineFactory makeTargetMachine) {
  unsigned parts = llvmOptimizationParts(module, options);
  if (parts == 1) {
    std::unique_ptr<TargetMachine> machine = makeTargetMachine();
    return mlir::makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0,
                                           machine.get())(&module);
  }

  // What the lowering left unreferenced (a private function inlined
  // everywhere, with the regions it outlined) goes first: split apart, its
  // pieces would keep each other alive.
  removeDeadGlobals(module);
  Partition split = splitIntoParts(module, parts);
  std::vector<SavedLinkage> saved = externalizeShared(module, split);
  std::vector<SmallVector<char, 0>> bitcode(parts);
  for (unsigned part = 0; part < parts; ++part)
    bitcode[part] = toBitcode(*clonePart(module, split, part));

  // Each part in a context of its own: a context is not thread-safe.
  std::vector<Error> errors;
  std::mutex errorsMutex;
  {
    DefaultThreadPool pool(hardware_concurrency(options.threads));
    for (unsigned part = 0; part < parts; ++part)
      pool.async([&, part] {
        LLVMContext context;
        Error error = [&]() -> Error {
          Expected<std::unique_ptr<Module>> loaded =
              fromBitcode(bitcode[part], context);
          if (!loaded)
            return loaded.takeError();
          std::unique_ptr<TargetMachine> machine = makeTargetMachine();
          if (Error failed = mlir::makeOptimizingTransformer(
                  options.optLevel, /*sizeLevel=*/0,
                  machine.get())(loaded->get()))
            return failed;
          bitcode[part] = toBitcode(**loaded);
          return Error::success();
        }();
        if (error) {
          std::lock_guard<std::mutex> lock(errorsMutex);
          errors.push_back(std::move(error));
        }
      });
    pool.wait();
  }
  Error all = Error::success();
  for (Error &error : errors)
    all = joinErrors(std::move(all), std::move(error));
  if (all)
    return all;

  // The parts replace the module's contents.
  for (Function &function : module)
    function.dropAllReferences();
  for (GlobalVariable &variable : module.globals())
    variable.dropAllReferences();
  for (GlobalAlias &alias : make_early_inc_range(module.aliases()))
    alias.eraseFromParent();
  for (GlobalIFunc &ifunc : make_early_inc_range(module.ifuncs()))
    ifunc.eraseFromParent();
  for (Function &function : make_early_inc_range(module))
    function.eraseFromParent();
  for (GlobalVariable &variable : make_early_inc_range(module.globals()))
    variable.eraseFromParent();
  for (unsigned part = 0; part < parts; ++part) {
    Expected<std::unique_ptr<Module>> loaded =
        fromBitcode(bitcode[part], module.getContext());
    if (!loaded)
      return loaded.takeError();
    if (Linker::linkModules(module, std::move(*loaded)))
      return createStringError("linking the optimized parts failed");
  }
  for (const SavedLinkage &symbol : saved)
    if (GlobalValue *global = module.getNamedValue(symbol.name)) {
      global->setLinkage(symbol.linkage);
      global->setVisibility(symbol.visibility);
    }
  removeDeadGlobals(module);
  return Error::success();
}
