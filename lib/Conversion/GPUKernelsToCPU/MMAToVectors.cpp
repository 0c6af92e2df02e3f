//===- MMAToVectors.cpp - Tensor-core tiles as per-thread vectors ---------===//
//
// Part of the spconv-mlir project.
//
// A !gpu.mma_matrix<MxN> is a warp-wide value whose elements real hardware
// spreads over the lanes in a layout the gpu dialect leaves opaque. The
// emulator gives every lane the whole tile, a vector<M*N> in row-major
// order, so only what the ops mean matters:
//
//  * subgroup_mma_load_matrix: element (r, c) is src[indices] + r * ld + c
//    (+ c * ld + r with `transpose`), ld being `leadDimension`;
//  * subgroup_mma_compute: C + A * B, products and sums in f32 (f16 inputs
//    multiply exactly in f32), k in increasing order, rounded once to C's
//    type at the end; f32 inputs are tf32 (NVVM's reading of f32 A and B
//    fragments): the tensor cores ignore their 13 low mantissa bits, so the
//    emulation clears them, and a kernel that wants rounding rounds first.
//    Lane l computes only the elements it stores (below); its other
//    elements keep C's values. Nothing reads them: a result is only ever a
//    C operand, stored, or combined element by element;
//  * subgroup_mma_store_matrix: lane l writes the elements e = l, l + 32,
//    ... of the tile, so each element is written once per warp, as on the
//    GPU, and the race detector sees one writer per element;
//  * subgroup_mma_constant_matrix and _elementwise: a splat and arith ops
//    on the vectors.
//
// A warp whose lanes pass different tiles or indices gets per-lane results
// here, where the GPU's behaviour is undefined.
//
//===----------------------------------------------------------------------===//

#include "KernelPhases.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::emulation;

namespace {

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

int64_t numElements(gpu::MMAMatrixType type) {
  return type.getShape()[0] * type.getShape()[1];
}

} // namespace

std::pair<Value, Value> emulation::flatView(OpBuilder &b, Location loc,
                                            Value memref, ValueRange indices,
                                            int64_t extent) {
  auto type = cast<MemRefType>(memref.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value position = metadata.getOffset();
  for (auto [index, stride] : llvm::zip_equal(indices, metadata.getStrides()))
    position = arith::AddIOp::create(
        b, loc, position, arith::MulIOp::create(b, loc, index, stride));
  Value size =
      arith::AddIOp::create(b, loc, position, indexConstant(b, loc, extent));
  auto viewType =
      MemRefType::get({ShapedType::kDynamic}, type.getElementType(),
                      MemRefLayoutAttrInterface{}, type.getMemorySpace());
  Value view = memref::ReinterpretCastOp::create(
      b, loc, viewType, metadata.getBaseBuffer(),
      OpFoldResult(b.getIndexAttr(0)), ArrayRef<OpFoldResult>{size},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return {view, position};
}

Value emulation::tensorCoreInput(OpBuilder &b, Location loc, Value x) {
  Type f32 = b.getF32Type();
  if (x.getType() != f32)
    return arith::ExtFOp::create(b, loc, f32, x);
  // A tf32 input: the 19 high bits of the f32.
  Type i32 = b.getI32Type();
  Value bits = arith::AndIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, i32, x),
      arith::ConstantOp::create(
          b, loc, b.getI32IntegerAttr(static_cast<int32_t>(0xffffe000u))));
  return arith::BitcastOp::create(b, loc, f32, bits);
}

namespace {

/// Position of tile element `e` (row-major over `cols` columns) relative to
/// its first element, with leading dimension `ld`.
Value tileOffset(OpBuilder &b, Location loc, Value e, int64_t cols, int64_t ld,
                 bool transpose) {
  Value c = indexConstant(b, loc, cols);
  Value row = arith::DivUIOp::create(b, loc, e, c);
  Value col = arith::RemUIOp::create(b, loc, e, c);
  Value lead = indexConstant(b, loc, ld);
  if (transpose)
    std::swap(row, col);
  return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, row, lead),
                               col);
}

/// `init` with its elements e = first, first + step, ... < numElements
/// replaced by `element(e, tile)`, in that order.
Value buildTile(
    OpBuilder &b, Location loc, Value init, int64_t numElements,
    function_ref<Value(OpBuilder &, Location, Value, Value)> element,
    Value first = {}, int64_t step = 1) {
  if (!first)
    first = indexConstant(b, loc, 0);
  auto loop = scf::ForOp::create(
      b, loc, first, indexConstant(b, loc, numElements),
      indexConstant(b, loc, step), ValueRange{init},
      [&](OpBuilder &lb, Location l, Value e, ValueRange tile) {
        Value value = element(lb, l, e, tile[0]);
        scf::YieldOp::create(lb, l,
                             ValueRange{vector::InsertOp::create(
                                 lb, l, value, tile[0], OpFoldResult(e))});
      });
  return loop.getResult(0);
}

int64_t tileExtent(int64_t rows, int64_t cols, int64_t ld, bool transpose) {
  return transpose ? (cols - 1) * ld + rows : (rows - 1) * ld + cols;
}

/// Where the elements of a tile that a subgroup_mma op loads or stores live:
/// element e (row-major) is at view[position(e)].
struct TileLayout {
  Value view, first;
  int64_t cols, ld;
  bool transpose;

  TileLayout(OpBuilder &b, Location loc, gpu::MMAMatrixType matrix,
             Value memref, ValueRange indices, const APInt &leadDimension,
             std::optional<bool> transposed)
      : cols(matrix.getShape()[1]), ld(leadDimension.getSExtValue()),
        transpose(transposed.value_or(false)) {
    std::tie(view, first) =
        flatView(b, loc, memref, indices,
                 tileExtent(matrix.getShape()[0], cols, ld, transpose));
  }

  Value position(OpBuilder &b, Location loc, Value e) const {
    return arith::AddIOp::create(b, loc, first,
                                 tileOffset(b, loc, e, cols, ld, transpose));
  }
};

struct LoadMatrix : OpConversionPattern<gpu::SubgroupMmaLoadMatrixOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::SubgroupMmaLoadMatrixOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto matrix = cast<gpu::MMAMatrixType>(op.getType());
    auto vectorType = cast<VectorType>(getTypeConverter()->convertType(matrix));
    TileLayout layout(rewriter, loc, matrix, adaptor.getSrcMemref(),
                      adaptor.getIndices(), op.getLeadDimension(),
                      op.getTranspose());
    Value zero = arith::ConstantOp::create(rewriter, loc, vectorType,
                                           rewriter.getZeroAttr(vectorType));
    Value tile = buildTile(
        rewriter, loc, zero, numElements(matrix),
        [&](OpBuilder &b, Location l, Value e, Value) -> Value {
          return memref::LoadOp::create(b, l, layout.view,
                                        ValueRange{layout.position(b, l, e)});
        });
    rewriter.replaceOp(op, tile);
    return success();
  }
};

struct StoreMatrix : OpConversionPattern<gpu::SubgroupMmaStoreMatrixOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::SubgroupMmaStoreMatrixOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto matrix = cast<gpu::MMAMatrixType>(op.getSrc().getType());
    TileLayout layout(rewriter, loc, matrix, adaptor.getDstMemref(),
                      adaptor.getIndices(), op.getLeadDimension(),
                      op.getTranspose());
    Value lane = gpu::LaneIdOp::create(rewriter, loc, IntegerAttr{});
    Value tile = adaptor.getSrc();
    scf::ForOp::create(
        rewriter, loc, lane, indexConstant(rewriter, loc, numElements(matrix)),
        indexConstant(rewriter, loc, emulation::kWarpSize), ValueRange{},
        [&](OpBuilder &b, Location l, Value e, ValueRange) {
          Value element =
              vector::ExtractOp::create(b, l, tile, OpFoldResult(e));
          memref::StoreOp::create(b, l, element, layout.view,
                                  ValueRange{layout.position(b, l, e)});
          scf::YieldOp::create(b, l);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

struct ComputeMatrix : OpConversionPattern<gpu::SubgroupMmaComputeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::SubgroupMmaComputeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto aType = cast<gpu::MMAMatrixType>(op.getOpA().getType());
    auto cType = cast<gpu::MMAMatrixType>(op.getOpC().getType());
    int64_t m = aType.getShape()[0], k = aType.getShape()[1];
    int64_t n = cType.getShape()[1];
    Type accumulator = rewriter.getF32Type();
    Type cElement = cType.getElementType();
    Value a = adaptor.getOpA(), bMatrix = adaptor.getOpB();
    auto extend = [&](OpBuilder &b, Location l, Value x) -> Value {
      if (x.getType() == accumulator)
        return x;
      return arith::ExtFOp::create(b, l, accumulator, x);
    };
    Value tile = buildTile(
        rewriter, loc, adaptor.getOpC(), m * n,
        [&](OpBuilder &b, Location l, Value e, Value result) -> Value {
          Value row = arith::DivUIOp::create(b, l, e, indexConstant(b, l, n));
          Value col = arith::RemUIOp::create(b, l, e, indexConstant(b, l, n));
          Value init = extend(
              b, l, vector::ExtractOp::create(b, l, result, OpFoldResult(e)));
          auto dot = scf::ForOp::create(
              b, l, indexConstant(b, l, 0), indexConstant(b, l, k),
              indexConstant(b, l, 1), ValueRange{init},
              [&](OpBuilder &ib, Location il, Value kk, ValueRange sum) {
                Value aAt = arith::AddIOp::create(
                    ib, il,
                    arith::MulIOp::create(ib, il, row,
                                          indexConstant(ib, il, k)),
                    kk);
                Value bAt = arith::AddIOp::create(
                    ib, il,
                    arith::MulIOp::create(ib, il, kk, indexConstant(ib, il, n)),
                    col);
                Value x = tensorCoreInput(
                    ib, il,
                    vector::ExtractOp::create(ib, il, a, OpFoldResult(aAt)));
                Value y =
                    tensorCoreInput(ib, il,
                                    vector::ExtractOp::create(
                                        ib, il, bMatrix, OpFoldResult(bAt)));
                Value product = arith::MulFOp::create(ib, il, x, y);
                scf::YieldOp::create(
                    ib, il,
                    ValueRange{arith::AddFOp::create(ib, il, sum[0], product)});
              });
          Value value = dot.getResult(0);
          if (cElement != accumulator)
            value = arith::TruncFOp::create(b, l, cElement, value);
          return value;
        },
        gpu::LaneIdOp::create(rewriter, loc, IntegerAttr{}),
        emulation::kWarpSize);
    rewriter.replaceOp(op, tile);
    return success();
  }
};

struct ConstantMatrix : OpConversionPattern<gpu::SubgroupMmaConstantMatrixOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::SubgroupMmaConstantMatrixOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, type,
                                                     adaptor.getValue());
    return success();
  }
};

struct ElementwiseMatrix : OpConversionPattern<gpu::SubgroupMmaElementwiseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::SubgroupMmaElementwiseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = getTypeConverter()->convertType(op.getType());
    ValueRange args = adaptor.getArgs();
    using Kind = gpu::MMAElementwiseOp;
    Value result;
    switch (op.getOpType()) {
    case Kind::ADDF:
      result = arith::AddFOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::MULF:
      result = arith::MulFOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::SUBF:
      result = arith::SubFOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::MAXF:
      result = arith::MaximumFOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::MINF:
      result = arith::MinimumFOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::DIVF:
      result = arith::DivFOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::ADDI:
      result = arith::AddIOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::MULI:
      result = arith::MulIOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::SUBI:
      result = arith::SubIOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::DIVS:
      result = arith::DivSIOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::DIVU:
      result = arith::DivUIOp::create(rewriter, loc, args[0], args[1]);
      break;
    case Kind::NEGATEF:
      result = arith::NegFOp::create(rewriter, loc, args[0]);
      break;
    case Kind::NEGATES:
      result = arith::SubIOp::create(
          rewriter, loc,
          arith::ConstantOp::create(rewriter, loc, type,
                                    rewriter.getZeroAttr(type)),
          args[0]);
      break;
    case Kind::EXTF:
      result = arith::ExtFOp::create(rewriter, loc, type, args[0]);
      break;
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// What the emulation models: f16 inputs with f16 or f32 accumulators, tf32
/// (f32) inputs with f32 ones (the tensor-core ops this project's kernels
/// use), and scalar memref elements.
LogicalResult checkEmulable(Operation *op, StringRef kernel) {
  auto fail = [&](const Twine &what) {
    return emitKernelError(op, kernel) << what;
  };
  if (auto compute = dyn_cast<gpu::SubgroupMmaComputeOp>(op)) {
    Type a =
        cast<gpu::MMAMatrixType>(compute.getOpA().getType()).getElementType();
    Type c =
        cast<gpu::MMAMatrixType>(compute.getOpC().getType()).getElementType();
    if (!a.isF16() && !a.isF32())
      return fail("only f16 and tf32 (f32) tensor-core inputs are emulated");
    if (!c.isF16() && !c.isF32())
      return fail("only f16 and f32 tensor-core accumulators are emulated");
    if (a.isF32() && !c.isF32())
      return fail("tf32 (f32) tensor-core inputs accumulate in f32 only");
  }
  for (Value operand : op->getOperands())
    if (auto memref = dyn_cast<MemRefType>(operand.getType()))
      if (isa<VectorType>(memref.getElementType()))
        return fail("tensor-core loads and stores of vector elements are not "
                    "emulated");
  return success();
}

} // namespace

LogicalResult emulation::lowerMMAOps(gpu::GPUFuncOp kernel) {
  bool any = false;
  WalkResult checked = kernel.walk([&](Operation *op) {
    if (!isa<gpu::SubgroupMmaLoadMatrixOp, gpu::SubgroupMmaStoreMatrixOp,
             gpu::SubgroupMmaComputeOp, gpu::SubgroupMmaConstantMatrixOp,
             gpu::SubgroupMmaElementwiseOp>(op))
      return WalkResult::advance();
    any = true;
    return failed(checkEmulable(op, kernel.getName())) ? WalkResult::interrupt()
                                                       : WalkResult::advance();
  });
  if (checked.wasInterrupted())
    return failure();
  if (!any)
    return success();
  MLIRContext *context = kernel.getContext();
  TypeConverter converter;
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([](gpu::MMAMatrixType type) -> Type {
    return VectorType::get({numElements(type)}, type.getElementType());
  });
  ConversionTarget target(*context);
  target
      .addIllegalOp<gpu::SubgroupMmaLoadMatrixOp, gpu::SubgroupMmaStoreMatrixOp,
                    gpu::SubgroupMmaComputeOp, gpu::SubgroupMmaConstantMatrixOp,
                    gpu::SubgroupMmaElementwiseOp>();
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  RewritePatternSet patterns(context);
  patterns.add<LoadMatrix, StoreMatrix, ComputeMatrix, ConstantMatrix,
               ElementwiseMatrix>(converter, context);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
  return applyPartialConversion(kernel, target, std::move(patterns));
}
