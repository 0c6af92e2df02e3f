//===- ImplicitGemm.cpp - Output-stationary implicit GEMM for the GPU -----===//
//
// Part of the spconv-mlir project.
//
// The GPU convolution as one tiled GEMM per layer. An output-major neighbour
// table (for each output row and kernel offset, the input row or -1) is
// derived from the rulebook's pairs; then a block owns a tile of output rows
// x output channels, walks the offsets and slices of input channels, stages
// the gathered input rows and the weight slice in workgroup memory between
// two barriers, and accumulates in registers. Every output row is written
// once, bias included: no atomics, no scatter, no accumulator
// read-modify-write, and each output sums its terms in one fixed order.
//
//===----------------------------------------------------------------------===//

#include "GPU/GemmKernel.h"

#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;
using namespace mlir::spconv::lowering::gemm;

int64_t GemmTiles::threads() const {
  if (usesTensorCores())
    return 32 * (rows / (16 * fragRows)) * warpsPerRow();
  return (rows / threadRows) * (cols / threadCols);
}

/// The staged inputs, weights and source rows of a tensor-core tile, in
/// bytes.
static int64_t stagingBytes(const GemmTiles &tiles) {
  return tiles.stages *
             (tiles.rows * tiles.inputStride() +
              tiles.depth * tiles.weightStride()) *
             tiles.fragElementBytes() +
         tiles.sourceRowBytes();
}

int64_t GemmTiles::maxRegisters() const {
  // 65536 registers per SM on sm_80 and sm_90, allocated per warp, 8 per
  // thread at a time: the most a thread may hold for one block to fit.
  // The kernels carry no .maxntid (spconv-parallel-loops-to-gpu), so ptxas
  // may take up to 255: a block of more than 256 threads (a tile table's)
  // needs this budget to launch at all.
  int64_t oneBlock = 65536 / (llvm::divideCeil(threads(), 32) * 32) / 8 * 8;
  // A 16 x 16 f32 fragment takes 8 registers per thread. Smaller warp
  // tiles stay below the budget unasked, and ptxas given one it does not
  // need spends it (f16 32 -> 32: 100 registers instead of 80). Two blocks
  // per SM only where the budget holds the accumulators twice over (at
  // 256 threads, 4 x 2 fragments: 128 registers, no spill; a 512-thread
  // tile would get 64 and spill).
  int64_t accumulators = 8 * fragRows * fragCols;
  int64_t twoBlocks = oneBlock / 2 / 8 * 8;
  int64_t budget = oneBlock;
  if (usesTensorCores() && accumulators >= 64 && threads() >= 256 &&
      twoBlocks >= 2 * accumulators)
    budget = twoBlocks;
  // A pipelined tile: no fewer blocks per SM for registers than its shared
  // memory allows on sm_80 (164 KiB, 1 KiB reserved per block), where that
  // leaves room for the accumulators twice over and 64 registers at least
  // (f16 256 x 16: 80, not 81 and a block less). The visit flags (4 bytes
  // an offset) are left out, so that the budget is the tile's alone, as a
  // tile table states it.
  if (stages > 1) {
    int64_t blocks = 164 * 1024 / (sharedBytes() - 4 * offsets + 1024);
    int64_t shared = blocks > 1 ? oneBlock / blocks / 8 * 8 : oneBlock;
    if (shared >= std::max<int64_t>(64, 2 * accumulators))
      budget = std::min(budget, shared);
  }
  return budget < 255 ? budget : 0;
}

int64_t GemmTiles::sumStride() const {
  int64_t padded = cols + 4;
  if (stagingBytes(*this) + sumRows() * padded * 4 <= sharedLimit())
    return padded;
  return cols;
}

int64_t GemmTiles::sharedBytes() const {
  return stagingBytes(*this) + sumRows() * sumStride() * 4;
}

StringRef lowering::gemmMathName(GemmMath math) {
  switch (math) {
  case GemmMath::FMA:
    return "fma";
  case GemmMath::F16MMA:
    return "mma-f16";
  case GemmMath::BF16MMA:
    return "mma-bf16";
  case GemmMath::TF32MMA:
    return "mma-tf32";
  }
  llvm_unreachable("unknown GemmMath");
}

std::optional<GemmMath> lowering::parseGemmMath(StringRef name) {
  for (GemmMath math :
       {GemmMath::FMA, GemmMath::F16MMA, GemmMath::BF16MMA, GemmMath::TF32MMA})
    if (name == gemmMathName(math))
      return math;
  return std::nullopt;
}

GemmTiles GemmTiles::choose(int64_t channelsIn, int64_t channelsOut,
                            Type elementType, GPUMatmul matmul,
                            GPUMmaOps mmaOps) {
  GemmTiles tiles;
  if (matmul != GPUMatmul::FMA &&
      (elementType.isF16() || elementType.isBF16() ||
       (elementType.isF32() && matmul == GPUMatmul::TF32))) {
    // Eight warps. For 64 output channels each warp owns 4 x 2 fragments of
    // 16 x 16: 256-row tiles, because every tile stages the weights of all
    // the offsets it visits, and at 64 channels those weights are as large
    // as the gathered rows (docs/GPU.md's model: 256 rows halve them against
    // 128). Narrower outputs have small weights: 2 x 2 or 2 x 1 fragments
    // per warp, 256 rows x 32 or 16. bf16 multiplies as bf16 on mma.sync;
    // WMMA fragments hold no bf16, it multiplies as tf32 there (which holds
    // every bf16 value exactly).
    if (elementType.isF16())
      tiles.math = GemmMath::F16MMA;
    else if (elementType.isBF16() && mmaOps != GPUMmaOps::SubgroupMma)
      tiles.math = GemmMath::BF16MMA;
    else
      tiles.math = GemmMath::TF32MMA;
    tiles.cols = std::clamp<int64_t>(llvm::PowerOf2Ceil(channelsOut), 16, 64);
    tiles.fragCols = tiles.cols >= 32 ? 2 : 1;
    tiles.fragRows = tiles.cols >= 64 ? 4 : 2;
    tiles.rows = 8 / tiles.warpsPerRow() * tiles.fragRows * 16;
    // Two fragment multiplies per staged slice where Cin allows.
    tiles.depth = std::clamp<int64_t>(llvm::PowerOf2Ceil(channelsIn),
                                      tiles.fragDepth(), 2 * tiles.fragDepth());
    // Fewer warps (shorter tiles) where the buffers would not fit.
    while (tiles.sharedBytes() > kMaxStaticSharedMemoryBytes &&
           tiles.rows > 16 * tiles.fragRows)
      tiles.rows /= 2;
    return tiles;
  }
  tiles.threadCols = 4;
  tiles.threadRows = 4;
  tiles.cols = std::clamp<int64_t>(llvm::PowerOf2Ceil(channelsOut), 4, 64);
  tiles.depth = std::clamp<int64_t>(llvm::PowerOf2Ceil(channelsIn), 1, 16);
  // At least 64 threads (two warps) per block: narrow outputs get taller
  // tiles.
  int64_t colThreads = tiles.cols / tiles.threadCols;
  tiles.rows = std::max<int64_t>(16, 64 / colThreads) * tiles.threadRows;
  return tiles;
}

/// What `spconv.tile` records of `tiles`.
static DictionaryAttr tileAttr(Builder &b, const GemmTiles &tiles) {
  SmallVector<NamedAttribute> entries;
  auto add = [&](StringRef name, int64_t value) {
    entries.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(value)));
  };
  add("threads", tiles.threads());
  add("rows", tiles.rows);
  add("cols", tiles.cols);
  add("depth", tiles.depth);
  if (tiles.stages > 1)
    add("stages", tiles.stages);
  if (int64_t budget = tiles.maxRegisters())
    add("max_registers", budget);
  switch (tiles.math) {
  case GemmMath::FMA:
    add("thread_rows", tiles.threadRows);
    add("thread_cols", tiles.threadCols);
    entries.push_back(b.getNamedAttr("math", b.getStringAttr("fma")));
    break;
  case GemmMath::F16MMA:
  case GemmMath::BF16MMA:
  case GemmMath::TF32MMA:
    add("warp_rows", 16 * tiles.fragRows);
    add("warp_cols", 16 * tiles.fragCols);
    entries.push_back(
        b.getNamedAttr("math", b.getStringAttr(gemmMathName(tiles.math))));
    break;
  }
  return b.getDictionaryAttr(entries);
}

MemRefType gemm::workgroupType(MLIRContext *context, ArrayRef<int64_t> shape,
                               Type type) {
  return MemRefType::get(
      shape, type, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
}

bool gemm::unrollsItems(int64_t threads, int64_t count, bool unrolled) {
  return unrolled && count % threads == 0;
}

void gemm::forEachItemOfBlock(
    OpBuilder &b, Location loc, Value thread, int64_t threads, int64_t count,
    function_ref<void(OpBuilder &, Location, Value)> body, bool unrolled) {
  // As a loop the trip count depends on the thread index, which ptxas does
  // not know to be below the block size: it adds a remainder loop and exit
  // tests (but keeps the addresses' induction, which unrolled code
  // recomputes: callers choose).
  if (unrollsItems(threads, count, unrolled)) {
    for (int64_t i = 0; i < count / threads; ++i)
      body(b, loc,
           b.createOrFold<arith::AddIOp>(loc, thread,
                                         indexConst(b, loc, i * threads)));
    return;
  }
  scf::ForOp::create(b, loc, thread, indexConst(b, loc, count),
                     indexConst(b, loc, threads), ValueRange{},
                     [&](OpBuilder &fb, Location floc, Value item, ValueRange) {
                       body(fb, floc, item);
                       scf::YieldOp::create(fb, floc);
                     });
}

Value gemm::guardedLoad(OpBuilder &b, Location loc, Value condition, Type type,
                        function_ref<Value(OpBuilder &, Location)> load) {
  auto ifOp = scf::IfOp::create(
      b, loc, condition,
      [&](OpBuilder &tb, Location tloc) {
        scf::YieldOp::create(tb, tloc, load(tb, tloc));
      },
      [&](OpBuilder &eb, Location eloc) {
        scf::YieldOp::create(
            eb, eloc,
            arith::ConstantOp::create(eb, eloc, eb.getZeroAttr(type))
                .getResult());
      });
  return ifOp.getResult(0);
}

/// Elements of `memref`'s type in 16 bytes where every stretch the tile
/// stages along its innermost dimension (`extent` elements, `chunk` at a
/// time) can be one 16-byte load: an identity layout whose rows are whole
/// 16-byte units. Else 1.
static int64_t stagingWidth(Value memref, int64_t extent, int64_t chunk) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t bits = type.getElementTypeBitWidth();
  if (!type.getLayout().isIdentity() || bits > 64 || 128 % bits != 0)
    return 1;
  int64_t width = 128 / bits;
  return extent % width == 0 && chunk % width == 0 ? width : 1;
}

Value gemm::isFirstElementAligned(OpBuilder &b, Location loc, Value memref,
                                  int64_t bytes) {
  auto type = cast<MemRefType>(memref.getType());
  Value first = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  // A static offset of 0 (an identity layout) adds nothing.
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || offset != 0) {
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    Value offsetBytes = arith::MulIOp::create(
        b, loc, metadata.getOffset(),
        indexConst(b, loc, type.getElementTypeBitWidth() / 8));
    first = arith::AddIOp::create(b, loc, first, offsetBytes);
  }
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, first, indexConst(b, loc, bytes - 1)),
      indexConst(b, loc, 0));
}

Value gemm::loadAlignedOrSplit(OpBuilder &b, Location loc, Value aligned,
                               VectorType type, Value memref,
                               ValueRange indices) {
  auto load = [&](llvm::MaybeAlign alignment) {
    return [&, alignment](OpBuilder &vb, Location vloc) {
      scf::YieldOp::create(
          vb, vloc,
          vector::LoadOp::create(vb, vloc, type, memref, indices,
                                 /*nontemporal=*/false, alignment)
              .getResult());
    };
  };
  int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
  return scf::IfOp::create(b, loc, aligned, load(llvm::Align(bytes)),
                           load(llvm::MaybeAlign()))
      .getResult(0);
}

/// Whether `memref`'s first element is 16-byte aligned (i1), the condition
/// for stagingWidth's loads to be 16-byte ones; true for a width of 1.
static Value isStagingAligned(OpBuilder &b, Location loc, Value memref,
                              int64_t width) {
  if (width == 1)
    return arith::ConstantIntOp::create(b, loc, 1, 1);
  return isFirstElementAligned(b, loc, memref, 16);
}

void lowering::choosePipeline(GemmTiles &tiles,
                              const ImplicitGemmOperands &operands) {
  // Copied as they are: features and weights of the fragments' 16-bit type.
  auto isHalf = [](Value memref) {
    Type element = cast<MemRefType>(memref.getType()).getElementType();
    return element.isF16() || element.isBF16();
  };
  // The table admits `stages` > 1 only for f16 and bf16 tiles of whole
  // 16-byte rows; the pipeline counts its (offset, slice) steps in 32 bits.
  int64_t steps =
      operands.volume * llvm::divideCeil(operands.channelsIn, tiles.depth);
  if (tiles.pinnedStages == 1 || !tiles.halfFragments() ||
      steps > std::numeric_limits<int32_t>::max() ||
      !isHalf(operands.features) || !isHalf(operands.weight) ||
      stagingWidth(operands.features, operands.channelsIn, tiles.depth) == 1 ||
      stagingWidth(operands.weight, operands.channelsOut, tiles.cols) == 1) {
    tiles.stages = 1;
    return;
  }
  GemmTiles pipelined = tiles;
  pipelined.offsets = operands.volume;
  if (tiles.pinnedStages > 1) {
    pipelined.stages = tiles.pinnedStages;
    tiles = pipelined;
    return;
  }
  for (int64_t stages = 3; stages >= 2; --stages) {
    pipelined.stages = stages;
    if (pipelined.sharedBytes() <= GemmTiles::kPipelinedSharedBytes) {
      tiles = pipelined;
      return;
    }
  }
}

/// `width` consecutive elements of `memref` at `indices` as a vector of
/// `type`: one 16-byte load where `aligned` holds, else loads as LLVM
/// splits an unaligned vector; zeros where `ok` does not hold.
static Value loadStaged(OpBuilder &b, Location loc, Value ok, Value aligned,
                        Value memref, ValueRange indices, int64_t width,
                        Type type) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  auto loaded = VectorType::get({width}, element);
  auto result = VectorType::get({width}, type);
  Value vector = guardedLoad(
      b, loc, ok, loaded, [&](OpBuilder &lb, Location lloc) -> Value {
        if (width == 1)
          return vector::BroadcastOp::create(
              lb, lloc, loaded,
              memref::LoadOp::create(lb, lloc, memref, indices));
        // `width` elements are 16 bytes (stagingWidth).
        return loadAlignedOrSplit(lb, lloc, aligned, loaded, memref, indices);
      });
  if (element == type)
    return vector;
  if (element.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, result, vector);
  return arith::TruncFOp::create(b, loc, result, vector);
}

void gemm::storeStaged(OpBuilder &b, Location loc, Value values, Value buffer,
                       ValueRange indices) {
  bool wide = cast<VectorType>(values.getType()).getNumElements() > 1;
  vector::StoreOp::create(b, loc, values, buffer, indices,
                          /*nontemporal=*/false,
                          wide ? llvm::MaybeAlign(16) : llvm::MaybeAlign());
}

/// `index` where `ok` holds, else 0: a source position that is valid
/// whatever `ok` says (stageChunk's indices).
static Value validOrZero(OpBuilder &b, Location loc, Value ok, Value index) {
  return b.createOrFold<arith::SelectOp>(loc, ok, index, indexConst(b, loc, 0));
}

/// Whether `index` (a slice's first channel, a multiple of `step`, plus
/// less than `step`) is below `extent`: true, with no compare, where
/// `extent` is a multiple of `step` (every slice lies inside).
static Value insideExtent(OpBuilder &b, Location loc, Value index,
                          int64_t extent, int64_t step) {
  if (extent % step == 0)
    return arith::ConstantIntOp::create(b, loc, 1, 1);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index,
                               indexConst(b, loc, extent));
}

/// One cp.async (nvgpu.device_async_copy) of `width` elements from
/// `src[srcIndices]` to the workgroup `dst[dstIndices]`, both 16-byte
/// aligned; zeros where `ok` does not hold (a source count of 0, which
/// reads nothing; the indices are a valid position even then).
static void copyStaged(OpBuilder &b, Location loc, Value ok, Value src,
                       ArrayRef<Value> srcIndices, Value dst,
                       ValueRange dstIndices, int64_t width) {
  Value count = arith::SelectOp::create(b, loc, ok, indexConst(b, loc, width),
                                        indexConst(b, loc, 0));
  // 16 bytes may bypass L1 (cp.async.cg): the gathered rows and weight
  // slices are read once per tile, from L2.
  nvgpu::DeviceAsyncCopyOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst, dstIndices,
      src, srcIndices, b.getIndexAttr(width), count, b.getUnitAttr());
}

/// How the chunks of one source (features or weights) are staged:
/// `width` elements each, as `type`; by cp.async into `direct` where it is
/// set and the source `aligned` (i1), else through `store`; the block's
/// loop over them `unrolled` (forEachItemOfBlock).
namespace {
struct SourceStaging {
  int64_t width;
  Value aligned;
  Type type;
  Value direct;
  StageFn store;
  bool unrolled;
};
} // namespace

/// Stages the chunk of `src` at `srcIndices` (zeros where `ok` does not
/// hold; the indices must be a valid position even then, since a cp.async
/// of no bytes still names one) to (row0 + i, j) as `how` says: by cp.async
/// straight into `how.direct` where the form stages the source's own type
/// row-major and the source is 16-byte aligned; else loaded into registers
/// and handed to `how.store`. `row0` is the stage's first row.
static void stageChunk(OpBuilder &b, Location loc, const SourceStaging &how,
                       Value ok, Value src, SmallVector<Value> srcIndices,
                       Value row0, Value i, Value j) {
  auto viaRegisters = [&](OpBuilder &rb, Location rloc, Value alignedLoad) {
    how.store(rb, rloc, rb.createOrFold<arith::AddIOp>(rloc, row0, i), j,
              loadStaged(rb, rloc, ok, alignedLoad, src, srcIndices, how.width,
                         how.type));
  };
  if (!how.direct || how.width == 1) {
    viaRegisters(b, loc, how.aligned);
    return;
  }
  // The copy's target as a view of its stage: the stage's address is one
  // per step, the chunk's place in it the same for every step (computed
  // once).
  auto copy = [&](OpBuilder &cb, Location cloc) {
    auto shape = cast<MemRefType>(how.direct.getType()).getShape();
    Value stage = memref::SubViewOp::create(
        cb, cloc, how.direct,
        ArrayRef<OpFoldResult>{getAsOpFoldResult(row0), cb.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{getAsOpFoldResult(cb.createOrFold<arith::SubIOp>(
                                   cloc, indexConst(cb, cloc, shape[0]), row0)),
                               cb.getIndexAttr(shape[1])},
        ArrayRef<OpFoldResult>{cb.getIndexAttr(1), cb.getIndexAttr(1)});
    copyStaged(cb, cloc, ok, src, srcIndices, stage, ValueRange{i, j},
               how.width);
  };
  // A pipelined slice is staged only from aligned sources.
  if (matchPattern(how.aligned, m_One())) {
    copy(b, loc);
    return;
  }
  scf::IfOp::create(
      b, loc, how.aligned,
      [&](OpBuilder &tb, Location tloc) {
        copy(tb, tloc);
        scf::YieldOp::create(tb, tloc);
      },
      [&](OpBuilder &eb, Location eloc) {
        viaRegisters(eb, eloc, arith::ConstantIntOp::create(eb, eloc, 0, 1));
        scf::YieldOp::create(eb, eloc);
      });
}

/// Where a staged slice starts: its tile's first output row and channel,
/// its kernel offset and first input channel, its first row of the weights
/// viewed as (K * Cin) x Cout (offset * Cin + c0); and the stage it goes to.
namespace {
struct SliceOrigin {
  Value row0, col0, offset, c0, weightRow, stage;
};
} // namespace

Value gemm::stagedRow(OpBuilder &b, Location loc, Value stage, int64_t extent,
                      Value i) {
  return b.createOrFold<arith::AddIOp>(
      loc,
      b.createOrFold<arith::MulIOp>(loc, stage, indexConst(b, loc, extent)), i);
}

/// table[row(), offset] (i32) where `ok` holds, the output row built only
/// then; else -1.
static Value tableEntryOr(OpBuilder &b, Location loc,
                          const ImplicitGemmOperands &operands, Value ok,
                          function_ref<Value(OpBuilder &, Location)> row,
                          Value offset) {
  auto entry = scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location tloc) {
        scf::YieldOp::create(
            tb, tloc,
            memref::LoadOp::create(tb, tloc, operands.table,
                                   ValueRange{row(tb, tloc), offset})
                .getResult());
      },
      [&](OpBuilder &eb, Location eloc) {
        scf::YieldOp::create(eb, eloc, i32Const(eb, eloc, -1));
      });
  return entry.getResult(0);
}

/// sourceRows[m] = the input row of tile slot m at `offset`
/// (table[order[row0 + m], offset]), or -1 where the slot is past the output
/// rows or has no neighbour there: read once per visited offset, so that
/// the gather's loads depend on a workgroup load, not on two global ones.
static void stageSourceRows(OpBuilder &b, Location loc,
                            const ImplicitGemmOperands &operands,
                            const GemmTiles &tiles, const TileLoop &tile,
                            Value offset) {
  forEachItemOfBlock(
      b, loc, tile.thread, tiles.threads(), tiles.rows,
      [&](OpBuilder &ib, Location iloc, Value m) {
        Value slot = arith::AddIOp::create(ib, iloc, tile.row0, m);
        Value rowOk = arith::CmpIOp::create(ib, iloc, arith::CmpIPredicate::ult,
                                            slot, operands.rows);
        Value source = tableEntryOr(
            ib, iloc, operands, rowOk,
            [&](OpBuilder &rb, Location rloc) {
              return rowOfSlot(rb, rloc, operands, slot);
            },
            offset);
        memref::StoreOp::create(ib, iloc, source, tile.sourceRows, m);
      });
}

/// for each chunk (i, j) of an `extent` x `chunks * width` slice, j a
/// multiple of `width`, shared by the block's threads: body(i, j), the
/// chunks of one row on consecutive threads.
static void
forEachChunk(OpBuilder &b, Location loc, const GemmTiles &tiles,
             const TileLoop &tile, int64_t extent, int64_t chunks,
             const SourceStaging &how,
             function_ref<void(OpBuilder &, Location, Value, Value)> body) {
  // Positions in 32 bits (a block's items are few): one register each,
  // not a pair with its carries.
  auto toIndex = [](OpBuilder &ib, Location iloc, Value value) {
    return arith::IndexCastUIOp::create(ib, iloc, ib.getIndexType(), value);
  };
  auto position = [&](OpBuilder &ib, Location iloc, Value item32) {
    Value chunkCount = i32Const(ib, iloc, chunks);
    Value i = arith::DivUIOp::create(ib, iloc, item32, chunkCount);
    Value j = arith::MulIOp::create(
        ib, iloc, arith::RemUIOp::create(ib, iloc, item32, chunkCount),
        i32Const(ib, iloc, how.width));
    return std::make_pair(i, j);
  };
  int64_t threads = tiles.threads(), count = extent * chunks;
  // Unrolled, where a pass of the block covers whole rows: a thread's
  // chunks share its column, their rows are threads / chunks apart. Built
  // so (not as item / chunks per item, which LLVM cannot split), their
  // addresses are one register and constant offsets.
  if (unrollsItems(threads, count, how.unrolled) && threads % chunks == 0) {
    auto [row, column] = position(
        b, loc,
        arith::IndexCastUIOp::create(b, loc, b.getI32Type(), tile.thread));
    Value i0 = toIndex(b, loc, row), j = toIndex(b, loc, column);
    for (int64_t pass = 0; pass < count / threads; ++pass)
      body(b, loc,
           b.createOrFold<arith::AddIOp>(
               loc, i0, indexConst(b, loc, pass * (threads / chunks))),
           j);
    return;
  }
  forEachItemOfBlock(
      b, loc, tile.thread, threads, count,
      [&](OpBuilder &ib, Location iloc, Value item) {
        auto [i, j] = position(
            ib, iloc,
            arith::IndexCastUIOp::create(ib, iloc, ib.getI32Type(), item));
        body(ib, iloc, toIndex(ib, iloc, i), toIndex(ib, iloc, j));
      },
      how.unrolled);
}

/// The gathered input rows of a slice: per item, `width` consecutive
/// channels of one row (consecutive threads on consecutive channels of one
/// row), zero for a missing neighbour or channels past Cin.
static void stageInputSlice(OpBuilder &b, Location loc,
                            const ImplicitGemmOperands &operands,
                            const GemmTiles &tiles, const TileLoop &tile,
                            const SliceOrigin &origin,
                            const SourceStaging &how) {
  int64_t chunks = tiles.depth / how.width;
  auto staged = [&](OpBuilder &ib, Location iloc, Value m) {
    return stagedRow(ib, iloc, origin.stage, tiles.rows, m);
  };
  // Unrolled, a thread reads all its source rows before its first copy:
  // ptxas puts three never-executed LDS before an LDGSTS that follows a
  // shared-memory load (sm_80 and sm_90 alike), once per run of copies
  // rather than once per copy.
  SmallVector<Value> sources;
  if (unrollsItems(tiles.threads(), tiles.rows * chunks, how.unrolled))
    forEachChunk(b, loc, tiles, tile, tiles.rows, chunks, how,
                 [&](OpBuilder &ib, Location iloc, Value m, Value) {
                   sources.push_back(memref::LoadOp::create(
                       ib, iloc, tile.sourceRows, staged(ib, iloc, m)));
                 });
  unsigned next = 0;
  forEachChunk(
      b, loc, tiles, tile, tiles.rows, chunks, how,
      [&](OpBuilder &ib, Location iloc, Value m, Value kk) {
        Value channel = arith::AddIOp::create(ib, iloc, origin.c0, kk);
        Value slot = staged(ib, iloc, m);
        Value source =
            sources.empty()
                ? memref::LoadOp::create(ib, iloc, tile.sourceRows, slot)
                : sources[next++];
        // A chunk is inside Cin whole or not at all (stagingWidth).
        Value rowOk = arith::CmpIOp::create(ib, iloc, arith::CmpIPredicate::sge,
                                            source, i32Const(ib, iloc, 0));
        Value channelOk =
            insideExtent(ib, iloc, channel, operands.channelsIn, tiles.depth);
        Value ok = ib.createOrFold<arith::AndIOp>(iloc, rowOk, channelOk);
        // Each index made valid by its own condition: the channel's is the
        // same for all of a thread's rows of the step (one select, not one
        // per copy).
        Value sourceRow = validOrZero(
            ib, iloc, rowOk,
            arith::IndexCastOp::create(ib, iloc, ib.getIndexType(), source));
        // The chunk's channels as a view of every input row: the view's
        // address, the same for all of a thread's rows of the step, is
        // computed once; each copy adds only its row's.
        Value columns = memref::SubViewOp::create(
            ib, iloc, operands.features,
            ArrayRef<OpFoldResult>{ib.getIndexAttr(0),
                                   validOrZero(ib, iloc, channelOk, channel)},
            ArrayRef<OpFoldResult>{
                memref::DimOp::create(ib, iloc, operands.features, 0)
                    .getResult(),
                ib.getIndexAttr(how.width)},
            ArrayRef<OpFoldResult>{ib.getIndexAttr(1), ib.getIndexAttr(1)});
        stageChunk(ib, iloc, how, ok, columns,
                   {sourceRow, indexConst(ib, iloc, 0)},
                   staged(ib, iloc, indexConst(ib, iloc, 0)), m, kk);
      });
}

/// The weight slice: per item, `width` consecutive output channels of one
/// input channel, zero past Cin or Cout.
static void stageWeightSlice(OpBuilder &b, Location loc,
                             const ImplicitGemmOperands &operands,
                             const GemmTiles &tiles, const TileLoop &tile,
                             const SliceOrigin &origin,
                             const SourceStaging &how) {
  // The weights are contiguous (toOperandBuffer).
  Value weightRows = memref::CollapseShapeOp::create(
      b, loc, operands.weight, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value rowCount = indexConst(b, loc, operands.volume * operands.channelsIn);
  forEachChunk(
      b, loc, tiles, tile, tiles.depth, tiles.cols / how.width, how,
      [&](OpBuilder &ib, Location iloc, Value kk, Value n) {
        Value channel = arith::AddIOp::create(ib, iloc, origin.c0, kk);
        Value column = arith::AddIOp::create(ib, iloc, origin.col0, n);
        Value ok = ib.createOrFold<arith::AndIOp>(
            iloc,
            insideExtent(ib, iloc, channel, operands.channelsIn, tiles.depth),
            insideExtent(ib, iloc, column, operands.channelsOut, tiles.cols));
        // The chunk as a view of the weight rows from its own: the view's
        // address is the same for every step of the tile (computed once),
        // a step's copy adds only its slice's first row.
        Value firstRow = validOrZero(ib, iloc, ok, kk);
        Value chunk = memref::SubViewOp::create(
            ib, iloc, weightRows,
            ArrayRef<OpFoldResult>{firstRow, validOrZero(ib, iloc, ok, column)},
            ArrayRef<OpFoldResult>{
                ib.createOrFold<arith::SubIOp>(iloc, rowCount, firstRow),
                ib.getIndexAttr(how.width)},
            ArrayRef<OpFoldResult>{ib.getIndexAttr(1), ib.getIndexAttr(1)});
        stageChunk(ib, iloc, how, ok, chunk,
                   {validOrZero(ib, iloc, ok, origin.weightRow),
                    indexConst(ib, iloc, 0)},
                   stagedRow(ib, iloc, origin.stage, tiles.depth,
                             indexConst(ib, iloc, 0)),
                   kk, n);
      });
}

gemm::GridStrideLoop
gemm::beginGridStrideLoop(OpBuilder &b, Location loc, Value tileCount,
                          int64_t threads, StringRef role,
                          function_ref<void(OpBuilder &)> allocate) {
  Value one = indexConst(b, loc, 1);
  // No tiles: the runtime launches nothing for an empty grid.
  auto launch = gpu::LaunchOp::create(b, loc, tileCount, one, one,
                                      indexConst(b, loc, threads), one, one);
  launch->setAttr(kKernelRoleAttrName, b.getStringAttr(role));
  OpBuilder body =
      OpBuilder::atBlockEnd(&launch.getBody().front(), b.getListener());
  gpu::TerminatorOp::create(body, loc);
  body.setInsertionPointToStart(&launch.getBody().front());
  // Workgroup allocas, not attributions of the launch: buffer deallocation
  // would give memref block arguments ownership arguments the launch cannot
  // have. spconv-parallel-loops-to-gpu makes them the kernel's attributions.
  allocate(body);
  // Any grid covers the tiles: a block takes every gridDim-th tile.
  auto tileLoop = scf::ForOp::create(body, loc, launch.getBlockIds().x,
                                     tileCount, launch.getGridSize().x);
  return GridStrideLoop{launch, OpBuilder(tileLoop.getBody()->getTerminator()),
                        launch.getThreadIds().x, tileLoop.getInductionVar()};
}

gemm::TileLoop gemm::beginTileLoop(OpBuilder &b, Location loc,
                                   const ImplicitGemmOperands &operands,
                                   const GemmTiles &tiles, StringRef role,
                                   function_ref<void(OpBuilder &)> allocate) {
  Value colTiles =
      indexConst(b, loc, llvm::divideCeil(operands.channelsOut, tiles.cols));
  Value tileCount = arith::MulIOp::create(
      b, loc,
      arith::CeilDivSIOp::create(b, loc, operands.rows,
                                 indexConst(b, loc, tiles.rows)),
      colTiles);
  Value sourceRows, visited;
  GridStrideLoop loop = beginGridStrideLoop(
      b, loc, tileCount, tiles.threads(), role, [&](OpBuilder &ab) {
        allocate(ab);
        sourceRows = memref::AllocaOp::create(
            ab, loc,
            workgroupType(b.getContext(), {tiles.stages * tiles.rows},
                          ab.getI32Type()));
        if (tiles.stages > 1)
          visited = memref::AllocaOp::create(
              ab, loc,
              workgroupType(b.getContext(), {tiles.offsets}, ab.getI32Type()));
      });
  loop.launch->setAttr(kTileAttrName, tileAttr(b, tiles));
  OpBuilder &kb = loop.body;
  Value row0 = arith::MulIOp::create(
      kb, loc, arith::DivUIOp::create(kb, loc, loop.tile, colTiles),
      indexConst(kb, loc, tiles.rows));
  Value col0 = arith::MulIOp::create(
      kb, loc, arith::RemUIOp::create(kb, loc, loop.tile, colTiles),
      indexConst(kb, loc, tiles.cols));
  return TileLoop{kb, loop.thread, row0, col0, sourceRows, visited};
}

/// Whether a row of the tile starting at schedule group `group0` has a
/// neighbour at `offset` (i1): the same for every thread of the block, read
/// from the schedule.
static Value tileVisits(OpBuilder &b, Location loc,
                        const ImplicitGemmOperands &operands,
                        const GemmTiles &tiles, Value group0, Value offset) {
  Value groups = arith::CeilDivUIOp::create(
      b, loc, operands.rows, indexConst(b, loc, kScheduleGroupRows));
  Value active = arith::ConstantIntOp::create(b, loc, 0, 1);
  for (int64_t g = 0; g < tiles.rows / kScheduleGroupRows; ++g) {
    Value group = arith::AddIOp::create(b, loc, group0, indexConst(b, loc, g));
    Value listed = guardedLoad(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, group, groups),
        b.getI8Type(), [&](OpBuilder &lb, Location lloc) {
          return memref::LoadOp::create(lb, lloc,
                                        operands.schedule.groupOffsets,
                                        ValueRange{group, offset});
        });
    active = arith::OrIOp::create(
        b, loc, active,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ne, listed,
            arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0)));
  }
  return active;
}

/// Commits the thread's cp.async copies since the last commit as one group,
/// then waits for all but the newest `pending` groups of the thread. The
/// group takes no tokens (the copies sit in branches and loops), and
/// upstream's `nvgpu.device_async_create_group` printed with none reads the
/// next op's result as its token when parsed: the wait, which has no
/// result, must follow it.
static void commitAndWait(OpBuilder &b, Location loc, int64_t pending) {
  Value group = nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), ValueRange{});
  nvgpu::DeviceAsyncWaitOp::create(b, loc, group, b.getI32IntegerAttr(pending));
}

/// The unpipelined slices (forEachSlice): per visited offset the source
/// rows, per slice stage, barrier, multiply, barrier; all at stage 0.
static SmallVector<Value>
slicesByOffset(OpBuilder &b, Location loc, const ImplicitGemmOperands &operands,
               const GemmTiles &tiles, const TileLoop &tile, ValueRange initial,
               Type type, StageFn storeInput, StageFn storeWeight,
               MultiplyFn multiply, StagingBuffers direct) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value group0 = arith::DivUIOp::create(b, loc, tile.row0,
                                        indexConst(b, loc, kScheduleGroupRows));
  int64_t inputWidth =
      stagingWidth(operands.features, operands.channelsIn, tiles.depth);
  int64_t weightWidth =
      stagingWidth(operands.weight, operands.channelsOut, tiles.cols);
  Value inputAligned = isStagingAligned(b, loc, operands.features, inputWidth);
  Value weightAligned = isStagingAligned(b, loc, operands.weight, weightWidth);
  auto offsetLoop = scf::ForOp::create(
      b, loc, zero, indexConst(b, loc, operands.volume), one, initial,
      [&](OpBuilder &ob, Location oloc, Value offset, ValueRange offsetAcc) {
        Value active = tileVisits(ob, oloc, operands, tiles, group0, offset);
        auto visit = scf::IfOp::create(ob, oloc, offsetAcc.getTypes(), active,
                                       /*withElseRegion=*/true);
        OpBuilder eb =
            OpBuilder::atBlockEnd(visit.elseBlock(), b.getListener());
        scf::YieldOp::create(eb, oloc, offsetAcc);
        OpBuilder vb =
            OpBuilder::atBlockEnd(visit.thenBlock(), b.getListener());
        // The last slice's barrier ordered the reads of the previous
        // offset's source rows before this overwrites them.
        stageSourceRows(vb, oloc, operands, tiles, tile, offset);
        gpu::BarrierOp::create(vb, oloc);
        auto sliceLoop = scf::ForOp::create(
            vb, oloc, zero, indexConst(vb, oloc, operands.channelsIn),
            indexConst(vb, oloc, tiles.depth), offsetAcc,
            [&](OpBuilder &sb, Location sloc, Value c0, ValueRange acc) {
              Value weightRow = arith::AddIOp::create(
                  sb, sloc,
                  arith::MulIOp::create(
                      sb, sloc, offset,
                      indexConst(sb, sloc, operands.channelsIn)),
                  c0);
              SliceOrigin origin{tile.row0, tile.col0, offset,
                                 c0,        weightRow, zero};
              stageInputSlice(sb, sloc, operands, tiles, tile, origin,
                              {inputWidth, inputAligned, type, direct.input,
                               storeInput, /*unrolled=*/false});
              stageWeightSlice(sb, sloc, operands, tiles, tile, origin,
                               {weightWidth, weightAligned, type, direct.weight,
                                storeWeight, /*unrolled=*/false});
              // The thread's copies land at its wait, everyone's by the
              // barrier: all copies of the slice in flight at once.
              if (direct.input || direct.weight)
                commitAndWait(sb, sloc, 0);
              gpu::BarrierOp::create(sb, sloc);
              SmallVector<Value> sums = multiply(sb, sloc, acc, zero);
              gpu::BarrierOp::create(sb, sloc);
              scf::YieldOp::create(sb, sloc, sums);
            });
        scf::YieldOp::create(vb, oloc, sliceLoop.getResults());
        scf::YieldOp::create(ob, oloc, visit.getResults());
      });
  return SmallVector<Value>(offsetLoop.getResults());
}

/// The software pipeline over a tile's steps, step t the slice of input
/// channels (t % slices) * depth.. at kernel offset t / slices, staged in
/// stage t % S (S = tiles.stages) by cp.async only. Per tile: the visited
/// offsets and the source rows of steps 0..S-1, a barrier, the copies of
/// steps 0..S-2, one group each. Step t:
///
///   barrier; copies of step t+S-1; loads of the source rows of step t+S;
///   multiply of step t; stores of those rows; the copies committed as one
///   group and a wait for step t+1's.
///
/// Race-free with one barrier per step: the copies of step t+S-1 overwrite
/// stage (t-1) % S, which step t-1 multiplied before the barrier; the rows
/// of step t+S overwrite source-row stage t % S, which only the copies of
/// step t read, issued a step earlier; both are read after the next step's
/// barrier. Steps of offsets no row of the tile visits copy and multiply
/// nothing (the flag is the block's, so the branches are uniform).
static SmallVector<Value>
pipelinedSlices(OpBuilder &b, Location loc,
                const ImplicitGemmOperands &operands, const GemmTiles &tiles,
                const TileLoop &tile, ValueRange initial, Type type,
                MultiplyFn multiply, StagingBuffers direct) {
  int64_t stages = tiles.stages, threads = tiles.threads();
  int64_t slices = llvm::divideCeil(operands.channelsIn, tiles.depth);
  int64_t steps = operands.volume * slices;
  int64_t inputWidth =
      stagingWidth(operands.features, operands.channelsIn, tiles.depth);
  int64_t weightWidth =
      stagingWidth(operands.weight, operands.channelsOut, tiles.cols);
  Value aligned = arith::ConstantIntOp::create(b, loc, 1, 1);
  Value group0 = arith::DivUIOp::create(b, loc, tile.row0,
                                        indexConst(b, loc, kScheduleGroupRows));

  forEachItemOfBlock(
      b, loc, tile.thread, threads, operands.volume,
      [&](OpBuilder &ib, Location iloc, Value offset) {
        Value visits = tileVisits(ib, iloc, operands, tiles, group0, offset);
        memref::StoreOp::create(
            ib, iloc, arith::ExtUIOp::create(ib, iloc, ib.getI32Type(), visits),
            tile.visited, offset);
      });
  auto visitedAt = [&](OpBuilder &vb, Location vloc, Value offset) {
    return arith::CmpIOp::create(
        vb, vloc, arith::CmpIPredicate::ne,
        memref::LoadOp::create(vb, vloc, tile.visited, offset),
        i32Const(vb, vloc, 0));
  };
  // Steps count in 32 bits (volume x slices is small): the step loop's
  // counter, its divisions and compares are one register, not a pair.
  auto originOf = [&](OpBuilder &ob, Location oloc, Value step) {
    Value sliceCount = i32Const(ob, oloc, slices);
    auto toIndex = [&](Value value) {
      return ob.createOrFold<arith::IndexCastUIOp>(oloc, ob.getIndexType(),
                                                   value);
    };
    Value offset =
        toIndex(ob.createOrFold<arith::DivUIOp>(oloc, step, sliceCount));
    Value c0 = toIndex(ob.createOrFold<arith::MulIOp>(
        oloc, ob.createOrFold<arith::RemUIOp>(oloc, step, sliceCount),
        i32Const(ob, oloc, tiles.depth)));
    Value stage = toIndex(ob.createOrFold<arith::RemUIOp>(
        oloc, step, i32Const(ob, oloc, stages)));
    // Where the slices tile Cin, step t starts at weight row t * depth.
    Value weightRow =
        operands.channelsIn % tiles.depth == 0
            ? toIndex(ob.createOrFold<arith::MulIOp>(
                  oloc, step, i32Const(ob, oloc, tiles.depth)))
            : ob.createOrFold<arith::AddIOp>(
                  oloc,
                  ob.createOrFold<arith::MulIOp>(
                      oloc, offset, indexConst(ob, oloc, operands.channelsIn)),
                  c0);
    return SliceOrigin{tile.row0, tile.col0, offset, c0, weightRow, stage};
  };

  // The slots whose source rows this thread reads, and their output rows
  // (-1 past the tile or the rows), loaded once per tile.
  SmallVector<Value> mySlots, myRows;
  for (int64_t i = 0, e = llvm::divideCeil(tiles.rows, threads); i < e; ++i) {
    Value m = arith::AddIOp::create(b, loc, tile.thread,
                                    indexConst(b, loc, i * threads));
    Value slot = arith::AddIOp::create(b, loc, tile.row0, m);
    Value ok = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, m,
                              indexConst(b, loc, tiles.rows)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, slot,
                              operands.rows));
    auto row = scf::IfOp::create(
        b, loc, ok,
        [&](OpBuilder &tb, Location tloc) {
          scf::YieldOp::create(
              tb, tloc,
              memref::LoadOp::create(tb, tloc, operands.schedule.order, slot)
                  .getResult());
        },
        [&](OpBuilder &eb, Location eloc) {
          scf::YieldOp::create(eb, eloc, i32Const(eb, eloc, -1));
        });
    mySlots.push_back(m);
    myRows.push_back(row.getResult(0));
  }
  // The input rows of this thread's slots at `offset`: -1 for none.
  auto loadSources = [&](OpBuilder &lb, Location lloc, Value offset) {
    SmallVector<Value> sources;
    for (Value row : myRows) {
      sources.push_back(tableEntryOr(
          lb, lloc, operands,
          arith::CmpIOp::create(lb, lloc, arith::CmpIPredicate::sge, row,
                                i32Const(lb, lloc, 0)),
          [&](OpBuilder &rb, Location rloc) -> Value {
            return arith::IndexCastOp::create(rb, rloc, rb.getIndexType(),
                                              row);
          },
          offset));
    }
    return sources;
  };
  auto storeSources = [&](OpBuilder &sb, Location sloc, Value stage,
                          ValueRange sources) {
    for (auto [m, source] : llvm::zip_equal(mySlots, sources)) {
      auto inTile = scf::IfOp::create(
          sb, sloc,
          arith::CmpIOp::create(sb, sloc, arith::CmpIPredicate::ult, m,
                                indexConst(sb, sloc, tiles.rows)),
          /*withElseRegion=*/false);
      OpBuilder tb(inTile.thenBlock()->getTerminator(), b.getListener());
      memref::StoreOp::create(tb, sloc, source, tile.sourceRows,
                              stagedRow(tb, sloc, stage, tiles.rows, m));
    }
  };
  // The copies of step `step` where its offset is visited.
  auto issueCopies = [&](OpBuilder &cb, Location cloc, Value step) {
    SliceOrigin origin = originOf(cb, cloc, step);
    auto visit = scf::IfOp::create(cb, cloc, visitedAt(cb, cloc, origin.offset),
                                   /*withElseRegion=*/false);
    OpBuilder vb(visit.thenBlock()->getTerminator(), b.getListener());
    // Unrolled: a thread's copies are a few 16-byte chunks of one step.
    stageInputSlice(vb, cloc, operands, tiles, tile, origin,
                    {inputWidth, aligned, type, direct.input, StageFn(),
                     /*unrolled=*/true});
    stageWeightSlice(vb, cloc, operands, tiles, tile, origin,
                     {weightWidth, aligned, type, direct.weight, StageFn(),
                      /*unrolled=*/true});
  };

  // The prologue.
  for (int64_t step = 0; step < std::min(stages, steps); ++step) {
    SliceOrigin origin = originOf(b, loc, i32Const(b, loc, step));
    storeSources(b, loc, origin.stage, loadSources(b, loc, origin.offset));
  }
  gpu::BarrierOp::create(b, loc);
  for (int64_t step = 0; step < stages - 1; ++step) {
    if (step < steps)
      issueCopies(b, loc, i32Const(b, loc, step));
    // Empty groups past the last step keep every step's count the same;
    // the waits before the last do not block (fewer groups are pending).
    commitAndWait(b, loc, stages - 2);
  }

  auto stepLoop = scf::ForOp::create(
      b, loc, i32Const(b, loc, 0), i32Const(b, loc, steps), i32Const(b, loc, 1),
      initial, [&](OpBuilder &sb, Location sloc, Value step, ValueRange acc) {
        Value stepCount = i32Const(sb, sloc, steps);
        gpu::BarrierOp::create(sb, sloc);
        Value copied = arith::AddIOp::create(sb, sloc, step,
                                             i32Const(sb, sloc, stages - 1));
        auto copy = scf::IfOp::create(
            sb, sloc,
            arith::CmpIOp::create(sb, sloc, arith::CmpIPredicate::ult, copied,
                                  stepCount),
            /*withElseRegion=*/false);
        OpBuilder cb(copy.thenBlock()->getTerminator(), b.getListener());
        issueCopies(cb, sloc, copied);
        // The source rows of step + S, loaded before the multiply and
        // stored after it.
        Value ahead =
            arith::AddIOp::create(sb, sloc, step, i32Const(sb, sloc, stages));
        Value hasAhead = arith::CmpIOp::create(
            sb, sloc, arith::CmpIPredicate::ult, ahead, stepCount);
        SliceOrigin aheadOrigin = originOf(sb, sloc, ahead);
        auto sources = scf::IfOp::create(
            sb, sloc, hasAhead,
            [&](OpBuilder &tb, Location tloc) {
              scf::YieldOp::create(tb, tloc,
                                   loadSources(tb, tloc, aheadOrigin.offset));
            },
            [&](OpBuilder &eb, Location eloc) {
              SmallVector<Value> none(myRows.size(), i32Const(eb, eloc, -1));
              scf::YieldOp::create(eb, eloc, none);
            });
        SliceOrigin origin = originOf(sb, sloc, step);
        auto visit = scf::IfOp::create(sb, sloc, acc.getTypes(),
                                       visitedAt(sb, sloc, origin.offset),
                                       /*withElseRegion=*/true);
        OpBuilder vb =
            OpBuilder::atBlockEnd(visit.thenBlock(), b.getListener());
        scf::YieldOp::create(vb, sloc, multiply(vb, sloc, acc, origin.stage));
        OpBuilder eb =
            OpBuilder::atBlockEnd(visit.elseBlock(), b.getListener());
        scf::YieldOp::create(eb, sloc, acc);
        auto store = scf::IfOp::create(sb, sloc, hasAhead,
                                       /*withElseRegion=*/false);
        OpBuilder tb(store.thenBlock()->getTerminator(), b.getListener());
        storeSources(tb, sloc, aheadOrigin.stage, sources.getResults());
        // The copies above have been in flight since they were issued; the
        // commit only closes their group.
        commitAndWait(sb, sloc, stages - 2);
        scf::YieldOp::create(sb, sloc, visit.getResults());
      });
  return SmallVector<Value>(stepLoop.getResults());
}

SmallVector<Value>
gemm::forEachSlice(Location loc, const ImplicitGemmOperands &operands,
                   const GemmTiles &tiles, TileLoop &tile, ValueRange initial,
                   Type type, StageFn storeInput, StageFn storeWeight,
                   MultiplyFn multiply, StagingBuffers direct) {
  OpBuilder &b = tile.body;
  assert(tiles.rows % kScheduleGroupRows == 0 && "tiles are whole groups");
  if (tiles.stages == 1)
    return slicesByOffset(b, loc, operands, tiles, tile, initial, type,
                          storeInput, storeWeight, multiply, direct);
  assert(direct.input && direct.weight && tile.visited &&
         "a pipeline stages by cp.async alone");
  // cp.async needs 16-byte aligned sources; others stage through
  // registers, unpipelined.
  int64_t inputWidth =
      stagingWidth(operands.features, operands.channelsIn, tiles.depth);
  int64_t weightWidth =
      stagingWidth(operands.weight, operands.channelsOut, tiles.cols);
  Value aligned = arith::AndIOp::create(
      b, loc, isStagingAligned(b, loc, operands.features, inputWidth),
      isStagingAligned(b, loc, operands.weight, weightWidth));
  auto form = scf::IfOp::create(
      b, loc, aligned,
      [&](OpBuilder &pb, Location ploc) {
        scf::YieldOp::create(pb, ploc,
                             pipelinedSlices(pb, ploc, operands, tiles, tile,
                                             initial, type, multiply, direct));
      },
      [&](OpBuilder &ub, Location uloc) {
        scf::YieldOp::create(ub, uloc,
                             slicesByOffset(ub, uloc, operands, tiles, tile,
                                            initial, type, storeInput,
                                            storeWeight, multiply, {}));
      });
  return SmallVector<Value>(form.getResults());
}

Value lowering::buildNeighbourTable(OpBuilder &b, Location loc,
                                    const RulebookBuffers &rulebook,
                                    int64_t volume, bool inverse, Value rows) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value k = indexConst(b, loc, volume);
  auto tableType =
      MemRefType::get({ShapedType::kDynamic, volume}, b.getI32Type());
  Value table = memref::AllocOp::create(
      b, bufferLoc(loc, "the neighbour table of a rulebook"), tableType,
      ValueRange{rows});
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero, zero}, ValueRange{rows, k},
                 ValueRange{one, one},
                 [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                   memref::StoreOp::create(pb, ploc, i32Const(pb, ploc, -1),
                                           table, ivs);
                 }),
             "neighbour_table_init");
  // One thread per pair; its offset is the last j with offsets[j] <= pair,
  // found by a binary search over the K + 1 CSR offsets (unrolled: K is a
  // constant).
  // The pair count is the pair buffers' size: the host reads nothing the
  // rulebook's builder wrote.
  Value pairs = memref::DimOp::create(b, loc, rulebook.pairIn, 0);
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero}, ValueRange{pairs}, ValueRange{one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value pair = ivs[0];
            Value offset = indexConst(pb, ploc, 0);
            for (int64_t step = llvm::PowerOf2Ceil(volume); step >= 1;
                 step /= 2) {
              Value probe = arith::AddIOp::create(pb, ploc, offset,
                                                  indexConst(pb, ploc, step));
              Value inRange = arith::CmpIOp::create(
                  pb, ploc, arith::CmpIPredicate::slt, probe, k);
              Value clamped = arith::SelectOp::create(
                  pb, ploc, inRange, probe, indexConst(pb, ploc, volume - 1));
              Value start =
                  memref::LoadOp::create(pb, ploc, rulebook.offsets, clamped);
              Value notAfter = arith::CmpIOp::create(
                  pb, ploc, arith::CmpIPredicate::sle, start, pair);
              offset = arith::SelectOp::create(
                  pb, ploc, arith::AndIOp::create(pb, ploc, inRange, notAfter),
                  probe, offset);
            }
            Value in = memref::LoadOp::create(pb, ploc, rulebook.pairIn, pair);
            Value out =
                memref::LoadOp::create(pb, ploc, rulebook.pairOut, pair);
            if (inverse)
              std::swap(in, out);
            Value row =
                arith::IndexCastOp::create(pb, ploc, pb.getIndexType(), out);
            memref::StoreOp::create(pb, ploc, in, table,
                                    ValueRange{row, offset});
          }),
      "neighbour_table");
  return table;
}

namespace {
/// Where the FMA form's transposed input tile (depth x rows) keeps gathered
/// row m for channel row r: column m with its block of 4 XOR-ed by a
/// function of r's staging chunk. A warp's threads stage a few rows, each
/// thread `width` channels of one (consecutive threads on the chunks of a
/// row), and store them column-wise: unswizzled, the chunks' rows sit a
/// multiple of 32 words apart and 4 threads share each bank; XOR-ing the
/// blocks by chunk spreads a warp's stores over all 32 banks. A thread
/// reads `threadRows` columns of one row as one vector, inside one block,
/// so reads stay whole. Only for tiles of whole 32-row groups (the XOR stays
/// inside the tile) and thread tiles of at most 4 rows.
class TransposedColumns {
public:
  TransposedColumns(const GemmTiles &tiles, int64_t width)
      : width(width), chunks(std::max<int64_t>(1, tiles.depth / width)),
        // The blocks of 4 a warp's rows span: 32 threads, `chunks` a row.
        spread(std::max<int64_t>(1, 8 / chunks)),
        enabled(tiles.rows % 32 == 0 && 4 % tiles.threadRows == 0) {}

  /// The column of row m in channel row r.
  Value of(OpBuilder &b, Location loc, Value r, Value m) const {
    if (!enabled)
      return m;
    Value chunk = b.createOrFold<arith::RemUIOp>(
        loc, b.createOrFold<arith::DivUIOp>(loc, r, indexConst(b, loc, width)),
        indexConst(b, loc, chunks));
    // (chunk * spread) mod 8 blocks of 4 columns: bits 2-4 of m.
    Value flip = b.createOrFold<arith::AndIOp>(
        loc,
        b.createOrFold<arith::MulIOp>(loc, chunk,
                                      indexConst(b, loc, spread * 4)),
        indexConst(b, loc, 7 * 4));
    return b.createOrFold<arith::XOrIOp>(loc, m, flip);
  }

private:
  int64_t width, chunks, spread;
  bool enabled;
};
} // namespace

void lowering::emitImplicitGemmConv(OpBuilder &b, Location loc,
                                    const ImplicitGemmOperands &operands,
                                    const GemmTiles &tiles, StringRef role) {
  assert(!tiles.usesTensorCores() && "the tensor-core form is separate");
  Type accType = operands.accType;
  int64_t colThreads = tiles.cols / tiles.threadCols;

  // Gathered input rows, transposed (depth x rows), so that a thread reads
  // its rows of one input channel as one vector; the weight slice depth x
  // cols.
  MLIRContext *context = b.getContext();
  Value inputTile, weightTile;
  TileLoop tile =
      beginTileLoop(b, loc, operands, tiles, role, [&](OpBuilder &ab) {
        inputTile = memref::AllocaOp::create(
            ab, loc,
            workgroupType(context, {tiles.depth, tiles.rows}, accType));
        // 16-byte aligned: the weights are staged 16 bytes at a time.
        weightTile = memref::AllocaOp::create(
            ab, loc, workgroupType(context, {tiles.depth, tiles.cols}, accType),
            ab.getI64IntegerAttr(16));
      });
  OpBuilder &kb = tile.body;
  Value thread = tile.thread, row0 = tile.row0, col0 = tile.col0;
  Value zero = indexConst(kb, loc, 0), one = indexConst(kb, loc, 1);
  Value threadCol =
      arith::RemUIOp::create(kb, loc, thread, indexConst(kb, loc, colThreads));
  Value threadRow =
      arith::DivUIOp::create(kb, loc, thread, indexConst(kb, loc, colThreads));
  Value myRows = arith::MulIOp::create(kb, loc, threadRow,
                                       indexConst(kb, loc, tiles.threadRows));
  Value myCols = arith::MulIOp::create(kb, loc, threadCol,
                                       indexConst(kb, loc, tiles.threadCols));
  auto rowVector = VectorType::get({tiles.threadRows}, accType);
  auto colVector = VectorType::get({tiles.threadCols}, accType);
  Value zeroCols = arith::ConstantOp::create(
      kb, loc, colVector,
      DenseElementsAttr::get(colVector, kb.getZeroAttr(accType)));
  SmallVector<Value> initial(tiles.threadRows, zeroCols);

  Type weightElement =
      cast<MemRefType>(operands.weight.getType()).getElementType();
  TransposedColumns columns(
      tiles, stagingWidth(operands.features, operands.channelsIn, tiles.depth));
  // The gathered rows transposed, the weights as they are; the register
  // tile: an outer product per staged channel.
  SmallVector<Value> sums = forEachSlice(
      loc, operands, tiles, tile, initial, accType,
      [&](OpBuilder &ib, Location iloc, Value m, Value kk, Value values) {
        // Channel kk + i of row m goes to row kk + i of the transposed tile
        // (the chunk's channels share a column: kk is a multiple of the
        // width).
        Value column = columns.of(ib, iloc, kk, m);
        int64_t width = cast<VectorType>(values.getType()).getNumElements();
        for (int64_t i = 0; i < width; ++i)
          memref::StoreOp::create(
              ib, iloc, vector::ExtractOp::create(ib, iloc, values, i),
              inputTile,
              ValueRange{
                  arith::AddIOp::create(ib, iloc, kk, indexConst(ib, iloc, i)),
                  column});
      },
      [&](OpBuilder &ib, Location iloc, Value kk, Value n, Value values) {
        storeStaged(ib, iloc, values, weightTile, ValueRange{kk, n});
      },
      [&](OpBuilder &sb, Location sloc, ValueRange acc, Value) {
        auto products = scf::ForOp::create(
            sb, sloc, zero, indexConst(sb, sloc, tiles.depth), one, acc,
            [&](OpBuilder &pb, Location ploc, Value kk, ValueRange partial) {
              Value inputs = vector::LoadOp::create(
                  pb, ploc, rowVector, inputTile,
                  ValueRange{kk, columns.of(pb, ploc, kk, myRows)});
              Value weights = vector::LoadOp::create(
                  pb, ploc, colVector, weightTile, ValueRange{kk, myCols});
              SmallVector<Value> next;
              for (auto [i, sum] : llvm::enumerate(partial)) {
                Value x = vector::ExtractOp::create(pb, ploc, inputs,
                                                    static_cast<int64_t>(i));
                Value xs = vector::BroadcastOp::create(pb, ploc, colVector, x);
                next.push_back(
                    vector::FMAOp::create(pb, ploc, xs, weights, sum));
              }
              scf::YieldOp::create(pb, ploc, next);
            });
        return SmallVector<Value>(products.getResults());
      },
      // Weights of the accumulator's type are a plain copy; the inputs are
      // transposed.
      StagingBuffers{Value(), weightElement == accType ? weightTile : Value()});

  // The epilogue: each output element written once, bias added here, a
  // thread's consecutive columns `chunks.width` at a time.
  OutputChunks chunks =
      chooseOutputChunks(kb, loc, operands, tiles.cols, tiles.threadCols);
  Value coutValue = indexConst(kb, loc, operands.channelsOut);
  for (auto [i, sum] : llvm::enumerate(sums)) {
    Value slot = arith::AddIOp::create(
        kb, loc, arith::AddIOp::create(kb, loc, row0, myRows),
        indexConst(kb, loc, i));
    Value rowOk = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                        slot, operands.rows);
    auto rowIf = scf::IfOp::create(kb, loc, rowOk, /*withElseRegion=*/false);
    OpBuilder rb(rowIf.thenBlock()->getTerminator(), b.getListener());
    Value row = rowOfSlot(rb, loc, operands, slot);
    for (int64_t j = 0; j < tiles.threadCols; j += chunks.width) {
      Value column = arith::AddIOp::create(
          rb, loc, arith::AddIOp::create(rb, loc, col0, myCols),
          indexConst(rb, loc, j));
      Value columnOk = arith::CmpIOp::create(rb, loc, arith::CmpIPredicate::ult,
                                             column, coutValue);
      auto colIf = scf::IfOp::create(rb, loc, columnOk, false);
      OpBuilder cb(colIf.thenBlock()->getTerminator(), b.getListener());
      if (chunks.width == 1) {
        storeOutput(cb, loc, operands, row, column,
                    vector::ExtractOp::create(cb, loc, sum, j));
        continue;
      }
      // Lanes j.. of the row's sums (a shuffle: LLVM's shufflevector).
      Value lanes = sum;
      if (chunks.width != tiles.threadCols) {
        SmallVector<int64_t> mask(chunks.width);
        std::iota(mask.begin(), mask.end(), j);
        lanes = vector::ShuffleOp::create(cb, loc, sum, sum, mask);
      }
      storeOutputChunk(cb, loc, operands, chunks, row, column, lanes);
    }
  }
}
