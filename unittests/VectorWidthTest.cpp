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
      if (channels > 1)
        EXPECT_GT(chunks.front(), 1) << channels << " channels";
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

} // namespace
