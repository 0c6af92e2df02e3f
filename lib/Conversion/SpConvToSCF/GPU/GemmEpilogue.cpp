//===- GemmEpilogue.cpp - How the tiled convs write their outputs ---------===//
//
// Part of the spconv-mlir project.
//
// The one store of each output of the GPU's implicit-GEMM convs: bias added
// in the accumulator's type, rounded once to the result's, the conv's
// epilogue applied. Where the result's rows allow, a thread writes a chunk
// of consecutive channels of one row at once (up to 16 bytes: one
// st.global.v4), reading that row's slot of the schedule once for them all
// and the bias and the epilogue's operands as one vector each; else one
// element at a time.
//
//===----------------------------------------------------------------------===//

#include "GPU/GemmKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;
using namespace mlir::spconv::lowering::gemm;

Value gemm::rowOfSlot(OpBuilder &b, Location loc,
                      const ImplicitGemmOperands &operands, Value slot) {
  return arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, operands.schedule.order, slot));
}

void gemm::storeOutput(OpBuilder &b, Location loc,
                       const ImplicitGemmOperands &operands, Value row,
                       Value column, Value value) {
  if (operands.bias)
    value = arith::AddFOp::create(
        b, loc, value, loadAs(b, loc, operands.bias, column, value.getType()));
  Type resultElement =
      cast<MemRefType>(operands.result.getType()).getElementType();
  value = convertScalar(b, loc, value, resultElement);
  if (operands.epilogue)
    value = applyEpilogue(b, loc, operands.epilogue, value, row, column);
  memref::StoreOp::create(b, loc, value, operands.result,
                          ValueRange{row, column});
}

/// Whether `memref`'s rows are unit-stride runs whose starts (every other
/// stride) are multiples of `width` elements.
static bool hasChunkedRows(Value memref, int64_t width) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() ||
      strides.back() != 1)
    return false;
  return llvm::all_of(ArrayRef(strides).drop_back(), [&](int64_t stride) {
    return !ShapedType::isDynamic(stride) && stride % width == 0;
  });
}

OutputChunks gemm::chooseOutputChunks(OpBuilder &b, Location loc,
                                      const ImplicitGemmOperands &operands,
                                      int64_t cols, int64_t limit) {
  auto resultType = cast<MemRefType>(operands.result.getType());
  int64_t bits = resultType.getElementTypeBitWidth();
  OutputChunks chunks;
  if (bits % 8 != 0 || bits > 64 || 128 % bits != 0)
    return chunks;
  // A chunk is all inside or all past the channels when both the tile's
  // columns and the channel count are multiples of it.
  int64_t width = std::min<int64_t>(128 / bits, limit);
  auto fits = [&](int64_t w) {
    return limit % w == 0 && cols % w == 0 && operands.channelsOut % w == 0 &&
           hasChunkedRows(operands.result, w) &&
           (!operands.bias || hasChunkedRows(operands.bias, w)) &&
           llvm::all_of(operands.epilogue.operands, [&](Value operand) {
             return hasChunkedRows(operand, w);
           });
  };
  while (width > 1 && !fits(width))
    width /= 2;
  if (width == 1)
    return chunks;
  chunks.width = width;
  int64_t bytes = width * bits / 8;
  // The bias and the epilogue's operands are read a chunk at a time too:
  // vectors of their element type, at the result's column (contiguous rows
  // of `channelsOut`, a multiple of the chunk).
  chunks.aligned = isFirstElementAligned(b, loc, operands.result, bytes);
  SmallVector<Value> read(operands.epilogue.operands);
  if (operands.bias)
    read.push_back(operands.bias);
  for (Value memref : read) {
    int64_t readBytes =
        width * cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
    chunks.aligned =
        arith::AndIOp::create(b, loc, chunks.aligned,
                              isFirstElementAligned(b, loc, memref, readBytes));
  }
  return chunks;
}

void gemm::storeOutputChunk(OpBuilder &b, Location loc,
                            const ImplicitGemmOperands &operands,
                            const OutputChunks &chunks, Value row, Value column,
                            Value values) {
  auto accType = cast<VectorType>(values.getType());
  assert(accType.getNumElements() == chunks.width && chunks.width > 1 &&
         "a chunk is OutputChunks::width elements");
  auto resultElement =
      cast<MemRefType>(operands.result.getType()).getElementType();
  auto resultType = accType.clone(resultElement);
  auto load = [&](OpBuilder &lb, Location lloc, VectorType type, Value memref,
                  ValueRange indices) {
    return loadAlignedOrSplit(lb, lloc, chunks.aligned, type, memref, indices);
  };
  if (operands.bias) {
    auto biasElement =
        cast<MemRefType>(operands.bias.getType()).getElementType();
    Value bias = load(b, loc, accType.clone(biasElement), operands.bias,
                      ValueRange{column});
    if (biasElement != accType.getElementType())
      bias = arith::ExtFOp::create(b, loc, accType, bias);
    values = arith::AddFOp::create(b, loc, values, bias);
  }
  if (resultElement != accType.getElementType())
    values = arith::TruncFOp::create(b, loc, resultType, values);
  if (operands.epilogue)
    values =
        applyEpilogue(b, loc, operands.epilogue, values, row, column, load);
  // One access of the chunk's bytes where aligned; else as LLVM splits it.
  auto store = [&](llvm::MaybeAlign alignment) {
    return [&, alignment](OpBuilder &sb, Location sloc) {
      vector::StoreOp::create(sb, sloc, values, operands.result,
                              ValueRange{row, column},
                              /*nontemporal=*/false, alignment);
      scf::YieldOp::create(sb, sloc);
    };
  };
  scf::IfOp::create(
      b, loc, chunks.aligned,
      store(llvm::Align(chunks.width * resultElement.getIntOrFloatBitWidth() /
                        8)),
      store(llvm::MaybeAlign()));
}
