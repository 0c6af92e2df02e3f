//===- VectorWidth.h - Vector widths that suit the target ------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The lowerings that keep chunks of feature rows in vector registers (the
// rulebook conv, the pointwise-conv matmul) size their chunks here: by the
// target's vector registers, so that a group of rows fits its register file
// without spills, and so that chunks tile any channel count without masking
// (a shorter last chunk where no wide width divides the count).
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_SUPPORT_VECTORWIDTH_H
#define SPCONV_SUPPORT_VECTORWIDTH_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cstdint>

namespace mlir::spconv {

/// The widest vector, of at most `maxWidth` lanes, that tiles `channels`
/// exactly (odd channel counts need no masking); 1 if none wider does.
inline int64_t exactVectorWidth(int64_t channels, int64_t maxWidth) {
  for (int64_t width = std::min(channels, maxWidth); width > 1; --width)
    if (channels % width == 0)
      return width;
  return 1;
}

/// A `channels`-wide row as consecutive chunks of at most `maxWidth` lanes,
/// in order: equal chunks when a width of at least half of `maxWidth` tiles
/// the row (96 = 3 x 32), else full chunks and one shorter last chunk
/// (19 = 16 + 3), never one lane at a time.
inline llvm::SmallVector<int64_t> vectorChunks(int64_t channels,
                                               int64_t maxWidth) {
  int64_t exact = exactVectorWidth(channels, maxWidth);
  llvm::SmallVector<int64_t> chunks;
  if (channels <= maxWidth || 2 * exact >= maxWidth) {
    chunks.assign(channels / exact, exact);
    return chunks;
  }
  chunks.assign(channels / maxWidth, maxWidth);
  if (channels % maxWidth)
    chunks.push_back(channels % maxWidth);
  return chunks;
}

/// Whether the pass options take `bits` as a register width.
inline bool isSupportedVectorBits(int64_t bits) {
  return bits == 128 || bits == 256 || bits == 512;
}

/// A CPU's vector register file.
struct VectorRegisters {
  int64_t bits = 512; ///< Width of one register.
  int64_t count = 32; ///< Architectural vector registers.

  /// Lanes of `elementBits` per chunk when `liveChunks` chunks are held at
  /// once, plus two registers for the operands (a broadcast and a loaded
  /// vector): one or two registers per chunk, as many as fit.
  int64_t chunkLanes(int64_t elementBits, int64_t liveChunks) const {
    int64_t perChunk = std::clamp<int64_t>(
        (count - 2) / std::max<int64_t>(liveChunks, 1), 1, 2);
    return std::max<int64_t>(1, perChunk * bits / elementBits);
  }
};

/// The chunks of a `channels`-wide row of `elementBits` elements when
/// `liveRows` rows are held in `registers` at once (chunkLanes' widths). A
/// chunk wider than one register is a whole number of registers: LLVM
/// splits a ragged multi-register vector (vector<24xf32> or vector<19xf32>
/// on 16-lane registers) into pieces that spill once several rows are live,
/// which made a 16 -> 48 conv 7x slower than a 16 -> 64 one. Such rows are
/// chunked by single registers instead (48 = 3 x 16, 19 = 16 + 3).
inline llvm::SmallVector<int64_t> rowChunks(int64_t channels,
                                            const VectorRegisters &registers,
                                            int64_t elementBits,
                                            int64_t liveRows) {
  int64_t registerLanes = std::max<int64_t>(1, registers.bits / elementBits);
  llvm::SmallVector<int64_t> chunks =
      vectorChunks(channels, registers.chunkLanes(elementBits, liveRows));
  for (int64_t width : chunks)
    if (width > registerLanes && width % registerLanes != 0)
      return vectorChunks(channels, registerLanes);
  return chunks;
}

/// The register file of a target with the LLVM subtarget features `has`
/// answers for (x86: avx512f, avx, sse2; AArch64: neon). Unknown targets get
/// 16 registers of 128 bits.
inline VectorRegisters
vectorRegistersFromFeatures(llvm::function_ref<bool(llvm::StringRef)> has) {
  if (has("avx512f"))
    return {512, 32};
  if (has("avx"))
    return {256, 16};
  if (has("neon"))
    return {128, 32};
  return {128, 16};
}

} // namespace mlir::spconv

#endif // SPCONV_SUPPORT_VECTORWIDTH_H
