//===- Pass.cpp - The convert-spconv-to-scf pass --------------------------===//
//
// Part of the spconv-mlir project.
//
// A dialect conversion (TypeConversion.h): checks the options and what the
// conversion cannot take, then applies the pattern set of each folder:
// Rulebook/, Compute/ and Primitives/, which every target shares, the forms
// of the conv and its weight gradient of the target (Compute/'s CPU loops,
// or GPU/'s per-pair and tiled kernels), and the structural type
// conversions. docs/Compiler.md opens with a map of the folders.
//
//===----------------------------------------------------------------------===//

#include "Compute/Compute.h"
#include "GPU/GPU.h"
#include "GPU/TileTable.h"
#include "Primitives/Primitives.h"
#include "Rulebook/Rulebook.h"
#include "SpConv/Conversion/Passes.h"
#include "SpConv/Support/CPUUnitOptions.h"
#include "TypeConversion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

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
    // Functions typed otherwise (llvm.func) hold no tensors.
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (auto type = function
                        ? dyn_cast<FunctionType>(function.getFunctionType())
                        : FunctionType()) {
      SmallVector<Type> inputs =
          llvm::map_to_vector(type.getInputs(), stripGrid);
      SmallVector<Type> results =
          llvm::map_to_vector(type.getResults(), stripGrid);
      function.setType(FunctionType::get(op->getContext(), inputs, results));
    }
  });
}

namespace {
struct ConvertSpConvToSCFPass
    : spconv::impl::ConvertSpConvToSCFPassBase<ConvertSpConvToSCFPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerGPUSyncEffects(registry);
  }

  void runOnOperation() override;

private:
  LogicalResult checkOptions();
};
} // namespace

LogicalResult ConvertSpConvToSCFPass::checkOptions() {
  ModuleOp module = getOperation();
  if (chunkBytes < 1)
    return module.emitError("convert-spconv-to-scf: chunk-bytes must be "
                            "positive, got ")
           << chunkBytes.getValue();
  if (blockSize < 1)
    return module.emitError(
               "convert-spconv-to-scf: block-size must be positive, got ")
           << blockSize.getValue();
  std::string units =
      checkCPUUnitOptions(vectorBits, vectorRegisters, fmaPipes, fmaLatency);
  if (!units.empty())
    return module.emitError("convert-spconv-to-scf: ") << units;
  if (maxUnrolledOffsets < 0)
    return module.emitError("convert-spconv-to-scf: max-unrolled-offsets "
                            "must be nonnegative, got ")
           << maxUnrolledOffsets.getValue();
  // The enum options' values were checked by their parsers.
  if (!gpuTiles.empty() && target != LoopTarget::GPU)
    return module.emitError("convert-spconv-to-scf: gpu-tiles needs "
                            "target=gpu (it tunes the GPU's implicit GEMM)");
  // The sorted merge walks pointers site after site: a CPU algorithm.
  if (target == LoopTarget::GPU && submSearch != SubmSearch::Hash)
    return module.emitError("convert-spconv-to-scf: target=gpu needs "
                            "subm-search=hash (the sorted merge is sequential "
                            "within a block of sites)");
  return success();
}

void ConvertSpConvToSCFPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(checkOptions()))
    return signalPassFailure();

  // The high-level ops have no lowering of their own: say what to run
  // instead of reporting them as merely illegal.
  WalkResult undecomposed = module.walk([](Operation *op) {
    if (!isa<ConvOp, InverseConvOp, PoolOp>(op))
      return WalkResult::advance();
    op->emitOpError("must be decomposed first (run spconv-decompose)");
    return WalkResult::interrupt();
  });
  if (undecomposed.wasInterrupted())
    return signalPassFailure();

  // Rulebooks and tables become several buffers, which only the structural
  // conversions below know how to pass on.
  SpConvTypeConverter converter;
  WalkResult foreignUser = module.walk([&](Operation *op) {
    Dialect *dialect = op->getDialect();
    if (converter.isLegal(op) ||
        isa<func::CallOp, func::ReturnOp, arith::SelectOp>(op) ||
        isa_and_nonnull<SpConvDialect, scf::SCFDialect, cf::ControlFlowDialect>(
            dialect))
      return WalkResult::advance();
    op->emitOpError("takes or yields a rulebook or hash table, which the "
                    "lowering turns into buffers; such values may only pass "
                    "through scf and cf control flow, func calls and returns "
                    "and arith.select");
    return WalkResult::interrupt();
  });
  if (foreignUser.wasInterrupted())
    return signalPassFailure();

  ConvertSpConvToSCFPassOptions options;
  options.blockSize = blockSize;
  options.submSearch = submSearch;
  options.target = target;
  options.chunkBytes = chunkBytes;
  options.vectorBits = vectorBits;
  options.vectorRegisters = vectorRegisters;
  options.fmaPipes = fmaPipes;
  options.fmaLatency = fmaLatency;
  options.maxUnrolledOffsets = maxUnrolledOffsets;
  options.gpuConv = gpuConv;
  options.gpuMatmul = gpuMatmul;
  options.gpuMmaOps = gpuMmaOps;
  options.gpuTiles = gpuTiles;
  MachineTraits machine;
  machine.deviceBuffers = target == LoopTarget::GPU;
  machine.prefetchProbes = target == LoopTarget::CPU;
  LoweringContext ctx(module, options, machine);
  // The tuned tiles, read and checked once per run.
  std::optional<GPUTileTable> tileTable;
  if (!gpuTiles.empty()) {
    std::string error;
    tileTable = GPUTileTable::load(gpuTiles, error);
    if (!tileTable) {
      module.emitError("convert-spconv-to-scf: gpu-tiles: ") << error;
      return signalPassFailure();
    }
  }
  planConcatDestinations(ctx);
  MLIRContext *context = &getContext();

  ConversionTarget conversionTarget(*context);
  conversionTarget.addIllegalDialect<SpConvDialect>();
  conversionTarget.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
    return converter.isSignatureLegal(op.getFunctionType()) &&
           converter.isLegal(&op.getBody());
  });
  // Any other op is legal once no rulebook or table flows through it; one
  // that no pattern below converts is reported as illegal.
  conversionTarget.markUnknownOpDynamicallyLegal(
      [&](Operation *op) { return converter.isLegal(op); });
  // Concatenations of features are ConcatLowering's (their operands'
  // rows checked); the others bufferize as usual.
  conversionTarget.addDynamicallyLegalOp<tensor::ConcatOp>(
      [&](tensor::ConcatOp op) { return !lowersConcat(ctx, op); });

  RewritePatternSet patterns(context);
  populateRulebookPatterns(converter, ctx, patterns);
  populateComputePatterns(converter, ctx, patterns);
  populatePrimitivePatterns(converter, ctx, patterns);
  // The forms of the conv and its weight gradient are the target's: on the
  // GPU the tiled kernels where they apply, the per-pair ones elsewhere.
  switch (target) {
  case LoopTarget::CPU:
    populateCPUConvPatterns(converter, ctx, patterns);
    break;
  case LoopTarget::GPU:
    populateGPUPairPatterns(converter, ctx, patterns);
    if (gpuConv == GPUConv::ImplicitGemm)
      populateGPUTiledPatterns(
          converter, ctx,
          {gpuMatmul, gpuMmaOps, tileTable ? &*tileTable : nullptr}, patterns,
          /*benefit=*/2);
    break;
  }
  populateStructuralTypeConversions(converter, patterns, conversionTarget);

  if (failed(applyPartialConversion(module, conversionTarget,
                                    std::move(patterns))))
    return signalPassFailure();
  stripGridEncodings(module);
}
