//===- NullBufferToLLVM.cpp - spconv.null_buffer as a descriptor of nulls -===//
//
// Part of the spconv-mlir project.
//
// What code skipped after a failed allocation yields for a buffer: a
// descriptor that points nowhere. Freeing it frees nothing.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Conversion/Passes.h"
#include "SpConv/IR/SpConvOps.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_CONVERTSPCONVNULLBUFFERSTOLLVMPASS
#include "SpConv/Conversion/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

struct NullBufferToLLVM : ConvertOpToLLVMPattern<NullBufferOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(NullBufferOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(op.getBuffer().getType());
    Type descriptorType = getTypeConverter()->convertType(type);
    if (!descriptorType)
      return rewriter.notifyMatchFailure(op, "memref type not convertible");
    Location loc = op.getLoc();
    auto [strides, offset] = type.getStridesAndOffset();
    MemRefDescriptor descriptor =
        MemRefDescriptor::poison(rewriter, loc, descriptorType);
    Value null = LLVM::ZeroOp::create(rewriter, loc,
                                      descriptor.getElementPtrType());
    descriptor.setAllocatedPtr(rewriter, loc, null);
    descriptor.setAlignedPtr(rewriter, loc, null);
    auto staticOrZero = [](int64_t value) {
      return ShapedType::isDynamic(value) ? 0 : static_cast<uint64_t>(value);
    };
    descriptor.setConstantOffset(rewriter, loc, staticOrZero(offset));
    for (auto [dim, size] : llvm::enumerate(type.getShape())) {
      descriptor.setConstantSize(rewriter, loc, dim, staticOrZero(size));
      descriptor.setConstantStride(rewriter, loc, dim,
                                   staticOrZero(strides[dim]));
    }
    rewriter.replaceOp(op, {descriptor});
    return success();
  }
};

struct ConvertSpConvNullBuffersToLLVMPass
    : spconv::impl::ConvertSpConvNullBuffersToLLVMPassBase<
          ConvertSpConvNullBuffersToLLVMPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    LLVMTypeConverter converter(context);
    RewritePatternSet patterns(context);
    patterns.add<NullBufferToLLVM>(converter);
    ConversionTarget target(*context);
    target.addIllegalOp<NullBufferOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    // The lowering has read the kernels' source-line arguments; the
    // translation to LLVM IR knows no spconv attribute (and warns).
    getOperation().walk([](FunctionOpInterface function) {
      for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
        function.removeArgAttr(i, SpConvDialect::kSourceLineAttrName);
    });
  }
};

} // namespace
