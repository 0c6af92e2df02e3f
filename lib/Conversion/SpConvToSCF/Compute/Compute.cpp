//===- Compute.cpp - Convolution and pooling over a rulebook --------------===//
//
// Part of the spconv-mlir project.
//
// Offsets are processed in order and, within one offset, pairs in parallel:
// no two pairs of one offset share an output row (for a fixed offset the
// output determines the input and vice versa), so the scatter needs no
// atomics and every output's sum runs in the same order on every run.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Support/VectorWidth.h"
#include "SpConv/Transforms/RowUpdate.h"
#include "Compute/Compute.h"
#include "GPU/ImplicitGemm.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"
#include "GPU/TileTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

namespace {
/// Rows and element types of one rulebook compute.
struct ComputeShape {
  Value rowsOut;    ///< index: rows of the result.
  Value channelsIn; ///< index
  Value channelsOut;
  Type elementType;
  Type accType;
};
} // namespace

/// for j in offsets: parallel over the pairs of j, in groups of `groupSize`:
/// body(j, src rows, dst rows) gets a full group, or one pair at a time for
/// the last, partial group of an offset.
/// How many chunks the pairs of `rows` sites with `bytesPerRow` bytes of
/// features and accumulator per site are taken in: chunks of about
/// `chunkBytes` (convert-spconv-to-scf's chunk-bytes), what one pass over the
/// offsets should find in cache.
static Value pairChunks(OpBuilder &b, Location loc, Value rows,
                        Value bytesPerRow, int64_t chunkBytes) {
  Value chunkRows = arith::MaxSIOp::create(
      b, loc, indexConst(b, loc, 1),
      arith::DivSIOp::create(b, loc, indexConst(b, loc, chunkBytes),
                             bytesPerRow));
  return arith::MaxSIOp::create(
      b, loc, indexConst(b, loc, 1),
      arith::CeilDivSIOp::create(b, loc, rows, chunkRows));
}

/// for c in chunks: for j in offsets: parallel over the c-th of `chunks`
/// equal pieces of the pairs of j, in groups of `groupSize`: body(j, src
/// rows, dst rows) gets a full group, or one pair at a time at the end of a
/// piece. Pairs are sorted by row within an offset, so piece c of every
/// offset touches about the same rows: a chunk's offsets revisit rows that
/// are still in cache, where a pass over all the pairs of one offset at a
/// time would stream every row from memory 27 times. Chunks run one after
/// the other, so each output row still sums in a fixed order.
static void forEachPair(OpBuilder &b, Location loc,
                        const RulebookBuffers &rulebook, int64_t volume,
                        bool inverse, int64_t groupSize, Value chunks,
                        StringRef role,
                        function_ref<void(OpBuilder &, Location, Value,
                                          ArrayRef<Value>, ArrayRef<Value>)>
                            body) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value group = indexConst(b, loc, groupSize);
  auto rowsOf = [&](OpBuilder &pb, Location ploc, Value pair) {
    return pairRows(pb, ploc, rulebook, inverse, pair);
  };
  auto chunkLoop = scf::ForOp::create(b, loc, zero, chunks, one);
  OpBuilder cb(chunkLoop.getBody()->getTerminator());
  Value chunk = chunkLoop.getInductionVar();
  forEachOffset(
      cb, loc, rulebook, volume,
      [&](OpBuilder &ob, Location oloc, Value offset, Value offsetBegin,
          Value offsetEnd) {
        // The chunk-th piece [begin, end) of [offsetBegin, offsetEnd).
        Value count = arith::SubIOp::create(ob, oloc, offsetEnd, offsetBegin);
        auto boundary = [&](Value c) {
          return arith::AddIOp::create(
              ob, oloc, offsetBegin,
              arith::DivSIOp::create(
                  ob, oloc, arith::MulIOp::create(ob, oloc, count, c), chunks));
        };
        Value begin = boundary(chunk);
        Value end = boundary(arith::AddIOp::create(ob, oloc, chunk, one));
        markKernel(
            scf::ParallelOp::create(
                ob, oloc, ValueRange{begin}, ValueRange{end}, ValueRange{group},
                [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                  Value first = ivs[0];
                  if (groupSize == 1) {
                    auto [src, dst] = rowsOf(pb, ploc, first);
                    body(pb, ploc, offset, src, dst);
                    return;
                  }
                  Value full = arith::CmpIOp::create(
                      pb, ploc, arith::CmpIPredicate::ule,
                      arith::AddIOp::create(pb, ploc, first, group), end);
                  scf::IfOp::create(
                      pb, ploc, full,
                      [&](OpBuilder &tb, Location tloc) {
                        SmallVector<Value> srcs, dsts;
                        for (int64_t g = 0; g < groupSize; ++g) {
                          auto [src, dst] = rowsOf(
                              tb, tloc,
                              arith::AddIOp::create(tb, tloc, first,
                                                    indexConst(tb, tloc, g)));
                          srcs.push_back(src);
                          dsts.push_back(dst);
                        }
                        body(tb, tloc, offset, srcs, dsts);
                        scf::YieldOp::create(tb, tloc);
                      },
                      [&](OpBuilder &eb, Location eloc) {
                        scf::ForOp::create(
                            eb, eloc, first, end, one, ValueRange{},
                            [&](OpBuilder &fb, Location floc, Value pair,
                                ValueRange) {
                              auto [src, dst] = rowsOf(fb, floc, pair);
                              body(fb, floc, offset, src, dst);
                              scf::YieldOp::create(fb, floc);
                            });
                        scf::YieldOp::create(eb, eloc);
                      });
                }),
            role);
      });
}

/// Where a conv's rows end up: `destination` where given, else the
/// accumulator where it has the result's element type, else a new buffer.
static Value resultRows(OpBuilder &b, Location loc, Value acc, Value rows,
                        Value channels, Type elementType, Value destination) {
  if (destination)
    return destination;
  if (cast<MemRefType>(acc.getType()).getElementType() == elementType)
    return acc;
  return memref::AllocOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                      elementType),
      ValueRange{rows, channels});
}

/// Converts an accumulator buffer to the result's element type and shape,
/// in `destination` where given (which has the result's rows).
static Value finish(LoweringContext &ctx, OpBuilder &b, Location loc, Value acc,
                    Value rows, Value channels, MemRefType resultType,
                    SizeCheck what, Value destination) {
  Type elementType = resultType.getElementType();
  Value result =
      resultRows(b, loc, acc, rows, channels, elementType, destination);
  if (result != acc)
    fillRows(b, loc, result, rows, channels,
             [&](OpBuilder &pb, Location ploc, Value r, Value c) {
               return loadAs(pb, ploc, acc, {r, c}, elementType);
             });
  if (destination)
    return destination;
  // A static result row count is checked against the rulebook's.
  return castToChecked(ctx, b, loc, result, resultType, what);
}

/// The result of a conv with an epilogue: the accumulator rounded to the
/// result's element type and mapped by the epilogue in one parallel pass over
/// the rows, in place where the types agree: a row a vector per entry of
/// `chunks` (consecutive channels; rowChunks), or, with no chunks, one
/// element per parallel item (the GPU's form). Operands of the wrong size
/// are reported and not read: the result is then the rounded accumulator.
/// The result is `destination` where given.
static Value finishWithEpilogue(LoweringContext &ctx, OpBuilder &b,
                                Location loc, Value acc, Value rows,
                                Value channels, MemRefType resultType,
                                const EpilogueBuffers &epilogue,
                                ArrayRef<int64_t> chunks, Value destination) {
  Type elementType = resultType.getElementType();
  auto accType = cast<MemRefType>(acc.getType());
  Value result =
      resultRows(b, loc, acc, rows, channels, elementType, destination);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  auto emitPass = [&](OpBuilder &pb, bool apply) {
    if (!chunks.empty()) {
      markKernel(
          scf::ParallelOp::create(
              pb, loc, ValueRange{zero}, ValueRange{rows}, ValueRange{one},
              [&](OpBuilder &rb, Location rloc, ValueRange ivs) {
                int64_t start = 0;
                for (int64_t width : chunks) {
                  auto accVector =
                      VectorType::get({width}, accType.getElementType());
                  auto vector = VectorType::get({width}, elementType);
                  Value column = indexConst(rb, rloc, start);
                  start += width;
                  Value value = vector::LoadOp::create(
                      rb, rloc, accVector, acc, ValueRange{ivs[0], column});
                  if (accVector != vector)
                    value = arith::TruncFOp::create(rb, rloc, vector, value);
                  if (apply)
                    value = applyEpilogue(rb, rloc, epilogue, value, ivs[0],
                                          column);
                  vector::StoreOp::create(rb, rloc, value, result,
                                          ValueRange{ivs[0], column});
                }
              }),
          "epilogue");
      return;
    }
    markKernel(scf::ParallelOp::create(
                   pb, loc, ValueRange{zero, zero}, ValueRange{rows, channels},
                   ValueRange{one, one},
                   [&](OpBuilder &rb, Location rloc, ValueRange ivs) {
                     Value value = loadAs(rb, rloc, acc, ivs, elementType);
                     if (apply)
                       value = applyEpilogue(rb, rloc, epilogue, value, ivs[0],
                                             ivs[1]);
                     memref::StoreOp::create(rb, rloc, value, result, ivs);
                   }),
               "epilogue");
  };
  Value ok = checkEpilogueOperands(ctx, b, loc, epilogue, rows, channels);
  auto guard = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/result != acc);
  OpBuilder tb(guard.thenBlock()->getTerminator());
  emitPass(tb, /*apply=*/true);
  if (result != acc) {
    OpBuilder eb(guard.elseBlock()->getTerminator());
    emitPass(eb, /*apply=*/false);
  }
  if (destination)
    return destination;
  return castToChecked(ctx, b, loc, result, resultType, SizeCheck::ConvRows);
}

/// A builder inside `scf.if (features has one row per site)`: the pair
/// loops read feature rows by the rulebook's indices, so features of any
/// other length are reported (through the runtime) and not read; the result
/// is then the initial accumulator.
static OpBuilder guardFeatureRows(LoweringContext &ctx, OpBuilder &b,
                                  Location loc, Value features, Value expected,
                                  int64_t what) {
  Value ok = checkFeatureRows(ctx, b, loc, features, expected, what);
  auto guard = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
  return OpBuilder(guard.thenBlock()->getTerminator());
}

static MemRefType resultBufferType(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// Pairs whose row updates share each weight vector load.
static constexpr int64_t kPairsPerGroup = 8;

/// acc[dsts[g], :] += features[srcs[g], :] @ weight[offset] for a static
/// output width: each chunk of output channels is one or two vector
/// registers per pair of the group (as many as the group's chunks, the
/// weight vector and the broadcast leave room for in `registers`: AVX-512
/// two, AVX one), accumulating a broadcast-FMA per input channel; one weight
/// load serves the whole group. Each row is stored once per chunk.
static void emitVectorRowUpdate(OpBuilder &b, Location loc,
                                const VectorRegisters &registers, Value acc,
                                ArrayRef<Value> dsts, Value features,
                                ArrayRef<Value> srcs, Value weight,
                                Value offset, Value channelsIn,
                                int64_t channelsOut, Type accType,
                                Value firstIn = Value(),
                                Value firstOut = Value()) {
  Type weightElement = cast<MemRefType>(weight.getType()).getElementType();
  emitVectorRowUpdates(
      b, loc, registers, acc, dsts, srcs, channelsIn, channelsOut,
      [&](OpBuilder &fb, Location floc, Value ci, Value column, int64_t width) {
        Value w = vector::LoadOp::create(
            fb, floc, VectorType::get({width}, weightElement), weight,
            ValueRange{offset, ci, column});
        if (weightElement != accType)
          w = arith::ExtFOp::create(fb, floc, VectorType::get({width}, accType),
                                    w);
        return w;
      },
      [&](OpBuilder &fb, Location floc, Value src, Value ci) {
        return loadAs(fb, floc, features, {src, addOffset(fb, floc, firstIn, ci)},
                      accType);
      },
      firstOut);
}

/// The grouped form of emitVectorRowUpdate: one register-blocked update per
/// group, over the group's `channelsIn` input and `groupChannelsOut` output
/// channels.
static void emitGroupedRowUpdate(OpBuilder &b, Location loc,
                                 const VectorRegisters &registers, Value acc,
                                 ArrayRef<Value> dsts, Value features,
                                 ArrayRef<Value> srcs, Value weight,
                                 Value offset, Value channelsIn, int64_t groups,
                                 int64_t groupChannelsOut, Type accType) {
  forEachGroup(b, loc, groups, channelsIn,
               indexConst(b, loc, groupChannelsOut),
               [&](OpBuilder &gb, Location gloc, Value firstIn, Value firstOut) {
                 emitVectorRowUpdate(gb, gloc, registers, acc, dsts, features,
                                     srcs, weight, offset, channelsIn,
                                     groupChannelsOut, accType, firstIn,
                                     firstOut);
               });
}

/// The depthwise form (a channel per group, `K x 1 x C` weight):
/// acc[dsts[g], c] += features[srcs[g], c] * weight[offset, 0, c], a vector
/// of channels at a time, each weight chunk loaded once for the group.
static void emitDepthwiseRowUpdate(OpBuilder &b, Location loc,
                                   const VectorRegisters &registers, Value acc,
                                   ArrayRef<Value> dsts, Value features,
                                   ArrayRef<Value> srcs, Value weight,
                                   Value offset, int64_t channels,
                                   Type accType) {
  Value zero = indexConst(b, loc, 0);
  int64_t start = 0;
  for (int64_t width : rowChunks(channels, registers,
                                 accType.getIntOrFloatBitWidth(),
                                 static_cast<int64_t>(dsts.size()))) {
    Value column = indexConst(b, loc, start);
    start += width;
    auto accVector = VectorType::get({width}, accType);
    auto asAcc = [&](Value memref, ValueRange at) -> Value {
      Type element = cast<MemRefType>(memref.getType()).getElementType();
      Value v = vector::LoadOp::create(
          b, loc, VectorType::get({width}, element), memref, at);
      if (element != accType)
        v = arith::ExtFOp::create(b, loc, accVector, v);
      return v;
    };
    Value w = asAcc(weight, {offset, zero, column});
    for (auto [src, dst] : llvm::zip_equal(srcs, dsts)) {
      Value sum = vector::LoadOp::create(b, loc, accVector, acc,
                                         ValueRange{dst, column});
      Value x = asAcc(features, {src, column});
      vector::StoreOp::create(b, loc,
                              vector::FMAOp::create(b, loc, x, w, sum), acc,
                              ValueRange{dst, column});
    }
  }
}

/// acc[dst, co] += features[src, :] . weight[offset, :, co], one scalar
/// product at a time in input-channel order.
/// With `firstIn`, features[src, firstIn + ci] (a group's input channels).
static void emitDotUpdate(OpBuilder &b, Location loc, Value acc, Value dst,
                          Value co, Value features, Value src, Value weight,
                          Value offset, Value channelsIn, Type accType,
                          Value firstIn = Value()) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value start = memref::LoadOp::create(b, loc, acc, ValueRange{dst, co});
  auto dot = scf::ForOp::create(
      b, loc, zero, channelsIn, one, ValueRange{start},
      [&](OpBuilder &db, Location dloc, Value ci, ValueRange sum) {
        Value x = loadAs(db, dloc, features,
                         {src, addOffset(db, dloc, firstIn, ci)}, accType);
        Value w = loadAs(db, dloc, weight, {offset, ci, co}, accType);
        Value product = arith::MulFOp::create(db, dloc, x, w);
        scf::YieldOp::create(
            db, dloc,
            ValueRange{arith::AddFOp::create(db, dloc, sum[0], product)});
      });
  memref::StoreOp::create(b, loc, dot.getResult(0), acc, ValueRange{dst, co});
}

/// The same for a dynamic output width, one scalar dot product per output
/// channel.
static void emitScalarRowUpdate(OpBuilder &b, Location loc, Value acc,
                                Value dst, Value features, Value src,
                                Value weight, Value offset, Value channelsIn,
                                Value channelsOut, Type accType, int64_t groups,
                                Value groupChannelsOut) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  scf::ForOp::create(
      b, loc, zero, channelsOut, one, ValueRange{},
      [&](OpBuilder &cb, Location cloc, Value co, ValueRange) {
        emitDotUpdate(cb, cloc, acc, dst, co, features, src, weight, offset,
                      channelsIn, accType,
                      groupFirstInput(cb, cloc, co, groups, channelsIn,
                                      groupChannelsOut));
        scf::YieldOp::create(cb, cloc);
      });
}

/// GPU form of the convolution: for j in offsets, parallel over (pair of j,
/// output channel), one dot product each. Consecutive items are consecutive
/// output channels of one pair, so a warp reads one feature row and
/// consecutive weights.
static void emitPairChannelConv(OpBuilder &b, Location loc,
                                const RulebookBuffers &rulebook, int64_t volume,
                                bool inverse, Value acc, Value features,
                                Value weight, Value channelsIn,
                                Value channelsOut, Type accType, int64_t groups,
                                Value groupChannelsOut, StringRef role) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  forEachOffset(
      b, loc, rulebook, volume,
      [&](OpBuilder &ob, Location oloc, Value offset, Value begin, Value end) {
        markKernel(
            scf::ParallelOp::create(
                ob, oloc, ValueRange{begin, zero}, ValueRange{end, channelsOut},
                ValueRange{one, one},
                [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                  auto [src, dst] = pairRows(pb, ploc, rulebook, inverse, ivs[0]);
                  emitDotUpdate(pb, ploc, acc, dst, ivs[1], features, src,
                                weight, offset, channelsIn, accType,
                                groupFirstInput(pb, ploc, ivs[1], groups,
                                                channelsIn, groupChannelsOut));
                }),
            role);
      });
}

/// `<what>_<element type>_<Cin>x<Cout>` (`dyn` for a dynamic count), then
/// `_g<groups>` for a grouped conv.
static std::string computeRole(StringRef what, Type elementType,
                               MemRefType weightType, int64_t groups = 1) {
  std::string role;
  llvm::raw_string_ostream os(role);
  os << what << "_" << elementType << "_";
  auto dim = [&](int64_t i) {
    if (weightType.isDynamicDim(i))
      os << "dyn";
    else
      os << weightType.getDimSize(i);
  };
  dim(1);
  os << "x";
  dim(2);
  if (groups != 1)
    os << "_g" << groups;
  return role;
}

/// The GPU's convolution as one implicit GEMM (ImplicitGemm.cpp): every
/// output row written once, in the result's element type. Features of the
/// wrong length are reported and leave the result at its bias (or zero), as
/// the gather-scatter form does.
static Value lowerImplicitGemmConv(LoweringContext &ctx, OpBuilder &b,
                                   RulebookConvOp op,
                                   const RulebookBuffers &rulebook,
                                   Value features, Value weight, Value bias,
                                   const EpilogueBuffers &epilogue,
                                   Value destination) {
  Location loc = op.getLoc();
  bool inverse = op.getInverse();
  int64_t volume = op.getRulebook().getType().getGeometry().getKernelVolume();
  auto weightType = cast<MemRefType>(weight.getType());
  Type elementType = weightType.getElementType();
  Value rows = inverse ? rulebook.numIn : rulebook.numOut;
  ImplicitGemmOperands operands;
  operands.rows = rows;
  operands.features = features;
  operands.weight = weight;
  operands.bias = bias;
  operands.epilogue = epilogue;
  operands.volume = volume;
  operands.channelsIn = weightType.getDimSize(1);
  operands.channelsOut = weightType.getDimSize(2);
  operands.accType = accumulatorType(elementType);
  Value channelsOut = indexConst(b, loc, operands.channelsOut);
  operands.result =
      destination
          ? destination
          : memref::AllocOp::create(
                b, bufferLoc(loc, "the output features of a convolution"),
                MemRefType::get({ShapedType::kDynamic, operands.channelsOut},
                                elementType),
                ValueRange{rows})
                .getResult();
  // The table and schedule depend on the rulebook only: built before the
  // first conv that uses it, shared by the later ones.
  if (ArrayRef<Value> shared =
          ctx.lookupDerived(rulebook.offsets, inverse, op);
      !shared.empty()) {
    operands.table = shared[0];
    operands.schedule = TileSchedule{shared[1], shared[2]};
  } else {
    operands.table =
        buildNeighbourTable(b, loc, rulebook, volume, inverse, rows);
    operands.schedule =
        buildTileSchedule(ctx, b, loc, operands.table, volume, rows);
    ctx.recordDerived(rulebook.offsets, inverse,
                      {operands.table.getDefiningOp(),
                       {operands.table, operands.schedule.order,
                        operands.schedule.groupOffsets}});
  }
  Value ok =
      checkFeatureRows(ctx, b, loc, features,
                       inverse ? rulebook.numOut : rulebook.numIn, inverse);
  // Epilogue operands of the wrong size are not read: the result is then
  // the bias, as for features of the wrong length.
  if (epilogue)
    ok = arith::AndIOp::create(
        b, loc, ok,
        checkEpilogueOperands(ctx, b, loc, epilogue, rows, channelsOut));
  auto guard = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/true);
  OpBuilder tb(guard.thenBlock()->getTerminator());
  GemmTiles tiles = GemmTiles::choose(operands.channelsIn, operands.channelsOut,
                                      elementType, ctx.getGPUMatmul());
  // A tuned entry for these channels, type and math replaces the choice.
  if (const GPUTileTable *table = ctx.getTileTable())
    if (std::optional<GemmTiles> tuned =
            table->lookup(operands.channelsIn, operands.channelsOut,
                          elementType, tiles.math))
      tiles = *tuned;
  std::string role =
      computeRole(inverse ? "inverse_conv" : "conv", elementType, weightType);
  if (tiles.usesTensorCores())
    emitTensorCoreConv(tb, loc, operands, tiles, role);
  else
    emitImplicitGemmConv(tb, loc, operands, tiles, role);
  OpBuilder eb(guard.elseBlock()->getTerminator());
  Value zero = indexConst(eb, loc, 0), one = indexConst(eb, loc, 1);
  markKernel(
      scf::ParallelOp::create(
          eb, loc, ValueRange{zero, zero}, ValueRange{rows, channelsOut},
          ValueRange{one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value value = bias ? loadAs(pb, ploc, bias, ivs[1], elementType)
                               : arith::ConstantOp::create(
                                     pb, ploc, pb.getZeroAttr(elementType))
                                     .getResult();
            memref::StoreOp::create(pb, ploc, value, operands.result, ivs);
          }),
      "init_rows");
  if (destination)
    return destination;
  return castToChecked(ctx, b, loc, operands.result,
                       resultBufferType(op.getOutFeatures()),
                       SizeCheck::ConvRows);
}

bool lowering::lowersToImplicitGemm(const LoweringContext &ctx,
                                    RulebookConvOp op) {
  // The implicit GEMM tiles one dense Cin x Cout weight per offset; grouped
  // convs take the pair-channel form.
  auto weightType = cast<ShapedType>(op.getWeight().getType());
  return ctx.getTarget() == LoopTarget::GPU && op.getGroups() == 1 &&
         ctx.getGPUConv() == GPUConv::ImplicitGemm &&
         !weightType.isDynamicDim(1) && !weightType.isDynamicDim(2);
}

Value lowering::lowerRulebookConv(LoweringContext &ctx, OpBuilder &b,
                                  RulebookConvOp op,
                                  const RulebookBuffers &rulebook,
                                  Value features, Value weight, Value bias,
                                  const EpilogueBuffers &epilogue,
                                  Value destination) {
  Location loc = op.getLoc();
  bool inverse = op.getInverse();
  int64_t volume = op.getRulebook().getType().getGeometry().getKernelVolume();
  Type elementType =
      cast<RankedTensorType>(op.getFeatures().getType()).getElementType();
  Type accType = accumulatorType(elementType);
  Value rows = inverse ? rulebook.numIn : rulebook.numOut;
  // A group's input channels (all of them without groups).
  Value channelsIn = memref::DimOp::create(b, loc, weight, 1);
  Value channelsOut = memref::DimOp::create(b, loc, weight, 2);
  int64_t groups = op.getGroups();
  Value groupChannelsOut =
      groups == 1 ? channelsOut
                  : arith::DivUIOp::create(b, loc, channelsOut,
                                           indexConst(b, loc, groups))
                        .getResult();

  auto weightType = cast<MemRefType>(weight.getType());
  if (lowersToImplicitGemm(ctx, op))
    return lowerImplicitGemmConv(ctx, b, op, rulebook, features, weight, bias,
                                 epilogue, destination);

  auto initialValue = [&](OpBuilder &pb, Location ploc, Value, Value c) {
    if (bias)
      return loadAs(pb, ploc, bias, c, accType);
    return arith::ConstantOp::create(pb, ploc, pb.getZeroAttr(accType))
        .getResult();
  };
  // The sums accumulate in the destination where they have its type.
  Value acc;
  if (destination && accType == elementType) {
    acc = destination;
    fillRows(b, loc, acc, rows, channelsOut, initialValue);
  } else {
    acc = allocRows(b, bufferLoc(loc, "the output features of a convolution"),
                    rows, channelsOut, accType, initialValue);
  }
  std::string role = computeRole(inverse ? "inverse_conv" : "conv",
                                 elementType, weightType, groups);
  OpBuilder pairs = guardFeatureRows(ctx, b, loc, features,
                                     inverse ? rulebook.numOut : rulebook.numIn,
                                     inverse ? 1 : 0);
  if (ctx.getTarget() == LoopTarget::GPU) {
    emitPairChannelConv(pairs, loc, rulebook, volume, inverse, acc, features,
                        weight, channelsIn, channelsOut, accType, groups,
                        groupChannelsOut, role);
    if (epilogue)
      return finishWithEpilogue(ctx, b, loc, acc, rows, channelsOut,
                                resultBufferType(op.getOutFeatures()), epilogue,
                                /*chunks=*/{}, destination);
    return finish(ctx, b, loc, acc, rows, channelsOut,
                  resultBufferType(op.getOutFeatures()), SizeCheck::ConvRows,
                  destination);
  }
  std::optional<int64_t> staticChannelsOut;
  if (!weightType.isDynamicDim(2))
    staticChannelsOut = weightType.getDimSize(2);
  // Groups of pairs share each weight load (no two pairs of one offset
  // write the same row, so a group's updates are independent).
  int64_t groupSize = staticChannelsOut ? kPairsPerGroup : 1;
  // Bytes per site that a pass over the offsets touches: a feature row and
  // an accumulator row.
  int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  int64_t accBytes = accType.getIntOrFloatBitWidth() / 8;
  Value bytesPerRow = arith::AddIOp::create(
      pairs, loc,
      arith::MulIOp::create(pairs, loc,
                            memref::DimOp::create(pairs, loc, features, 1),
                            indexConst(pairs, loc, elementBytes)),
      arith::MulIOp::create(pairs, loc, channelsOut,
                            indexConst(pairs, loc, accBytes)));
  Value chunks = pairChunks(
      pairs, loc,
      arith::MaxSIOp::create(pairs, loc, rulebook.numIn, rulebook.numOut),
      bytesPerRow, ctx.getChunkBytes());
  forEachPair(
      pairs, loc, rulebook, volume, inverse, groupSize, chunks, role,
      [&](OpBuilder &pb, Location ploc, Value offset, ArrayRef<Value> srcs,
          ArrayRef<Value> dsts) {
        // acc[dst, :] += features[src, :] @ weight[offset]
        if (!staticChannelsOut)
          emitScalarRowUpdate(pb, ploc, acc, dsts[0], features, srcs[0], weight,
                              offset, channelsIn, channelsOut, accType, groups,
                              groupChannelsOut);
        else if (groups == 1)
          emitVectorRowUpdate(pb, ploc, ctx.getVectorRegisters(), acc, dsts,
                              features, srcs, weight, offset, channelsIn,
                              *staticChannelsOut, accType);
        else if (groups == *staticChannelsOut && weightType.getDimSize(1) == 1)
          emitDepthwiseRowUpdate(pb, ploc, ctx.getVectorRegisters(), acc, dsts,
                                 features, srcs, weight, offset,
                                 *staticChannelsOut, accType);
        else
          emitGroupedRowUpdate(pb, ploc, ctx.getVectorRegisters(), acc, dsts,
                               features, srcs, weight, offset, channelsIn,
                               groups, *staticChannelsOut / groups, accType);
      });
  if (epilogue) {
    // Rows are final only once the walk is over: the last offset that
    // updates a row is not known where the row is updated.
    SmallVector<int64_t> chunks;
    if (staticChannelsOut)
      chunks = rowChunks(*staticChannelsOut, ctx.getVectorRegisters(),
                         accType.getIntOrFloatBitWidth(), kPairsPerGroup);
    return finishWithEpilogue(ctx, b, loc, acc, rows, channelsOut,
                              resultBufferType(op.getOutFeatures()), epilogue,
                              chunks, destination);
  }
  return finish(ctx, b, loc, acc, rows, channelsOut,
                resultBufferType(op.getOutFeatures()), SizeCheck::ConvRows,
                destination);
}

Value lowering::lowerRulebookPool(LoweringContext &ctx, OpBuilder &b,
                                  RulebookPoolOp op,
                                  const RulebookBuffers &rulebook,
                                  Value features) {
  Location loc = op.getLoc();
  bool isMax = op.getKind() == PoolKind::Max;
  int64_t volume = op.getRulebook().getType().getGeometry().getKernelVolume();
  Type elementType =
      cast<RankedTensorType>(op.getFeatures().getType()).getElementType();
  Type accType = accumulatorType(elementType);
  Value rows = rulebook.numOut;
  Value channels = memref::DimOp::create(b, loc, features, 1);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);

  // Every output has at least one contributor, so -inf never survives a max.
  auto initial = cast<FloatType>(accType);
  TypedAttr start =
      isMax ? TypedAttr(b.getFloatAttr(
                  initial, APFloat::getInf(initial.getFloatSemantics(),
                                           /*Negative=*/true)))
            : TypedAttr(b.getZeroAttr(accType));
  Value acc =
      allocRows(b, loc, rows, channels, accType,
                [&](OpBuilder &pb, Location ploc, Value, Value) {
                  return arith::ConstantOp::create(pb, ploc, start).getResult();
                });
  Value contributors;
  if (!isMax) {
    contributors = alloc1d(b, loc, b.getI32Type(), rows);
    markKernel(scf::ParallelOp::create(
                   b, loc, ValueRange{zero}, ValueRange{rows}, ValueRange{one},
                   [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                     memref::StoreOp::create(pb, ploc, i32Const(pb, ploc, 0),
                                             contributors, ivs);
                   }),
               "zero_counts");
  }
  std::string role;
  llvm::raw_string_ostream(role)
      << (isMax ? "max_pool_" : "avg_pool_") << elementType;
  OpBuilder pairs =
      guardFeatureRows(ctx, b, loc, features, rulebook.numIn, /*what=*/0);
  Value chunks = pairChunks(
      pairs, loc,
      arith::MaxSIOp::create(pairs, loc, rulebook.numIn, rulebook.numOut),
      arith::MulIOp::create(pairs, loc, channels,
                            indexConst(pairs, loc,
                                       (elementType.getIntOrFloatBitWidth() +
                                        accType.getIntOrFloatBitWidth()) /
                                           8)),
      ctx.getChunkBytes());
  forEachPair(
      pairs, loc, rulebook, volume, /*inverse=*/false, /*groupSize=*/1, chunks,
      role,
      [&](OpBuilder &pb, Location ploc, Value, ArrayRef<Value> srcs,
          ArrayRef<Value> dsts) {
        Value src = srcs[0], dst = dsts[0];
        if (!isMax) {
          Value count = memref::LoadOp::create(pb, ploc, contributors, dst);
          memref::StoreOp::create(
              pb, ploc,
              arith::AddIOp::create(pb, ploc, count, i32Const(pb, ploc, 1)),
              contributors, dst);
        }
        scf::ForOp::create(
            pb, ploc, zero, channels, one, ValueRange{},
            [&](OpBuilder &cb, Location cloc, Value c, ValueRange) {
              Value x = loadAs(cb, cloc, features, {src, c}, accType);
              Value current =
                  memref::LoadOp::create(cb, cloc, acc, ValueRange{dst, c});
              Value next =
                  isMax
                      ? arith::MaximumFOp::create(cb, cloc, current, x)
                            .getResult()
                      : arith::AddFOp::create(cb, cloc, current, x).getResult();
              memref::StoreOp::create(cb, cloc, next, acc, ValueRange{dst, c});
              scf::YieldOp::create(cb, cloc);
            });
      });
  if (!isMax) {
    markKernel(
        scf::ParallelOp::create(
            b, loc, ValueRange{zero, zero}, ValueRange{rows, channels},
            ValueRange{one, one},
            [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
              Value count = arith::SIToFPOp::create(
                  pb, ploc, accType,
                  memref::LoadOp::create(pb, ploc, contributors, ivs[0]));
              Value sum = memref::LoadOp::create(pb, ploc, acc, ivs);
              memref::StoreOp::create(
                  pb, ploc, arith::DivFOp::create(pb, ploc, sum, count), acc,
                  ivs);
            }),
        "average");
  }
  return finish(ctx, b, loc, acc, rows, channels,
                resultBufferType(op.getOutFeatures()), SizeCheck::PoolRows,
                /*destination=*/Value());
}
