//===- GatherGemmScatter.h - spconv v1's CPU conv compute -------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The compute phase of spconv v1 on the CPU: per kernel offset, gather the
// paired input rows into a buffer, one cblas_sgemm with that offset's
// weights, scatter-add the product rows into the outputs. For subm the
// centre offset is the identity: one GEMM over all rows writes the outputs
// directly and the offset loop skips it. Gather and scatter are
// single-threaded; the GEMM uses OpenBLAS's threads.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_BENCH_GATHERGEMMSCATTER_H
#define SPCONV_BENCH_GATHERGEMMSCATTER_H

#include "Rulebook.h"

namespace spconv {
namespace bench {

/// Milliseconds spent in each phase of one conv.
struct ConvTimes {
  double gather = 0, gemm = 0, scatter = 0;
};

/// `out` (numOut x cout) = the conv of `in` (N x cin) with `weights`
/// (K x cin x cout). Overwrites `out`.
void convGatherGemmScatter(const Rulebook &rb, const ConvGeometry &geom,
                           const float *in, int64_t cin, const float *weights,
                           int64_t cout, float *out, ConvTimes &times);

/// The same sum per pair in double precision, without BLAS; returns the
/// largest |out - reference| relative to the largest |reference|.
double checkConv(const Rulebook &rb, const float *in, int64_t cin,
                 const float *weights, int64_t cout, const float *out);

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_GATHERGEMMSCATTER_H
