//===- Patterns.cpp - Primitive and dense op patterns ---------------------===//
//
// Part of the spconv-mlir project.
//
// Hash tables, the runtime primitives and the dense ops: tensors in,
// buffers to the lowering, tensors out.
//
//===----------------------------------------------------------------------===//

#include "Primitives/Primitives.h"
#include "TypeConversion.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

namespace {
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
} // namespace

void lowering::populatePrimitivePatterns(const TypeConverter &converter,
                                         LoweringContext &ctx,
                                         RewritePatternSet &patterns) {
  patterns.add<HashBuildLowering, HashLookupLowering>(converter, ctx);
  patterns.add<TensorOpLowering<LinearizeOp>, TensorOpLowering<DelinearizeOp>,
               TensorOpLowering<SortUniqueOp>, TensorOpLowering<GatherRowsOp>,
               TensorOpLowering<ScatterAddRowsOp>>(converter, ctx,
                                                   lowerPrimitive);
  patterns
      .add<TensorOpLowering<UnfoldOp>, TensorOpLowering<FoldOp>,
           TensorOpLowering<SegmentMaxOp>, TensorOpLowering<SegmentMaxGradOp>>(
          converter, ctx, lowerDense);
}
