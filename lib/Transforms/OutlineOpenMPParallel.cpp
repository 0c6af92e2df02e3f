//===- OutlineOpenMPParallel.cpp - One function per omp.parallel ----------===//
//
// Part of the spconv-mlir project.
//
// The translation to LLVM IR outlines each omp.parallel region with LLVM's
// CodeExtractor, whose analysis cache walks the whole enclosing function for
// every region: quadratic in a lowered network, one function with hundreds of
// regions. Moving each region into a function of its own first makes each
// walk one region long.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVOUTLINEOPENMPPARALLELPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;

namespace {

/// Values cloned into the outlined function rather than passed to it:
/// constants and addresses of globals, which the region must keep seeing as
/// such (loop bounds, vector widths, symbols).
bool isRematerializable(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         (def->hasTrait<OpTrait::ConstantLike>() ||
          isa<LLVM::AddressOfOp, LLVM::ZeroOp, LLVM::UndefOp, LLVM::PoisonOp>(
              def));
}

/// Moves `parallel`, the `index`th region of `parent`, into a new function
/// placed after `previous` (the function of the region before, or `parent`);
/// returns the new function.
LLVM::LLVMFuncOp outline(omp::ParallelOp parallel, LLVM::LLVMFuncOp parent,
                         unsigned index, Operation *previous,
                         SymbolTable &symbols) {
  llvm::SetVector<Value> used;
  for (Value operand : parallel->getOperands())
    used.insert(operand);
  getUsedValuesDefinedAbove(parallel->getRegions(), used);
  SmallVector<Value> passed, cloned;
  for (Value value : used)
    (isRematerializable(value) ? cloned : passed).push_back(value);

  MLIRContext *context = parallel.getContext();
  OpBuilder builder(context);
  builder.setInsertionPointAfter(previous);
  SmallVector<Type> types = llvm::to_vector(ValueRange(passed).getTypes());
  auto function = LLVM::LLVMFuncOp::create(
      builder, parallel.getLoc(),
      (parent.getName() + ".omp_parallel." + Twine(index)).str(),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), types),
      LLVM::Linkage::Internal);
  symbols.insert(function);
  Block *body = function.addEntryBlock(builder);

  IRMapping mapping;
  mapping.map(passed, body->getArguments());
  builder.setInsertionPointToStart(body);
  for (Value value : cloned)
    mapping.map(value,
                builder.clone(*value.getDefiningOp())
                    ->getResult(cast<OpResult>(value).getResultNumber()));
  builder.clone(*parallel, mapping);
  LLVM::ReturnOp::create(builder, parallel.getLoc(), ValueRange());

  builder.setInsertionPoint(parallel);
  LLVM::CallOp::create(builder, parallel.getLoc(), function, passed);
  parallel.erase();
  return function;
}

struct SpConvOutlineOpenMPParallelPass
    : spconv::impl::SpConvOutlineOpenMPParallelPassBase<
          SpConvOutlineOpenMPParallelPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<LLVM::LLVMFuncOp> functions(module.getOps<LLVM::LLVMFuncOp>());
    for (LLVM::LLVMFuncOp function : functions) {
      // The outermost regions only: a nested one moves with its parent.
      SmallVector<omp::ParallelOp> regions;
      function.walk([&](omp::ParallelOp parallel) {
        if (!parallel->getParentOfType<omp::ParallelOp>())
          regions.push_back(parallel);
      });
      Operation *previous = function;
      for (auto [index, parallel] : llvm::enumerate(regions))
        previous = outline(parallel, function, index, previous, symbols);
    }
  }
};

} // namespace
