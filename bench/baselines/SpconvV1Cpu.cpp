//===- SpconvV1Cpu.cpp - spconv v1's CPU sparse conv as a baseline --------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Times one sparse conv the way spconv v1 runs it on the CPU: the hash-table
// rulebook (single-threaded), then gather / cblas_sgemm / scatter-add per
// kernel offset, OpenBLAS on --threads threads. Prints the medians over
// --repeat runs after one warm-up, one `metric value` line each.
//
//===----------------------------------------------------------------------===//

#include "GatherGemmScatter.h"

#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <vector>

using namespace spconv::bench;
using Clock = std::chrono::steady_clock;

static const char *const kUsage =
    "Metrics (ms): rulebook_ms (hash build + probe), gather_ms, gemm_ms,\n"
    "scatter_ms, conv_ms (the three plus buffers), total_ms; and pairs,\n"
    "out_sites. Gather, scatter and the rulebook are single-threaded.\n";

int main(int argc, char **argv) {
  Options opts = parseOptions(argc, argv, "spconv-v1-cpu", kUsage);
  Sites sites = loadSites(opts);
  openblas_set_num_threads(opts.threads);
  printHeader(opts, sites);
  printBlas();

  const ConvGeometry &geom = opts.geom;
  const int64_t n = sites.size();
  std::vector<float> in, weights;
  loadFeaturesAndWeights(opts, n, geom.volume(), in, weights);

  Metrics metrics;
  Rulebook rb;
  std::vector<float> out;
  for (int rep = 0; rep <= opts.repeat; ++rep) {
    auto start = Clock::now();
    rb = buildHashRulebook(sites, geom);
    double rulebookMs = msSince(start);

    auto convStart = Clock::now();
    out.resize(rb.numOut * opts.cout);
    ConvTimes times;
    convGatherGemmScatter(rb, geom, in.data(), opts.cin, weights.data(),
                          opts.cout, out.data(), times);
    double convMs = msSince(convStart);
    double totalMs = msSince(start);
    metrics.warmUp(rep == 0); // the first call is the cold one
    metrics.add("rulebook_ms", rulebookMs);
    metrics.add("gather_ms", times.gather);
    metrics.add("gemm_ms", times.gemm);
    metrics.add("scatter_ms", times.scatter);
    metrics.add("conv_ms", convMs);
    metrics.add("total_ms", totalMs);
  }
  metrics.print();
  std::printf("pairs %lld\n", static_cast<long long>(rb.totalPairs()));
  std::printf("out_sites %lld\n", static_cast<long long>(rb.numOut));
  if (!opts.out.empty())
    writeMatrix(opts.out, out.data(), rb.numOut, opts.cout);
  if (!opts.outCoords.empty())
    writeMatrix(opts.outCoords,
                geom.subm ? sites.coords.data() : rb.outCoords.data(),
                rb.numOut, 4);

  if (opts.check) {
    Rulebook ref = buildSortedRulebook(sites, geom);
    bool ok = sameRulebook(sites, geom, rb, ref);
    double err = checkConv(rb, in.data(), opts.cin, weights.data(), opts.cout,
                           out.data());
    ok &= err < 1e-4;
    std::printf("check_rel_err %.3g\n", err);
    std::printf("check %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
  }
  return 0;
}
