//===- Conv.cpp - What the forms of a rulebook conv share ----------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Compute/Conv.h"
#include "Compute/Compute.h"
#include "Utils/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

LogicalResult RulebookConvPattern::matchAndRewrite(
    RulebookConvOp op, OneToNOpAdaptor adaptor,
    ConversionPatternRewriter &rewriter) const {
  if (!appliesTo(op))
    return failure();
  Location loc = op.getLoc();
  ConvBuffers buffers;
  buffers.bias = op.getBias()
                     ? toOperandBuffer(rewriter, loc, single(adaptor.getBias()))
                     : Value();
  buffers.epilogue.body = op.getEpilogueBlock();
  // Contiguous rows whatever the operand (also coordinates), for the
  // vector loads.
  for (ValueRange operand : adaptor.getEpilogueOperands())
    buffers.epilogue.operands.push_back(
        toBuffer(rewriter, loc, single(operand), /*contiguous=*/true));
  buffers.rulebook = RulebookBuffers::fromValues(adaptor.getRulebook());
  buffers.destination = concatDestination(
      ctx, rewriter, loc, op,
      op.getInverse() ? buffers.rulebook.numIn : buffers.rulebook.numOut);
  buffers.weight = toOperandBuffer(rewriter, loc, single(adaptor.getWeight()));
  buffers.features =
      toOperandBuffer(rewriter, loc, single(adaptor.getFeatures()));
  replaceWithTensors(rewriter, op, lower(rewriter, op, buffers));
  return success();
}

ConvShape lowering::getConvShape(OpBuilder &b, RulebookConvOp op,
                                 const ConvBuffers &buffers) {
  Location loc = op.getLoc();
  ConvShape shape;
  shape.inverse = op.getInverse();
  shape.volume = op.getRulebook().getType().getGeometry().getKernelVolume();
  shape.elementType =
      cast<RankedTensorType>(op.getFeatures().getType()).getElementType();
  shape.accType = accumulatorType(shape.elementType);
  shape.rows = shape.inverse ? buffers.rulebook.numIn : buffers.rulebook.numOut;
  shape.channelsIn = memref::DimOp::create(b, loc, buffers.weight, 1);
  shape.channelsOut = memref::DimOp::create(b, loc, buffers.weight, 2);
  shape.groups = op.getGroups();
  shape.groupChannelsOut =
      shape.groups == 1
          ? shape.channelsOut
          : arith::DivUIOp::create(b, loc, shape.channelsOut,
                                   indexConst(b, loc, shape.groups))
                .getResult();
  shape.resultType = resultBufferType(op.getOutFeatures());
  return shape;
}

Value lowering::initialSum(OpBuilder &b, Location loc, Value bias, Value column,
                           Type type) {
  if (bias)
    return loadAs(b, loc, bias, column, type);
  return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
}

Value lowering::allocConvAccumulator(OpBuilder &b, Location loc,
                                     const ConvShape &shape,
                                     const ConvBuffers &buffers) {
  Type accType = shape.accType;
  auto initialValue = [&](OpBuilder &pb, Location ploc, Value, Value c) {
    return initialSum(pb, ploc, buffers.bias, c, accType);
  };
  // The sums accumulate in the destination where they have its type.
  if (buffers.destination && accType == shape.elementType) {
    fillRows(b, loc, buffers.destination, shape.rows, shape.channelsOut,
             initialValue);
    return buffers.destination;
  }
  return allocRows(b, bufferLoc(loc, "the output features of a convolution"),
                   shape.rows, shape.channelsOut, accType, initialValue);
}

/// Where a conv's rows end up: `destination` where given, else the
/// accumulator where it has the result's element type, else a new buffer.
static Value resultRows(OpBuilder &b, Location loc, Value acc, Value rows,
                        Value channels, Type elementType, Value destination) {
  if (destination)
    return destination;
  if (cast<MemRefType>(acc.getType()).getElementType() == elementType)
    return acc;
  return memref::AllocOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                      elementType),
      ValueRange{rows, channels});
}

Value lowering::finishRows(LoweringContext &ctx, OpBuilder &b, Location loc,
                           Value acc, Value rows, Value channels,
                           MemRefType resultType, SizeCheck what,
                           Value destination) {
  Type elementType = resultType.getElementType();
  Value result =
      resultRows(b, loc, acc, rows, channels, elementType, destination);
  if (result != acc)
    fillRows(b, loc, result, rows, channels,
             [&](OpBuilder &pb, Location ploc, Value r, Value c) {
               return loadAs(pb, ploc, acc, {r, c}, elementType);
             });
  if (destination)
    return destination;
  // A static result row count is checked against the rulebook's.
  return castToChecked(ctx, b, loc, result, resultType, what);
}

Value lowering::finishRowsWithEpilogue(LoweringContext &ctx, OpBuilder &b,
                                       Location loc, Value acc, Value rows,
                                       Value channels, MemRefType resultType,
                                       const EpilogueBuffers &epilogue,
                                       ArrayRef<int64_t> chunks,
                                       Value destination) {
  Type elementType = resultType.getElementType();
  auto accType = cast<MemRefType>(acc.getType());
  Value result =
      resultRows(b, loc, acc, rows, channels, elementType, destination);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  auto emitPass = [&](OpBuilder &pb, bool apply) {
    if (!chunks.empty()) {
      markKernel(
          scf::ParallelOp::create(
              pb, loc, ValueRange{zero}, ValueRange{rows}, ValueRange{one},
              [&](OpBuilder &rb, Location rloc, ValueRange ivs) {
                int64_t start = 0;
                for (int64_t width : chunks) {
                  auto accVector =
                      VectorType::get({width}, accType.getElementType());
                  auto vector = VectorType::get({width}, elementType);
                  Value column = indexConst(rb, rloc, start);
                  start += width;
                  Value value = vector::LoadOp::create(
                      rb, rloc, accVector, acc, ValueRange{ivs[0], column});
                  if (accVector != vector)
                    value = arith::TruncFOp::create(rb, rloc, vector, value);
                  if (apply)
                    value = applyEpilogue(rb, rloc, epilogue, value, ivs[0],
                                          column);
                  vector::StoreOp::create(rb, rloc, value, result,
                                          ValueRange{ivs[0], column});
                }
              }),
          "epilogue");
      return;
    }
    markKernel(scf::ParallelOp::create(
                   pb, loc, ValueRange{zero, zero}, ValueRange{rows, channels},
                   ValueRange{one, one},
                   [&](OpBuilder &rb, Location rloc, ValueRange ivs) {
                     Value value = loadAs(rb, rloc, acc, ivs, elementType);
                     if (apply)
                       value = applyEpilogue(rb, rloc, epilogue, value, ivs[0],
                                             ivs[1]);
                     memref::StoreOp::create(rb, rloc, value, result, ivs);
                   }),
               "epilogue");
  };
  Value ok = checkEpilogueOperands(ctx, b, loc, epilogue, rows, channels);
  auto guard = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/result != acc);
  OpBuilder tb(guard.thenBlock()->getTerminator(), b.getListener());
  emitPass(tb, /*apply=*/true);
  if (result != acc) {
    OpBuilder eb(guard.elseBlock()->getTerminator(), b.getListener());
    emitPass(eb, /*apply=*/false);
  }
  if (destination)
    return destination;
  return castToChecked(ctx, b, loc, result, resultType, SizeCheck::ConvRows);
}

OpBuilder lowering::guardFeatureRows(LoweringContext &ctx, OpBuilder &b,
                                     Location loc, Value features,
                                     Value expected, int64_t what) {
  Value ok = checkFeatureRows(ctx, b, loc, features, expected, what);
  auto guard = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
  return OpBuilder(guard.thenBlock()->getTerminator());
}

MemRefType lowering::resultBufferType(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return MemRefType::get(type.getShape(), type.getElementType());
}

void lowering::emitDotUpdate(OpBuilder &b, Location loc, Value acc, Value dst,
                             Value co, Value features, Value src, Value weight,
                             Value offset, Value channelsIn, Type accType,
                             Value firstIn) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value start = memref::LoadOp::create(b, loc, acc, ValueRange{dst, co});
  auto dot = scf::ForOp::create(
      b, loc, zero, channelsIn, one, ValueRange{start},
      [&](OpBuilder &db, Location dloc, Value ci, ValueRange sum) {
        Value x = loadAs(db, dloc, features,
                         {src, addOffset(db, dloc, firstIn, ci)}, accType);
        Value w = loadAs(db, dloc, weight, {offset, ci, co}, accType);
        Value product = arith::MulFOp::create(db, dloc, x, w);
        scf::YieldOp::create(
            db, dloc,
            ValueRange{arith::AddFOp::create(db, dloc, sum[0], product)});
      });
  memref::StoreOp::create(b, loc, dot.getResult(0), acc, ValueRange{dst, co});
}

std::string lowering::computeRole(StringRef what, Type elementType,
                                  MemRefType weightType, int64_t groups) {
  std::string role;
  llvm::raw_string_ostream os(role);
  os << what << "_" << elementType << "_";
  auto dim = [&](int64_t i) {
    if (weightType.isDynamicDim(i))
      os << "dyn";
    else
      os << weightType.getDimSize(i);
  };
  dim(1);
  os << "x";
  dim(2);
  if (groups != 1)
    os << "_g" << groups;
  return role;
}
