//===- Builders.h - IR building helpers of the SpConv lowering --*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// Constants, buffers and their casts, loads and conversions, loops over
// rows and groups: what every op family's lowering builds with.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_BUILDERS_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_BUILDERS_H

#include "SpConv/Support/VectorWidth.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::spconv::lowering {

/// `loc` naming what the buffer allocated there is for ("the pairs of a
/// rulebook"): an allocation that fails reports it (GuardAllocations.cpp).
Location bufferLoc(Location loc, StringRef what);

/// Names what `loop` does (`count_pairs`, `conv_f32_16x32`, ...): the GPU
/// mapping names the kernel it makes of the loop after this role and, inside
/// a builder, after the builder's geometry. Returns `loop`.
scf::ParallelOp markKernel(scf::ParallelOp loop, StringRef role);

Value indexConst(OpBuilder &b, Location loc, int64_t value);
Value i64Const(OpBuilder &b, Location loc, int64_t value);
Value i32Const(OpBuilder &b, Location loc, int32_t value);

/// A memref type for `type` with fully dynamic strides and offset, which
/// any buffer of that shape can be cast to.
MemRefType getAnyLayoutMemRefType(RankedTensorType type);

/// `bufferization.to_buffer` of a tensor: with a fully dynamic layout, or
/// with the identity layout (contiguous) when the runtime needs one.
Value toBuffer(OpBuilder &b, Location loc, Value tensor,
               bool contiguous = false);

/// `bufferization.to_tensor` of a freshly allocated buffer.
Value toTensor(OpBuilder &b, Location loc, Value buffer, Type tensorType);

/// Casts `buffer` to `type` (layouts and static sizes permitting).
Value castTo(OpBuilder &b, Location loc, Value buffer, Type type);

/// `memref.alloc` of a 1-D buffer of `size` elements.
Value alloc1d(OpBuilder &b, Location loc, Type elementType, Value size);

/// The first `size` elements of a 1-D buffer, as a `memref<?xT>`.
Value prefix(OpBuilder &b, Location loc, Value buffer, Value size);

/// A `memref<Dxi64>` holding `values` (stack allocated).
Value i64Array(OpBuilder &b, Location loc, ArrayRef<int64_t> values);

/// `first + index`, or `index` where `first` is null (no offset).
Value addOffset(OpBuilder &b, Location loc, Value first, Value index);

/// The first input channel that output channel `co` of a grouped conv
/// reads: that of its group, `co / groupChannelsOut * channelsIn`; null
/// (no offset, for addOffset) without groups.
Value groupFirstInput(OpBuilder &b, Location loc, Value co, int64_t groups,
                      Value channelsIn, Value groupChannelsOut);

/// for q in [0, groups): body(q * channelsIn, q * channelsOut): a grouped
/// conv's loop over its groups, with the first input and output channel of
/// each (`channelsIn`, `channelsOut`: one group's).
void forEachGroup(
    OpBuilder &b, Location loc, int64_t groups, Value channelsIn,
    Value channelsOut,
    function_ref<void(OpBuilder &, Location, Value firstIn, Value firstOut)>
        body);

/// Whether `0 <= index < bound` (i1; index values).
Value inRange(OpBuilder &b, Location loc, Value index, Value bound);

/// The conjunction of the non-null `conditions`, or null if there are none.
Value allOf(OpBuilder &b, Location loc, ArrayRef<Value> conditions);

/// Stores zero in every element of `buffer` (identity layout, any rank).
void fillZeros(OpBuilder &b, Location loc, Value buffer);

/// Emits `body` where `ok` (i1) holds and fills `zeroed` with zeros where
/// it does not: an op whose sizes failed a run-time check does no work and
/// leaves defined results. With a null `ok`, emits `body` alone.
void ifElseZero(OpBuilder &b, Location loc, Value ok, ValueRange zeroed,
                function_ref<void(OpBuilder &, Location)> body);

/// The first `size` elements of a 1-D buffer, as a `memref<size x T>`; the
/// buffer must have at least `size` elements.
Value staticPrefix(OpBuilder &b, Location loc, Value buffer, int64_t size);

/// `buffer[indices]` where `inside` (i1) holds, zero elsewhere (padding,
/// missing rows); the load happens only inside.
Value loadOrZero(OpBuilder &b, Location loc, Value inside, Value buffer,
                 ValueRange indices);

/// The first position in `[begin, end)` where `holds(position)` (i1) is
/// true, or -1 (index). A sequential scan, so the position reported does
/// not depend on the thread count.
Value findFirst(OpBuilder &b, Location loc, Value begin, Value end,
                function_ref<Value(OpBuilder &, Location, Value)> holds);

/// Fills the `rows x channels` `buffer` with `init(row, channel)`, in a
/// parallel loop named `role`.
void fillRows(OpBuilder &b, Location loc, Value buffer, Value rows,
              Value channels,
              function_ref<Value(OpBuilder &, Location, Value, Value)> init,
              StringRef role = "init_rows");

/// A `rows x channels` buffer of `type` filled by `init(row, channel)`.
Value allocRows(OpBuilder &b, Location loc, Value rows, Value channels,
                Type type,
                function_ref<Value(OpBuilder &, Location, Value, Value)> init,
                StringRef role = "init_rows");

/// Loads `memref[indices]` converted to `type` (float extension/truncation
/// or integer cast as needed).
Value loadAs(OpBuilder &b, Location loc, Value memref, ValueRange indices,
             Type type);

/// Converts a float or index value to `type`.
Value convertScalar(OpBuilder &b, Location loc, Value value, Type type);

/// The type features of `elementType` accumulate in: f32 for 16-bit floats.
Type accumulatorType(Type elementType);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_UTILS_BUILDERS_H
