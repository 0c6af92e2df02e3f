//===- Primitives.cpp - Keys, sort/unique, hash table, gather -------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConvToSCF.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

static MemRefType dynamic1d(Type elementType) {
  return MemRefType::get({ShapedType::kDynamic}, elementType);
}

static MemRefType anyLayoutCoords(MLIRContext *context) {
  return MemRefType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic},
      IntegerType::get(context, 32),
      StridedLayoutAttr::get(context, ShapedType::kDynamic,
                             {ShapedType::kDynamic, ShapedType::kDynamic}));
}

static int64_t batchSizeOf(GridAttr grid) {
  return effectiveBatchSize(grid, {*checkedProduct(grid.getShape())});
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b,
                                LinearizeOp op, ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  GridAttr grid = getGrid(op.getCoords().getType());
  Value n = memref::DimOp::create(b, loc, operands[0], 0);
  Value keys = alloc1d(b, loc, b.getI64Type(), n);
  callRuntime(ctx, b, loc, "spconv_rt_memref_linearize_coords",
              {castTo(b, loc, operands[0], anyLayoutCoords(b.getContext())),
               i64Array(b, loc, grid.getShape()),
               i64Const(b, loc, batchSizeOf(grid)), keys});
  return {keys};
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b,
                                DelinearizeOp op, ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  GridAttr grid = getGrid(op.getCoords().getType());
  Value n = memref::DimOp::create(b, loc, operands[0], 0);
  auto coordsType = MemRefType::get(
      {ShapedType::kDynamic, static_cast<int64_t>(grid.getRank()) + 1},
      b.getI32Type());
  Value coords = memref::AllocOp::create(b, loc, coordsType, ValueRange{n});
  callRuntime(ctx, b, loc, "spconv_rt_memref_delinearize_keys",
              {operands[0], i64Array(b, loc, grid.getShape()),
               i64Const(b, loc, batchSizeOf(grid)),
               castTo(b, loc, coords, anyLayoutCoords(b.getContext()))});
  return {coords};
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b,
                                SortUniqueOp op, ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value n = memref::DimOp::create(b, loc, operands[0], 0);
  Value unique = alloc1d(b, loc, i64, n);
  Value first = alloc1d(b, loc, i32, n);
  Value inverse = alloc1d(b, loc, i32, n);
  Value count = memref::AllocaOp::create(b, loc, MemRefType::get({1}, i64));
  Value ok = callRuntime(ctx, b, loc, "spconv_rt_memref_unique",
                         {operands[0], unique, first, inverse,
                          castTo(b, loc, count, dynamic1d(i64))});
  Value numUnique = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, count, ValueRange{indexConst(b, loc, 0)}));
  numUnique =
      arith::SelectOp::create(b, loc, ok, numUnique, indexConst(b, loc, 0));
  return {prefix(b, loc, unique, numUnique), prefix(b, loc, first, numUnique),
          inverse};
}

HashTableBuffers lowering::lowerHashBuild(LoweringContext &ctx, OpBuilder &b,
                                          HashBuildOp op, Value keys) {
  Location loc = op.getLoc();
  Type i64 = b.getI64Type();
  Value n = arith::IndexCastOp::create(b, loc, i64,
                                       memref::DimOp::create(b, loc, keys, 0));
  Value capacityBuffer =
      memref::AllocaOp::create(b, loc, MemRefType::get({1}, i64));
  callRuntime(ctx, b, loc, "spconv_rt_memref_hash_capacity",
              {n, castTo(b, loc, capacityBuffer, dynamic1d(i64))});
  Value capacity = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, capacityBuffer,
                             ValueRange{indexConst(b, loc, 0)}));
  HashTableBuffers table{alloc1d(b, loc, i64, capacity),
                         alloc1d(b, loc, b.getI32Type(), capacity)};
  Value duplicate = memref::AllocaOp::create(b, loc, MemRefType::get({1}, i64));
  callRuntime(ctx, b, loc, "spconv_rt_memref_hash_build",
              {keys, table.keys, table.values,
               castTo(b, loc, duplicate, dynamic1d(i64))});
  return table;
}

Value lowering::lowerHashLookup(LoweringContext &ctx, OpBuilder &b,
                                HashLookupOp op, const HashTableBuffers &table,
                                Value queries) {
  Location loc = op.getLoc();
  Value n = memref::DimOp::create(b, loc, queries, 0);
  Value rows = alloc1d(b, loc, b.getI32Type(), n);
  callRuntime(ctx, b, loc, "spconv_rt_memref_hash_lookup",
              {table.keys, table.values, queries, rows});
  return rows;
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b,
                                GatherRowsOp op, ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  Value features = operands[0], rows = operands[1];
  Type index = b.getIndexType();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value sourceRows = memref::DimOp::create(b, loc, features, 0);
  Value n = memref::DimOp::create(b, loc, rows, 0);
  Value channels = memref::DimOp::create(b, loc, features, 1);

  // Validate first: rows are -1 or in [0, sourceRows).
  Value firstBad = findFirst(
      b, loc, zero, n, [&](OpBuilder &fb, Location floc, Value i) -> Value {
        Value row = loadAs(fb, floc, rows, i, index);
        return arith::AndIOp::create(
            fb, floc,
            arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::ne, row,
                                  indexConst(fb, floc, -1)),
            arith::OrIOp::create(
                fb, floc,
                arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::slt, row,
                                      indexConst(fb, floc, -1)),
                arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::sge, row,
                                      sourceRows)));
      });
  Value found =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, firstBad, zero);
  scf::IfOp::create(b, loc, found, [&](OpBuilder &tb, Location tloc) {
    reportBadIndex(ctx, tb, tloc, firstBad,
                   loadAs(tb, tloc, rows, firstBad, index), sourceRows);
    scf::YieldOp::create(tb, tloc);
  });

  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  Type elementType = resultType.getElementType();
  auto bufferType = MemRefType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic}, elementType);
  Value result =
      memref::AllocOp::create(b, loc, bufferType, ValueRange{n, channels});
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero}, ValueRange{n, channels},
          ValueRange{one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value row = loadAs(pb, ploc, rows, ivs[0], index);
            Value inside = arith::AndIOp::create(
                pb, ploc,
                arith::CmpIOp::create(pb, ploc, arith::CmpIPredicate::sge, row,
                                      indexConst(pb, ploc, 0)),
                arith::CmpIOp::create(pb, ploc, arith::CmpIPredicate::slt, row,
                                      sourceRows));
            memref::StoreOp::create(
                pb, ploc,
                loadOrZero(pb, ploc, inside, features, ValueRange{row, ivs[1]}),
                result, ivs);
          }),
      "gather_rows");
  return {castTo(b, loc, result,
                 MemRefType::get(resultType.getShape(), elementType))};
}

SmallVector<Value> lowering::lowerPrimitive(LoweringContext &ctx, OpBuilder &b,
                                            Operation *op,
                                            ArrayRef<Value> operands) {
  return llvm::TypeSwitch<Operation *, SmallVector<Value>>(op)
      .Case<LinearizeOp, DelinearizeOp, SortUniqueOp, GatherRowsOp>(
          [&](auto typed) { return lower(ctx, b, typed, operands); });
}
