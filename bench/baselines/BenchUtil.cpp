//===- BenchUtil.cpp - Options, timing and output of the baselines --------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"

#include "SpConv/Support/Npy.h"

#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace spconv::bench;

namespace {

[[noreturn]] void usage(const char *program, const char *extraUsage,
                        const char *problem) {
  if (problem)
    std::fprintf(stderr, "%s: %s\n", program, problem);
  std::fprintf(
      stderr,
      "usage: %s --coords FILE.npy [options]\n"
      "  --cin C, --cout C     channels (default 16, 16)\n"
      "  --threads T           threads (default 1)\n"
      "  --repeat R            timed repeats after one warm-up; medians are\n"
      "                        printed (default 5)\n"
      "  --grid D,H,W          spatial grid (default: the sites' extent)\n"
      "  --kernel K|K,K,K  --stride S|..  --padding P|..  --dilation D|..\n"
      "                        geometry (default 3, 1, k/2, 1)\n"
      "  --regular             regular conv instead of submanifold\n"
      "  --check               verify against an independent computation\n"
      "  --seed S              seed of the random features and weights\n"
      "  --features F.npy      float32 [N, Cin] features instead of random "
      "ones\n"
      "  --weight W.npy        float32 [K, Cin, Cout] weights instead of "
      "random\n"
      "  --out O.npy           write the output features (float32 [M, Cout])\n"
      "  --out-coords C.npy    write the output coordinates (int32 [M, 4])\n"
      "%s",
      program, extraUsage ? extraUsage : "");
  std::exit(2);
}

bool parseInt(const char *text, int64_t &value) {
  char *end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0')
    return false;
  value = v;
  return true;
}

/// "3" or "3,3,3".
bool parseTriple(const char *text, Dims3 &value) {
  std::string s(text);
  size_t c1 = s.find(',');
  if (c1 == std::string::npos) {
    int64_t v;
    if (!parseInt(text, v))
      return false;
    value = {v, v, v};
    return true;
  }
  size_t c2 = s.find(',', c1 + 1);
  if (c2 == std::string::npos)
    return false;
  return parseInt(s.substr(0, c1).c_str(), value[0]) &&
         parseInt(s.substr(c1 + 1, c2 - c1 - 1).c_str(), value[1]) &&
         parseInt(s.substr(c2 + 1).c_str(), value[2]);
}

/// SplitMix64: a tiny, well-mixed generator; std::mt19937 would do too but
/// this keeps the sequence identical across standard libraries.
uint64_t splitMix(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

} // namespace

Options spconv::bench::parseOptions(int argc, char **argv, const char *program,
                                    const char *extraUsage) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    auto next = [&]() -> const char * {
      if (i + 1 >= argc)
        usage(program, extraUsage,
              (std::string(arg) + " needs a value").c_str());
      return argv[++i];
    };
    auto intArg = [&](int64_t lo) {
      int64_t v;
      if (!parseInt(next(), v) || v < lo)
        usage(program, extraUsage,
              (std::string("bad value for ") + arg).c_str());
      return v;
    };
    auto tripleArg = [&](int64_t lo, Dims3 &out) {
      if (!parseTriple(next(), out) || out[0] < lo || out[1] < lo ||
          out[2] < lo)
        usage(program, extraUsage,
              (std::string("bad value for ") + arg).c_str());
    };
    if (!std::strcmp(arg, "--coords"))
      opts.coords = next();
    else if (!std::strcmp(arg, "--cin"))
      opts.cin = intArg(1);
    else if (!std::strcmp(arg, "--cout"))
      opts.cout = intArg(1);
    else if (!std::strcmp(arg, "--threads"))
      opts.threads = static_cast<int>(intArg(1));
    else if (!std::strcmp(arg, "--repeat"))
      opts.repeat = static_cast<int>(intArg(1));
    else if (!std::strcmp(arg, "--seed"))
      opts.seed = static_cast<uint64_t>(intArg(0));
    else if (!std::strcmp(arg, "--grid"))
      tripleArg(1, opts.grid);
    else if (!std::strcmp(arg, "--kernel"))
      tripleArg(1, opts.geom.kernel);
    else if (!std::strcmp(arg, "--stride"))
      tripleArg(1, opts.geom.stride);
    else if (!std::strcmp(arg, "--dilation"))
      tripleArg(1, opts.geom.dilation);
    else if (!std::strcmp(arg, "--padding")) {
      tripleArg(0, opts.geom.padding);
      opts.paddingGiven = true;
    } else if (!std::strcmp(arg, "--regular"))
      opts.geom.subm = false;
    else if (!std::strcmp(arg, "--features"))
      opts.features = next();
    else if (!std::strcmp(arg, "--weight"))
      opts.weight = next();
    else if (!std::strcmp(arg, "--out"))
      opts.out = next();
    else if (!std::strcmp(arg, "--out-coords"))
      opts.outCoords = next();
    else if (!std::strcmp(arg, "--check"))
      opts.check = true;
    else if (!std::strcmp(arg, "--help") || !std::strcmp(arg, "-h"))
      usage(program, extraUsage, nullptr);
    else
      usage(program, extraUsage,
            (std::string("unknown argument ") + arg).c_str());
  }
  if (opts.coords.empty())
    usage(program, extraUsage, "--coords is required");
  ConvGeometry &g = opts.geom;
  for (int i = 0; i < 3; ++i) {
    if (g.kernel[i] > 16)
      usage(program, extraUsage, "kernel extents above 16 are not supported");
    if (g.subm && g.kernel[i] % 2 == 0)
      usage(program, extraUsage, "a submanifold kernel must be odd");
    if (!opts.paddingGiven)
      g.padding[i] = g.subm ? g.kernel[i] / 2 * g.dilation[i] : 0;
  }
  if (g.subm && (g.stride != Dims3{1, 1, 1}))
    usage(program, extraUsage, "a submanifold conv has stride 1");
  return opts;
}

Sites spconv::bench::loadSites(const Options &opts) {
  npy::NpyArray array;
  std::string error;
  if (!npy::readNpy(opts.coords, array, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    std::exit(1);
  }
  if (!npy::isInteger(array.dtype) || array.rank() != 2 ||
      array.shape[1] != 4) {
    std::fprintf(stderr,
                 "error: %s: expected an integer [N, 4] array (batch, z, y, "
                 "x), got %s\n",
                 opts.coords.c_str(), array.describe().c_str());
    std::exit(1);
  }
  Sites sites;
  int64_t n = array.shape[0];
  sites.coords.resize(4 * n);
  Dims3 extent{0, 0, 0};
  for (int64_t i = 0; i < 4 * n; ++i) {
    int64_t v = array.getInt(i);
    if (v < 0 || v > INT32_MAX) {
      std::fprintf(stderr, "error: %s: row %lld has coordinate %lld\n",
                   opts.coords.c_str(), static_cast<long long>(i / 4),
                   static_cast<long long>(v));
      std::exit(1);
    }
    sites.coords[i] = static_cast<int32_t>(v);
    if (i % 4 == 0)
      sites.batch = std::max(sites.batch, v + 1);
    else
      extent[i % 4 - 1] = std::max(extent[i % 4 - 1], v + 1);
  }
  sites.grid = opts.grid[0] ? opts.grid : extent;
  for (int i = 0; i < 3; ++i) {
    if (extent[i] > sites.grid[i]) {
      std::fprintf(stderr,
                   "error: %s: a site lies outside the grid (dim %d extent "
                   "%lld > %lld)\n",
                   opts.coords.c_str(), i, static_cast<long long>(extent[i]),
                   static_cast<long long>(sites.grid[i]));
      std::exit(1);
    }
  }
  return sites;
}

void spconv::bench::fillRandom(float *data, int64_t n, uint64_t seed) {
  uint64_t state = seed;
  for (int64_t i = 0; i < n; ++i)
    data[i] = static_cast<float>(static_cast<double>(splitMix(state) >> 11) *
                                     (2.0 / 9007199254740992.0) -
                                 1.0);
}

namespace {
/// Reads a float32 .npy of exactly `shape` into `out`; exits 1 otherwise.
void readFloats(const std::string &path, const std::vector<int64_t> &shape,
                std::vector<float> &out) {
  spconv::npy::NpyArray array;
  std::string error;
  if (!spconv::npy::readNpy(path, array, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    std::exit(1);
  }
  if (array.dtype != spconv::npy::DType::Float32 || array.shape != shape) {
    std::string want = "f4[";
    for (size_t i = 0; i < shape.size(); ++i)
      want += (i ? ", " : "") + std::to_string(shape[i]);
    std::fprintf(stderr, "error: %s: expected %s], got %s\n", path.c_str(),
                 want.c_str(), array.describe().c_str());
    std::exit(1);
  }
  out.resize(array.numElements());
  std::memcpy(out.data(), array.data.data(), out.size() * sizeof(float));
}

template <typename T>
void writeArray(const std::string &path, spconv::npy::DType dtype,
                const T *data, int64_t rows, int64_t cols) {
  spconv::npy::NpyArray array =
      spconv::npy::NpyArray::zeros(dtype, {rows, cols});
  if (rows * cols)
    std::memcpy(array.data.data(), data, sizeof(T) * rows * cols);
  std::string error;
  if (!spconv::npy::writeNpy(path, array, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    std::exit(1);
  }
}
} // namespace

void spconv::bench::loadFeaturesAndWeights(const Options &opts, int64_t n,
                                           int64_t kernelVolume,
                                           std::vector<float> &in,
                                           std::vector<float> &weights) {
  if (!opts.features.empty()) {
    readFloats(opts.features, {n, opts.cin}, in);
  } else {
    in.resize(n * opts.cin);
    fillRandom(in.data(), in.size(), opts.seed);
  }
  if (!opts.weight.empty()) {
    readFloats(opts.weight, {kernelVolume, opts.cin, opts.cout}, weights);
  } else {
    weights.resize(kernelVolume * opts.cin * opts.cout);
    fillRandom(weights.data(), weights.size(), opts.seed + 1);
  }
}

void spconv::bench::writeMatrix(const std::string &path, const float *data,
                                int64_t rows, int64_t cols) {
  writeArray(path, spconv::npy::DType::Float32, data, rows, cols);
}

void spconv::bench::writeMatrix(const std::string &path, const int32_t *data,
                                int64_t rows, int64_t cols) {
  writeArray(path, spconv::npy::DType::Int32, data, rows, cols);
}

void spconv::bench::printBlas() {
  std::printf("blas_core %s\n", openblas_get_corename());
  std::printf("# blas_config %s\n", openblas_get_config());
  const char *forced = std::getenv("OPENBLAS_CORETYPE");
  std::printf("# blas_coretype_env %s\n", forced && *forced ? forced : "-");
}

void Metrics::add(const std::string &name, double value) {
  if (warm) {
    if (!first.count(name) && !samples.count(name))
      order.push_back(name);
    first[name] = value;
    return;
  }
  auto &v = samples[name];
  if (v.empty() && !first.count(name))
    order.push_back(name);
  v.push_back(value);
}

void Metrics::print() const {
  for (const std::string &name : order) {
    auto it = samples.find(name);
    if (it == samples.end() || it->second.empty())
      continue;
    std::vector<double> v = it->second;
    double last = v.back();
    std::sort(v.begin(), v.end());
    // The lower median for an even count: an observed value, not a mean.
    double median = v[(v.size() - 1) / 2];
    std::printf("%s %.3f\n", name.c_str(), median);
    std::printf("%s_min %.3f\n", name.c_str(), v.front());
    std::printf("%s_max %.3f\n", name.c_str(), v.back());
    std::printf("%s_last %.3f\n", name.c_str(), last);
    auto f = first.find(name);
    if (f != first.end())
      std::printf("%s_first %.3f\n", name.c_str(), f->second);
  }
}

void spconv::bench::printHeader(const Options &opts, const Sites &sites) {
  const ConvGeometry &g = opts.geom;
  std::printf("# coords %s\n", opts.coords.c_str());
  std::printf("sites %lld\n", static_cast<long long>(sites.size()));
  std::printf("grid %lld,%lld,%lld\n", static_cast<long long>(sites.grid[0]),
              static_cast<long long>(sites.grid[1]),
              static_cast<long long>(sites.grid[2]));
  std::printf("batch %lld\n", static_cast<long long>(sites.batch));
  std::printf("conv %s k=%lld,%lld,%lld s=%lld,%lld,%lld p=%lld,%lld,%lld "
              "d=%lld,%lld,%lld\n",
              g.subm ? "subm" : "regular", (long long)g.kernel[0],
              (long long)g.kernel[1], (long long)g.kernel[2],
              (long long)g.stride[0], (long long)g.stride[1],
              (long long)g.stride[2], (long long)g.padding[0],
              (long long)g.padding[1], (long long)g.padding[2],
              (long long)g.dilation[0], (long long)g.dilation[1],
              (long long)g.dilation[2]);
  std::printf("threads %d\n", opts.threads);
  std::printf("repeat %d\n", opts.repeat);
}
