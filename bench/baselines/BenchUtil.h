//===- BenchUtil.h - Shared code of the baselines ---------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// What the three baseline programs share: the command line, loading the
// coordinates, wall-clock timing with a median over repeats, and the
// `metric value` output lines.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_BENCH_BENCHUTIL_H
#define SPCONV_BENCH_BENCHUTIL_H

#include "Geometry.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace spconv {
namespace bench {

/// Active sites: rows (batch, z, y, x) and the spatial grid they live in.
struct Sites {
  std::vector<int32_t> coords; // N x 4
  Dims3 grid{};                // (D, H, W)
  int64_t batch = 0;           // 1 + the largest batch index

  int64_t size() const { return static_cast<int64_t>(coords.size() / 4); }
  const int32_t *row(int64_t i) const { return coords.data() + 4 * i; }
  /// DESIGN.md's 64-bit linear key ((b * D + z) * H + y) * W + x.
  int64_t key(int64_t i) const {
    const int32_t *r = row(i);
    return linearKey(r[0], r[1], r[2], r[3], grid);
  }
};

struct Options {
  std::string coords;
  int64_t cin = 16;
  int64_t cout = 16;
  int threads = 1;
  int repeat = 5;
  Dims3 grid{};      // zero: the coordinates' extent
  ConvGeometry geom; // defaults: 3x3x3 submanifold
  bool paddingGiven = false;
  bool check = false;
  uint64_t seed = 1;
  /// Inputs shared with the other sides of a comparison (bench/run.py):
  /// float32 [N, cin] features and [K, cin, cout] weights (DESIGN.md's
  /// layout); empty: seeded random numbers.
  std::string features, weight;
  /// Where to write the conv's output features (float32 [numOut, cout]) and
  /// its output coordinates (int32 [numOut, 4]); empty: not written.
  std::string out, outCoords;
};

/// Parses the command line; on a bad argument prints usage and exits 2.
/// `extraUsage` documents the program-specific behaviour.
Options parseOptions(int argc, char **argv, const char *program,
                     const char *extraUsage);

/// Reads `opts.coords` (int32 or int64 [N, 4]) and checks every site lies in
/// the grid; exits 1 with a message on failure.
Sites loadSites(const Options &opts);

/// Fills `n` floats with a fixed pseudo-random sequence in [-1, 1).
void fillRandom(float *data, int64_t n, uint64_t seed);

/// The features (N x cin) and weights (kernelVolume x cin x cout) of a
/// run: read from --features / --weight (float32 .npy of exactly that shape,
/// else exit 1), otherwise fillRandom with --seed and --seed + 1.
void loadFeaturesAndWeights(const Options &opts, int64_t n,
                            int64_t kernelVolume, std::vector<float> &in,
                            std::vector<float> &weights);

/// Writes `rows x cols` floats (or int32s) to `path` as .npy; exits 1 on
/// failure.
void writeMatrix(const std::string &path, const float *data, int64_t rows,
                 int64_t cols);
void writeMatrix(const std::string &path, const int32_t *data, int64_t rows,
                 int64_t cols);

/// The BLAS the program is linked with and the kernels it chose for this
/// CPU, as `blas_core NAME` and `# blas_config ...` lines (OpenBLAS picks
/// its kernels at load time; OPENBLAS_CORETYPE overrides the choice).
void printBlas();

/// Milliseconds since `start`.
inline double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Collects named samples, one per repeat, and prints their medians. The
/// samples of the warm-up (the first, cold, call of the process) are kept
/// apart: call warmUp(rep == 0) before adding a repeat's samples.
class Metrics {
public:
  void warmUp(bool isWarmUp) { warm = isWarmUp; }
  void add(const std::string &name, double value);
  /// Prints per metric, in first-added order, `name median` over the timed
  /// repeats, then `name_min`, `name_max`, `name_last` (the last call of the
  /// process) and `name_first` (the cold warm-up call).
  void print() const;

private:
  bool warm = false;
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> samples;
  std::map<std::string, double> first;
};

/// Prints the shared header lines (workload, grid, threads).
void printHeader(const Options &opts, const Sites &sites);

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_BENCHUTIL_H
