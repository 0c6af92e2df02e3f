//===- ConvForms.cpp - Per-offset against output-stationary CPU conv ------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Issue 40: which loop form should the CPU compute of a submanifold conv
// take? The same conv, on the same rulebook, in four forms, timed
// alternately within one process (rulebook and neighbour table untimed):
//
//   per_offset        input-stationary, what the compiler emits today: per
//                     chunk of output rows (accumulators in L2), per kernel
//                     offset, groups of R pairs; a register block of R rows
//                     x V zmm of output channels is loaded from the
//                     accumulator rows, the Cin loop loads V weight vectors
//                     (shared by the R rows) and broadcasts one input value
//                     per row, and the block is stored back (a read-modify-
//                     write of every accumulator row per offset). R x V:
//                     Cout 16: 8x1, 32: 8x2, 64 and above: 6x4 (column
//                     blocks of 64 channels).
//   output_stationary the neighbour table nbr[n][k] (input row or -1): per
//                     output row and column block, V zmm accumulators live
//                     in registers over all K offsets (absent neighbours
//                     skipped) and the row is written once; below 4 zmm,
//                     4 / V partial sums over alternate input channels so
//                     that 4 FMA chains cover the FMA latency.
//   os_block_zero     B consecutive output rows (B x V as per_offset's
//                     R x V) per register block; an offset is skipped when
//                     no row of the block has it, else every row of the
//                     block does its FMAs, an absent neighbour reading a
//                     row of zeros (wasted FMAs: see os_block_zero_fma_util).
//   os_block_mask     4 consecutive rows, each offset dispatched on the 4-bit
//                     mask of the rows that have it: no wasted FMA, but the
//                     weight loads are shared only by the rows present.
//
// Every form is compared with a double-precision reference over the
// rulebook's pairs; a relative error (max |diff| / max |ref|) above 1e-5
// prints `check FAILED` and exits 1. SPCONV_CONV_FORMS_FAULT=<form> adds an
// error to that form's output (after timing) to exercise the check;
// SPCONV_CONV_FORMS_SCALAR=1 runs the fallback below on any CPU.
//
// The kernels use AVX-512 intrinsics in functions compiled for that target
// (the build has no -march); on a CPU without AVX-512F every form runs as
// plain loops with the same structure, and `# isa scalar` says so.
//
//===----------------------------------------------------------------------===//

#include "Rulebook.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CF_X86 1
#define CF_TARGET __attribute__((target("avx512f,fma")))
#define CF_INLINE inline __attribute__((always_inline, target("avx512f,fma")))
#else
#define CF_X86 0
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

using namespace spconv::bench;
using Clock = std::chrono::steady_clock;

static const char *const kUsage =
    "Submanifold only. Cout must be a multiple of 16, and of 64 above 64.\n"
    "Metrics (ms, median and _min/_max over --repeat alternated runs):\n"
    "per_offset_ms, output_stationary_ms, os_block_zero_ms, os_block_mask_ms\n"
    "and their _gflops (2 pairs Cin Cout / time); pairs, occupancy (pairs /\n"
    "(N K)), os_block_zero_fma_util (pairs / FMA rows it runs),\n"
    "os_block_mask_rows_per_step, the forms' _rel_err against a double\n"
    "reference, max_rel_err, forms_rel_err, check ok|FAILED (exit 1).\n"
    "--out writes the per-offset form's output.\n";

namespace {

/// Everything the forms read. `in` has one extra row of zeros at row n.
struct Problem {
  int64_t n = 0, k = 0, cin = 0, cout = 0;
  std::vector<float> in;      // (n + 1) x cin
  std::vector<float> weights; // k x cin x cout
  std::vector<int32_t> nbr;   // n x k, input row or -1
  std::vector<int32_t> nbrZ;  // n x k, input row or n (the zero row)
  // Per-offset pairs, grouped by chunk of output rows then offset: pairs of
  // chunk c, offset j at [start[c * k + j], start[c * k + j + 1]).
  int64_t chunkRows = 0, numChunks = 0;
  std::vector<int32_t> src, dst;
  std::vector<int64_t> start;
};

constexpr int64_t kMaskBlock = 4;

//===----------------------------------------------------------------------===//
// AVX-512 kernels.
//===----------------------------------------------------------------------===//
#if CF_X86

/// acc[r] += s[r][c] * w[c] over the input channels c < cin, for each row r
/// of mask M (bit r: row r present): a step per input channel loads V
/// weight vectors, shared by the rows, and broadcasts one input per row.
template <int R, int V, unsigned M = (1u << R) - 1>
CF_INLINE void blockSteps(__m512 (&acc)[R][V], const float *const (&s)[R],
                          const float *w, int64_t cin, int64_t cout) {
  for (int64_t c = 0; c < cin; ++c) {
    __m512 wv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      wv[v] = _mm512_loadu_ps(w + c * cout + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      if (!(M & (1u << r)))
        continue;
      __m512 b = _mm512_set1_ps(s[r][c]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v)
        acc[r][v] = _mm512_fmadd_ps(b, wv[v], acc[r][v]);
    }
  }
}

/// One group of R pairs of one offset, columns [cb, cb + 16 V).
template <int R, int V>
CF_INLINE void poGroup(const float *in, int64_t cin, const float *w,
                       int64_t cout, const int32_t *src, const int32_t *dst,
                       float *out) {
  const float *s[R];
  float *d[R];
  __m512 acc[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    s[r] = in + int64_t(src[r]) * cin;
    d[r] = out + int64_t(dst[r]) * cout;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      acc[r][v] = _mm512_loadu_ps(d[r] + 16 * v);
  }
  blockSteps<R, V>(acc, s, w, cin, cout);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      _mm512_storeu_ps(d[r] + 16 * v, acc[r][v]);
}

template <int R, int V>
CF_TARGET void poRemainder(int rem, const float *in, int64_t cin,
                           const float *w, int64_t cout, const int32_t *src,
                           const int32_t *dst, float *out) {
  switch (rem) {
#define CF_CASE(i)                                                             \
  case i:                                                                      \
    if constexpr (i < R)                                                       \
      poGroup<i, V>(in, cin, w, cout, src, dst, out);                          \
    break;
    CF_CASE(1)
    CF_CASE(2)
    CF_CASE(3) CF_CASE(4) CF_CASE(5) CF_CASE(6) CF_CASE(7)
#undef CF_CASE
        default : break;
  }
}

/// Input-stationary: chunks of output rows, offsets, groups of R pairs.
template <int R, int V>
CF_TARGET void perOffsetAvx512(const Problem &p, float *out) {
  const int64_t cin = p.cin, cout = p.cout, k = p.k;
  const int64_t width = 16 * V;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t ch = 0; ch < p.numChunks; ++ch) {
    int64_t r0 = ch * p.chunkRows, r1 = std::min(p.n, r0 + p.chunkRows);
    std::memset(out + r0 * cout, 0, sizeof(float) * (r1 - r0) * cout);
    for (int64_t j = 0; j < k; ++j) {
      int64_t b = p.start[ch * k + j], e = p.start[ch * k + j + 1];
      const float *wj = p.weights.data() + j * cin * cout;
      for (int64_t cb = 0; cb < cout; cb += width) {
        int64_t q = b;
        for (; q + R <= e; q += R)
          poGroup<R, V>(p.in.data(), cin, wj + cb, cout, &p.src[q], &p.dst[q],
                        out + cb);
        if (q < e)
          poRemainder<R, V>(int(e - q), p.in.data(), cin, wj + cb, cout,
                            &p.src[q], &p.dst[q], out + cb);
      }
    }
  }
}

/// Output-stationary, one row per register block. One row has only V
/// dependent FMA chains (4 cycles of latency each on Zen 4); U = 4 / V
/// partial sums over alternate input channels keep 4 chains in flight.
template <int V>
CF_TARGET void outputStationaryAvx512(const Problem &p, float *out) {
  constexpr int U = V >= 4 ? 1 : (V == 3 ? 2 : 4 / V);
  const int64_t cin = p.cin, cout = p.cout, k = p.k;
  const float *in = p.in.data();
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t n = 0; n < p.n; ++n) {
    const int32_t *nb = &p.nbr[n * k];
    for (int64_t cb = 0; cb < cout; cb += 16 * V) {
      __m512 acc[U][V];
#pragma GCC unroll 4
      for (int u = 0; u < U; ++u)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v)
          acc[u][v] = _mm512_setzero_ps();
      for (int64_t j = 0; j < k; ++j) {
        if (nb[j] < 0)
          continue;
        const float *s = in + int64_t(nb[j]) * cin;
        const float *w = p.weights.data() + j * cin * cout + cb;
        int64_t c = 0;
        for (; c + U <= cin; c += U) {
#pragma GCC unroll 4
          for (int u = 0; u < U; ++u) {
            __m512 b = _mm512_set1_ps(s[c + u]);
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v)
              acc[u][v] = _mm512_fmadd_ps(
                  b, _mm512_loadu_ps(w + (c + u) * cout + 16 * v), acc[u][v]);
          }
        }
        for (; c < cin; ++c) {
          __m512 b = _mm512_set1_ps(s[c]);
#pragma GCC unroll 4
          for (int v = 0; v < V; ++v)
            acc[0][v] = _mm512_fmadd_ps(
                b, _mm512_loadu_ps(w + c * cout + 16 * v), acc[0][v]);
        }
      }
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        __m512 sum = acc[0][v];
#pragma GCC unroll 4
        for (int u = 1; u < U; ++u)
          sum = _mm512_add_ps(sum, acc[u][v]);
        _mm512_storeu_ps(out + n * cout + cb + 16 * v, sum);
      }
    }
  }
}

/// B rows x V zmm accumulated over every offset; rows absent at an offset
/// read the zero row (`nbrZ`); offsets absent from the whole block skipped.
/// A tail block shorter than B repeats its last row (written once).
template <int B, int V>
CF_TARGET void osBlockZeroAvx512(const Problem &p, float *out) {
  const int64_t cin = p.cin, cout = p.cout, k = p.k, n = p.n;
  const float *in = p.in.data();
  const int32_t zero = int32_t(n);
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t n0 = 0; n0 < n; n0 += B) {
    int64_t rows[B];
#pragma GCC unroll 8
    for (int r = 0; r < B; ++r)
      rows[r] = std::min(n0 + r, n - 1);
    for (int64_t cb = 0; cb < cout; cb += 16 * V) {
      __m512 acc[B][V];
#pragma GCC unroll 8
      for (int r = 0; r < B; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v)
          acc[r][v] = _mm512_setzero_ps();
      for (int64_t j = 0; j < k; ++j) {
        const float *s[B];
        bool any = false;
#pragma GCC unroll 8
        for (int r = 0; r < B; ++r) {
          int32_t i = p.nbrZ[rows[r] * k + j];
          any |= i != zero;
          s[r] = in + int64_t(i) * cin;
        }
        if (!any)
          continue;
        const float *w = p.weights.data() + j * cin * cout + cb;
        blockSteps<B, V>(acc, s, w, cin, cout);
      }
#pragma GCC unroll 8
      for (int r = 0; r < B; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v)
          _mm512_storeu_ps(out + rows[r] * cout + cb + 16 * v, acc[r][v]);
    }
  }
}

/// 4 rows x V zmm; per offset a switch on the rows present.
template <int V>
CF_TARGET void osBlockMaskAvx512(const Problem &p, float *out) {
  const int64_t cin = p.cin, cout = p.cout, k = p.k, n = p.n;
  const float *in = p.in.data();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t n0 = 0; n0 < n; n0 += kMaskBlock) {
    const int64_t nr = std::min<int64_t>(kMaskBlock, n - n0);
    for (int64_t cb = 0; cb < cout; cb += 16 * V) {
      __m512 acc[kMaskBlock][V];
#pragma GCC unroll 4
      for (int r = 0; r < kMaskBlock; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v)
          acc[r][v] = _mm512_setzero_ps();
      for (int64_t j = 0; j < k; ++j) {
        const float *s[kMaskBlock];
        unsigned mask = 0;
#pragma GCC unroll 4
        for (int r = 0; r < kMaskBlock; ++r) {
          int32_t i = r < nr ? p.nbr[(n0 + r) * k + j] : -1;
          mask |= unsigned(i >= 0) << r;
          s[r] = in + int64_t(i < 0 ? 0 : i) * cin;
        }
        const float *w = p.weights.data() + j * cin * cout + cb;
        switch (mask) {
#define CF_CASE(m)                                                             \
  case m:                                                                      \
    blockSteps<kMaskBlock, V, m>(acc, s, w, cin, cout);                        \
    break;
          CF_CASE(1)
          CF_CASE(2)
          CF_CASE(3) CF_CASE(4) CF_CASE(5) CF_CASE(6) CF_CASE(7) CF_CASE(8)
              CF_CASE(9) CF_CASE(10) CF_CASE(11) CF_CASE(12) CF_CASE(13)
                  CF_CASE(14) CF_CASE(15)
#undef CF_CASE
                      default : break;
        }
      }
#pragma GCC unroll 4
      for (int r = 0; r < kMaskBlock; ++r) {
        if (r >= nr)
          break;
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v)
          _mm512_storeu_ps(out + (n0 + r) * cout + cb + 16 * v, acc[r][v]);
      }
    }
  }
}

#endif // CF_X86

//===----------------------------------------------------------------------===//
// Plain loops: the fallback without AVX-512 (same loop structure, no
// register blocking).
//===----------------------------------------------------------------------===//

void perOffsetScalar(const Problem &p, float *out) {
  const int64_t cin = p.cin, cout = p.cout, k = p.k;
  for (int64_t ch = 0; ch < p.numChunks; ++ch) {
    int64_t r0 = ch * p.chunkRows, r1 = std::min(p.n, r0 + p.chunkRows);
    std::memset(out + r0 * cout, 0, sizeof(float) * (r1 - r0) * cout);
    for (int64_t j = 0; j < k; ++j) {
      const float *wj = p.weights.data() + j * cin * cout;
      for (int64_t q = p.start[ch * k + j]; q < p.start[ch * k + j + 1]; ++q) {
        const float *s = &p.in[int64_t(p.src[q]) * cin];
        float *d = out + int64_t(p.dst[q]) * cout;
        for (int64_t c = 0; c < cin; ++c)
          for (int64_t o = 0; o < cout; ++o)
            d[o] += s[c] * wj[c * cout + o];
      }
    }
  }
}

void outputStationaryScalar(const Problem &p, const std::vector<int32_t> &nbr,
                            float *out) {
  const int64_t cin = p.cin, cout = p.cout, k = p.k;
  for (int64_t n = 0; n < p.n; ++n) {
    float *d = out + n * cout;
    std::fill(d, d + cout, 0.0f);
    for (int64_t j = 0; j < k; ++j) {
      int32_t i = nbr[n * k + j];
      if (i < 0)
        continue;
      const float *s = &p.in[int64_t(i) * cin];
      const float *wj = p.weights.data() + j * cin * cout;
      for (int64_t c = 0; c < cin; ++c)
        for (int64_t o = 0; o < cout; ++o)
          d[o] += s[c] * wj[c * cout + o];
    }
  }
}

//===----------------------------------------------------------------------===//
// Dispatch.
//===----------------------------------------------------------------------===//

enum Form { PerOffset, OutputStationary, BlockZero, BlockMask, NumForms };
const char *const kFormNames[NumForms] = {"per_offset", "output_stationary",
                                          "os_block_zero", "os_block_mask"};

void runForm(Form form, const Problem &p, bool avx512, float *out) {
#if CF_X86
  if (avx512) {
    const int64_t v = std::min<int64_t>(p.cout / 16, 4);
#define CF_DISPATCH(R, V)                                                      \
  switch (form) {                                                              \
  case PerOffset:                                                              \
    return perOffsetAvx512<R, V>(p, out);                                      \
  case OutputStationary:                                                       \
    return outputStationaryAvx512<V>(p, out);                                  \
  case BlockZero:                                                              \
    return osBlockZeroAvx512<R, V>(p, out);                                    \
  case BlockMask:                                                              \
    return osBlockMaskAvx512<V>(p, out);                                       \
  default:                                                                     \
    return;                                                                    \
  }
    if (v == 1)
      CF_DISPATCH(8, 1)
    if (v == 2)
      CF_DISPATCH(8, 2)
    if (v == 3)
      CF_DISPATCH(6, 3)
    CF_DISPATCH(6, 4)
#undef CF_DISPATCH
  }
#endif
  (void)avx512;
  switch (form) {
  case PerOffset:
    return perOffsetScalar(p, out);
  case OutputStationary:
    return outputStationaryScalar(p, p.nbr, out);
  case BlockZero: // the zero row makes every offset contribute
    return outputStationaryScalar(p, p.nbrZ, out);
  case BlockMask:
    return outputStationaryScalar(p, p.nbr, out);
  default:
    return;
  }
}

/// max |a - ref| / max |ref|.
double relErr(const std::vector<float> &a, const std::vector<double> &ref) {
  double maxRef = 0, maxDiff = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    maxRef = std::max(maxRef, std::fabs(ref[i]));
    double d = std::fabs(double(a[i]) - ref[i]);
    if (!(d <= maxDiff)) // NaN counts as infinitely wrong
      maxDiff = std::isnan(d) ? INFINITY : d;
  }
  return maxRef > 0 ? maxDiff / maxRef : maxDiff;
}

} // namespace

int main(int argc, char **argv) {
  Options opts = parseOptions(argc, argv, "conv-forms", kUsage);
  const ConvGeometry &geom = opts.geom;
  if (!geom.subm) {
    std::fprintf(stderr, "conv-forms: only submanifold convs (no --regular)\n");
    return 2;
  }
  if (opts.cout % 16 != 0 || (opts.cout > 64 && opts.cout % 64 != 0)) {
    std::fprintf(stderr,
                 "conv-forms: --cout must be a multiple of 16 (of 64 above "
                 "64), got %lld\n",
                 static_cast<long long>(opts.cout));
    return 2;
  }
  Sites sites = loadSites(opts);
#ifdef _OPENMP
  omp_set_num_threads(opts.threads);
#else
  if (opts.threads != 1)
    std::printf("# built without OpenMP: --threads ignored\n");
  opts.threads = 1;
#endif
  printHeader(opts, sites);

  bool avx512 = false;
#if CF_X86
  __builtin_cpu_init();
  avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
  const char *forceScalar = std::getenv("SPCONV_CONV_FORMS_SCALAR");
  const bool forced = forceScalar && *forceScalar && *forceScalar != '0';
  if (forced)
    avx512 = false;
  std::printf("# isa %s\n", avx512 ? "avx512" : "scalar");
  if (!avx512)
    std::printf("# %s: every form runs as plain loops (times not "
                "representative)\n",
                forced ? "SPCONV_CONV_FORMS_SCALAR set"
                       : "no AVX-512F on this CPU");

  // Untimed: the rulebook, the neighbour table, the chunked pair lists.
  Problem p;
  p.n = sites.size();
  p.k = geom.volume();
  p.cin = opts.cin;
  p.cout = opts.cout;
  std::vector<float> in;
  loadFeaturesAndWeights(opts, p.n, p.k, in, p.weights);
  p.in.assign((p.n + 1) * p.cin, 0.0f);
  std::copy(in.begin(), in.end(), p.in.begin());
  Rulebook rb = buildSortedRulebook(sites, geom);
  const int64_t pairs = rb.totalPairs();
  p.nbr.assign(p.n * p.k, -1);
  for (int64_t j = 0; j < p.k; ++j)
    for (int64_t q = 0; q < rb.counts[j]; ++q)
      p.nbr[int64_t(rb.out(j)[q]) * p.k + j] = rb.in(j)[q];
  p.nbrZ = p.nbr;
  for (int32_t &i : p.nbrZ)
    if (i < 0)
      i = int32_t(p.n);
  // Chunks of output rows whose accumulators take about 256 KiB.
  p.chunkRows = std::max<int64_t>(64, (256 << 10) / (4 * p.cout));
  p.numChunks = (p.n + p.chunkRows - 1) / p.chunkRows;
  p.start.assign(p.numChunks * p.k + 1, 0);
  p.src.reserve(pairs);
  p.dst.reserve(pairs);
  for (int64_t ch = 0; ch < p.numChunks; ++ch) {
    int64_t r0 = ch * p.chunkRows, r1 = std::min(p.n, r0 + p.chunkRows);
    for (int64_t j = 0; j < p.k; ++j) {
      p.start[ch * p.k + j] = int64_t(p.src.size());
      for (int64_t r = r0; r < r1; ++r)
        if (p.nbr[r * p.k + j] >= 0) {
          p.src.push_back(p.nbr[r * p.k + j]);
          p.dst.push_back(int32_t(r));
        }
    }
  }
  p.start[p.numChunks * p.k] = int64_t(p.src.size());

  // FMA work of os_block_zero: per block, B rows for every offset present
  // in any row of the block.
  const int64_t blockB = p.cout / 16 <= 2 ? 8 : 6;
  int64_t blockRowOffsets = 0;
  for (int64_t n0 = 0; n0 < p.n; n0 += blockB)
    for (int64_t j = 0; j < p.k; ++j) {
      bool any = false;
      for (int64_t r = n0; r < std::min(p.n, n0 + blockB); ++r)
        any |= p.nbr[r * p.k + j] >= 0;
      blockRowOffsets += any ? blockB : 0;
    }

  // os_block_mask: (block of 4, offset) steps with any row present; pairs /
  // steps rows share each weight load there.
  int64_t maskSteps = 0;
  for (int64_t n0 = 0; n0 < p.n; n0 += kMaskBlock)
    for (int64_t j = 0; j < p.k; ++j) {
      bool any = false;
      for (int64_t r = n0; r < std::min(p.n, n0 + kMaskBlock); ++r)
        any |= p.nbr[r * p.k + j] >= 0;
      maskSteps += any;
    }

  const double flops = 2.0 * double(pairs) * double(p.cin) * double(p.cout);
  std::vector<std::vector<float>> outs(NumForms,
                                       std::vector<float>(p.n * p.cout));
  Metrics metrics;
  for (int rep = 0; rep <= opts.repeat; ++rep) {
    metrics.warmUp(rep == 0);
    // Alternate the forms, rotating which goes first.
    for (int f = 0; f < NumForms; ++f) {
      Form form = Form((f + rep) % NumForms);
      std::vector<float> &out = outs[form];
      std::fill(out.begin(), out.end(), NAN); // every element must be written
      auto start = Clock::now();
      runForm(form, p, avx512, out.data());
      double ms = msSince(start);
      metrics.add(std::string(kFormNames[form]) + "_ms", ms);
      metrics.add(std::string(kFormNames[form]) + "_gflops",
                  ms > 0 ? flops / ms * 1e-6 : 0.0);
    }
  }
  metrics.print();
  std::printf("pairs %lld\n", static_cast<long long>(pairs));
  std::printf("flops %.0f\n", flops);
  std::printf("occupancy %.4f\n",
              p.n ? double(pairs) / double(p.n * p.k) : 0.0);
  std::printf("os_block_rows %lld\n", static_cast<long long>(blockB));
  std::printf("os_block_zero_fma_util %.4f\n",
              blockRowOffsets ? double(pairs) / double(blockRowOffsets) : 1.0);
  std::printf("os_block_mask_rows_per_step %.3f\n",
              maskSteps ? double(pairs) / double(maskSteps) : 0.0);
  std::printf("per_offset_rxv %lldx%lld\n", static_cast<long long>(blockB),
              static_cast<long long>(std::min<int64_t>(p.cout / 16, 4)));
  std::printf("chunk_rows %lld\n", static_cast<long long>(p.chunkRows));

  if (const char *fault = std::getenv("SPCONV_CONV_FORMS_FAULT")) {
    for (int f = 0; f < NumForms; ++f)
      if (!std::strcmp(fault, kFormNames[f]) && !outs[f].empty())
        outs[f][outs[f].size() / 2] += 1e-3f * (1.0f + std::fabs(outs[f][0]));
  }

  // The reference: double sums over the rulebook's pairs.
  std::vector<double> ref(p.n * p.cout, 0.0);
  for (int64_t j = 0; j < p.k; ++j) {
    const float *wj = p.weights.data() + j * p.cin * p.cout;
    for (int64_t q = 0; q < rb.counts[j]; ++q) {
      const float *s = &p.in[int64_t(rb.in(j)[q]) * p.cin];
      double *d = &ref[int64_t(rb.out(j)[q]) * p.cout];
      for (int64_t c = 0; c < p.cin; ++c)
        for (int64_t o = 0; o < p.cout; ++o)
          d[o] += double(s[c]) * double(wj[c * p.cout + o]);
    }
  }
  double maxErr = 0;
  bool ok = true;
  for (int f = 0; f < NumForms; ++f) {
    double err = relErr(outs[f], ref);
    std::printf("%s_rel_err %.3g\n", kFormNames[f], err);
    if (!(err <= 1e-5)) {
      std::printf("# %s differs from the reference\n", kFormNames[f]);
      ok = false;
    }
    maxErr = std::max(maxErr, std::isnan(err) ? INFINITY : err);
  }
  // The forms against each other (per_offset as the baseline).
  double maxPairErr = 0;
  for (int f = 1; f < NumForms; ++f) {
    std::vector<double> base(outs[PerOffset].begin(), outs[PerOffset].end());
    maxPairErr = std::max(maxPairErr, relErr(outs[f], base));
  }
  if (!(maxPairErr <= 1e-5))
    ok = false;
  std::printf("max_rel_err %.3g\n", maxErr);
  std::printf("forms_rel_err %.3g\n", maxPairErr);
  std::printf("check %s\n", ok ? "ok" : "FAILED");
  if (!opts.out.empty())
    writeMatrix(opts.out, outs[PerOffset].data(), p.n, p.cout);
  if (!opts.outCoords.empty())
    writeMatrix(opts.outCoords, sites.coords.data(), p.n, 4);
  return ok ? 0 : 1;
}
