//===- BufferizeKernelCalls.cpp - Kernel calls on buffers -----------------===//
//
// Part of the spconv-mlir project.
//
// A module whose kernels (spconv-outline-kernels) are compiled on their own
// holds them as declarations. One-Shot Bufferize cannot see into a
// declaration: each call's results may alias each of its operands, and on
// a training step's hundreds of calls that conservative answer made the
// analysis take seconds. What a kernel does is known, though: it only
// reads its tensor operands (`bufferization.access = "read"`), and every
// result is a buffer its caller owns (the deallocation pipeline of the
// kernel's own lowering clones a result that would alias an argument). So
// the calls are given buffers before the analysis runs, and their results
// enter tensor land as fresh, restricted tensors.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SourceLines.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVBUFFERIZEKERNELCALLSPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// The buffer a kernel's tensor argument or result is at its boundary: the
/// identity layout, as One-Shot Bufferize's `IdentityLayoutMap` function
/// boundaries give the kernel compiled on its own.
Type boundaryType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  return type;
}

/// Gives `kernel` (a declaration) its bufferized signature; false if it
/// has a tensor type that has no such buffer (unranked).
bool bufferizeSignature(func::FuncOp kernel) {
  FunctionType type = kernel.getFunctionType();
  auto isUnranked = [](Type t) { return isa<UnrankedTensorType>(t); };
  if (llvm::any_of(type.getInputs(), isUnranked) ||
      llvm::any_of(type.getResults(), isUnranked))
    return false;
  SmallVector<Type> inputs =
      llvm::map_to_vector(type.getInputs(), boundaryType);
  SmallVector<Type> results =
      llvm::map_to_vector(type.getResults(), boundaryType);
  kernel.setFunctionType(
      FunctionType::get(kernel.getContext(), inputs, results));
  // Read-only is now the to_buffer ops' word, not the argument's.
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
    kernel.removeArgAttr(
        i, bufferization::BufferizationDialect::kBufferAccessAttrName);
  return true;
}

void bufferizeCall(func::CallOp call, func::FuncOp kernel) {
  OpBuilder b(call);
  Location loc = call.getLoc();
  SmallVector<Value> operands;
  for (Value operand : call.getOperands()) {
    auto tensor = dyn_cast<RankedTensorType>(operand.getType());
    operands.push_back(
        tensor ? bufferization::ToBufferOp::create(
                     b, loc, cast<MemRefType>(boundaryType(tensor)), operand,
                     /*read_only=*/true)
                     .getResult()
               : operand);
  }
  auto bufferized = func::CallOp::create(b, loc, kernel, operands);
  bufferized.setNoInline(call.getNoInline());
  bufferized->setDiscardableAttrs(call->getDiscardableAttrDictionary());
  SmallVector<Value> results;
  for (auto [old, result] :
       llvm::zip_equal(call.getResults(), bufferized.getResults())) {
    if (!isa<RankedTensorType>(old.getType())) {
      results.push_back(result);
      continue;
    }
    results.push_back(bufferization::ToTensorOp::create(
        b, loc, old.getType(), result, /*restrict=*/true, /*writable=*/true));
  }
  call.replaceAllUsesWith(results);
  call.erase();
}

struct BufferizeKernelCallsPass
    : spconv::impl::SpConvBufferizeKernelCallsPassBase<
          BufferizeKernelCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    DenseMap<func::FuncOp, bool> bufferized;
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls) {
      auto kernel = symbols.lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!kernel || !kernel.isExternal() || !takesSourceLine(kernel))
        continue;
      auto [it, inserted] = bufferized.try_emplace(kernel, false);
      if (inserted)
        it->second = bufferizeSignature(kernel);
      if (it->second)
        bufferizeCall(call, kernel);
    }
  }
};

} // namespace
