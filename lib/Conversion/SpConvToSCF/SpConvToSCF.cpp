//===- SpConvToSCF.cpp - The convert-spconv-to-scf pass -------------------===//
//
// Part of the spconv-mlir project.
//
// A dialect conversion. `!spconv.rulebook` and `!spconv.hash_table` values
// become the buffers they are made of (a 1:N type conversion), so they flow
// through `scf.if` / `scf.for`, `arith.select`, `cf` branches and function
// arguments, results and calls by the upstream structural conversions. The
// op lowerings themselves live in the files beside this one.
//
//===----------------------------------------------------------------------===//

#include "SpConvToSCF.h"
#include "TileTable.h"
#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/StructuralTypeConversions.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringSwitch.h"

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
/// Rulebooks and hash tables become their buffers; every other type stays.
class SpConvTypeConverter : public TypeConverter {
public:
  SpConvTypeConverter() {
    addConversion([](Type type) { return type; });
    addConversion([](RulebookType type, SmallVectorImpl<Type> &results) {
      llvm::append_range(results, RulebookBuffers::getTypes(type));
      return success();
    });
    addConversion([](HashTableType type, SmallVectorImpl<Type> &results) {
      llvm::append_range(results,
                         HashTableBuffers::getTypes(type.getContext()));
      return success();
    });
  }
};

/// A pattern with access to the state shared by the op lowerings.
template <typename OpT>
class SpConvOpLowering : public OpConversionPattern<OpT> {
public:
  SpConvOpLowering(const TypeConverter &converter, LoweringContext &ctx)
      : OpConversionPattern<OpT>(converter, ctx.getModule().getContext()),
        ctx(ctx) {}

protected:
  LoweringContext &ctx;
};
} // namespace

/// A tensor operand as a buffer. Coordinates may have any layout (the
/// runtime and the builders read them with strides); everything else is
/// contiguous, which the runtime needs and which lets features and weights
/// be read with unit-stride vector loads.
static Value toOperandBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return toBuffer(b, loc, tensor, /*contiguous=*/!getGrid(type));
}

/// The single value an operand of a kept type converted to.
static Value single(ValueRange converted) {
  assert(converted.size() == 1 && "operand of a type that is kept");
  return converted.front();
}

/// Replaces `op`, whose results are all tensors, by `buffers` as tensors.
static void replaceWithTensors(ConversionPatternRewriter &rewriter,
                               Operation *op, ValueRange buffers) {
  SmallVector<Value> tensors;
  for (auto [result, buffer] : llvm::zip_equal(op->getResults(), buffers))
    tensors.push_back(
        toTensor(rewriter, op->getLoc(), buffer, result.getType()));
  rewriter.replaceOp(op, tensors);
}

namespace {
struct BuildRulebookLowering : SpConvOpLowering<BuildRulebookOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(BuildRulebookOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value coords = single(adaptor.getCoords());
    FailureOr<BuiltRulebook> built = lowerBuildRulebook(
        ctx, rewriter, op, toOperandBuffer(rewriter, loc, coords));
    if (failed(built))
      return failure();
    // Subm output sites are its input sites, in their order.
    Value outCoords = coords;
    if (built->outCoords) {
      auto type = op.getOutCoords().getType();
      outCoords = toTensor(
          rewriter, loc,
          castToChecked(ctx, rewriter, loc, built->outCoords,
                        MemRefType::get(type.getShape(), type.getElementType()),
                        SizeCheck::OutputSites),
          type);
    }
    rewriter.replaceOpWithMultiple(
        op, {built->rulebook.toValues(), SmallVector<Value>{outCoords}});
    return success();
  }
};

struct RulebookConvLowering : SpConvOpLowering<RulebookConvOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(RulebookConvOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value bias = op.getBias()
                     ? toOperandBuffer(rewriter, loc, single(adaptor.getBias()))
                     : Value();
    EpilogueBuffers epilogue;
    epilogue.body = op.getEpilogueBlock();
    // Contiguous rows whatever the operand (also coordinates), for the
    // vector loads.
    for (ValueRange operand : adaptor.getEpilogueOperands())
      epilogue.operands.push_back(
          toBuffer(rewriter, loc, single(operand), /*contiguous=*/true));
    RulebookBuffers rulebook =
        RulebookBuffers::fromValues(adaptor.getRulebook());
    Value destination =
        concatDestination(ctx, rewriter, loc, op,
                          op.getInverse() ? rulebook.numIn : rulebook.numOut);
    Value result = lowerRulebookConv(
        ctx, rewriter, op, rulebook,
        toOperandBuffer(rewriter, loc, single(adaptor.getFeatures())),
        toOperandBuffer(rewriter, loc, single(adaptor.getWeight())), bias,
        epilogue, destination);
    replaceWithTensors(rewriter, op, result);
    return success();
  }
};

/// A concatenation of features along their channels (Concat.cpp): the
/// operands that their convs did not write into its buffer are copied in.
struct ConcatLowering : SpConvOpLowering<tensor::ConcatOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(tensor::ConcatOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!lowersConcat(ctx, op))
      return failure();
    SmallVector<Value> operands;
    for (ValueRange operand : adaptor.getInputs())
      operands.push_back(toBuffer(rewriter, op.getLoc(), single(operand),
                                  /*contiguous=*/false));
    replaceWithTensors(rewriter, op, lowerConcat(ctx, rewriter, op, operands));
    return success();
  }
};

struct RulebookPoolLowering : SpConvOpLowering<RulebookPoolOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(RulebookPoolOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = lowerRulebookPool(
        ctx, rewriter, op, RulebookBuffers::fromValues(adaptor.getRulebook()),
        toOperandBuffer(rewriter, op.getLoc(), single(adaptor.getFeatures())));
    replaceWithTensors(rewriter, op, result);
    return success();
  }
};

/// The gradient ops: a rulebook, the forward's features and the gradient
/// of its result, lowered by `lower` to the result's buffer.
template <typename OpT> struct RulebookGradLowering : SpConvOpLowering<OpT> {
  using LowerFn = Value (*)(LoweringContext &, OpBuilder &, OpT,
                            const RulebookBuffers &, Value, Value);

  RulebookGradLowering(const TypeConverter &converter, LoweringContext &ctx,
                       LowerFn lower)
      : SpConvOpLowering<OpT>(converter, ctx), lower(lower) {}

  LogicalResult
  matchAndRewrite(OpT op,
                  typename OpConversionPattern<OpT>::OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value result = lower(
        this->ctx, rewriter, op,
        RulebookBuffers::fromValues(adaptor.getRulebook()),
        toOperandBuffer(rewriter, loc, single(adaptor.getFeatures())),
        toOperandBuffer(rewriter, loc, single(adaptor.getOutGrad())));
    replaceWithTensors(rewriter, op, result);
    return success();
  }

  LowerFn lower;
};

struct HashBuildLowering : SpConvOpLowering<HashBuildOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(HashBuildOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    HashTableBuffers table = lowerHashBuild(
        ctx, rewriter, op,
        toOperandBuffer(rewriter, op.getLoc(), single(adaptor.getKeys())));
    rewriter.replaceOpWithMultiple(op, {table.toValues()});
    return success();
  }
};

struct HashLookupLowering : SpConvOpLowering<HashLookupOp> {
  using SpConvOpLowering::SpConvOpLowering;

  LogicalResult
  matchAndRewrite(HashLookupOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value rows = lowerHashLookup(
        ctx, rewriter, op, HashTableBuffers::fromValues(adaptor.getTable()),
        toOperandBuffer(rewriter, op.getLoc(), single(adaptor.getQueries())));
    replaceWithTensors(rewriter, op, rows);
    return success();
  }
};

/// Ops whose operands and results are all tensors: the runtime primitives
/// and the dense ops.
template <typename OpT> struct TensorOpLowering : SpConvOpLowering<OpT> {
  using LowerFn = SmallVector<Value> (*)(LoweringContext &, OpBuilder &,
                                         Operation *, ArrayRef<Value>);

  TensorOpLowering(const TypeConverter &converter, LoweringContext &ctx,
                   LowerFn lower)
      : SpConvOpLowering<OpT>(converter, ctx), lower(lower) {}

  LogicalResult matchAndRewrite(
      OpT op,
      typename OpT::template GenericAdaptor<ArrayRef<ValueRange>> adaptor,
      ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> buffers;
    for (ValueRange operand : adaptor.getOperands())
      buffers.push_back(
          toOperandBuffer(rewriter, op.getLoc(), single(operand)));
    replaceWithTensors(rewriter, op, lower(this->ctx, rewriter, op, buffers));
    return success();
  }

private:
  LowerFn lower;
};

/// `arith.select` of rulebooks or tables selects each of their buffers.
struct SelectLowering : OpConversionPattern<arith::SelectOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::SelectOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> selected;
    for (auto [whenTrue, whenFalse] :
         llvm::zip_equal(adaptor.getTrueValue(), adaptor.getFalseValue()))
      selected.push_back(arith::SelectOp::create(rewriter, op.getLoc(),
                                                 single(adaptor.getCondition()),
                                                 whenTrue, whenFalse));
    rewriter.replaceOpWithMultiple(op, {selected});
    return success();
  }
};

/// Converts a function's signature and the arguments of all its blocks.
/// (Upstream's function signature pattern converts the entry block only,
/// leaving rulebooks passed between blocks by `cf` branches.)
struct FuncSignatureLowering : OpConversionPattern<func::FuncOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(func::FuncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FunctionType type = op.getFunctionType();
    TypeConverter::SignatureConversion inputs(type.getNumInputs());
    SmallVector<Type> results;
    if (failed(getTypeConverter()->convertSignatureArgs(type.getInputs(),
                                                        inputs)) ||
        failed(getTypeConverter()->convertTypes(type.getResults(), results)))
      return failure();
    if (!op.isExternal() && failed(rewriter.convertRegionTypes(
                                &op.getBody(), *getTypeConverter(), &inputs)))
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.setType(rewriter.getFunctionType(inputs.getConvertedTypes(), results));
    });
    return success();
  }
};

struct ConvertSpConvToSCFPass
    : spconv::impl::ConvertSpConvToSCFPassBase<ConvertSpConvToSCFPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerGPUBarrierEffects(registry);
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
  if (!isSupportedVectorBits(vectorBits))
    return module.emitError("convert-spconv-to-scf: vector-bits must be 128, "
                            "256 or 512, got ")
           << vectorBits.getValue();
  if (vectorRegisters < 4)
    return module.emitError("convert-spconv-to-scf: vector-registers must be "
                            "at least 4, got ")
           << vectorRegisters.getValue();
  if (maxUnrolledOffsets < 0)
    return module.emitError("convert-spconv-to-scf: max-unrolled-offsets "
                            "must be nonnegative, got ")
           << maxUnrolledOffsets.getValue();
  if (submSearch != "sorted" && submSearch != "hash")
    return module.emitError("convert-spconv-to-scf: subm-search must be "
                            "sorted or hash, got '")
           << submSearch.getValue() << "'";
  if (target != "cpu" && target != "gpu")
    return module.emitError(
               "convert-spconv-to-scf: target must be cpu or gpu, got '")
           << target.getValue() << "'";
  if (gpuConv != "implicit-gemm" && gpuConv != "gather-scatter")
    return module.emitError("convert-spconv-to-scf: gpu-conv must be "
                            "implicit-gemm or gather-scatter, got '")
           << gpuConv.getValue() << "'";
  if (gpuMatmul != "tensor-cores" && gpuMatmul != "tf32" && gpuMatmul != "fma")
    return module.emitError("convert-spconv-to-scf: gpu-matmul must be "
                            "tensor-cores, tf32 or fma, got '")
           << gpuMatmul.getValue() << "'";
  if (!gpuTiles.empty() && target != "gpu")
    return module.emitError("convert-spconv-to-scf: gpu-tiles needs "
                            "target=gpu (it tunes the GPU's implicit GEMM)");
  // The sorted merge walks pointers site after site: a CPU algorithm.
  if (target == "gpu" && submSearch != "hash")
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

  LoweringContext ctx(
      module, blockSize,
      submSearch == "hash" ? SubmSearch::Hash : SubmSearch::Sorted,
      target == "gpu" ? LoopTarget::GPU : LoopTarget::CPU, chunkBytes,
      VectorRegisters{vectorBits, vectorRegisters}, maxUnrolledOffsets,
      gpuConv == "gather-scatter" ? GPUConv::GatherScatter
                                  : GPUConv::ImplicitGemm,
      llvm::StringSwitch<GPUMatmul>(gpuMatmul)
          .Case("tf32", GPUMatmul::TF32)
          .Case("fma", GPUMatmul::FMA)
          .Default(GPUMatmul::TensorCores));
  // The tuned tiles, read and checked once per run.
  std::optional<GPUTileTable> tileTable;
  if (!gpuTiles.empty()) {
    std::string error;
    tileTable = GPUTileTable::load(gpuTiles, error);
    if (!tileTable) {
      module.emitError("convert-spconv-to-scf: gpu-tiles: ") << error;
      return signalPassFailure();
    }
    ctx.setTileTable(&*tileTable);
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
  patterns
      .add<BuildRulebookLowering, RulebookConvLowering, RulebookPoolLowering,
           HashBuildLowering, HashLookupLowering, ConcatLowering>(converter,
                                                                  ctx);
  patterns.add<RulebookGradLowering<RulebookWeightGradOp>>(
      converter, ctx, lowerRulebookWeightGrad);
  patterns.add<RulebookGradLowering<RulebookPoolGradOp>>(converter, ctx,
                                                         lowerRulebookPoolGrad);
  patterns.add<TensorOpLowering<LinearizeOp>, TensorOpLowering<DelinearizeOp>,
               TensorOpLowering<SortUniqueOp>, TensorOpLowering<GatherRowsOp>,
               TensorOpLowering<ScatterAddRowsOp>>(converter, ctx,
                                                   lowerPrimitive);
  patterns.add<TensorOpLowering<UnfoldOp>, TensorOpLowering<FoldOp>,
               TensorOpLowering<SegmentMaxOp>,
               TensorOpLowering<SegmentMaxGradOp>>(converter, ctx, lowerDense);
  patterns.add<SelectLowering, FuncSignatureLowering>(converter, context);
  populateCallOpTypeConversionPattern(patterns, converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       conversionTarget);
  cf::populateCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                     conversionTarget);

  if (failed(applyPartialConversion(module, conversionTarget,
                                    std::move(patterns))))
    return signalPassFailure();
  stripGridEncodings(module);
}
