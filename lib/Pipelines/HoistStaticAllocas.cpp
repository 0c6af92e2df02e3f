//===- HoistStaticAllocas.cpp - Stack slots in the entry block ------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Pipelines/HoistStaticAllocas.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

void mlir::spconv::hoistStaticAllocas(llvm::Module &module) {
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    llvm::BasicBlock &entry = function.getEntryBlock();
    llvm::BasicBlock::iterator insertAt = entry.getFirstInsertionPt();
    for (llvm::BasicBlock &block : llvm::drop_begin(function)) {
      if (!loops.getLoopFor(&block))
        continue; // Runs once a call: its allocation cannot pile up.
      for (llvm::Instruction &inst : llvm::make_early_inc_range(block)) {
        auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst);
        if (alloca && llvm::isa<llvm::ConstantInt>(alloca->getArraySize()))
          alloca->moveBefore(entry, insertAt);
      }
    }
  }
}
