//===- VectorWidthTest.cpp - Chunking a row into vectors ------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Support/VectorWidth.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace mlir::spconv;

namespace {

using Chunks = llvm::SmallVector<int64_t>;

TEST(VectorWidth, ChunksTileEveryRow) {
  for (int64_t maxWidth : {4, 8, 16, 32})
    for (int64_t channels = 1; channels <= 300; ++channels) {
      Chunks chunks = vectorChunks(channels, maxWidth);
      EXPECT_EQ(std::accumulate(chunks.begin(), chunks.end(), int64_t(0)),
                channels)
          << channels << " channels, at most " << maxWidth;
      for (int64_t width : chunks) {
        EXPECT_GE(width, 1);
        EXPECT_LE(width, maxWidth);
      }
      // Never a row of single lanes unless the row is one lane.
      if (channels > 1) {
        EXPECT_GT(chunks.front(), 1) << channels << " channels";
      }
    }
}

TEST(VectorWidth, EqualChunksWhereAWideWidthDivides) {
  EXPECT_EQ(vectorChunks(96, 32), (Chunks{32, 32, 32}));
  EXPECT_EQ(vectorChunks(48, 32), (Chunks{24, 24}));
  EXPECT_EQ(vectorChunks(5, 16), (Chunks{5}));
  EXPECT_EQ(vectorChunks(20, 16), (Chunks{10, 10}));
}

TEST(VectorWidth, ShorterLastChunkOtherwise) {
  // The classifier of the segmentation example: 19 classes.
  EXPECT_EQ(vectorChunks(19, 16), (Chunks{16, 3}));
  EXPECT_EQ(vectorChunks(19, 8), (Chunks{8, 8, 3}));
  EXPECT_EQ(vectorChunks(37, 16), (Chunks{16, 16, 5}));
}

TEST(VectorWidth, RowChunksAreWholeRegistersOrLess) {
  // AVX-512, two registers per chunk where they tile.
  VectorRegisters avx512{512, 32};
  EXPECT_EQ(rowChunks(96, avx512, 32, 2), (Chunks{32, 32, 32}));
  EXPECT_EQ(rowChunks(64, avx512, 32, 2), (Chunks{32, 32}));
  EXPECT_EQ(rowChunks(128, avx512, 32, 8), (Chunks{128}));
  // 48 = 2 x 24 would be one and a half registers each, 48 and 96 three
  // and six: single registers.
  EXPECT_EQ(rowChunks(48, avx512, 32, 2), (Chunks{16, 16, 16}));
  EXPECT_EQ(rowChunks(48, avx512, 32, 3), (Chunks{16, 16, 16}));
  EXPECT_EQ(rowChunks(96, avx512, 32, 6), (Chunks{16, 16, 16, 16, 16, 16}));
  EXPECT_EQ(rowChunks(96, avx512, 32, 4), (Chunks{16, 16, 16, 16, 16, 16}));
  EXPECT_EQ(rowChunks(192, avx512, 32, 4), (Chunks{64, 64, 64}));
  EXPECT_EQ(rowChunks(19, avx512, 32, 2), (Chunks{16, 3}));
  // Shorter than a register is fine as it is.
  EXPECT_EQ(rowChunks(12, avx512, 32, 2), (Chunks{12}));
  // AVX2, one register per chunk.
  VectorRegisters avx2{256, 16};
  EXPECT_EQ(rowChunks(48, avx2, 32, 1), (Chunks{8, 8, 8, 8, 8, 8}));
  for (int64_t channels = 1; channels <= 300; ++channels)
    for (VectorRegisters registers : {avx512, avx2})
      for (int64_t chunkRegisters = 1; chunkRegisters <= 8; ++chunkRegisters)
        for (int64_t width :
             rowChunks(channels, registers, 32, chunkRegisters)) {
          int64_t lanes = registers.bits / 32;
          EXPECT_TRUE(width <= lanes || (width % lanes == 0 &&
                                         llvm::isPowerOf2_64(width / lanes)))
              << channels << " channels: a chunk of " << width;
          EXPECT_LE(width, chunkRegisters * lanes) << channels << " channels";
        }
}

using Blocking = std::pair<int64_t, int64_t>;

Blocking blocking(int64_t columns, int64_t elementBits,
                  const VectorRegisters &registers, const FmaUnits &fma) {
  RowBlocking shape = chooseRowBlocking(columns, elementBits, registers, fma);
  return {shape.rows, shape.chunkRegisters};
}

TEST(VectorWidth, RowBlockingForTheTarget) {
  // Zen 4 (LLVM's znver4: one 512-bit FMA per cycle, latency 4): every
  // shape that fits keeps the pipe busy, so the fewest loads per FMA win.
  VectorRegisters avx512{512, 32};
  FmaUnits zen4{1, 4};
  EXPECT_EQ(blocking(16, 32, avx512, zen4), Blocking(8, 1));
  EXPECT_EQ(blocking(32, 32, avx512, zen4), Blocking(8, 2));
  // 48 and 96 channels: 3- and 6-register chunks are no vector LLVM
  // splits cleanly (rowChunks).
  EXPECT_EQ(blocking(48, 32, avx512, zen4), Blocking(8, 1));
  EXPECT_EQ(blocking(96, 32, avx512, zen4), Blocking(8, 2));
  EXPECT_EQ(blocking(64, 32, avx512, zen4), Blocking(6, 4));
  // 8 registers a row leave room for 2 rows (10 loads per 16 FMAs); 6 rows
  // of 4 load 10 per 24.
  EXPECT_EQ(blocking(128, 32, avx512, zen4), Blocking(6, 4));
  // f64: eight lanes a register.
  EXPECT_EQ(blocking(64, 64, avx512, zen4), Blocking(6, 4));
  // Two pipes need 8 chains: the same shapes have them.
  EXPECT_EQ(blocking(64, 32, avx512, FmaUnits{2, 4}), Blocking(6, 4));
  // Haswell (16 registers; two pipes of latency 5 need 10 chains): 2 rows
  // of 4 registers would be 8 chains, 6 rows of 2 are 12.
  VectorRegisters avx2{256, 16};
  FmaUnits haswell{2, 5};
  EXPECT_EQ(blocking(16, 32, avx2, haswell), Blocking(6, 2));
  EXPECT_EQ(blocking(32, 32, avx2, haswell), Blocking(6, 2));
  EXPECT_EQ(blocking(64, 32, avx2, haswell), Blocking(6, 2));
  // A single register's row: more rows, up to the most chains.
  EXPECT_EQ(blocking(8, 32, avx2, haswell), Blocking(8, 1));
  // The smallest register file the passes take.
  EXPECT_EQ(blocking(64, 32, VectorRegisters{512, 4}, zen4), Blocking(2, 1));
}

TEST(VectorWidth, RowBlockingFitsTheRegisters) {
  for (VectorRegisters registers :
       {VectorRegisters{512, 32}, VectorRegisters{256, 16},
        VectorRegisters{128, 16}, VectorRegisters{128, 32}})
    for (FmaUnits fma : {FmaUnits{1, 4}, FmaUnits{2, 4}, FmaUnits{2, 5}})
      for (int64_t elementBits : {32, 64})
        for (int64_t columns = 1; columns <= 300; ++columns) {
          RowBlocking shape =
              chooseRowBlocking(columns, elementBits, registers, fma);
          EXPECT_GE(shape.rows, 1);
          EXPECT_LE(shape.rows, kMaxBlockRows);
          EXPECT_GE(shape.chunkRegisters, 1);
          EXPECT_LE(shape.chunkRegisters, kMaxChunkRegisters);
          // Accumulators, the chunk's weight vectors and the broadcast.
          EXPECT_LE((shape.rows + 1) * shape.chunkRegisters + 1,
                    registers.count)
              << columns << " columns";
          // The chunks the row update takes are at most that wide.
          int64_t lanes = registers.bits / elementBits;
          for (int64_t width :
               rowChunks(columns, registers, elementBits, shape.chunkRegisters))
            EXPECT_LE(width, shape.chunkRegisters * lanes);
        }
}

} // namespace
