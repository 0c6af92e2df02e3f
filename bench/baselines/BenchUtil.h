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

/// Milliseconds since `start`.
inline double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Collects named samples, one per repeat, and prints their medians.
class Metrics {
public:
  void add(const std::string &name, double value);
  /// Prints `name median` per metric, in first-added order.
  void print() const;

private:
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> samples;
};

/// Prints the shared header lines (workload, grid, threads).
void printHeader(const Options &opts, const Sites &sites);

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_BENCHUTIL_H
