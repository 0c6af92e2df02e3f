//===- GatherGemmScatter.cpp - spconv v1's CPU conv compute ---------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "GatherGemmScatter.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

using namespace spconv::bench;
using Clock = std::chrono::steady_clock;

void spconv::bench::convGatherGemmScatter(const Rulebook &rb,
                                          const ConvGeometry &geom,
                                          const float *in, int64_t cin,
                                          const float *weights, int64_t cout,
                                          float *out, ConvTimes &times) {
  const int64_t numOut = rb.numOut;
  const int64_t centre = geom.subm ? geom.centre() : -1;
  auto start = Clock::now();
  if (geom.subm) {
    // The identity offset needs no gather: out = in @ W[centre].
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, numOut, cout, cin,
                1.0f, in, cin, weights + centre * cin * cout, cout, 0.0f, out,
                cout);
    times.gemm += msSince(start);
  } else {
    std::memset(out, 0, sizeof(float) * numOut * cout);
    times.scatter += msSince(start);
  }

  // Buffers sized for the largest offset, once per conv, as v1 does.
  const int64_t rows = rb.maxPairs();
  std::unique_ptr<float[]> inBuf(new float[std::max<int64_t>(1, rows * cin)]);
  std::unique_ptr<float[]> outBuf(new float[std::max<int64_t>(1, rows * cout)]);
  for (int64_t j = 0; j < rb.numOffsets; ++j) {
    const int64_t count = rb.counts[j];
    if (j == centre || count == 0)
      continue;
    const int32_t *inIdx = rb.in(j);
    const int32_t *outIdx = rb.out(j);

    start = Clock::now();
    for (int64_t r = 0; r < count; ++r)
      std::memcpy(inBuf.get() + r * cin, in + int64_t(inIdx[r]) * cin,
                  sizeof(float) * cin);
    times.gather += msSince(start);

    start = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, count, cout, cin,
                1.0f, inBuf.get(), cin, weights + j * cin * cout, cout, 0.0f,
                outBuf.get(), cout);
    times.gemm += msSince(start);

    start = Clock::now();
    for (int64_t r = 0; r < count; ++r) {
      float *dst = out + int64_t(outIdx[r]) * cout;
      const float *src = outBuf.get() + r * cout;
      for (int64_t c = 0; c < cout; ++c)
        dst[c] += src[c];
    }
    times.scatter += msSince(start);
  }
}

double spconv::bench::checkConv(const Rulebook &rb, const float *in,
                                int64_t cin, const float *weights, int64_t cout,
                                const float *out) {
  std::vector<double> ref(rb.numOut * cout, 0.0);
  for (int64_t j = 0; j < rb.numOffsets; ++j) {
    const float *w = weights + j * cin * cout;
    for (int64_t r = 0; r < rb.counts[j]; ++r) {
      const float *x = in + int64_t(rb.in(j)[r]) * cin;
      double *y = ref.data() + int64_t(rb.out(j)[r]) * cout;
      for (int64_t a = 0; a < cin; ++a)
        for (int64_t c = 0; c < cout; ++c)
          y[c] += double(x[a]) * w[a * cout + c];
    }
  }
  double maxRef = 0, maxErr = 0;
  for (int64_t i = 0; i < rb.numOut * cout; ++i) {
    maxRef = std::max(maxRef, std::fabs(ref[i]));
    maxErr = std::max(maxErr, std::fabs(ref[i] - out[i]));
  }
  return maxRef > 0 ? maxErr / maxRef : maxErr;
}
