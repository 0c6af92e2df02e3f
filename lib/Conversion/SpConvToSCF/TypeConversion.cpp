//===- TypeConversion.cpp - The 1:N type conversion -----------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "TypeConversion.h"
#include "Utils/Builders.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/Transforms/StructuralTypeConversions.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

SpConvTypeConverter::SpConvTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RulebookType type, SmallVectorImpl<Type> &results) {
    llvm::append_range(results, RulebookBuffers::getTypes(type));
    return success();
  });
  addConversion([](HashTableType type, SmallVectorImpl<Type> &results) {
    llvm::append_range(results, HashTableBuffers::getTypes(type.getContext()));
    return success();
  });
}

Value lowering::toOperandBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return toBuffer(b, loc, tensor, /*contiguous=*/!getGrid(type));
}

Value lowering::single(ValueRange converted) {
  assert(converted.size() == 1 && "operand of a type that is kept");
  return converted.front();
}

void lowering::replaceWithTensors(ConversionPatternRewriter &rewriter,
                                  Operation *op, ValueRange buffers) {
  SmallVector<Value> tensors;
  for (auto [result, buffer] : llvm::zip_equal(op->getResults(), buffers))
    tensors.push_back(
        toTensor(rewriter, op->getLoc(), buffer, result.getType()));
  rewriter.replaceOp(op, tensors);
}

namespace {
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
    // Each argument's attributes (a kernel's spconv.source_line) go to the
    // first of the values it becomes.
    SmallVector<Attribute> argAttrs;
    if (ArrayAttr old = op.getAllArgAttrs()) {
      argAttrs.assign(inputs.getConvertedTypes().size(),
                      rewriter.getDictionaryAttr({}));
      for (unsigned i = 0, e = type.getNumInputs(); i < e; ++i)
        if (auto mapping = inputs.getInputMapping(i);
            mapping && mapping->size > 0)
          argAttrs[mapping->inputNo] = old[i];
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.setType(rewriter.getFunctionType(inputs.getConvertedTypes(), results));
      if (!argAttrs.empty())
        op.setAllArgAttrs(argAttrs);
    });
    return success();
  }
};

/// Converts a call's operands and results (a rulebook is several values),
/// keeping what the call says beyond them: `no_inline` (a kernel's call,
/// spconv-outline-kernels) and its attributes. (Upstream's call pattern
/// makes a bare call.)
struct CallLowering : OpConversionPattern<func::CallOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(func::CallOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> resultTypes;
    SmallVector<size_t> resultCounts;
    for (Type type : op.getResultTypes()) {
      size_t before = resultTypes.size();
      if (failed(getTypeConverter()->convertType(type, resultTypes)))
        return failure();
      resultCounts.push_back(resultTypes.size() - before);
    }
    SmallVector<Value> operands;
    for (ValueRange values : adaptor.getOperands())
      llvm::append_range(operands, values);
    auto call = func::CallOp::create(rewriter, op.getLoc(), op.getCallee(),
                                     resultTypes, operands);
    call.setNoInline(op.getNoInline());
    call->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    SmallVector<ValueRange> replacements;
    size_t next = 0;
    for (size_t count : resultCounts) {
      replacements.push_back(call.getResults().slice(next, count));
      next += count;
    }
    rewriter.replaceOpWithMultiple(op, replacements);
    return success();
  }
};
} // namespace

void lowering::populateStructuralTypeConversions(const TypeConverter &converter,
                                                 RewritePatternSet &patterns,
                                                 ConversionTarget &target) {
  patterns.add<SelectLowering, FuncSignatureLowering, CallLowering>(
      converter, patterns.getContext());
  populateReturnOpTypeConversionPattern(patterns, converter);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
  cf::populateCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                     target);
}
