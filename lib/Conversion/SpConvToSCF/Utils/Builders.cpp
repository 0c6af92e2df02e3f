//===- Builders.cpp - IR building helpers of the SpConv lowering ----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Utils/Builders.h"

#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

scf::ParallelOp lowering::markKernel(scf::ParallelOp loop, StringRef role) {
  loop->setAttr(kKernelRoleAttrName, StringAttr::get(loop.getContext(), role));
  return loop;
}

Value lowering::indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value lowering::i64Const(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
}

Value lowering::i32Const(OpBuilder &b, Location loc, int32_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

MemRefType lowering::getAnyLayoutMemRefType(RankedTensorType type) {
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, strides);
  return MemRefType::get(type.getShape(), type.getElementType(), layout);
}

Value lowering::toBuffer(OpBuilder &b, Location loc, Value tensor,
                         bool contiguous) {
  auto type = cast<RankedTensorType>(tensor.getType());
  MemRefType bufferType =
      contiguous ? MemRefType::get(type.getShape(), type.getElementType())
                 : getAnyLayoutMemRefType(type);
  return bufferization::ToBufferOp::create(b, loc, bufferType, tensor,
                                           /*read_only=*/true);
}

Value lowering::toTensor(OpBuilder &b, Location loc, Value buffer,
                         Type tensorType) {
  return bufferization::ToTensorOp::create(b, loc, tensorType, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

Value lowering::castTo(OpBuilder &b, Location loc, Value buffer, Type type) {
  if (buffer.getType() == type)
    return buffer;
  return memref::CastOp::create(b, loc, type, buffer);
}

Location lowering::bufferLoc(Location loc, StringRef what) {
  return NameLoc::get(StringAttr::get(loc.getContext(), what), loc);
}

Value lowering::alloc1d(OpBuilder &b, Location loc, Type elementType,
                        Value size) {
  auto type = MemRefType::get({ShapedType::kDynamic}, elementType);
  return memref::AllocOp::create(b, loc, type, ValueRange{size});
}

Value lowering::prefix(OpBuilder &b, Location loc, Value buffer, Value size) {
  auto type = cast<MemRefType>(buffer.getType());
  Value view = memref::SubViewOp::create(
      b, loc, buffer, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{size}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return castTo(b, loc, view,
                MemRefType::get({ShapedType::kDynamic}, type.getElementType()));
}

Value lowering::i64Array(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  auto type =
      MemRefType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
  Value array = memref::AllocaOp::create(b, loc, type);
  for (auto [i, value] : llvm::enumerate(values))
    memref::StoreOp::create(b, loc, i64Const(b, loc, value), array,
                            ValueRange{indexConst(b, loc, i)});
  return castTo(b, loc, array,
                MemRefType::get({ShapedType::kDynamic}, b.getI64Type()));
}

Value lowering::findFirst(
    OpBuilder &b, Location loc, Value begin, Value end,
    function_ref<Value(OpBuilder &, Location, Value)> holds) {
  Value none = indexConst(b, loc, -1);
  auto loop = scf::ForOp::create(
      b, loc, begin, end, indexConst(b, loc, 1), ValueRange{none},
      [&](OpBuilder &fb, Location floc, Value position, ValueRange found) {
        Value unseen =
            arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::slt, found[0],
                                  indexConst(fb, floc, 0));
        Value take =
            arith::AndIOp::create(fb, floc, unseen, holds(fb, floc, position));
        scf::YieldOp::create(fb, floc,
                             ValueRange{arith::SelectOp::create(
                                 fb, floc, take, position, found[0])});
      });
  return loop.getResult(0);
}

Value lowering::addOffset(OpBuilder &b, Location loc, Value first,
                          Value index) {
  return first ? arith::AddIOp::create(b, loc, first, index).getResult()
               : index;
}

Value lowering::groupFirstInput(OpBuilder &b, Location loc, Value co,
                                int64_t groups, Value channelsIn,
                                Value groupChannelsOut) {
  if (groups == 1)
    return Value();
  return arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, co, groupChannelsOut), channelsIn);
}

void lowering::forEachGroup(
    OpBuilder &b, Location loc, int64_t groups, Value channelsIn,
    Value channelsOut,
    function_ref<void(OpBuilder &, Location, Value, Value)> body) {
  scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, groups),
      indexConst(b, loc, 1), ValueRange{},
      [&](OpBuilder &gb, Location gloc, Value group, ValueRange) {
        Value firstIn = arith::MulIOp::create(gb, gloc, group, channelsIn);
        Value firstOut = arith::MulIOp::create(gb, gloc, group, channelsOut);
        body(gb, gloc, firstIn, firstOut);
        scf::YieldOp::create(gb, gloc);
      });
}

Value lowering::inRange(OpBuilder &b, Location loc, Value index, Value bound) {
  Value lower = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, index,
                                      indexConst(b, loc, 0));
  Value upper =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, bound);
  return arith::AndIOp::create(b, loc, lower, upper);
}

Value lowering::allOf(OpBuilder &b, Location loc, ArrayRef<Value> conditions) {
  Value all;
  for (Value condition : conditions) {
    if (!condition)
      continue;
    all = all ? arith::AndIOp::create(b, loc, all, condition).getResult()
              : condition;
  }
  return all;
}

void lowering::fillZeros(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    lbs.push_back(indexConst(b, loc, 0));
    ubs.push_back(memref::DimOp::create(b, loc, buffer, d));
    steps.push_back(indexConst(b, loc, 1));
  }
  // Sequential: an error path, which must not become a GPU kernel.
  scf::buildLoopNest(b, loc, lbs, ubs, steps,
                     [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
                       memref::StoreOp::create(nb, nloc, zero, buffer, ivs);
                     });
}

void lowering::ifElseZero(OpBuilder &b, Location loc, Value ok,
                          ValueRange zeroed,
                          function_ref<void(OpBuilder &, Location)> body) {
  if (!ok) {
    body(b, loc);
    return;
  }
  scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location tloc) {
        body(tb, tloc);
        scf::YieldOp::create(tb, tloc);
      },
      [&](OpBuilder &eb, Location eloc) {
        for (Value buffer : zeroed)
          fillZeros(eb, eloc, buffer);
        scf::YieldOp::create(eb, eloc);
      });
}

Value lowering::staticPrefix(OpBuilder &b, Location loc, Value buffer,
                             int64_t size) {
  auto type = cast<MemRefType>(buffer.getType());
  Value view = memref::SubViewOp::create(
      b, loc, buffer, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(size)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return castTo(b, loc, view, MemRefType::get({size}, type.getElementType()));
}

Value lowering::loadOrZero(OpBuilder &b, Location loc, Value inside,
                           Value buffer, ValueRange indices) {
  Type elementType = cast<MemRefType>(buffer.getType()).getElementType();
  auto value = scf::IfOp::create(
      b, loc, inside,
      [&](OpBuilder &tb, Location tloc) {
        scf::YieldOp::create(
            tb, tloc,
            ValueRange{memref::LoadOp::create(tb, tloc, buffer, indices)});
      },
      [&](OpBuilder &eb, Location eloc) {
        scf::YieldOp::create(eb, eloc,
                             ValueRange{arith::ConstantOp::create(
                                 eb, eloc, eb.getZeroAttr(elementType))});
      });
  return value.getResult(0);
}

Value lowering::convertScalar(OpBuilder &b, Location loc, Value value,
                              Type type) {
  Type from = value.getType();
  if (from == type)
    return value;
  if (isa<FloatType>(from) && isa<FloatType>(type)) {
    if (from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, type, value);
    return arith::TruncFOp::create(b, loc, type, value);
  }
  if (isa<IndexType>(from) || isa<IndexType>(type))
    return arith::IndexCastOp::create(b, loc, type, value);
  if (from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, type, value);
  return arith::TruncIOp::create(b, loc, type, value);
}

Value lowering::loadAs(OpBuilder &b, Location loc, Value memref,
                       ValueRange indices, Type type) {
  return convertScalar(b, loc, memref::LoadOp::create(b, loc, memref, indices),
                       type);
}

Type lowering::accumulatorType(Type elementType) {
  if (elementType.getIntOrFloatBitWidth() < 32)
    return Float32Type::get(elementType.getContext());
  return elementType;
}

void lowering::fillRows(
    OpBuilder &b, Location loc, Value buffer, Value rows, Value channels,
    function_ref<Value(OpBuilder &, Location, Value, Value)> init,
    StringRef role) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero, zero}, ValueRange{rows, channels},
                 ValueRange{one, one},
                 [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                   memref::StoreOp::create(
                       pb, ploc, init(pb, ploc, ivs[0], ivs[1]), buffer, ivs);
                 }),
             role);
}

Value lowering::allocRows(
    OpBuilder &b, Location loc, Value rows, Value channels, Type type,
    function_ref<Value(OpBuilder &, Location, Value, Value)> init,
    StringRef role) {
  auto bufferType =
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, type);
  Value buffer =
      memref::AllocOp::create(b, loc, bufferType, ValueRange{rows, channels});
  fillRows(b, loc, buffer, rows, channels, init, role);
  return buffer;
}
