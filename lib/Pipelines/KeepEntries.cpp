//===- KeepEntries.cpp - Compile only the exported functions --------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Pipelines/KeepEntries.h"
#include "SpConv/IR/SpConvDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

void mlir::spconv::keepOnlyEntries(ModuleOp module,
                                   ArrayRef<std::string> entries) {
  SymbolTable symbols(module);
  // A backward is generated from the forward that names it
  // (spconv.backward): the forward is needed wherever the backward is,
  // though nothing refers to it.
  DenseMap<Operation *, SmallVector<Operation *>> forwardsOf;
  for (auto function : module.getOps<func::FuncOp>())
    if (auto backward = function->getAttrOfType<FlatSymbolRefAttr>(
            SpConvDialect::kBackwardAttrName))
      if (Operation *target = symbols.lookup(backward.getValue()))
        forwardsOf[target].push_back(function);

  auto isEntry = [&](func::FuncOp function) {
    return llvm::is_contained(entries, function.getSymName());
  };
  SetVector<Operation *> reached;
  for (auto function : module.getOps<func::FuncOp>())
    if (isEntry(function))
      reached.insert(function);
  for (size_t i = 0; i < reached.size(); ++i) {
    Operation *op = reached[i];
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(op))
      for (const SymbolTable::SymbolUse &use : *uses)
        if (Operation *symbol =
                symbols.lookup(use.getSymbolRef().getRootReference()))
          reached.insert(symbol);
    reached.insert_range(forwardsOf.lookup(op));
  }

  for (auto function :
       llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (!reached.contains(function))
      function.erase();
    else if (!isEntry(function) && !function.isExternal() &&
             !function->hasAttr(SpConvDialect::kBackwardAttrName))
      // Not exported: the inliner drops it once inlined. (A forward must
      // outlive the inliner: its backward is generated after it.)
      function.setPrivate();
  }
}
