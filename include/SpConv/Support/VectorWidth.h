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
#include "llvm/Support/MathExtras.h"

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
};

/// A CPU's vector FMA units, as LLVM's scheduling model of the CPU has them
/// (TargetCPU.h): FMAs of one register's width that issue per cycle, and
/// the cycles before an FMA's sum can feed the next FMA.
struct FmaUnits {
  int64_t pipes = 2;
  int64_t latency = 4;

  /// Independent FMAs that keep every pipe busy.
  int64_t inFlight() const { return pipes * latency; }
};

/// The shape of a register-blocked row update: `rows` output rows at a
/// time, each row's columns in chunks of at most `chunkRegisters`
/// registers, so up to `rows * chunkRegisters` accumulators, each an
/// independent FMA chain.
struct RowBlocking {
  int64_t rows = 8;
  int64_t chunkRegisters = 2;
};

/// The chunks of a `channels`-wide row of `elementBits` elements of at most
/// `chunkRegisters` registers each (vectorChunks' widths). A chunk wider
/// than one register is a power-of-two number of registers: LLVM widens
/// any other vector (vector<24xf32> or vector<19xf32>, but also
/// vector<48xf32> and vector<96xf32> on 16-lane registers) to the next
/// power of two and assembles it lane by lane, spilling once several rows
/// are live: that made a 16 -> 48 conv 7x slower than a 16 -> 64 one, and
/// 3- and 6-register chunks a 128 -> 96 conv 20x slower. Such rows are
/// chunked by single registers instead (48 = 3 x 16, 19 = 16 + 3).
inline llvm::SmallVector<int64_t> rowChunks(int64_t channels,
                                            const VectorRegisters &registers,
                                            int64_t elementBits,
                                            int64_t chunkRegisters) {
  int64_t registerLanes = std::max<int64_t>(1, registers.bits / elementBits);
  llvm::SmallVector<int64_t> chunks = vectorChunks(
      channels, std::max<int64_t>(1, chunkRegisters) * registerLanes);
  for (int64_t width : chunks)
    if (width > registerLanes && (width % registerLanes != 0 ||
                                  !llvm::isPowerOf2_64(width / registerLanes)))
      return vectorChunks(channels, registerLanes);
  return chunks;
}

/// Rows a row update takes at most at a time: past eight, a weight vector
/// shared by more rows saved nothing measurable on the layer sweep
/// (docs/Benchmarks.md), and each group's last rows go one at a time.
inline constexpr int64_t kMaxBlockRows = 8;
/// Registers of one row's chunk at most (a 128-channel f32 row on
/// AVX-512).
inline constexpr int64_t kMaxChunkRegisters = 8;

/// The register blocking of a row update over `columns` output columns of
/// `elementBits` accumulators, for a CPU with `registers` and `fma`: an
/// analytical model in the manner of BLIS's (Low et al., "Analytical
/// modeling is enough for high-performance BLIS", 2016). A step (one input
/// channel) of `rows` x `chunkRegisters` does that many FMAs, loads
/// `chunkRegisters` weight vectors (shared by the rows) and broadcasts
/// `rows` inputs (each shared by the chunk). Among the shapes whose
/// accumulators, weight vectors and broadcast fit the registers (so
/// nothing spills), with chunks the row's chunking takes (rowChunks) and at
/// most kMaxBlockRows rows and kMaxChunkRegisters registers, it takes:
///   1. the most independent FMA chains up to what the FMA units need in
///      flight (pipes x latency): fewer leave pipes idle;
///   2. then the fewest loads per FMA, 1 / rows + 1 / chunkRegisters;
///   3. then the fewest accumulators.
/// On Zen 4 (32 registers, one 512-bit FMA pipe) that is 8 x 1, 8 x 2,
/// 6 x 4 and 6 x 4 rows x registers for 16, 32, 64 and 128 f32 channels;
/// on Haswell (16 of 256 bits, two pipes of latency 5), 6 x 2.
inline RowBlocking chooseRowBlocking(int64_t columns, int64_t elementBits,
                                     const VectorRegisters &registers,
                                     const FmaUnits &fma) {
  int64_t lanes = std::max<int64_t>(1, registers.bits / elementBits);
  int64_t rowRegisters = std::max<int64_t>(1, (columns + lanes - 1) / lanes);
  RowBlocking best{1, 1};
  int64_t bestChains = 0, bestLoads = 0, bestAccumulators = 0;
  for (int64_t chunk = 1; chunk <= std::min(rowRegisters, kMaxChunkRegisters);
       ++chunk) {
    // Only widths the row's chunking takes (64 channels in chunks of at
    // most 3 registers are chunks of 2).
    llvm::SmallVector<int64_t> chunks =
        rowChunks(columns, registers, elementBits, chunk);
    if (chunk > 1 &&
        *std::max_element(chunks.begin(), chunks.end()) != chunk * lanes)
      continue;
    int64_t maxRows =
        std::min(kMaxBlockRows, (registers.count - chunk - 1) / chunk);
    for (int64_t rows = 1; rows <= maxRows; ++rows) {
      int64_t accumulators = rows * chunk;
      int64_t chains = std::min(accumulators, fma.inFlight());
      // Loads a step: a weight vector per chunk register, a broadcast per
      // row. Loads per FMA compare as fractions over the accumulators.
      int64_t loads = rows + chunk;
      bool fewerLoads = loads * bestAccumulators < bestLoads * accumulators;
      bool sameLoads = loads * bestAccumulators == bestLoads * accumulators;
      if (chains > bestChains ||
          (chains == bestChains &&
           (fewerLoads || (sameLoads && accumulators < bestAccumulators)))) {
        best = {rows, chunk};
        bestChains = chains;
        bestLoads = loads;
        bestAccumulators = accumulators;
      }
    }
  }
  return best;
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
