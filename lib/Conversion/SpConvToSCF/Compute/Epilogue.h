//===- Epilogue.h - A rulebook conv's epilogue ------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The element-wise ops fused into a conv's row writes (spconv.rulebook_conv's
// epilogue region), shared by the CPU loops and the GPU kernels.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_EPILOGUE_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_EPILOGUE_H

#include "Utils/LoweringContext.h"

#include "mlir/IR/Builders.h"

namespace mlir::spconv::lowering {

/// The epilogue of a rulebook conv (Epilogue.cpp), its operands as buffers.
struct EpilogueBuffers {
  Block *body = nullptr;       ///< the op's epilogue block, or null
  SmallVector<Value> operands; ///< memref<rows x C> or memref<C> each
  explicit operator bool() const { return body != nullptr; }
};

/// Checks (reporting through the runtime) that every row operand has `rows`
/// rows and every operand `channels` in its last dimension; returns the i1
/// that all do. Nothing may read the operands where it is false.
Value checkEpilogueOperands(LoweringContext &ctx, OpBuilder &b, Location loc,
                            const EpilogueBuffers &epilogue, Value rows,
                            Value channels);

/// Loads a vector of `type` from `memref` at `indices`.
using VectorLoadFn =
    function_ref<Value(OpBuilder &, Location, VectorType, Value, ValueRange)>;

/// The epilogue applied to `value` of row `row`: one element of channel
/// `column`, or a vector of the channels from `column` on, its operands
/// read by `loadVector` (when given; else a vector.load of the element's
/// alignment).
Value applyEpilogue(OpBuilder &b, Location loc, const EpilogueBuffers &epilogue,
                    Value value, Value row, Value column,
                    VectorLoadFn loadVector = nullptr);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_COMPUTE_EPILOGUE_H
