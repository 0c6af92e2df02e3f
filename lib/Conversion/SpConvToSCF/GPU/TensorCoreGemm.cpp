//===- TensorCoreGemm.cpp - The implicit-GEMM conv on tensor cores --------===//
//
// Part of the spconv-mlir project.
//
// The output-stationary convolution of ImplicitGemm.cpp with its slices
// multiplied by tensor cores: the block's threads stage gathered input rows
// (rows x depth) and the weight slice (depth x cols) in workgroup memory,
// row-major with padded rows; each warp loads fragments of them and
// accumulates its 16x16s of the tile in f32 across all offsets and slices,
// through gpu.subgroup_mma or nvgpu.mma.sync ops (WarpMma.h). At the end,
// one fragment row at a time, the warps store their accumulators to a
// workgroup tile and the block writes it out with the bias, consecutive
// threads on consecutive channels, each output once, rounded once to the
// result type.
//
// f16 multiplies as f16 fragments (k 16); bf16 as tf32 fragments (k 8),
// exactly, since every bf16 value is a tf32 value; f32 (only
// when TF32 is asked for) as tf32 fragments of its inputs rounded to the
// nearest tf32 value, ties away from zero (PTX cvt.rna.tf32.f32), so the
// rounding is ours, not the hardware's truncation: once per input element,
// before the launch (roundInputsToTF32).
//
//===----------------------------------------------------------------------===//

#include "GPU/GemmKernel.h"
#include "GPU/WarpMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;
using namespace mlir::spconv::lowering::gemm;

/// `value` (f32) rounded to the nearest tf32 value (10 mantissa bits), ties
/// away from zero; infinities and NaNs pass unchanged.
static Value roundToTF32(OpBuilder &b, Location loc, Value value) {
  Type bitsType = b.getI32Type();
  auto splat = [&](uint32_t word) -> Value {
    return arith::ConstantOp::create(b, loc,
                                     b.getI32IntegerAttr(int32_t(word)));
  };
  Value bits = arith::BitcastOp::create(b, loc, bitsType, value);
  Value exponent = arith::AndIOp::create(b, loc, bits, splat(0x7f800000));
  Value finite = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                       exponent, splat(0x7f800000));
  // Half a tf32 unit in the last place, then drop the 13 low bits: the
  // magnitude rounds half up, which for a sign-magnitude format is ties
  // away from zero.
  Value rounded = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, bits, splat(0x1000)),
      splat(0xffffe000u));
  Value result = arith::BitcastOp::create(b, loc, value.getType(), rounded);
  return arith::SelectOp::create(b, loc, finite, result, value);
}

void lowering::roundInputsToTF32(OpBuilder &b, Location loc,
                                 ImplicitGemmOperands &operands) {
  auto roundedCopy = [&](Value source, StringRef what, StringRef role) {
    auto type = cast<MemRefType>(source.getType());
    SmallVector<Value> sizes, dynamicSizes;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        sizes.push_back(indexConst(b, loc, type.getDimSize(d)));
        continue;
      }
      sizes.push_back(memref::DimOp::create(b, loc, source, d));
      dynamicSizes.push_back(sizes.back());
    }
    Value copy = memref::AllocOp::create(
        b, bufferLoc(loc, what),
        MemRefType::get(type.getShape(), type.getElementType()), dynamicSizes);
    SmallVector<Value> zeros(sizes.size(), indexConst(b, loc, 0));
    SmallVector<Value> ones(sizes.size(), indexConst(b, loc, 1));
    markKernel(scf::ParallelOp::create(
                   b, loc, zeros, sizes, ones,
                   [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                     Value value =
                         memref::LoadOp::create(pb, ploc, source, ivs);
                     memref::StoreOp::create(
                         pb, ploc, roundToTF32(pb, ploc, value), copy, ivs);
                   }),
               role);
    return copy;
  };
  operands.features = roundedCopy(
      operands.features, "the features rounded to TF32", "round_tf32_features");
  operands.weight = roundedCopy(operands.weight, "the weights rounded to TF32",
                                "round_tf32_weights");
  operands.inputsRoundedToTF32 = true;
}

void lowering::emitTensorCoreConv(OpBuilder &b, Location loc,
                                  const ImplicitGemmOperands &operands,
                                  const GemmTiles &tiles, GPUMmaOps ops,
                                  StringRef role) {
  assert(tiles.usesTensorCores() && "the FMA form is ImplicitGemm.cpp's");
  MLIRContext *context = b.getContext();
  Type f32 = b.getF32Type();
  Type fragElement = tiles.math == GemmMath::F16MMA    ? b.getF16Type()
                     : tiles.math == GemmMath::BF16MMA ? b.getBF16Type()
                                                       : f32;
  Type featureElement =
      cast<MemRefType>(operands.features.getType()).getElementType();
  // TF32 multiplies f32 inputs rounded before the launch: the tensor cores'
  // truncation of them is exact.
  assert((tiles.math != GemmMath::TF32MMA || !featureElement.isF32() ||
          operands.inputsRoundedToTF32) &&
         "TF32 inputs not rounded (roundInputsToTF32)");
  Type weightElement =
      cast<MemRefType>(operands.weight.getType()).getElementType();
  bool copies = featureElement == fragElement && weightElement == fragElement;
  int64_t threads = tiles.threads();
  // Rows padded by 16 bytes: fragments start 32-byte aligned (WMMA's
  // requirement, with the 32-byte aligned buffers) and consecutive rows of a
  // fragment fall in different banks.
  int64_t inputStride = tiles.inputStride();
  int64_t weightStride = tiles.weightStride();
  int64_t sumStride = tiles.sumStride();
  assert(tiles.sharedBytes() <= tiles.sharedLimit() &&
         "tiles exceed shared memory");

  Value inputTile, weightTile, sumTile;
  TileLoop tile =
      beginTileLoop(b, loc, operands, tiles, role, [&](OpBuilder &ab) {
        IntegerAttr align = ab.getI64IntegerAttr(32);
        inputTile = memref::AllocaOp::create(
            ab, loc,
            workgroupType(context, {tiles.stages * tiles.rows, inputStride},
                          fragElement),
            align);
        weightTile = memref::AllocaOp::create(
            ab, loc,
            workgroupType(context, {tiles.stages * tiles.depth, weightStride},
                          fragElement),
            align);
        sumTile = memref::AllocaOp::create(
            ab, loc, workgroupType(context, {tiles.sumRows(), sumStride}, f32),
            align);
      });
  OpBuilder &kb = tile.body;
  Value thread = tile.thread, row0 = tile.row0, col0 = tile.col0;

  // This warp's fragments start at (warpRow0 + 16 i, warpCol0 + 16 j).
  WarpTile warp;
  warp.tiles = &tiles;
  warp.fragElement = fragElement;
  warp.inputTile = inputTile;
  warp.weightTile = weightTile;
  warp.sumTile = sumTile;
  warp.thread = thread;
  Value warpIndex =
      arith::DivUIOp::create(kb, loc, thread, indexConst(kb, loc, 32));
  Value warpsPerRow = indexConst(kb, loc, tiles.warpsPerRow());
  warp.rowOfWarps = arith::DivUIOp::create(kb, loc, warpIndex, warpsPerRow);
  warp.warpRow0 = arith::MulIOp::create(
      kb, loc, warp.rowOfWarps, indexConst(kb, loc, 16 * tiles.fragRows));
  warp.warpCol0 = arith::MulIOp::create(
      kb, loc, arith::RemUIOp::create(kb, loc, warpIndex, warpsPerRow),
      indexConst(kb, loc, 16 * tiles.fragCols));
  // WMMA fragments hold no bf16 (GemmTiles::choose multiplies it as tf32
  // there).
  assert((ops != GPUMmaOps::SubgroupMma || tiles.math != GemmMath::BF16MMA) &&
         "bf16 fragments on WMMA");
  std::unique_ptr<WarpMma> mma = ops == GPUMmaOps::SubgroupMma
                                     ? createSubgroupMma(kb, loc, warp)
                                     : createMmaSync(kb, loc, warp);

  // Both row-major, in the fragments' type.
  SmallVector<Value> sums = forEachSlice(
      loc, operands, tiles, tile, mma->zeroAccumulators(kb, loc), fragElement,
      [&](OpBuilder &ib, Location iloc, Value m, Value kk, Value values) {
        storeStaged(ib, iloc, values, inputTile, ValueRange{m, kk});
      },
      [&](OpBuilder &ib, Location iloc, Value kk, Value n, Value values) {
        storeStaged(ib, iloc, values, weightTile, ValueRange{kk, n});
      },
      [&](OpBuilder &sb, Location sloc, ValueRange acc, Value stage) {
        return mma->multiply(sb, sloc, acc, stage);
      },
      // f16 stages f16 as it is: cp.async straight into the tiles.
      copies ? StagingBuffers{inputTile, weightTile} : StagingBuffers{});

  // The epilogue, in one pass per fragment row: every warp stores its
  // fragments of row i to the workgroup tile (16 rows per row of warps), and
  // the block writes those rows out, bias added here, each output once,
  // `chunks.width` consecutive channels of a row per thread and store: four
  // at most, one 16-byte load of the sums (eight took a 4 x 2 warp tile's
  // registers past its budget: f16 64 -> 64 spilled on sm_80). The passes
  // keep the f32 sums of a 256-row tile within static shared memory.
  OutputChunks chunks =
      chooseOutputChunks(kb, loc, operands, tiles.cols, /*limit=*/4);
  int64_t width = chunks.width;
  auto sumChunk = VectorType::get({width}, f32);
  for (int64_t i = 0; i < tiles.fragRows; ++i) {
    mma->storeFragmentRow(kb, loc, sums, i);
    gpu::BarrierOp::create(kb, loc);
    forEachItemOfBlock(
        kb, loc, thread, threads, tiles.sumRows() * tiles.cols / width,
        [&](OpBuilder &ib, Location iloc, Value item) {
          Value chunksPerRow = indexConst(ib, iloc, tiles.cols / width);
          Value sixteen = indexConst(ib, iloc, 16);
          Value m = arith::DivUIOp::create(ib, iloc, item, chunksPerRow);
          Value n = arith::MulIOp::create(
              ib, iloc, arith::RemUIOp::create(ib, iloc, item, chunksPerRow),
              indexConst(ib, iloc, width));
          // Sum row m is row m % 16 of fragment row i of warp row m / 16.
          Value tileRow = arith::AddIOp::create(
              ib, iloc,
              arith::MulIOp::create(
                  ib, iloc, arith::DivUIOp::create(ib, iloc, m, sixteen),
                  indexConst(ib, iloc, 16 * tiles.fragRows)),
              arith::AddIOp::create(
                  ib, iloc, arith::RemUIOp::create(ib, iloc, m, sixteen),
                  indexConst(ib, iloc, 16 * i)));
          Value slot = arith::AddIOp::create(ib, iloc, row0, tileRow);
          Value column = arith::AddIOp::create(ib, iloc, col0, n);
          // A chunk is all in or all past the channels (chooseOutputChunks).
          Value ok = arith::AndIOp::create(
              ib, iloc,
              arith::CmpIOp::create(ib, iloc, arith::CmpIPredicate::ult, slot,
                                    operands.rows),
              arith::CmpIOp::create(
                  ib, iloc, arith::CmpIPredicate::ult, column,
                  indexConst(ib, iloc, operands.channelsOut)));
          auto write =
              scf::IfOp::create(ib, iloc, ok, /*withElseRegion=*/false);
          OpBuilder wb(write.thenBlock()->getTerminator(), b.getListener());
          Value row = rowOfSlot(wb, iloc, operands, slot);
          if (width == 1) {
            storeOutput(
                wb, iloc, operands, row, column,
                memref::LoadOp::create(wb, iloc, sumTile, ValueRange{m, n}));
            return;
          }
          // The sums' rows are whole 16-byte units (sumStride) and n a
          // multiple of the chunk.
          Value values = vector::LoadOp::create(
              wb, iloc, sumChunk, sumTile, ValueRange{m, n},
              /*nontemporal=*/false,
              llvm::MaybeAlign(std::min<int64_t>(16, 4 * width)));
          storeOutputChunk(wb, iloc, operands, chunks, row, column, values);
        });
    // The next pass (or the next tile's epilogue) overwrites the sums.
    gpu::BarrierOp::create(kb, loc);
  }
}
