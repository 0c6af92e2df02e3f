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
  // AVX-512 holding eight rows: two registers per chunk where they tile.
  VectorRegisters avx512{512, 32};
  EXPECT_EQ(rowChunks(96, avx512, 32, 8), (Chunks{32, 32, 32}));
  EXPECT_EQ(rowChunks(64, avx512, 32, 8), (Chunks{32, 32}));
  // 48 = 2 x 24 would be one and a half registers each: single registers.
  EXPECT_EQ(rowChunks(48, avx512, 32, 8), (Chunks{16, 16, 16}));
  EXPECT_EQ(rowChunks(19, avx512, 32, 8), (Chunks{16, 3}));
  // Shorter than a register is fine as it is.
  EXPECT_EQ(rowChunks(12, avx512, 32, 8), (Chunks{12}));
  // AVX2: one register per chunk with eight rows live.
  VectorRegisters avx2{256, 16};
  EXPECT_EQ(rowChunks(48, avx2, 32, 8), (Chunks{8, 8, 8, 8, 8, 8}));
  for (int64_t channels = 1; channels <= 300; ++channels)
    for (VectorRegisters registers : {avx512, avx2})
      for (int64_t width : rowChunks(channels, registers, 32, 8)) {
        int64_t lanes = registers.bits / 32;
        EXPECT_TRUE(width <= lanes || width % lanes == 0)
            << channels << " channels: a chunk of " << width;
      }
}

} // namespace
