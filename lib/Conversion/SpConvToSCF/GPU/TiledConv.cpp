//===- TiledConv.cpp - The GPU's implicit-GEMM conv -----------------------===//
//
// Part of the spconv-mlir project.
//
// A conv with static channel counts and no groups as one tiled,
// output-stationary GEMM over the rulebook's neighbour table and tile
// schedule, derived once per rulebook and shared by its convs; a subm build
// whose only readers are such convs makes the table directly.
//
//===----------------------------------------------------------------------===//

#include "GPU/GPU.h"
#include "GPU/ImplicitGemm.h"
#include "GPU/TileTable.h"
#include "Rulebook/BuildStatus.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

bool lowering::tiledFormApplies(int64_t groups, Type kernelBlocks) {
  // The tiles are dense Cin x Cout blocks of one offset; grouped convs take
  // the per-pair forms.
  auto type = cast<ShapedType>(kernelBlocks);
  return groups == 1 && !type.isDynamicDim(1) && !type.isDynamicDim(2);
}

bool lowering::tiledFormApplies(RulebookConvOp op) {
  return tiledFormApplies(op.getGroups(), op.getWeight().getType());
}

// Features of the wrong length are reported and leave the result at its
// bias (or zero), as the per-pair form does.
Value lowering::lowerTiledConv(LoweringContext &ctx, OpBuilder &b,
                               RulebookConvOp op, const ConvBuffers &buffers,
                               const TiledFormOptions &options) {
  const RulebookBuffers &rulebook = buffers.rulebook;
  Value features = buffers.features, weight = buffers.weight,
        bias = buffers.bias, destination = buffers.destination;
  const EpilogueBuffers &epilogue = buffers.epilogue;
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
  if (ArrayRef<Value> shared = ctx.lookupDerived(rulebook.offsets, inverse, op);
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
  OpBuilder tb(guard.thenBlock()->getTerminator(), b.getListener());
  GemmTiles tiles =
      GemmTiles::choose(operands.channelsIn, operands.channelsOut, elementType,
                        options.matmul, options.mmaOps);
  // A tuned entry for these channels, type and math replaces the choice.
  if (const GPUTileTable *table = options.tileTable)
    if (std::optional<GemmTiles> tuned = table->lookup(
            operands.channelsIn, operands.channelsOut, elementType, tiles.math))
      tiles = *tuned;
  choosePipeline(tiles, operands);
  std::string role =
      computeRole(inverse ? "inverse_conv" : "conv", elementType, weightType);
  // TF32 tiles read their f32 inputs rounded once, before the launch: the
  // staging then copies them as they are (docs/GPU.md, "TF32: rounded
  // before the launch").
  // (Features and weights share their element type: the op's verifier.)
  if (tiles.math == GemmMath::TF32MMA && elementType.isF32())
    roundInputsToTF32(tb, loc, operands);
  if (tiles.usesTensorCores())
    emitTensorCoreConv(tb, loc, operands, tiles, options.mmaOps, role);
  else
    emitImplicitGemmConv(tb, loc, operands, tiles, role);
  OpBuilder eb(guard.elseBlock()->getTerminator(), b.getListener());
  fillRows(eb, loc, operands.result, rows, channelsOut,
           [&](OpBuilder &pb, Location ploc, Value, Value c) {
             return initialSum(pb, ploc, bias, c, elementType);
           });
  if (destination)
    return destination;
  return castToChecked(ctx, b, loc, operands.result,
                       resultBufferType(op.getOutFeatures()),
                       SizeCheck::ConvRows);
}
