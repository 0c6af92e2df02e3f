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
    rewriter.modifyOpInPlace(op, [&] {
      op.setType(rewriter.getFunctionType(inputs.getConvertedTypes(), results));
    });
    return success();
  }
};
} // namespace

void lowering::populateStructuralTypeConversions(const TypeConverter &converter,
                                                 RewritePatternSet &patterns,
                                                 ConversionTarget &target) {
  patterns.add<SelectLowering, FuncSignatureLowering>(converter,
                                                      patterns.getContext());
  populateCallOpTypeConversionPattern(patterns, converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
  cf::populateCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                     target);
}
