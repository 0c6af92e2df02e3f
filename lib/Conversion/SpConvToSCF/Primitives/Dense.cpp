//===- Dense.cpp - Unfold, fold and segment max ---------------------------===//
//
// Part of the spconv-mlir project.
//
// All three are written as gathers (each result element reads what it
// needs), so their parallel loops have no write conflicts and every sum runs
// in a fixed order.
//
//===----------------------------------------------------------------------===//

#include "Primitives/Primitives.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

#include "SpConv/IR/SourceLines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

/// Splits `linear` (index) into row-major coordinates over `extents`.
static SmallVector<Value> unravel(OpBuilder &b, Location loc, Value linear,
                                  ArrayRef<Value> extents) {
  SmallVector<Value> coords(extents.size());
  for (int d = extents.size() - 1; d >= 0; --d) {
    coords[d] = arith::RemUIOp::create(b, loc, linear, extents[d]);
    linear = arith::DivUIOp::create(b, loc, linear, extents[d]);
  }
  return coords;
}

/// Window positions per dimension, `(I + 2p - d(k-1) - 1) / s + 1`, for the
/// spatial extents `spatial` (verified nonempty when static).
static SmallVector<Value> windowPositions(OpBuilder &b, Location loc,
                                          GeometryAttr g,
                                          ArrayRef<Value> spatial) {
  SmallVector<Value> positions;
  for (unsigned d = 0; d < g.getRank(); ++d) {
    int64_t shrink =
        2 * g.getPadding()[d] - g.getDilation()[d] * (g.getKernel()[d] - 1) - 1;
    Value num =
        arith::AddIOp::create(b, loc, spatial[d], indexConst(b, loc, shrink));
    // A dynamic extent too small for the window gives no positions.
    num = arith::MaxSIOp::create(b, loc, num, indexConst(b, loc, -1));
    Value blocks = arith::AddIOp::create(
        b, loc,
        arith::FloorDivSIOp::create(b, loc, num,
                                    indexConst(b, loc, g.getStride()[d])),
        indexConst(b, loc, 1));
    positions.push_back(blocks);
  }
  return positions;
}

static SmallVector<Value> dims(OpBuilder &b, Location loc, Value buffer,
                               unsigned from) {
  SmallVector<Value> result;
  for (unsigned d = from, e = cast<MemRefType>(buffer.getType()).getRank();
       d < e; ++d)
    result.push_back(memref::DimOp::create(b, loc, buffer, d));
  return result;
}

static Value allocLike(OpBuilder &b, Location loc, Value tensor,
                       ArrayRef<Value> sizes) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> dynamicSizes;
  for (auto [d, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(size);
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()),
      dynamicSizes);
}

/// Checks that the window fits every dynamic spatial extent of unfold's
/// input (the verifier checks the static ones): extent + 2p >= d(k-1) + 1,
/// reporting the first dimension where it does not. Null when all extents
/// are static.
static Value checkWindowFits(LoweringContext &ctx, OpBuilder &b, Location loc,
                             GeometryAttr g, RankedTensorType inputType,
                             ArrayRef<Value> spatial) {
  Value ok;
  for (unsigned d = 0; d < g.getRank(); ++d) {
    if (!inputType.isDynamicDim(2 + d))
      continue;
    int64_t padding = g.getPadding()[d];
    int64_t kernelExtent = g.getDilation()[d] * (g.getKernel()[d] - 1) + 1;
    Value fits = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge,
        arith::AddIOp::create(b, loc, spatial[d],
                              indexConst(b, loc, 2 * padding)),
        indexConst(b, loc, kernelExtent));
    // Report only the first dimension that fails.
    Value report =
        ok ? arith::AndIOp::create(
                 b, loc, ok,
                 arith::XOrIOp::create(
                     b, loc, fits,
                     arith::ConstantOp::create(b, loc, b.getBoolAttr(true))))
                 .getResult()
           : arith::XOrIOp::create(
                 b, loc, fits,
                 arith::ConstantOp::create(b, loc, b.getBoolAttr(true)))
                 .getResult();
    scf::IfOp::create(b, loc, report, [&](OpBuilder &tb, Location tloc) {
      SmallVector<Value> arguments;
      for (int64_t value :
           {static_cast<int64_t>(d), int64_t(0), padding, kernelExtent})
        arguments.push_back(i64Const(tb, tloc, value));
      arguments.push_back(sourceLineValue(tb, loc, ctx.getModule()));
      arguments[1] =
          arith::IndexCastOp::create(tb, tloc, tb.getI64Type(), spatial[d]);
      callRuntime(ctx, tb, tloc, "spconv_rt_report_empty_window", arguments);
      scf::YieldOp::create(tb, tloc);
    });
    ok = ok ? arith::AndIOp::create(b, loc, ok, fits).getResult() : fits;
  }
  return ok;
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b, UnfoldOp op,
                                ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  GeometryAttr g = op.getGeometry();
  Value input = operands[0];
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  auto resultType = cast<RankedTensorType>(op.getOutput().getType());
  SmallVector<Value> spatial = dims(b, loc, input, 2);
  SmallVector<Value> blocks = windowPositions(b, loc, g, spatial);
  SmallVector<Value> kernel;
  for (int64_t k : g.getKernel())
    kernel.push_back(indexConst(b, loc, k));
  Value volume = indexConst(b, loc, g.getKernelVolume());
  Value batch = memref::DimOp::create(b, loc, input, 0);
  Value rows = arith::MulIOp::create(
      b, loc, memref::DimOp::create(b, loc, input, 1), volume);
  Value columns = indexConst(b, loc, 1);
  for (Value extent : blocks)
    columns = arith::MulIOp::create(b, loc, columns, extent);

  // What the types leave to run time: the window must fit every spatial
  // extent (PyTorch rejects an unfold without window positions), and the
  // result's static sizes must be the computed ones. Any failure is
  // reported and leaves the result zero.
  Value windowOk = checkWindowFits(ctx, b, loc, g, inputType, spatial);
  Value ok =
      allOf(b, loc,
            {windowOk,
             checkStaticSize(ctx, b, loc, inputType.getDimSize(0), batch,
                             resultType.getDimSize(0), SizeCheck::UnfoldBatch),
             checkStaticSize(ctx, b, loc, inputType.getDimSize(1), rows,
                             resultType.getDimSize(1), SizeCheck::UnfoldRows)});
  if (windowOk && !resultType.isDynamicDim(2))
    ok = allOf(b, loc,
               {ok, checkSizeIf(ctx, b, loc, windowOk, columns,
                                indexConst(b, loc, resultType.getDimSize(2)),
                                SizeCheck::UnfoldColumns)});
  Value result = allocLike(b, loc, op.getOutput(), {batch, rows, columns});

  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  ifElseZero(b, loc, ok, result, [&](OpBuilder &b, Location loc) {
    markKernel(
        scf::ParallelOp::create(
            b, loc, ValueRange{zero, zero, zero},
            ValueRange{batch, rows, columns}, ValueRange{one, one, one},
            [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
              // Row c * K + j, column = window position.
              Value channel = arith::DivUIOp::create(pb, ploc, ivs[1], volume);
              SmallVector<Value> j = unravel(
                  pb, ploc, arith::RemUIOp::create(pb, ploc, ivs[1], volume),
                  kernel);
              SmallVector<Value> block = unravel(pb, ploc, ivs[2], blocks);
              Value inside =
                  arith::ConstantOp::create(pb, ploc, pb.getBoolAttr(true));
              SmallVector<Value> indices = {ivs[0], channel};
              for (unsigned d = 0; d < g.getRank(); ++d) {
                // x = block * s - p + j * dilation
                Value x = arith::AddIOp::create(
                    pb, ploc,
                    arith::MulIOp::create(
                        pb, ploc, block[d],
                        indexConst(pb, ploc, g.getStride()[d])),
                    arith::MulIOp::create(
                        pb, ploc, j[d],
                        indexConst(pb, ploc, g.getDilation()[d])));
                x = arith::SubIOp::create(
                    pb, ploc, x, indexConst(pb, ploc, g.getPadding()[d]));
                inside = arith::AndIOp::create(
                    pb, ploc, inside,
                    arith::AndIOp::create(
                        pb, ploc,
                        arith::CmpIOp::create(pb, ploc,
                                              arith::CmpIPredicate::sge, x,
                                              indexConst(pb, ploc, 0)),
                        arith::CmpIOp::create(pb, ploc,
                                              arith::CmpIPredicate::slt, x,
                                              spatial[d])));
                indices.push_back(x);
              }
              memref::StoreOp::create(
                  pb, ploc, loadOrZero(pb, ploc, inside, input, indices),
                  result, ivs);
            }),
        "unfold");
  });
  return {result};
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b, FoldOp op,
                                ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  GeometryAttr g = op.getGeometry();
  Value input = operands[0];
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  auto resultType = cast<RankedTensorType>(op.getOutput().getType());
  Type elementType = resultType.getElementType();
  Type accType = accumulatorType(elementType);
  // The output size is static (verified, with its window positions).
  SmallVector<Value> spatial;
  for (int64_t extent : resultType.getShape().drop_front(2))
    spatial.push_back(indexConst(b, loc, extent));
  SmallVector<Value> blocks = windowPositions(b, loc, g, spatial);
  int64_t volume = g.getKernelVolume();
  SmallVector<Value> kernel;
  for (int64_t k : g.getKernel())
    kernel.push_back(indexConst(b, loc, k));
  FailureOr<SmallVector<int64_t>> outputBlocks =
      g.getOutputShape(resultType.getShape().drop_front(2));
  int64_t positions = 1;
  for (int64_t extent : *outputBlocks)
    positions *= extent;
  Value batch = memref::DimOp::create(b, loc, input, 0);
  Value inputRows = memref::DimOp::create(b, loc, input, 1);
  Value channels =
      arith::DivUIOp::create(b, loc, inputRows, indexConst(b, loc, volume));

  // What the types leave to run time: the input's rows must be the
  // result's channels times the kernel volume (a multiple of it when the
  // channels are dynamic), its columns the window positions of the output
  // size, its batch the result's. Any failure is reported and leaves the
  // result zero.
  Value rowsOk;
  if (inputType.isDynamicDim(1)) {
    if (resultType.isDynamicDim(1))
      rowsOk = checkSize(
          ctx, b, loc, inputRows,
          arith::MulIOp::create(b, loc, channels, indexConst(b, loc, volume)),
          SizeCheck::FoldRowsMultiple);
    else
      rowsOk = checkSize(ctx, b, loc, inputRows,
                         indexConst(b, loc, resultType.getDimSize(1) * volume),
                         SizeCheck::FoldRows);
  }
  Value ok = allOf(
      b, loc,
      {rowsOk,
       checkStaticSize(ctx, b, loc, inputType.getDimSize(0), batch,
                       resultType.getDimSize(0), SizeCheck::FoldBatch),
       inputType.isDynamicDim(2)
           ? checkSize(ctx, b, loc, memref::DimOp::create(b, loc, input, 2),
                       indexConst(b, loc, positions), SizeCheck::FoldColumns)
           : Value()});
  SmallVector<Value> sizes = {batch, channels};
  sizes.append(spatial);
  Value result = allocLike(b, loc, op.getOutput(), sizes);

  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  SmallVector<Value> lbs(sizes.size(), zero), steps(sizes.size(), one);
  ifElseZero(b, loc, ok, result, [&](OpBuilder &b, Location loc) {
    markKernel(
        scf::ParallelOp::create(
            b, loc, lbs, sizes, steps,
            [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
              // Sum, in offset order, the columns whose window covers this
              // site.
              auto addTerm = [&](OpBuilder &ob, Location oloc, Value offset,
                                 Value sum) -> Value {
                SmallVector<Value> j = unravel(ob, oloc, offset, kernel);
                Value covered =
                    arith::ConstantOp::create(ob, oloc, ob.getBoolAttr(true));
                Value column = indexConst(ob, oloc, 0);
                for (unsigned d = 0; d < g.getRank(); ++d) {
                  // block = (x + p - j * dilation) / s, exactly and in range.
                  Value t = arith::SubIOp::create(
                      ob, oloc,
                      arith::AddIOp::create(
                          ob, oloc, ivs[2 + d],
                          indexConst(ob, oloc, g.getPadding()[d])),
                      arith::MulIOp::create(
                          ob, oloc, j[d],
                          indexConst(ob, oloc, g.getDilation()[d])));
                  Value s = indexConst(ob, oloc, g.getStride()[d]);
                  Value block = arith::DivSIOp::create(ob, oloc, t, s);
                  Value ok = arith::AndIOp::create(
                      ob, oloc,
                      arith::CmpIOp::create(ob, oloc, arith::CmpIPredicate::sge,
                                            t, indexConst(ob, oloc, 0)),
                      arith::CmpIOp::create(
                          ob, oloc, arith::CmpIPredicate::eq,
                          arith::RemSIOp::create(ob, oloc, t, s),
                          indexConst(ob, oloc, 0)));
                  ok = arith::AndIOp::create(
                      ob, oloc, ok,
                      arith::CmpIOp::create(ob, oloc, arith::CmpIPredicate::slt,
                                            block, blocks[d]));
                  covered = arith::AndIOp::create(ob, oloc, covered, ok);
                  column = arith::AddIOp::create(
                      ob, oloc,
                      arith::MulIOp::create(ob, oloc, column, blocks[d]),
                      block);
                }
                Value row = arith::AddIOp::create(
                    ob, oloc,
                    arith::MulIOp::create(ob, oloc, ivs[1],
                                          indexConst(ob, oloc, volume)),
                    offset);
                auto term = scf::IfOp::create(
                    ob, oloc, covered,
                    [&](OpBuilder &tb, Location tloc) {
                      scf::YieldOp::create(
                          tb, tloc,
                          ValueRange{loadAs(tb, tloc, input,
                                            {ivs[0], row, column}, accType)});
                    },
                    [&](OpBuilder &eb, Location eloc) {
                      scf::YieldOp::create(
                          eb, eloc,
                          ValueRange{arith::ConstantOp::create(
                              eb, eloc, eb.getZeroAttr(accType))});
                    });
                return arith::AddFOp::create(ob, oloc, sum, term.getResult(0));
              };
              Value sum =
                  arith::ConstantOp::create(pb, ploc, pb.getZeroAttr(accType));
              if (ctx.unrollsOffsets(volume)) {
                for (int64_t offset = 0; offset < volume; ++offset)
                  sum = addTerm(pb, ploc, indexConst(pb, ploc, offset), sum);
              } else {
                sum = scf::ForOp::create(
                          pb, ploc, zero, indexConst(pb, ploc, volume), one,
                          ValueRange{sum},
                          [&](OpBuilder &ob, Location oloc, Value offset,
                              ValueRange partial) {
                            scf::YieldOp::create(
                                ob, oloc,
                                ValueRange{
                                    addTerm(ob, oloc, offset, partial[0])});
                          })
                          .getResult(0);
              }
              memref::StoreOp::create(pb, ploc,
                                      convertScalar(pb, ploc, sum, elementType),
                                      result, ivs);
            }),
        "fold");
  });
  return {result};
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b,
                                SegmentMaxOp op, ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  Value data = operands[0], index = operands[1];
  Type indexType = b.getIndexType(), i32 = b.getI32Type();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value batch = memref::DimOp::create(b, loc, data, 0);
  Value channels = memref::DimOp::create(b, loc, data, 1);
  Value points = memref::DimOp::create(b, loc, data, 2);
  int64_t numSegments =
      cast<RankedTensorType>(op.getValues().getType()).getDimSize(2);
  Value segments = indexConst(b, loc, numSegments);

  // Validate the index: every segment id in [0, M).
  Value total = arith::MulIOp::create(b, loc, batch, points);
  auto segmentAt = [&](OpBuilder &fb, Location floc, Value i) -> Value {
    Value bi = arith::DivUIOp::create(fb, floc, i, points);
    Value pi = arith::RemUIOp::create(fb, floc, i, points);
    return loadAs(fb, floc, index, {bi, pi}, indexType);
  };
  reportFirstBad(
      ctx, b, loc, total, segments,
      [&](OpBuilder &fb, Location floc, Value i) -> Value {
        Value m = segmentAt(fb, floc, i);
        return arith::OrIOp::create(
            fb, floc,
            arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::slt, m, zero),
            arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::sge, m,
                                  segments));
      },
      segmentAt);

  Value values = allocLike(b, loc, op.getValues(), {batch, channels, segments});
  Value positions =
      allocLike(b, loc, op.getPositions(), {batch, channels, segments});
  Type elementType = cast<MemRefType>(data.getType()).getElementType();
  Value zeroValue =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType));
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero}, ValueRange{batch, channels},
          ValueRange{one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value bi = ivs[0], ci = ivs[1];
            // Empty segments: value 0, position -1.
            scf::ForOp::create(
                pb, ploc, zero, segments, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value m, ValueRange) {
                  memref::StoreOp::create(fb, floc, zeroValue, values,
                                          ValueRange{bi, ci, m});
                  memref::StoreOp::create(fb, floc, i32Const(fb, floc, -1),
                                          positions, ValueRange{bi, ci, m});
                  scf::YieldOp::create(fb, floc);
                });
            // In point order: a point replaces the segment's best if the
            // segment is empty, if it is NaN and the best is not, or if it is
            // greater.
            scf::ForOp::create(
                pb, ploc, zero, points, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value p, ValueRange) {
                  Value m = loadAs(fb, floc, index, {bi, p}, indexType);
                  Value valid = arith::AndIOp::create(
                      fb, floc,
                      arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::sge,
                                            m, zero),
                      arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::slt,
                                            m, segments));
                  scf::IfOp::create(
                      fb, floc, valid, [&](OpBuilder &tb, Location tloc) {
                        Value v = memref::LoadOp::create(tb, tloc, data,
                                                         ValueRange{bi, ci, p});
                        Value best = memref::LoadOp::create(
                            tb, tloc, values, ValueRange{bi, ci, m});
                        Value at = memref::LoadOp::create(
                            tb, tloc, positions, ValueRange{bi, ci, m});
                        Value empty = arith::CmpIOp::create(
                            tb, tloc, arith::CmpIPredicate::slt, at,
                            i32Const(tb, tloc, 0));
                        Value vNaN = arith::CmpFOp::create(
                            tb, tloc, arith::CmpFPredicate::UNO, v, v);
                        Value bestNaN = arith::CmpFOp::create(
                            tb, tloc, arith::CmpFPredicate::UNO, best, best);
                        Value greater = arith::CmpFOp::create(
                            tb, tloc, arith::CmpFPredicate::OGT, v, best);
                        Value notBestNaN = arith::XOrIOp::create(
                            tb, tloc, bestNaN,
                            arith::ConstantOp::create(tb, tloc,
                                                      tb.getBoolAttr(true)));
                        Value take = arith::OrIOp::create(
                            tb, tloc, empty,
                            arith::AndIOp::create(
                                tb, tloc, notBestNaN,
                                arith::OrIOp::create(tb, tloc, vNaN, greater)));
                        scf::IfOp::create(
                            tb, tloc, take, [&](OpBuilder &ub, Location uloc) {
                              memref::StoreOp::create(ub, uloc, v, values,
                                                      ValueRange{bi, ci, m});
                              memref::StoreOp::create(
                                  ub, uloc,
                                  arith::IndexCastOp::create(ub, uloc, i32, p),
                                  positions, ValueRange{bi, ci, m});
                              scf::YieldOp::create(ub, uloc);
                            });
                        scf::YieldOp::create(tb, tloc);
                      });
                  scf::YieldOp::create(fb, floc);
                });
          }),
      "segment_max");
  return {values, positions};
}

static SmallVector<Value> lower(LoweringContext &ctx, OpBuilder &b,
                                SegmentMaxGradOp op, ArrayRef<Value> operands) {
  Location loc = op.getLoc();
  Value grad = operands[0], positions = operands[1], dest = operands[2];
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  auto dim = [&](Value buffer, int64_t d) -> Value {
    return memref::DimOp::create(b, loc, buffer, d);
  };
  Value batch = dim(dest, 0), channels = dim(dest, 1), points = dim(dest, 2);
  Value segments = dim(grad, 2);

  // The result starts as a copy of the destination.
  Value result = allocLike(b, loc, op.getResult(), {batch, channels, points});
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero, zero},
          ValueRange{batch, channels, points}, ValueRange{one, one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            memref::StoreOp::create(
                pb, ploc, memref::LoadOp::create(pb, ploc, dest, ivs), result,
                ivs);
          }),
      "copy_points");

  // Extents that disagree are reported; the gradient is then not read.
  SmallVector<Value> checks;
  auto gradType = cast<RankedTensorType>(op.getValuesGrad().getType());
  // `other` is the buffer of `otherTensor`.
  auto check = [&](Value other, Value otherTensor, int64_t d) {
    if (gradType.isDynamicDim(d) ||
        cast<RankedTensorType>(otherTensor.getType()).isDynamicDim(d))
      checks.push_back(checkSize(ctx, b, loc, dim(other, d), dim(grad, d),
                                 SizeCheck::SegmentMaxGrad));
  };
  for (int64_t d = 0; d < 3; ++d)
    check(positions, op.getPositions(), d);
  check(dest, op.getDest(), 0);
  check(dest, op.getDest(), 1);
  OpBuilder body = b;
  if (Value ok = allOf(b, loc, checks)) {
    auto guard = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
    body = OpBuilder(guard.thenBlock()->getTerminator());
  }
  Type indexType = body.getIndexType();
  // Positions other than -1 outside [0, P) are reported and skipped.
  Value perBatch = arith::MulIOp::create(body, loc, channels, segments);
  Value total = arith::MulIOp::create(body, loc, batch, perBatch);
  auto positionAt = [&](OpBuilder &fb, Location floc, Value i) {
    Value bi = arith::DivUIOp::create(fb, floc, i, perBatch);
    Value rest = arith::RemUIOp::create(fb, floc, i, perBatch);
    Value ci = arith::DivUIOp::create(fb, floc, rest, segments);
    Value m = arith::RemUIOp::create(fb, floc, rest, segments);
    return loadAs(fb, floc, positions, {bi, ci, m}, indexType);
  };
  reportFirstBadIndex(ctx, body, loc, total, points, positionAt);
  // One thread per (batch, channel) adds its segments' gradients in segment
  // order: positions that repeat need no atomics.
  markKernel(
      scf::ParallelOp::create(
          body, loc, ValueRange{zero, zero}, ValueRange{batch, channels},
          ValueRange{one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value bi = ivs[0], ci = ivs[1];
            scf::ForOp::create(
                pb, ploc, zero, segments, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value m, ValueRange) {
                  Value p = loadAs(fb, floc, positions, {bi, ci, m}, indexType);
                  Value inside = inRange(fb, floc, p, points);
                  scf::IfOp::create(
                      fb, floc, inside, [&](OpBuilder &tb, Location tloc) {
                        SmallVector<Value> at{bi, ci, p};
                        Value old = memref::LoadOp::create(tb, tloc, result, at);
                        Value added = memref::LoadOp::create(
                            tb, tloc, grad, ValueRange{bi, ci, m});
                        Value sum = arith::AddFOp::create(tb, tloc, old, added);
                        memref::StoreOp::create(tb, tloc, sum, result, at);
                        scf::YieldOp::create(tb, tloc);
                      });
                  scf::YieldOp::create(fb, floc);
                });
          }),
      "segment_max_grad");
  return {result};
}

SmallVector<Value> lowering::lowerDense(LoweringContext &ctx, OpBuilder &b,
                                        Operation *op,
                                        ArrayRef<Value> operands) {
  return llvm::TypeSwitch<Operation *, SmallVector<Value>>(op)
      .Case<UnfoldOp, FoldOp, SegmentMaxOp, SegmentMaxGradOp>(
          [&](auto typed) { return lower(ctx, b, typed, operands); });
}
