//===- main.cpp - Run a network compiled ahead of time --------------------===//
//
// Part of the spconv-mlir project.
//
// spconv-aot-example OUT_DIR [--sites N] [--seed S] [--threads T]
//                    [--bad-site]
//
// Links net.o, which spconv-compile made from net.mlir at build time, with
// the spconv runtime; no MLIR at run time. Built twice when the CUDA
// toolkit is found: spconv-aot-example (--target cpu) and
// spconv-aot-example-cuda (--target cuda; Memory.h says where buffers live).
// Generates a deterministic sparse input on the 16x16x16 grid, calls @net
// (through net.h) and @subm (from C, subm_from_c.c), and writes the inputs as
// OUT_DIR/in0.npy ... in4.npy and the results as net_out0.npy, net_out1.npy and
// subm_out0.npy, so that they can be checked against spconv-run on the same
// files. --bad-site puts a site outside the grid, to show how a failed call is
// reported.
//
//===----------------------------------------------------------------------===//

#include "Memory.h"
#include "net.h"
#include "subm_from_c.h"

#include "SpConv/Support/Npy.h"

#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace npy = spconv::npy;

namespace {
constexpr int32_t kGrid = 16;

struct Inputs {
  int64_t sites = 0;
  std::vector<int32_t> coords;   // sites x 4: batch, z, y, x
  std::vector<float> features;   // sites x 4
  std::vector<float> weightSubm; // 27 x 4 x 8
  std::vector<float> biasSubm;   // 8
  std::vector<float> weightDown; // 27 x 8 x 16
};

/// Distinct random sites in batch 0 and uniform features and weights: the
/// same for the same seed on every machine (mt19937 is fully specified; the
/// floats are drawn from its integers by hand, not by a distribution).
Inputs makeInputs(int64_t sites, unsigned seed) {
  std::mt19937 random(seed);
  auto uniform = [&] { return float(random() % 2001) / 1000.0f - 1.0f; };
  Inputs in;
  std::set<int32_t> taken;
  while (int64_t(taken.size()) < sites) {
    int32_t key = int32_t(random() % (kGrid * kGrid * kGrid));
    if (!taken.insert(key).second)
      continue;
    in.coords.insert(in.coords.end(), {0, key / (kGrid * kGrid),
                                       key / kGrid % kGrid, key % kGrid});
  }
  in.sites = sites;
  auto fill = [&](std::vector<float> &values, size_t count, float scale) {
    for (size_t i = 0; i < count; ++i)
      values.push_back(uniform() * scale);
  };
  fill(in.features, sites * 4, 1.0f);
  fill(in.weightSubm, 27 * 4 * 8, 0.3f);
  fill(in.biasSubm, 8, 0.1f);
  fill(in.weightDown, 27 * 8 * 16, 0.2f);
  return in;
}

/// A contiguous row-major descriptor over `data`; every generated
/// descriptor struct has these fields.
template <typename Memref, typename T>
Memref describe(T *data, std::vector<int64_t> shape) {
  Memref memref;
  memref.allocated = memref.aligned = data;
  memref.offset = 0;
  int64_t stride = 1;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    memref.sizes[d] = shape[d];
    memref.strides[d] = stride;
    stride *= shape[d];
  }
  return memref;
}

/// Copies a rank-2 result (any strides) into an array of `dtype`.
template <typename Memref>
npy::NpyArray toArray(const Memref &result, npy::DType dtype) {
  std::vector<unsigned char> staging;
  Memref memref = aot::readableOnHost(result, staging);
  using T = std::remove_pointer_t<decltype(memref.aligned)>;
  npy::NpyArray array =
      npy::NpyArray::zeros(dtype, {memref.sizes[0], memref.sizes[1]});
  if (!memref.aligned && memref.sizes[0] * memref.sizes[1] != 0) {
    std::fprintf(stderr,
                 "spconv-aot-example: cannot copy a result to the host: %s\n",
                 spconv_rt_last_error());
    std::exit(1);
  }
  T *out = array.dataAs<T>();
  for (int64_t i = 0; i < memref.sizes[0]; ++i)
    for (int64_t j = 0; j < memref.sizes[1]; ++j)
      *out++ = memref.aligned[memref.offset + i * memref.strides[0] +
                              j * memref.strides[1]];
  return array;
}

template <typename T>
bool save(const std::string &path, npy::DType dtype, std::vector<int64_t> shape,
          const std::vector<T> &values) {
  npy::NpyArray array = npy::NpyArray::zeros(dtype, std::move(shape));
  std::memcpy(array.data.data(), values.data(), values.size() * sizeof(T));
  std::string error;
  if (!npy::writeNpy(path, array, error)) {
    std::fprintf(stderr, "spconv-aot-example: %s\n", error.c_str());
    return false;
  }
  return true;
}

bool save(const std::string &path, const npy::NpyArray &array) {
  std::string error;
  if (!npy::writeNpy(path, array, error)) {
    std::fprintf(stderr, "spconv-aot-example: %s\n", error.c_str());
    return false;
  }
  return true;
}

/// Results are allocated by the compiled code and ours to free, each
/// distinct buffer once.
class Buffers {
public:
  ~Buffers() {
    for (void *buffer : owned)
      aot::releaseResult(buffer);
  }
  void own(void *buffer) { owned.insert(buffer); }

private:
  std::set<void *> owned;
};

double sum(const npy::NpyArray &array) {
  double total = 0;
  for (int64_t i = 0; i < array.numElements(); ++i)
    total += array.getDouble(i);
  return total;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: spconv-aot-example OUT_DIR [--sites N] "
                         "[--seed S] [--threads T] [--bad-site]\n");
    return 2;
  }
  std::string outDir = argv[1];
  int64_t sites = 300;
  unsigned seed = 1;
  int threads = 0;
  bool badSite = false;
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--bad-site") {
      badSite = true;
    } else if (i + 1 < argc &&
               (flag == "--sites" || flag == "--seed" || flag == "--threads")) {
      long value = std::strtol(argv[++i], nullptr, 10);
      if (flag == "--sites")
        sites = value;
      else if (flag == "--seed")
        seed = unsigned(value);
      else
        threads = int(value);
    } else {
      std::fprintf(stderr, "spconv-aot-example: unknown argument %s\n",
                   flag.c_str());
      return 2;
    }
  }
  if (sites < 1 || sites > kGrid * kGrid * kGrid) {
    std::fprintf(stderr, "spconv-aot-example: --sites must be in [1, %d]\n",
                 kGrid * kGrid * kGrid);
    return 2;
  }
  if (std::string why = aot::targetUnavailable(); !why.empty()) {
    std::fprintf(stderr, "spconv-aot-example: cannot run here: %s\n",
                 why.c_str());
    return 3;
  }
  if (threads > 0) {
    // The compiled loops run on OpenMP threads, the runtime on its own.
    omp_set_num_threads(threads);
    spconv_rt_set_num_threads(threads);
  }

  Inputs in = makeInputs(sites, seed);
  if (badSite)
    in.coords[1] = kGrid; // z of the first site, one past the grid
  std::string dir = outDir + "/";
  if (!save(dir + "in0.npy", npy::DType::Int32, {sites, 4}, in.coords) ||
      !save(dir + "in1.npy", npy::DType::Float32, {sites, 4}, in.features) ||
      !save(dir + "in2.npy", npy::DType::Float32, {27, 4, 8}, in.weightSubm) ||
      !save(dir + "in3.npy", npy::DType::Float32, {8}, in.biasSubm) ||
      !save(dir + "in4.npy", npy::DType::Float32, {27, 8, 16}, in.weightDown))
    return 1;

  // Where the compiled code can read the inputs.
  aot::ArgumentMemory memory;
  int32_t *coordsData = memory.place(in.coords);
  float *featuresData = memory.place(in.features);
  float *weightSubmData = memory.place(in.weightSubm);
  float *biasSubmData = memory.place(in.biasSubm);
  float *weightDownData = memory.place(in.weightDown);
  if (!coordsData || !featuresData || !weightSubmData || !biasSubmData ||
      !weightDownData) {
    std::fprintf(stderr, "spconv-aot-example: cannot allocate inputs: %s\n",
                 spconv_rt_last_error());
    return 1;
  }

  // @net: two results, through a net_results struct.
  auto coords = describe<spconv_memref_2d_i32>(coordsData, {sites, 4});
  auto features = describe<spconv_memref_2d_f32>(featuresData, {sites, 4});
  auto weightSubm = describe<spconv_memref_3d_f32>(weightSubmData, {27, 4, 8});
  auto biasSubm = describe<spconv_memref_1d_f32>(biasSubmData, {8});
  auto weightDown = describe<spconv_memref_3d_f32>(weightDownData, {27, 8, 16});
  Buffers buffers;
  net_results results;
  spconv_rt_clear_error();
  net(&results, &coords, &features, &weightSubm, &biasSubm, &weightDown);
  std::string error = spconv_rt_last_error();
  buffers.own(results.result0.allocated);
  buffers.own(results.result1.allocated);
  if (!error.empty()) {
    std::fprintf(stderr, "spconv-aot-example: @net failed: %s\n",
                 error.c_str());
    return 1;
  }
  npy::NpyArray outCoords = toArray(results.result0, npy::DType::Int32);
  npy::NpyArray outFeatures = toArray(results.result1, npy::DType::Float32);

  // @subm: one result, called from C.
  spconv_memref_2d_f32 submResult;
  error = subm_from_c(sites, coordsData, featuresData, weightSubmData,
                      biasSubmData, &submResult);
  buffers.own(submResult.allocated);
  if (!error.empty()) {
    std::fprintf(stderr, "spconv-aot-example: @subm failed: %s\n",
                 error.c_str());
    return 1;
  }
  npy::NpyArray submFeatures = toArray(submResult, npy::DType::Float32);

  if (!save(dir + "net_out0.npy", outCoords) ||
      !save(dir + "net_out1.npy", outFeatures) ||
      !save(dir + "subm_out0.npy", submFeatures))
    return 1;
  std::printf("net: %lld sites -> %lld sites x %lld channels, feature sum "
              "%.4f\n",
              (long long)sites, (long long)outFeatures.shape[0],
              (long long)outFeatures.shape[1], sum(outFeatures));
  std::printf("subm: %lld sites x %lld channels, feature sum %.4f\n",
              (long long)submFeatures.shape[0],
              (long long)submFeatures.shape[1], sum(submFeatures));
  return 0;
}
