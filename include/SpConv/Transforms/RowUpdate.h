//===- RowUpdate.h - Register-blocked row updates ---------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The inner loop of the CPU's rulebook convolution and of its pointwise
// matmuls: a group of output rows each gains a product of an input row with
// a weight matrix, chunk by chunk of the output columns, every row's chunk
// held in vector registers while the input channels stream past.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TRANSFORMS_ROWUPDATE_H
#define SPCONV_TRANSFORMS_ROWUPDATE_H

#include "SpConv/Support/VectorWidth.h"

#include "mlir/IR/Builders.h"

namespace mlir::spconv {

/// The weight row `k` over the `width` columns from `column` on, as a vector
/// of the accumulator's element type.
using WeightChunkLoader = function_ref<Value(OpBuilder &, Location, Value k,
                                             Value column, int64_t width)>;
/// Input channel `k` of input row `src`, as the accumulator's element type.
using InputScalarLoader =
    function_ref<Value(OpBuilder &, Location, Value src, Value k)>;

/// acc[dsts[g], :] += sum over k < depth of input(srcs[g], k) * weight(k, :)
/// for a static width `columns`: per chunk of columns (rowChunks, of at
/// most `chunkRegisters` registers: chooseRowBlocking's for the group the
/// caller takes, also for its rows left over), each row's chunk
/// accumulates in registers a broadcast input channel times the weight
/// row, in k order, one weight load serving every row; each row is stored
/// once per chunk. The columns
/// start at `firstColumn` where given (one group of a grouped conv), else at
/// 0; the loaders get absolute columns.
void emitVectorRowUpdates(OpBuilder &b, Location loc,
                          const VectorRegisters &registers,
                          int64_t chunkRegisters, Value acc, ValueRange dsts,
                          ValueRange srcs, Value depth, int64_t columns,
                          WeightChunkLoader loadWeights,
                          InputScalarLoader loadInput,
                          Value firstColumn = Value());

} // namespace mlir::spconv

#endif // SPCONV_TRANSFORMS_ROWUPDATE_H
