//===- MmaSync.cpp - nvgpu.ldmatrix and nvgpu.mma.sync, emulated ----------===//
//
// Part of the spconv-mlir project.
//
// Unlike gpu.subgroup_mma (MMAToVectors.cpp), whose tiles the gpu dialect
// leaves opaque, nvgpu's fragments are per-lane registers in the layouts the
// PTX ISA fixes ("Warp-level matrix instructions": ldmatrix, and the
// fragments of mma.m16n8k16 / .m16n8k8). Both ops are warp-level: a phase
// ends before each, every lane's operands go to per-thread storage, and a
// loop over the threads builds each lane's result from its partners'. With
// g = lane / 4 and t = lane % 4, and W elements per 32-bit register (2 of
// f16 or bf16, 1 of f32):
//
//  * nvgpu.ldmatrix, numTiles N (1, 2 or 4) 8x8 matrices of 16-bit units:
//    lane 8i + r gives the address of row r of matrix i; register i of lane
//    l is the 32-bit unit t of row g of matrix i, or with `transpose` (16-bit
//    elements only) the elements (2t, g) and (2t + 1, g);
//  * nvgpu.mma.sync, D = A * B + C over a 16 x 8 x K tile (K = 8 W):
//    A[i][j] = A(g + 8 (i % 2), W t + j + 4 W (i / 2)),
//    B[i][j] = B(W t + j + 4 W i, g), C[i][j] = C(g + 8 i, 2 t + j);
//    products and sums in f32, k in increasing order, rounded once to C's
//    type, as the gpu.subgroup_mma emulation computes them; f32 inputs are
//    tf32 (their 13 low mantissa bits cleared).
//
// A lane's reads of memory through ldmatrix are its own row (RaceCheck.cpp
// records them so); the emulation reads them where the lanes that receive
// them are.
//
//===----------------------------------------------------------------------===//

#include "KernelPhases.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::emulation;

static Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// Elements of `type` per 32-bit register.
static int64_t perRegister(Type type) {
  return 32 / type.getIntOrFloatBitWidth();
}

/// Thread `warpBase + lane`, or `self` where that is past the block (a
/// partial warp, which the launch reports).
static Value partner(OpBuilder &b, Location loc, Value warpBase, Value lane,
                     Value self, Value numThreads) {
  Value thread = arith::AddIOp::create(b, loc, warpBase, lane);
  Value exists = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       thread, numThreads);
  return arith::SelectOp::create(b, loc, exists, thread, self);
}

LogicalResult PhaseSplitter::emitLdMatrix(nvgpu::LdMatrixOp load, Block &source,
                                          OpBuilder &b) {
  Location loc = load.getLoc();
  auto resultType = cast<VectorType>(load.getType());
  Type element = resultType.getElementType();
  int64_t width = perRegister(element);
  int64_t tiles = load.getNumTiles();
  // The verifier allows `transpose` on 16-bit elements only.
  bool transpose = load.getTranspose();
  Value memref = lookupUniform(load.getSrcMemref());
  if (!memref)
    return error(load) << "ldmatrix from a buffer that differs between "
                          "threads is not emulated";
  FailureOr<SmallVector<Gathered>> indices =
      gather(b, source, load, load.getIndices());
  if (failed(indices))
    return failure();
  Value resultSlot = newSlot(resultType, loc);
  threadLoop(b, loc, [&](OpBuilder &tb, Location tloc, Value thread) {
    Value lane = laneOf(tb, tloc, thread);
    Value warpBase = arith::SubIOp::create(tb, tloc, thread, lane);
    Value g =
        arith::DivUIOp::create(tb, tloc, lane, indexConstant(tb, tloc, 4));
    Value t =
        arith::RemUIOp::create(tb, tloc, lane, indexConstant(tb, tloc, 4));
    // The row whose address lane `rowLane` gives: a flat view and where
    // the row starts in it.
    auto rowOf = [&](Value rowLane) {
      Value from =
          partner(tb, tloc, warpBase, rowLane, thread, block.numThreads);
      SmallVector<Value> at;
      for (const Gathered &index : *indices)
        at.push_back(read(tb, tloc, index, from));
      return flatView(tb, tloc, memref, at, 4 * width);
    };
    auto elementOf = [&](std::pair<Value, Value> row, Value column) -> Value {
      return memref::LoadOp::create(
          tb, tloc, row.first,
          ValueRange{arith::AddIOp::create(tb, tloc, row.second, column)});
    };
    auto plus = [&](Value lhs, int64_t rhs) -> Value {
      return arith::AddIOp::create(tb, tloc, lhs, indexConstant(tb, tloc, rhs));
    };
    Value result = arith::ConstantOp::create(tb, tloc, resultType,
                                             tb.getZeroAttr(resultType));
    for (int64_t i = 0; i < tiles; ++i) {
      if (!transpose) {
        // Register i: unit t of row g, elements W t + j.
        std::pair<Value, Value> row = rowOf(plus(g, 8 * i));
        Value unit =
            arith::MulIOp::create(tb, tloc, t, indexConstant(tb, tloc, width));
        for (int64_t j = 0; j < width; ++j)
          result =
              vector::InsertOp::create(tb, tloc, elementOf(row, plus(unit, j)),
                                       result, ArrayRef<int64_t>{i, j});
        continue;
      }
      // Register i: elements (2 t + j, g), each from its own row.
      Value twoT =
          arith::MulIOp::create(tb, tloc, t, indexConstant(tb, tloc, 2));
      for (int64_t j = 0; j < width; ++j)
        result = vector::InsertOp::create(
            tb, tloc, elementOf(rowOf(plus(twoT, 8 * i + j)), g), result,
            ArrayRef<int64_t>{i, j});
    }
    memref::StoreOp::create(tb, tloc, result, resultSlot, ValueRange{thread});
  });
  slots[load.getResult()] = resultSlot;
  return success();
}

LogicalResult PhaseSplitter::emitMmaSync(nvgpu::MmaSyncOp mma, Block &source,
                                         OpBuilder &b) {
  Location loc = mma.getLoc();
  auto aType = cast<VectorType>(mma.getMatrixA().getType());
  auto cType = cast<VectorType>(mma.getMatrixC().getType());
  Type element = aType.getElementType();
  Type accumulator = cType.getElementType();
  std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
  int64_t width = perRegister(element);
  bool inputsKnown = element.isF16() || element.isBF16() ||
                     (element.isF32() && mma.getTf32Enabled());
  if (!inputsKnown || !(accumulator.isF32() || accumulator.isF16()) ||
      shape[0] != 16 || shape[1] != 8 || shape[2] != 8 * width ||
      aType.getShape() != ArrayRef<int64_t>{4, width} ||
      cast<VectorType>(mma.getMatrixB().getType()).getShape() !=
          ArrayRef<int64_t>{2, width} ||
      cType.getShape() != ArrayRef<int64_t>{2, 2})
    return error(mma) << "only m16n8k16 (f16, bf16) and m16n8k8 (tf32) "
                         "mma.sync with f32 or f16 accumulators is emulated";
  int64_t depth = shape[2];
  FailureOr<SmallVector<Gathered>> operands = gather(
      b, source, mma, {mma.getMatrixA(), mma.getMatrixB(), mma.getMatrixC()});
  if (failed(operands))
    return failure();
  Gathered a = (*operands)[0], bMatrix = (*operands)[1], c = (*operands)[2];
  Value resultSlot = newSlot(cType, loc);
  threadLoop(b, loc, [&](OpBuilder &tb, Location tloc, Value thread) {
    Value lane = laneOf(tb, tloc, thread);
    Value warpBase = arith::SubIOp::create(tb, tloc, thread, lane);
    Value four = indexConstant(tb, tloc, 4);
    Value g = arith::DivUIOp::create(tb, tloc, lane, four);
    Value t = arith::RemUIOp::create(tb, tloc, lane, four);
    Value firstOfRow = arith::MulIOp::create(tb, tloc, g, four);
    // A's rows g and g + 8 are in lanes 4 g .. 4 g + 3, register units t'
    // of k = W t' + 4 W h (h = 0, 1).
    SmallVector<Value> aOfRowLanes, bOfColumnLanes[2];
    for (int64_t u = 0; u < 4; ++u)
      aOfRowLanes.push_back(
          read(tb, tloc, a,
               partner(tb, tloc, warpBase,
                       arith::AddIOp::create(tb, tloc, firstOfRow,
                                             indexConstant(tb, tloc, u)),
                       thread, block.numThreads)));
    // B's column n is in lanes 4 n .. 4 n + 3; this lane's columns are 2 t
    // and 2 t + 1.
    for (int64_t j = 0; j < 2; ++j) {
      Value column = arith::AddIOp::create(
          tb, tloc,
          arith::MulIOp::create(tb, tloc, t, indexConstant(tb, tloc, 2)),
          indexConstant(tb, tloc, j));
      Value firstOfColumn = arith::MulIOp::create(tb, tloc, column, four);
      for (int64_t u = 0; u < 4; ++u)
        bOfColumnLanes[j].push_back(
            read(tb, tloc, bMatrix,
                 partner(tb, tloc, warpBase,
                         arith::AddIOp::create(tb, tloc, firstOfColumn,
                                               indexConstant(tb, tloc, u)),
                         thread, block.numThreads)));
    }
    Value mine = read(tb, tloc, c, thread);
    Value result = mine;
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        Value sum =
            vector::ExtractOp::create(tb, tloc, mine, ArrayRef<int64_t>{i, j});
        if (!accumulator.isF32())
          sum = arith::ExtFOp::create(tb, tloc, tb.getF32Type(), sum);
        for (int64_t k = 0; k < depth; ++k) {
          int64_t unit = (k % (4 * width)) / width, half = k / (4 * width);
          int64_t within = k % width;
          // A(g + 8 i, k): register i + 2 half of lane 4 g + unit.
          Value x = vector::ExtractOp::create(
              tb, tloc, aOfRowLanes[unit],
              ArrayRef<int64_t>{i + 2 * half, within});
          // B(k, 2 t + j): register half of lane 4 (2 t + j) + unit.
          Value y = vector::ExtractOp::create(tb, tloc, bOfColumnLanes[j][unit],
                                              ArrayRef<int64_t>{half, within});
          Value product =
              arith::MulFOp::create(tb, tloc, tensorCoreInput(tb, tloc, x),
                                    tensorCoreInput(tb, tloc, y));
          sum = arith::AddFOp::create(tb, tloc, sum, product);
        }
        if (!accumulator.isF32())
          sum = arith::TruncFOp::create(tb, tloc, accumulator, sum);
        result = vector::InsertOp::create(tb, tloc, sum, result,
                                          ArrayRef<int64_t>{i, j});
      }
    }
    memref::StoreOp::create(tb, tloc, result, resultSlot, ValueRange{thread});
  });
  slots[mma.getResult()] = resultSlot;
  return success();
}
