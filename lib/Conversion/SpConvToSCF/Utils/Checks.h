//===- Checks.h - Run-time checks and the runtime's error repor -*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// Size and index checks emitted into the lowered code, reported through the
// runtime (spconv_rt_report_*), and calls of runtime entry points.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_CHECKS_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_CHECKS_H

#include "Utils/LoweringContext.h"
#include "spconv-rt/CompilerContract.h"

#include "mlir/IR/Builders.h"

namespace mlir::spconv::lowering {

/// Reports, through the runtime, that `position` of an index operand of `op`
/// holds `value`, outside `[0, bound)`. Emitted only when that happened.
void reportBadIndex(LoweringContext &ctx, OpBuilder &b, Location loc,
                    Value position, Value value, Value bound);

/// Reports, through the runtime, the first position in `[0, count)` where
/// `isBad(position)` (i1) holds, with its index `indexAt(position)` (index
/// type) and `bound`. The position reported does not depend on the thread
/// count: on the CPU a sequential scan; on the GPU, where the indices are
/// device memory the host cannot read, a kernel keeps the smallest such
/// position (an atomic minimum) and, only when there is one, another
/// fetches its index; the host reads back two words. Returns whether no
/// position was bad (i1, a host value).
Value reportFirstBad(LoweringContext &ctx, OpBuilder &b, Location loc,
                     Value count, Value bound,
                     function_ref<Value(OpBuilder &, Location, Value)> isBad,
                     function_ref<Value(OpBuilder &, Location, Value)> indexAt);

/// reportFirstBad for an index operand checked before a loop that skips
/// what it cannot read: an index is bad if it is neither -1 (no
/// counterpart) nor in `[0, bound)`.
void reportFirstBadIndex(
    LoweringContext &ctx, OpBuilder &b, Location loc, Value count, Value bound,
    function_ref<Value(OpBuilder &, Location, Value)> indexAt);

/// Whether `features` has `expected` rows (i1); reports the mismatch through
/// the runtime when it does not (`what`: 0 input sites, 1 output sites of
/// an inverted convolution).
Value checkFeatureRows(LoweringContext &ctx, OpBuilder &b, Location loc,
                       Value features, Value expected, int64_t what);

/// What a run-time size check reports: the codes of SpConvRtSizeCheck
/// (runtime/include/spconv-rt/CompilerContract.h, which the runtime reads
/// them with), under names for the compiler.
enum class SizeCheck : int64_t {
  SortUniqueCount = SPCONV_RT_SIZE_SORT_UNIQUE_COUNT,
  SortUniqueInverse = SPCONV_RT_SIZE_SORT_UNIQUE_INVERSE,
  LinearizeKeys = SPCONV_RT_SIZE_LINEARIZE_KEYS,
  DelinearizeRows = SPCONV_RT_SIZE_DELINEARIZE_ROWS,
  HashLookupRows = SPCONV_RT_SIZE_HASH_LOOKUP_ROWS,
  GatherRows = SPCONV_RT_SIZE_GATHER_ROWS,
  GatherChannels = SPCONV_RT_SIZE_GATHER_CHANNELS,
  UnfoldBatch = SPCONV_RT_SIZE_UNFOLD_BATCH,
  UnfoldRows = SPCONV_RT_SIZE_UNFOLD_ROWS,
  UnfoldColumns = SPCONV_RT_SIZE_UNFOLD_COLUMNS,
  FoldBatch = SPCONV_RT_SIZE_FOLD_BATCH,
  FoldRows = SPCONV_RT_SIZE_FOLD_ROWS,
  FoldColumns = SPCONV_RT_SIZE_FOLD_COLUMNS,
  FoldRowsMultiple = SPCONV_RT_SIZE_FOLD_ROWS_MULTIPLE,
  OutputSites = SPCONV_RT_SIZE_OUTPUT_SITES,
  ConvRows = SPCONV_RT_SIZE_CONV_ROWS,
  PoolRows = SPCONV_RT_SIZE_POOL_ROWS,
  EpilogueRows = SPCONV_RT_SIZE_EPILOGUE_ROWS,
  EpilogueChannels = SPCONV_RT_SIZE_EPILOGUE_CHANNELS,
  ConcatRows = SPCONV_RT_SIZE_CONCAT_ROWS,
  ScatterRows = SPCONV_RT_SIZE_SCATTER_ROWS,
  SegmentMaxGrad = SPCONV_RT_SIZE_SEGMENT_MAX_GRAD,
  PoolGradRows = SPCONV_RT_SIZE_POOL_GRAD_ROWS,
  PairOffsetsFirst = SPCONV_RT_SIZE_PAIR_OFFSETS_FIRST,
  PairOffsetsOrder = SPCONV_RT_SIZE_PAIR_OFFSETS_ORDER,
  PairRows = SPCONV_RT_SIZE_PAIR_ROWS,
};

/// Whether `actual` equals `expected` (both index; i1); reports the mismatch
/// through the runtime (`what`, with the line of `loc`) when it does not.
Value checkSize(LoweringContext &ctx, OpBuilder &b, Location loc, Value actual,
                Value expected, SizeCheck what);

/// Like checkSize, but only where `precondition` (i1) holds, so that an
/// earlier failure (already reported) is not overwritten by a consequence of
/// it: returns `precondition && actual == expected`.
/// Reports `what` with `actual` and `expected` (i64 or index) where `ok`
/// (i1) does not hold; returns `ok`. checkSize is its equality case.
Value checkCondition(LoweringContext &ctx, OpBuilder &b, Location loc, Value ok,
                     Value actual, Value expected, SizeCheck what);

Value checkSizeIf(LoweringContext &ctx, OpBuilder &b, Location loc,
                  Value precondition, Value actual, Value expected,
                  SizeCheck what);

/// Checks, when it is not known at compile time, that a run-time extent
/// matches the static extent of a result: `staticActual` is the static
/// extent of the operand (or dynamic), `actual` its run-time value,
/// `expected` the static extent of the result (or dynamic). Returns the i1
/// of checkSize, or null when there is nothing to check (the result is
/// dynamic, or both are static and the verifier compared them).
Value checkStaticSize(LoweringContext &ctx, OpBuilder &b, Location loc,
                      int64_t staticActual, Value actual, int64_t expected,
                      SizeCheck what);

/// `buffer` (identity layout) as `type`, whose static sizes may be dynamic in
/// `buffer`: each such size is checked at run time (`what`), and on a
/// mismatch the result is a zero buffer of `type`, so no one reads or writes
/// past `buffer` through the static type.
Value castToChecked(LoweringContext &ctx, OpBuilder &b, Location loc,
                    Value buffer, MemRefType type, SizeCheck what);

/// Calls a runtime entry point and returns whether its status is 0.
Value callRuntime(LoweringContext &ctx, OpBuilder &b, Location loc,
                  StringRef name, ValueRange arguments);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_CHECKS_H
