//===- Primitives.cpp - Keys, sort/unique, hash table, gather -------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Primitives/Primitives.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

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

/// The static extent `dim` of a tensor value (or ShapedType::kDynamic).
static int64_t staticDim(Value tensor, unsigned dim) {
  return cast<RankedTensorType>(tensor.getType()).getDimSize(dim);
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b,
                                LinearizeOp op, ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  GridAttr grid = getGrid(op.getCoords().getType());
  Value n = memref::DimOp::create(b, loc, operands[0], 0);
  // One key per row; a static key count that the rows contradict is
  // reported and the keys are left zero.
  int64_t staticKeys = staticDim(op.getKeys(), 0);
  Value ok = checkStaticSize(ctx, b, loc, staticDim(op.getCoords(), 0), n,
                             staticKeys, SizeCheck::LinearizeKeys);
  auto keysType = MemRefType::get({staticKeys}, b.getI64Type());
  Value keys = ShapedType::isDynamic(staticKeys)
                   ? memref::AllocOp::create(b, loc, keysType, ValueRange{n})
                   : memref::AllocOp::create(b, loc, keysType);
  ifElseZero(b, loc, ok, keys, [&](OpBuilder &tb, Location tloc) {
    callRuntime(
        ctx, tb, tloc, "spconv_rt_memref_linearize_coords",
        {castTo(tb, tloc, operands[0], anyLayoutCoords(tb.getContext())),
         i64Array(tb, tloc, grid.getShape()),
         i64Const(tb, tloc, batchSizeOf(grid)),
         castTo(tb, tloc, keys, dynamic1d(tb.getI64Type()))});
  });
  return {keys};
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b,
                                DelinearizeOp op, ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  GridAttr grid = getGrid(op.getCoords().getType());
  Value n = memref::DimOp::create(b, loc, operands[0], 0);
  // One row per key; a static row count that the keys contradict is
  // reported and the coordinates are left zero.
  int64_t staticRows = staticDim(op.getCoords(), 0);
  Value ok = checkStaticSize(ctx, b, loc, staticDim(op.getKeys(), 0), n,
                             staticRows, SizeCheck::DelinearizeRows);
  auto coordsType = MemRefType::get(
      {staticRows, static_cast<int64_t>(grid.getRank()) + 1}, b.getI32Type());
  Value coords =
      ShapedType::isDynamic(staticRows)
          ? memref::AllocOp::create(b, loc, coordsType, ValueRange{n})
          : memref::AllocOp::create(b, loc, coordsType);
  ifElseZero(b, loc, ok, coords, [&](OpBuilder &tb, Location tloc) {
    callRuntime(ctx, tb, tloc, "spconv_rt_memref_delinearize_keys",
                {castTo(tb, tloc, operands[0], dynamic1d(tb.getI64Type())),
                 i64Array(tb, tloc, grid.getShape()),
                 i64Const(tb, tloc, batchSizeOf(grid)),
                 castTo(tb, tloc, coords, anyLayoutCoords(tb.getContext()))});
  });
  return {coords};
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b,
                                SortUniqueOp op, ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value keys = castTo(b, loc, operands[0], dynamic1d(i64));
  Value n = memref::DimOp::create(b, loc, keys, 0);
  // The verifier compared the sizes static on both sides; the number of
  // unique keys is only known after the sort.
  // Unique keys and first occurrences have one count; either may state it
  // (the verifier compared them where both do).
  int64_t staticUnique = staticDim(op.getUnique(), 0);
  if (ShapedType::isDynamic(staticUnique))
    staticUnique = staticDim(op.getFirst(), 0);
  int64_t staticInverse = staticDim(op.getInverse(), 0);
  Value keysOk = checkStaticSize(ctx, b, loc, staticDim(op.getKeys(), 0), n,
                                 staticInverse, SizeCheck::SortUniqueInverse);
  // The runtime writes up to n of each; the static results view their
  // static sizes. Both must lie inside the buffers, also on a mismatch.
  Value capacity = n;
  for (int64_t size : {staticUnique, staticInverse})
    if (!ShapedType::isDynamic(size))
      capacity =
          arith::MaxUIOp::create(b, loc, capacity, indexConst(b, loc, size));
  Value unique = alloc1d(b, loc, i64, capacity);
  Value first = alloc1d(b, loc, i32, capacity);
  Value inverse = alloc1d(b, loc, i32, capacity);
  Value count = memref::AllocaOp::create(b, loc, MemRefType::get({1}, i64));
  auto sort = [&](OpBuilder &sb, Location sloc) {
    return callRuntime(ctx, sb, sloc, "spconv_rt_memref_unique",
                       {keys, unique, first, inverse,
                        castTo(sb, sloc, count, dynamic1d(i64))});
  };
  Value ok;
  if (keysOk) {
    ok = scf::IfOp::create(
             b, loc, keysOk,
             [&](OpBuilder &tb, Location tloc) {
               scf::YieldOp::create(tb, tloc, ValueRange{sort(tb, tloc)});
             },
             [&](OpBuilder &eb, Location eloc) {
               scf::YieldOp::create(eb, eloc,
                                    ValueRange{arith::ConstantOp::create(
                                        eb, eloc, eb.getBoolAttr(false))});
             })
             .getResult(0);
  } else {
    ok = sort(b, loc);
  }
  Value numUnique = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, count, ValueRange{indexConst(b, loc, 0)}));
  numUnique =
      arith::SelectOp::create(b, loc, ok, numUnique, indexConst(b, loc, 0));

  if (ShapedType::isDynamic(staticUnique) &&
      ShapedType::isDynamic(staticInverse))
    return {prefix(b, loc, unique, numUnique), prefix(b, loc, first, numUnique),
            inverse};

  // Static sizes: the count must be the static one (checked after a sort
  // that succeeded; a failed one has reported its error). Any failure
  // leaves the results zero.
  Value allOk = ok;
  if (!ShapedType::isDynamic(staticUnique))
    allOk = checkSizeIf(ctx, b, loc, ok, numUnique,
                        indexConst(b, loc, staticUnique),
                        SizeCheck::SortUniqueCount);
  Value failed = arith::XOrIOp::create(
      b, loc, allOk, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  scf::IfOp::create(b, loc, failed, [&](OpBuilder &tb, Location tloc) {
    for (Value buffer : {unique, first, inverse})
      fillZeros(tb, tloc, buffer);
    scf::YieldOp::create(tb, tloc);
  });
  auto view = [&](Value buffer, int64_t staticSize, Value size) {
    return ShapedType::isDynamic(staticSize)
               ? prefix(b, loc, buffer, size)
               : staticPrefix(b, loc, buffer, staticSize);
  };
  return {view(unique, staticDim(op.getUnique(), 0), numUnique),
          view(first, staticDim(op.getFirst(), 0), numUnique),
          view(inverse, staticDim(op.getInverse(), 0), n)};
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
  // One row per query; a static row count that the queries contradict is
  // reported and the rows are left zero.
  int64_t staticRows = staticDim(op.getRows(), 0);
  Value ok = checkStaticSize(ctx, b, loc, staticDim(op.getQueries(), 0), n,
                             staticRows, SizeCheck::HashLookupRows);
  auto rowsType = MemRefType::get({staticRows}, b.getI32Type());
  Value rows = ShapedType::isDynamic(staticRows)
                   ? memref::AllocOp::create(b, loc, rowsType, ValueRange{n})
                   : memref::AllocOp::create(b, loc, rowsType);
  ifElseZero(b, loc, ok, rows, [&](OpBuilder &tb, Location tloc) {
    callRuntime(ctx, tb, tloc, "spconv_rt_memref_hash_lookup",
                {table.keys, table.values,
                 castTo(tb, tloc, queries, dynamic1d(tb.getI64Type())),
                 castTo(tb, tloc, rows, dynamic1d(tb.getI32Type()))});
  });
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

  // The result has one row per index and the features' channels; where its
  // type makes either static and the operands leave it to run time, a
  // mismatch is reported and the result left zero.
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  Type elementType = resultType.getElementType();
  Value sizesOk = allOf(
      b, loc,
      {checkStaticSize(ctx, b, loc, staticDim(op.getRows(), 0), n,
                       resultType.getDimSize(0), SizeCheck::GatherRows),
       checkStaticSize(ctx, b, loc, staticDim(op.getFeatures(), 1), channels,
                       resultType.getDimSize(1), SizeCheck::GatherChannels)});
  SmallVector<Value> dynamicSizes;
  if (resultType.isDynamicDim(0))
    dynamicSizes.push_back(n);
  if (resultType.isDynamicDim(1))
    dynamicSizes.push_back(channels);
  Value result = memref::AllocOp::create(
      b, loc, MemRefType::get(resultType.getShape(), elementType),
      dynamicSizes);

  ifElseZero(b, loc, sizesOk, result, [&](OpBuilder &gb, Location gloc) {
    // Validate first: rows are -1 or in [0, sourceRows).
    reportFirstBadIndex(ctx, gb, gloc, n, sourceRows,
                        [&](OpBuilder &ib, Location iloc, Value i) {
                          return loadAs(ib, iloc, rows, i, index);
                        });

    markKernel(
        scf::ParallelOp::create(
            gb, gloc, ValueRange{zero, zero}, ValueRange{n, channels},
            ValueRange{one, one},
            [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
              Value row = loadAs(pb, ploc, rows, ivs[0], index);
              Value inside = arith::AndIOp::create(
                  pb, ploc,
                  arith::CmpIOp::create(pb, ploc, arith::CmpIPredicate::sge,
                                        row, indexConst(pb, ploc, 0)),
                  arith::CmpIOp::create(pb, ploc, arith::CmpIPredicate::slt,
                                        row, sourceRows));
              memref::StoreOp::create(pb, ploc,
                                      loadOrZero(pb, ploc, inside, features,
                                                 ValueRange{row, ivs[1]}),
                                      result, ivs);
            }),
        "gather_rows");
  });
  return {result};
}

/// Whether two extents agree, checked at run time (and reported as `what`)
/// where either is dynamic; null when both are static (the verifier compared
/// them).
static Value checkExtents(LoweringContext &ctx, OpBuilder &b, Location loc,
                          Value lhs, int64_t staticLhs, Value rhs,
                          int64_t staticRhs, SizeCheck what) {
  if (!ShapedType::isDynamic(staticLhs) && !ShapedType::isDynamic(staticRhs))
    return Value();
  return checkSize(ctx, b, loc, lhs, rhs, what);
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b,
                                ScatterAddRowsOp op, ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  Value source = operands[0], rows = operands[1], dest = operands[2];
  Type index = b.getIndexType();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value destRows = memref::DimOp::create(b, loc, dest, 0);
  Value channels = memref::DimOp::create(b, loc, dest, 1);
  Value n = memref::DimOp::create(b, loc, rows, 0);

  // The result starts as a copy of the destination.
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  SmallVector<Value> dynamicSizes;
  if (resultType.isDynamicDim(0))
    dynamicSizes.push_back(destRows);
  if (resultType.isDynamicDim(1))
    dynamicSizes.push_back(channels);
  Value result = memref::AllocOp::create(
      b, loc,
      MemRefType::get(resultType.getShape(), resultType.getElementType()),
      dynamicSizes);
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero, zero}, ValueRange{destRows, channels},
                 ValueRange{one, one},
                 [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                   memref::StoreOp::create(
                       pb, ploc, memref::LoadOp::create(pb, ploc, dest, ivs),
                       result, ivs);
                 }),
             "copy_rows");

  // A source of the wrong size is reported and not read.
  Value ok = allOf(
      b, loc,
      {checkExtents(ctx, b, loc, n, staticDim(op.getRows(), 0),
                    memref::DimOp::create(b, loc, source, 0),
                    staticDim(op.getSource(), 0), SizeCheck::ScatterRows),
       checkExtents(ctx, b, loc, channels, staticDim(op.getDest(), 1),
                    memref::DimOp::create(b, loc, source, 1),
                    staticDim(op.getSource(), 1), SizeCheck::ScatterRows)});
  OpBuilder body = b;
  if (ok) {
    auto guard = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
    body = OpBuilder(guard.thenBlock()->getTerminator());
  }
  // Rows other than -1 outside the destination are reported and skipped.
  reportFirstBadIndex(ctx, body, loc, n, destRows,
                      [&](OpBuilder &ib, Location iloc, Value i) {
                        return loadAs(ib, iloc, rows, i, index);
                      });
  // One thread per channel adds the rows in index order: repeated indices
  // need no atomics and sum in a fixed order.
  markKernel(
      scf::ParallelOp::create(
          body, loc, ValueRange{zero}, ValueRange{channels}, ValueRange{one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value c = ivs[0];
            scf::ForOp::create(
                pb, ploc, zero, n, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value i, ValueRange) {
                  Value row = loadAs(fb, floc, rows, i, index);
                  Value inside = inRange(fb, floc, row, destRows);
                  scf::IfOp::create(
                      fb, floc, inside, [&](OpBuilder &tb, Location tloc) {
                        Value old = memref::LoadOp::create(tb, tloc, result,
                                                           ValueRange{row, c});
                        Value added = memref::LoadOp::create(tb, tloc, source,
                                                             ValueRange{i, c});
                        Value sum = arith::AddFOp::create(tb, tloc, old, added);
                        memref::StoreOp::create(tb, tloc, sum, result,
                                                ValueRange{row, c});
                        scf::YieldOp::create(tb, tloc);
                      });
                  scf::YieldOp::create(fb, floc);
                });
          }),
      "scatter_add_rows");
  return {result};
}

SmallVector<Value> lowering::lowerPrimitive(LoweringContext &ctx, OpBuilder &b,
                                            Operation *op,
                                            ArrayRef<Value> operands) {
  return llvm::TypeSwitch<Operation *, SmallVector<Value>>(op)
      .Case<LinearizeOp, DelinearizeOp, SortUniqueOp, GatherRowsOp,
            ScatterAddRowsOp>(
          [&](auto typed) { return lower(ctx, b, typed, operands); });
}
