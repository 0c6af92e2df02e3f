//===- MachinePeak.cpp - This machine's FP32 FMA peak and bandwidth -------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The limits bench/run.py divides each layer's time by, measured here:
//
//   clock_ghz            the core clock, measured: a chain of dependent
//                        integer adds (one cycle each) timed on one thread
//   vector_bits          the widest FMA vector the CPU flags allow
//                        (/proc/cpuinfo: avx512f -> 512, avx2 + fma -> 256,
//                        else 128), never assumed; or --vector-bits, the
//                        width the measured kernels use (256 for code
//                        compiled for haswell on an AVX-512 machine), which
//                        the flags must allow
//   fma_flops_per_cycle  FP32 flops per cycle and core, measured with
//                        independent vector FMAs of that width on each
//                        thread (2 * lanes * FMA pipes)
//   fma_pipes            fma_flops_per_cycle / (2 * lanes), rounded (at
//                        least 1)
//   peak_gflops          clock * 2 * lanes * fma_pipes * --threads: the FP32
//                        FMA peak of the threads used
//   fma_measured_gflops  what the FMA loop of that width sustained on
//                        --threads threads at once (best of three runs of
//                        60M iterations): the peak at the clock the core
//                        keeps while it runs such FMAs (wide vectors may
//                        lower it), which bench/run.py divides by
//   read_gbs             bytes per second read by --threads threads
//                        streaming over --read-bytes (default 256 MiB)
//   write_gbs            bytes per second written (a[i] += 1: read and
//                        written, counted once) over --write-bytes
//
// Streaming is the fastest way to move bytes, so a gather of the same bytes
// out of a buffer of the same size can only be slower: bytes / read_gbs is
// a lower bound of any gather's time.
//
//===----------------------------------------------------------------------===//

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The CPU flags of /proc/cpuinfo's first processor.
std::string cpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0)
      return " " + line.substr(line.find(':') + 1) + " ";
  return " ";
}

bool hasFlag(const std::string &flags, const char *flag) {
  return flags.find(std::string(" ") + flag + " ") != std::string::npos;
}

/// GHz from a chain of dependent adds, best of a few tries.
double measureClockGHz() {
  double best = 0;
  // Many short tries (about 4 ms each at 2.5 GHz): the best is one no other
  // process preempted.
  for (int attempt = 0; attempt < 40; ++attempt) {
    uint64_t x = 0;
    const int64_t iterations = 200000;
    auto start = Clock::now();
    for (int64_t i = 0; i < iterations; ++i) {
      // 50 dependent adds: 50 cycles; the loop's own counter runs beside.
      asm volatile(
#define A10                                                                    \
  "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd " \
  "$1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
          A10 A10 A10 A10 A10
#undef A10
          : "+r"(x));
    }
    double s = secondsSince(start);
    best = std::max(best, 50.0 * double(iterations) / s * 1e-9);
  }
  return best;
}

/// FP32 flops of `iterations` rounds of independent FMAs of each width.
__attribute__((target("avx512f"))) double fma512(int64_t iterations) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i)
    acc[i] = _mm512_set1_ps(float(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iterations; ++it)
    for (int i = 0; i < 16; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 sum = acc[0];
  for (int i = 1; i < 16; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  // Not _mm512_reduce_add_ps: GCC 12's header warns inside it.
  float out[16];
  _mm512_storeu_ps(out, sum);
  volatile float sink = out[0];
  (void)sink;
  return 2.0 * 16 * 16 * double(iterations);
}

__attribute__((target("avx2,fma"))) double fma256(int64_t iterations) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm256_set1_ps(float(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iterations; ++it)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  float out[8];
  __m256 sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm256_add_ps(sum, acc[i]);
  _mm256_storeu_ps(out, sum);
  volatile float sink = out[0];
  (void)sink;
  return 2.0 * 8 * 12 * double(iterations);
}

double fma128(int64_t iterations) {
  // SSE has no FMA: a multiply and an add per lane (2 flops).
  __m128 acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm_set1_ps(float(i));
  const __m128 a = _mm_set1_ps(0.999999f), b = _mm_set1_ps(1e-7f);
  for (int64_t it = 0; it < iterations; ++it)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm_add_ps(_mm_mul_ps(acc[i], a), b);
  float out[4];
  __m128 sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm_add_ps(sum, acc[i]);
  _mm_storeu_ps(out, sum);
  volatile float sink = out[0];
  (void)sink;
  return 2.0 * 4 * 12 * double(iterations);
}

/// Runs `work(thread)` on `threads` threads at once; returns the seconds of
/// the slowest.
template <typename F> double onThreads(int threads, F work) {
  std::vector<std::thread> pool;
  auto start = Clock::now();
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(work, t);
  work(0);
  for (std::thread &t : pool)
    t.join();
  return secondsSince(start);
}

int64_t parseBytes(const char *text) {
  char *end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (end == text || *end || v < 4096) {
    std::fprintf(stderr, "machine-peak: bad byte count %s\n", text);
    std::exit(2);
  }
  return v;
}

} // namespace

int main(int argc, char **argv) {
  int threads = 1, askedBits = 0;
  int64_t readBytes = int64_t(256) << 20, writeBytes = int64_t(256) << 20;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc)
      threads = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--vector-bits" && i + 1 < argc)
      askedBits = std::atoi(argv[++i]);
    else if (arg == "--read-bytes" && i + 1 < argc)
      readBytes = parseBytes(argv[++i]);
    else if (arg == "--write-bytes" && i + 1 < argc)
      writeBytes = parseBytes(argv[++i]);
    else {
      std::fprintf(stderr, "usage: machine-peak [--threads T] "
                           "[--vector-bits 128|256|512] [--read-bytes B] "
                           "[--write-bytes B]\n");
      return 2;
    }
  }

  const std::string flags = cpuFlags();
  int bits = 128;
  if (hasFlag(flags, "avx512f") && __builtin_cpu_supports("avx512f"))
    bits = 512;
  else if (hasFlag(flags, "avx2") && hasFlag(flags, "fma") &&
           __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    bits = 256;
  if (askedBits) {
    if (askedBits != 128 && askedBits != 256 && askedBits != 512) {
      std::fprintf(stderr,
                   "machine-peak: --vector-bits must be 128, 256 or "
                   "512, got %d\n",
                   askedBits);
      return 2;
    }
    if (askedBits > bits) {
      std::fprintf(stderr,
                   "machine-peak: --vector-bits %d: this CPU's widest "
                   "FMA vector is %d bits\n",
                   askedBits, bits);
      return 2;
    }
    bits = askedBits;
  }
  const int lanes = bits / 32;
  const double ghz = measureClockGHz();

  auto fma = [&](int64_t iterations) {
    return bits == 512   ? fma512(iterations)
           : bits == 256 ? fma256(iterations)
                         : fma128(iterations);
  };
  // Flops per cycle on one thread, best of a few; then all threads at once.
  // Short tries again, the best one counts.
  double bestPerCycle = 0;
  for (int attempt = 0; attempt < 40; ++attempt) {
    auto start = Clock::now();
    double flops = fma(200000);
    double s = secondsSince(start);
    bestPerCycle = std::max(bestPerCycle, flops / s / (ghz * 1e9));
  }
  // Sustained: long runs on every thread at once, best of three (a run
  // another process preempted is not the machine's rate).
  const int64_t iterations = 60000000;
  const int pipes = std::max(1, int(std::lround(bestPerCycle / (2.0 * lanes))));
  double measuredGflops = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<double> flops(threads, 0.0);
    double fmaSeconds =
        onThreads(threads, [&](int t) { flops[t] = fma(iterations); });
    double total = 0;
    for (double f : flops)
      total += f;
    measuredGflops = std::max(measuredGflops, total / fmaSeconds * 1e-9);
  }
  const double peak = ghz * 2.0 * lanes * pipes * threads;

  // Bandwidth: each thread streams its slice; best of 3 after a first touch.
  std::vector<float> readBuf(readBytes / sizeof(float), 1.0f);
  std::vector<float> writeBuf(writeBytes / sizeof(float), 1.0f);
  std::vector<double> sums(threads, 0.0);
  auto slice = [&](std::vector<float> &v, int t, size_t &lo, size_t &hi) {
    lo = v.size() * t / threads;
    hi = v.size() * (t + 1) / threads;
  };
  double bestRead = 0, bestWrite = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    double s = onThreads(threads, [&](int t) {
      size_t lo, hi;
      slice(readBuf, t, lo, hi);
      float acc[16] = {0};
      for (size_t i = lo; i + 16 <= hi; i += 16)
        for (int j = 0; j < 16; ++j)
          acc[j] += readBuf[i + j];
      double total = 0;
      for (float a : acc)
        total += a;
      sums[t] += total;
    });
    if (attempt)
      bestRead = std::max(bestRead, double(readBytes) / s * 1e-9);
    s = onThreads(threads, [&](int t) {
      size_t lo, hi;
      slice(writeBuf, t, lo, hi);
      for (size_t i = lo; i < hi; ++i)
        writeBuf[i] += 1.0f;
    });
    if (attempt)
      bestWrite = std::max(bestWrite, double(writeBytes) / s * 1e-9);
  }
  volatile double sink = sums[0] + writeBuf[0];
  (void)sink;

  std::printf("threads %d\n", threads);
  std::printf("clock_ghz %.3f\n", ghz);
  {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("cpu MHz", 0) == 0) {
        std::printf("# cpuinfo_mhz %s\n",
                    line.substr(line.find(':') + 2).c_str());
        break;
      }
  }
  std::printf("vector_bits %d\n", bits);
  std::printf("fma_flops_per_cycle %.2f\n", bestPerCycle);
  std::printf("fma_pipes %d\n", pipes);
  std::printf("peak_gflops %.1f\n", peak);
  std::printf("fma_measured_gflops %.1f\n", measuredGflops);
  std::printf("read_bytes %lld\n", static_cast<long long>(readBytes));
  std::printf("read_gbs %.2f\n", bestRead);
  std::printf("write_bytes %lld\n", static_cast<long long>(writeBytes));
  std::printf("write_gbs %.2f\n", bestWrite);
  return 0;
}
