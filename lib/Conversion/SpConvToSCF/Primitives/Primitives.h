//===- Primitives.h - Runtime primitives and dense ops ----------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The ops that lower to runtime calls (keys, sort/unique, gather, scatter,
// hash tables) and the dense ones (unfold, fold, segment max). Each returns
// its result buffers.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_PRIMITIVES_PRIMITIVES_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_PRIMITIVES_PRIMITIVES_H

#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::spconv::lowering {

/// Builds the runtime hash table of `keys` (a buffer).
HashTableBuffers lowerHashBuild(LoweringContext &ctx, OpBuilder &b,
                                HashBuildOp op, Value keys);

/// Looks `queries` (a buffer) up in `table`; returns the rows buffer.
Value lowerHashLookup(LoweringContext &ctx, OpBuilder &b, HashLookupOp op,
                      const HashTableBuffers &table, Value queries);

/// The other runtime primitives (keys, sort/unique, gather), whose operands
/// and results are all tensors. Each returns its result buffers.
SmallVector<Value> lowerPrimitive(LoweringContext &ctx, OpBuilder &b,
                                  Operation *op, ArrayRef<Value> operands);

/// Dense unfold, fold and segment max. Each returns its result buffers.
SmallVector<Value> lowerDense(LoweringContext &ctx, OpBuilder &b, Operation *op,
                              ArrayRef<Value> operands);

/// The patterns of this folder's ops (TypeConversion.h's SpConvOpLowering),
/// sharing `ctx`.
void populatePrimitivePatterns(const TypeConverter &converter,
                               LoweringContext &ctx,
                               RewritePatternSet &patterns);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_PRIMITIVES_PRIMITIVES_H
