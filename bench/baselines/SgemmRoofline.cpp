//===- SgemmRoofline.cpp - The GEMM floor of gather-GEMM-scatter ----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Times only the GEMMs of a gather-GEMM-scatter conv: the rulebook and the
// gathered rows are prepared untimed, then
//
//   gemm_per_offset_ms  one cblas_sgemm per kernel offset, [P_j x Cin] x
//                       [Cin x Cout] (what spconv v1's compute phase does;
//                       the centre offset counts as one more GEMM)
//   gemm_stacked_ms     one cblas_sgemm of all P pairs stacked, [P x Cin] x
//                       [Cin x Cout]: the same FLOPs with no per-offset
//                       overhead, the best a single BLAS call can do
//   gemm_hot_ms         per offset again, but each offset's rows gathered
//                       (untimed) into one reused buffer just before its
//                       GEMM, as gather-GEMM-scatter runs: the operands are
//                       cache-hot, so this is the compute floor of that loop
//
//   gemm_best_ms        per repeat, the least of the three: the fastest the
//                       BLAS does these FLOPs here in any of the three
//                       ways (the roofline bench/run.py compares with)
//
// plus their GFLOP/s (2 P Cin Cout flops). With --out, the conv's output
// (the per-offset products scatter-added, untimed) is written, so that a
// caller can check it computed the same conv as the other sides.
//
//===----------------------------------------------------------------------===//

#include "Rulebook.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace spconv::bench;
using Clock = std::chrono::steady_clock;

static const char *const kUsage =
    "Metrics: gemm_per_offset_ms, gemm_stacked_ms, gemm_hot_ms and their\n"
    "gflops, gemm_best_ms (the least of the three per repeat); pairs,\n"
    "flops. Only the cblas_sgemm calls are timed.\n";

int main(int argc, char **argv) {
  Options opts = parseOptions(argc, argv, "sgemm-roofline", kUsage);
  Sites sites = loadSites(opts);
  openblas_set_num_threads(opts.threads);
  printHeader(opts, sites);
  printBlas();

  const int64_t cin = opts.cin, cout = opts.cout;
  Rulebook rb = buildSortedRulebook(sites, opts.geom);
  const int64_t pairs = rb.totalPairs();
  const int64_t k = rb.numOffsets;

  // All offsets' gathered rows back to back: offset j from row first[j].
  std::vector<float> in, weights;
  loadFeaturesAndWeights(opts, sites.size(), k, in, weights);
  std::vector<int64_t> first(k + 1, 0);
  for (int64_t j = 0; j < k; ++j)
    first[j + 1] = first[j] + rb.counts[j];
  std::vector<float> gathered(pairs * cin), product(pairs * cout);
  std::vector<float> hot(rb.maxPairs() * cin), hotOut(rb.maxPairs() * cout);
  for (int64_t j = 0; j < k; ++j)
    for (int64_t r = 0; r < rb.counts[j]; ++r)
      std::memcpy(&gathered[(first[j] + r) * cin],
                  &in[int64_t(rb.in(j)[r]) * cin], sizeof(float) * cin);

  const double flops = 2.0 * double(pairs) * double(cin) * double(cout);
  // One GEMM per offset on its gathered rows, into its rows of `product`.
  auto perOffsetGemms = [&] {
    for (int64_t j = 0; j < k; ++j) {
      if (rb.counts[j] == 0)
        continue;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rb.counts[j], cout,
                  cin, 1.0f, &gathered[first[j] * cin], cin,
                  &weights[j * cin * cout], cout, 0.0f,
                  &product[first[j] * cout], cout);
    }
  };
  Metrics metrics;
  for (int rep = 0; rep <= opts.repeat; ++rep) {
    auto start = Clock::now();
    perOffsetGemms();
    double perOffsetMs = msSince(start);

    start = Clock::now();
    if (pairs)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, pairs, cout, cin,
                  1.0f, gathered.data(), cin, weights.data(), cout, 0.0f,
                  product.data(), cout);
    double stackedMs = msSince(start);

    double hotMs = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t count = rb.counts[j];
      if (count == 0)
        continue;
      for (int64_t r = 0; r < count; ++r)
        std::memcpy(&hot[r * cin], &in[int64_t(rb.in(j)[r]) * cin],
                    sizeof(float) * cin);
      start = Clock::now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, count, cout, cin,
                  1.0f, hot.data(), cin, &weights[j * cin * cout], cout, 0.0f,
                  hotOut.data(), cout);
      hotMs += msSince(start);
    }
    metrics.warmUp(rep == 0); // the first call is the cold one
    double bestMs = std::min(perOffsetMs, std::min(stackedMs, hotMs));
    metrics.add("gemm_per_offset_ms", perOffsetMs);
    metrics.add("gemm_stacked_ms", stackedMs);
    metrics.add("gemm_hot_ms", hotMs);
    metrics.add("gemm_per_offset_gflops", flops / perOffsetMs * 1e-6);
    metrics.add("gemm_stacked_gflops", flops / stackedMs * 1e-6);
    metrics.add("gemm_hot_gflops", flops / hotMs * 1e-6);
    metrics.add("gemm_best_ms", bestMs);
    metrics.add("gemm_best_gflops", flops / bestMs * 1e-6);
  }
  metrics.print();
  std::printf("pairs %lld\n", static_cast<long long>(pairs));
  std::printf("flops %.0f\n", flops);
  if (!opts.out.empty() || !opts.outCoords.empty()) {
    // Untimed: the per-offset products again (the stacked GEMM overwrote
    // them), scatter-added into the outputs.
    std::vector<float> out(rb.numOut * cout, 0.0f);
    perOffsetGemms();
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t r = 0; r < rb.counts[j]; ++r)
        for (int64_t c = 0; c < cout; ++c)
          out[int64_t(rb.out(j)[r]) * cout + c] +=
              product[(first[j] + r) * cout + c];
    }
    if (!opts.out.empty())
      writeMatrix(opts.out, out.data(), rb.numOut, cout);
    if (!opts.outCoords.empty())
      writeMatrix(opts.outCoords,
                  opts.geom.subm ? sites.coords.data() : rb.outCoords.data(),
                  rb.numOut, 4);
  }
  return 0;
}
