//===- DenseGemm.cpp - The GEMM of a dense convolution over the sites' box ===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// What a dense convolution would cost on the same sites: the tightest box
// that holds every site (over all batch samples; B x dz x dy x dx voxels
// for B samples) is treated as a dense volume, and the convolution as one im2col GEMM
//
//   [V x Cin*K] x [Cin*K x Cout],   V = box volume, K = kernel volume
//
// (one output per voxel of the box, "same" padding, as a subm conv over a
// dense tensor). Only the cblas_sgemm is timed: building the im2col matrix,
// which reads the padded volume K times, is not counted, so this is a lower
// bound of a dense conv on this machine.
//
// When the im2col matrix would exceed --max-bytes (default 4 GiB) nothing of
// that size is allocated: a tile of rows (about --tile-bytes of im2col,
// default 64 MiB) is timed instead and the full time is projected from the
// tile's GFLOP/s (dense_projected 1).
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace spconv::bench;
using Clock = std::chrono::steady_clock;

static const char *const kUsage =
    "  --max-bytes B         largest im2col matrix to allocate (default 4 GiB);\n"
    "                        above it the time is projected from a tile\n"
    "  --tile-bytes B        im2col bytes of the timed tile when projecting\n"
    "                        (default 64 MiB)\n"
    "Metrics: dense_box (dz,dy,dx), dense_volume, im2col_bytes, flops,\n"
    "dense_rows_timed, dense_projected (0: the whole GEMM was timed, 1: a\n"
    "tile was, and dense_gemm_ms is projected), dense_gemm_ms,\n"
    "dense_gemm_gflops. Only cblas_sgemm is timed.\n";

namespace {

/// The options only this program has; removed from argv before the shared
/// parser sees it.
struct DenseOptions {
  int64_t maxBytes = int64_t(4) << 30;
  int64_t tileBytes = int64_t(64) << 20;
};

/// Takes `--max-bytes` and `--tile-bytes` out of argv (compacting it) and
/// returns their values.
DenseOptions takeDenseOptions(int &argc, char **argv) {
  DenseOptions dense;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    bool isMax = !std::strcmp(argv[i], "--max-bytes");
    bool isTile = !std::strcmp(argv[i], "--tile-bytes");
    if ((isMax || isTile) && i + 1 < argc) {
      char *end = nullptr;
      long long value = std::strtoll(argv[i + 1], &end, 10);
      if (end == argv[i + 1] || *end != '\0' || value <= 0) {
        std::fprintf(stderr, "dense-gemm: bad value for %s\n", argv[i]);
        std::exit(2);
      }
      (isMax ? dense.maxBytes : dense.tileBytes) = value;
      ++i;
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  return dense;
}

/// The extent of the tightest box holding every site, per spatial axis.
Dims3 tightBox(const Sites &sites) {
  if (sites.size() == 0)
    return {0, 0, 0};
  Dims3 lo{INT64_MAX, INT64_MAX, INT64_MAX}, hi{0, 0, 0};
  for (int64_t i = 0; i < sites.size(); ++i) {
    const int32_t *r = sites.row(i);
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min<int64_t>(lo[d], r[d + 1]);
      hi[d] = std::max<int64_t>(hi[d], r[d + 1]);
    }
  }
  return {hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1};
}

} // namespace

int main(int argc, char **argv) {
  DenseOptions dense = takeDenseOptions(argc, argv);
  Options opts = parseOptions(argc, argv, "dense-gemm", kUsage);
  Sites sites = loadSites(opts);
  openblas_set_num_threads(opts.threads);
  printHeader(opts, sites);
  printBlas();

  const Dims3 box = tightBox(sites);
  const int64_t volume = sites.batch * box[0] * box[1] * box[2];
  const int64_t depth = opts.geom.volume() * opts.cin; // GEMM inner dimension
  const int64_t cout = opts.cout;
  const int64_t im2colBytes = volume * depth * int64_t(sizeof(float));
  const bool projected = im2colBytes > dense.maxBytes;
  int64_t rows = volume;
  if (projected)
    rows = std::max<int64_t>(
        1, std::min(volume, dense.tileBytes /
                                (depth * int64_t(sizeof(float)))));

  std::vector<float> a(std::max<int64_t>(rows, 1) * depth);
  std::vector<float> b(depth * cout);
  std::vector<float> c(std::max<int64_t>(rows, 1) * cout);
  fillRandom(a.data(), a.size(), opts.seed);
  fillRandom(b.data(), b.size(), opts.seed + 1);

  const double tileFlops = 2.0 * double(rows) * double(depth) * double(cout);
  const double flops = 2.0 * double(volume) * double(depth) * double(cout);
  Metrics metrics;
  for (int rep = 0; rep <= opts.repeat; ++rep) {
    auto start = Clock::now();
    if (rows && volume)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cout, depth,
                  1.0f, a.data(), depth, b.data(), cout, 0.0f, c.data(), cout);
    double ms = msSince(start);
    metrics.warmUp(rep == 0); // the first call is the cold one
    double gflops = ms > 0 ? tileFlops / ms * 1e-6 : 0.0;
    // Projected: the whole volume at the tile's rate.
    metrics.add("dense_gemm_ms", projected ? flops / gflops * 1e-6 : ms);
    metrics.add("dense_gemm_gflops", gflops);
  }
  std::printf("dense_box %lld,%lld,%lld\n", static_cast<long long>(box[0]),
              static_cast<long long>(box[1]), static_cast<long long>(box[2]));
  std::printf("dense_volume %lld\n", static_cast<long long>(volume));
  std::printf("im2col_bytes %lld\n", static_cast<long long>(im2colBytes));
  std::printf("flops %.0f\n", flops);
  std::printf("dense_rows_timed %lld\n", static_cast<long long>(rows));
  std::printf("dense_projected %d\n", projected ? 1 : 0);
  metrics.print();
  return 0;
}
