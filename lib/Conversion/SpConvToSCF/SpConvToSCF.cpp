//===- SpConvToSCF.cpp - The convert-spconv-to-scf pass -------------------===//
//
// Part of the spconv-mlir project.
//
// Rulebooks and hash tables are aggregates of several buffers that never
// leave a function, so the driver lowers ops in program order and keeps the
// buffers of each rulebook / table value in a map, instead of converting
// their types 1:N.
//
//===----------------------------------------------------------------------===//

#include "SpConvToSCF.h"
#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_CONVERTSPCONVTOSCFPASS
#include "SpConv/Conversion/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

/// `type` without a `#spconv.grid` encoding.
static Type stripGrid(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType || !isa_and_nonnull<GridAttr>(tensorType.getEncoding()))
    return type;
  return RankedTensorType::get(tensorType.getShape(),
                               tensorType.getElementType());
}

/// Once no spconv op is left, the grid encodings have served their purpose
/// (verification and specialisation); bufferization expects plain tensors.
static void stripGridEncodings(ModuleOp module) {
  module.walk([](Operation *op) {
    for (Value result : op->getResults())
      result.setType(stripGrid(result.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          argument.setType(stripGrid(argument.getType()));
    if (auto function = dyn_cast<FunctionOpInterface>(op)) {
      auto type = cast<FunctionType>(function.getFunctionType());
      SmallVector<Type> inputs =
          llvm::map_to_vector(type.getInputs(), stripGrid);
      SmallVector<Type> results =
          llvm::map_to_vector(type.getResults(), stripGrid);
      function.setType(FunctionType::get(op->getContext(), inputs, results));
    }
  });
}

static bool isSpConvType(Type type) {
  return isa<RulebookType, HashTableType>(type);
}

namespace {
struct ConvertSpConvToSCFPass
    : spconv::impl::ConvertSpConvToSCFPassBase<ConvertSpConvToSCFPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult lowerOp(LoweringContext &ctx, OpBuilder &b, Operation *op);
};
} // namespace

LogicalResult ConvertSpConvToSCFPass::lowerOp(LoweringContext &ctx,
                                              OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  if (isa<ConvOp, InverseConvOp, PoolOp>(op))
    return op->emitOpError("must be decomposed first (run spconv-decompose)");

  // Tensor operands as buffers. Coordinates may have any layout (the
  // runtime and the builders read them with strides); everything else is
  // contiguous, which the runtime needs and which lets features and weights
  // be read with unit-stride vector loads.
  SmallVector<Value> buffers;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    buffers.push_back(type ? toBuffer(b, loc, operand, !getGrid(type))
                           : Value());
  }
  auto replaceTensors = [&](ValueRange newBuffers) {
    unsigned next = 0;
    for (Value result : op->getResults()) {
      if (!isa<RankedTensorType>(result.getType()))
        continue;
      result.replaceAllUsesWith(
          toTensor(b, loc, newBuffers[next++], result.getType()));
    }
  };

  if (auto build = dyn_cast<BuildRulebookOp>(op)) {
    FailureOr<RulebookBuffers> rulebook =
        lowerBuildRulebook(ctx, b, build, buffers[0]);
    if (failed(rulebook))
      return failure();
    ctx.rulebooks[build.getRulebook()] = *rulebook;
    if (build.getRulebook().getType().getGeometry().getKind() == ConvKind::Subm)
      build.getOutCoords().replaceAllUsesWith(build.getCoords());
    else
      replaceTensors(rulebook->outCoords);
    return success();
  }
  if (auto conv = dyn_cast<RulebookConvOp>(op)) {
    Value result = lowerRulebookConv(
        ctx, b, conv, ctx.rulebooks.at(conv.getRulebook()), buffers[1],
        buffers[2], conv.getBias() ? buffers[3] : Value());
    replaceTensors(result);
    return success();
  }
  if (auto pool = dyn_cast<RulebookPoolOp>(op)) {
    replaceTensors(lowerRulebookPool(
        ctx, b, pool, ctx.rulebooks.at(pool.getRulebook()), buffers[1]));
    return success();
  }
  if (isa<UnfoldOp, FoldOp, SegmentMaxOp>(op)) {
    replaceTensors(lowerDense(ctx, b, op, buffers));
    return success();
  }
  replaceTensors(lowerPrimitive(ctx, b, op, buffers));
  return success();
}

void ConvertSpConvToSCFPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (chunkBytes < 1) {
    module.emitError("convert-spconv-to-scf: chunk-bytes must be positive, "
                     "got ")
        << chunkBytes.getValue();
    return signalPassFailure();
  }
  if (blockSize < 1) {
    module.emitError("convert-spconv-to-scf: block-size must be positive, got ")
        << blockSize.getValue();
    return signalPassFailure();
  }
  if (submSearch != "sorted" && submSearch != "hash") {
    module.emitError("convert-spconv-to-scf: subm-search must be sorted or "
                     "hash, got '")
        << submSearch.getValue() << "'";
    return signalPassFailure();
  }

  if (target != "cpu" && target != "gpu") {
    module.emitError("convert-spconv-to-scf: target must be cpu or gpu, got '")
        << target.getValue() << "'";
    return signalPassFailure();
  }
  // The sorted merge walks pointers site after site: a CPU algorithm.
  if (target == "gpu" && submSearch != "hash") {
    module.emitError("convert-spconv-to-scf: target=gpu needs "
                     "subm-search=hash (the sorted merge is sequential "
                     "within a block of sites)");
    return signalPassFailure();
  }

  // Rulebooks and tables are lowered to buffers local to one function.
  bool crossesBoundary = false;
  module.walk([&](FunctionOpInterface function) {
    auto type = cast<FunctionType>(function.getFunctionType());
    if (llvm::any_of(type.getInputs(), isSpConvType) ||
        llvm::any_of(type.getResults(), isSpConvType)) {
      function.emitError("rulebooks and hash tables cannot be passed across "
                         "function boundaries; build them where they are "
                         "used");
      crossesBoundary = true;
    }
  });
  if (crossesBoundary)
    return signalPassFailure();

  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<SpConvDialect>(op->getDialect()))
      ops.push_back(op);
  });
  LoweringContext ctx(
      module, blockSize,
      submSearch == "hash" ? SubmSearch::Hash : SubmSearch::Sorted,
      target == "gpu" ? LoopTarget::GPU : LoopTarget::CPU, chunkBytes);
  for (Operation *op : ops) {
    OpBuilder b(op);
    if (failed(lowerOp(ctx, b, op)))
      return signalPassFailure();
  }
  // Users first: rulebooks and tables are read until their last user.
  for (Operation *op : llvm::reverse(ops)) {
    op->dropAllUses();
    op->erase();
  }
  stripGridEncodings(module);
}
