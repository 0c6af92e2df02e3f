// wgmma_layouts.cu - which shared-memory layouts Hopper's wgmma reads, and how.
//
// Part of the spconv-mlir project (issue 37, item 3; docs/GPU.md, "Probes").
//
// The sm_90a conv form will stage its slices for wgmma.mma_async, whose
// operands are shared memory described by 64-bit matrix descriptors (start
// address, leading and stride byte offsets, swizzle mode). The emulator will
// read those descriptors as this project reads the PTX ISA; a misreading
// would be the same in the generator and the emulator, and only a Hopper GPU
// can tell. This probe asks one: for each candidate layout it writes the
// shared-memory image of A (64 x K) and B (K x 64) that the reading predicts,
// runs wgmma on it through descriptors built from the same reading, and
// compares D = A B with the host's product. Candidates come in pairs that
// differ only in which offset is the leading one: on a GPU exactly one of a
// pair can match, and that one is the reading the compiler must use.
//
// Output: one line per candidate, `layout <family> [<reading>]: match`,
// `... mismatch (<n> of 4096 elements differ)` or `... error (<why>)`, then
// a summary; exit 0 whenever the probe ran (a mismatch is a finding, not a
// failure), 2 when there is no device or it is not sm_90. A family whose
// readings all mismatch is a misreading of the ISA: the kit's `probes`
// phase fails it.
//
// Every candidate's shared memory is a zero-filled window far larger than
// its image, so that a descriptor read the wrong way reads zeros (a
// mismatch) rather than past the block's shared memory. Should a candidate
// still fault, the fault is sticky: the process's CUDA context is lost and
// no later candidate can run in it. So the kit runs each candidate in a
// process of its own (`--list`, then `--only I`); a run of all of them in
// one process reports every candidate after a fault as not run.
//
//   wgmma-layouts            # every candidate, in this process
//   wgmma-layouts --list     # `candidate <i> <family> [<reading>]`
//                            # (no device needed)
//   wgmma-layouts --only I   # candidate I alone
//   wgmma-layouts --check-data  # that every candidate's operands can tell
//                               # layouts apart (no device needed)
//
// Built by tools/gpu-kit/build_kit.py with nvcc -arch=sm_90a; run by the
// kit's `probes` phase.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kM = 64, kN = 64, kMaxSteps = 8;
/// Each candidate's shared memory: its image, then zeros. The largest image
/// is 16 KiB and the largest stride any reading uses 8 KiB, so a misread
/// descriptor's eight core-matrix rows stay inside; within the 227 KiB a
/// Hopper block may have.
constexpr unsigned kWindowBytes = 200 * 1024;

/// What the kernel needs of a candidate: the image, the descriptors' fields
/// and each k step's start offsets into the image.
struct Job {
  unsigned imageBytes, windowBytes, steps;
  unsigned aStart[kMaxSteps], bStart[kMaxSteps];
  unsigned aLbo, aSbo, aSwizzle;
  unsigned bLbo, bSbo, bSwizzle;
};

/// The PTX ISA's matrix descriptor: start address, leading and stride
/// byte offsets (each >> 4, 14 bits), base offset 0, swizzle mode in bits
/// 62-63 (0 none, 1 128B, 2 64B, 3 32B).
__device__ uint64_t descriptor(uint32_t address, unsigned lbo, unsigned sbo,
                               unsigned swizzle) {
  return uint64_t((address >> 4) & 0x3fff) |
         uint64_t((lbo >> 4) & 0x3fff) << 16 |
         uint64_t((sbo >> 4) & 0x3fff) << 32 | uint64_t(swizzle & 3) << 62;
}

#define D32(i)                                                                 \
  "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]),              \
      "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define DREGS                                                                  \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "    \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "     \
  "%30, %31}"

/// Kind 0: f16 x f16, B K-major; 1: f16, B MN-major (imm-trans-b 1);
/// 2: tf32 (K-major only).
template <int Kind> __device__ void wgmma(float *d, uint64_t a, uint64_t b) {
  if constexpr (Kind == 2)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " DREGS
                 ", %32, %33, p, 1, 1;\n}\n"
                 : D32(0), D32(8), D32(16), D32(24)
                 : "l"(a), "l"(b));
  else
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " DREGS
                 ", %32, %33, p, 1, 1, 0, %34;\n}\n"
                 : D32(0), D32(8), D32(16), D32(24)
                 : "l"(a), "l"(b), "n"(Kind == 1 ? 1 : 0));
}

template <int Kind>
__global__ void __launch_bounds__(128)
    probe(const uint4 *image, Job job, float *out) {
  // The image from the first 1024-byte boundary on (swizzle atoms are
  // aligned to their size), zeros after it to the window's end; the launch
  // gives 1024 bytes to spare.
  extern __shared__ __align__(16) uint4 dynamic[];
  uint32_t start = uint32_t(__cvta_generic_to_shared(dynamic));
  uint4 *smem = dynamic + ((1024 - start % 1024) % 1024) / 16;
  for (unsigned i = threadIdx.x; i < job.windowBytes / 16; i += blockDim.x)
    smem[i] = i < job.imageBytes / 16 ? image[i] : make_uint4(0, 0, 0, 0);
  __syncthreads();
  // The generic proxy's writes, made visible to wgmma's async proxy.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  float d[32];
  for (float &v : d)
    v = 0.f;
  uint32_t base = uint32_t(__cvta_generic_to_shared(smem));
  for (unsigned s = 0; s < job.steps; ++s) {
    uint64_t a =
        descriptor(base + job.aStart[s], job.aLbo, job.aSbo, job.aSwizzle);
    uint64_t b =
        descriptor(base + job.bStart[s], job.bLbo, job.bSbo, job.bSwizzle);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    wgmma<Kind>(d, a, b);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  }
  // D's fragments as this project reads the ISA: warp w holds rows 16 w
  // to 16 w + 15; lane l (g = l / 4, t = l % 4) holds, for each 8-column
  // block j, (g, 8 j + 2 t), (g, 8 j + 2 t + 1), (g + 8, 8 j + 2 t),
  // (g + 8, 8 j + 2 t + 1).
  unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned g = lane / 4, t = lane % 4;
  for (unsigned j = 0; j < kN / 8; ++j)
    for (unsigned h = 0; h < 4; ++h) {
      unsigned row = 16 * warp + g + 8 * (h / 2);
      unsigned col = 8 * j + 2 * t + h % 2;
      out[row * kN + col] = d[4 * j + h];
    }
}

/// A candidate: its element type, depth, the byte offset in its operand's
/// region of each element, the descriptors' fields and the per-step starts.
struct Layout {
  std::string family, reading;
  int kind;      // as wgmma<Kind>
  int depth;     // K
  int stepDepth; // K per wgmma: 16 (f16), 8 (tf32)
  std::function<unsigned(int m, int k)> aOffset;
  std::function<unsigned(int k, int n)> bOffset;
  unsigned aLbo, aSbo, aSwizzle, bLbo, bSbo, bSwizzle;
  std::function<unsigned(int step)> aStep, bStep;
};

uint16_t toHalf(float v) { // small integers only: exact
  if (v == 0.f)
    return 0;
  uint32_t sign = v < 0 ? 0x8000 : 0;
  float a = v < 0 ? -v : v;
  int e = 0;
  while (a >= 2.f) {
    a /= 2.f;
    ++e;
  }
  uint32_t mantissa = uint32_t((a - 1.f) * 1024.f);
  return uint16_t(sign | uint32_t(e + 15) << 10 | mantissa);
}

/// A rows x cols operand, row-major, of small integers (-6 to 6: exact in
/// f16 and tf32, and so are sums of 64 of their products in f32), from a
/// multiplicative hash of the index, so that no two rows and no two
/// columns are equal: then a layout read with any two k (or m, or n)
/// exchanged gives another product, and a misreading cannot match.
std::vector<float> operand(int rows, int cols, uint32_t seed) {
  std::vector<float> values(size_t(rows) * cols);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t h = (uint32_t(i) + seed * 0x9e3779b9u) * 2654435761u;
    values[i] = float(int((h >> 16) % 13) - 6);
  }
  return values;
}

/// Whether no two rows and no two columns of a rows x cols operand are
/// equal (what `operand` promises; checked, since a probe whose data
/// cannot tell two layouts apart reports every layout as a match).
bool distinct(const std::vector<float> &v, int rows, int cols) {
  for (int i = 0; i < rows; ++i)
    for (int j = i + 1; j < rows; ++j)
      if (std::equal(&v[size_t(i) * cols], &v[size_t(i + 1) * cols],
                     &v[size_t(j) * cols]))
        return false;
  for (int i = 0; i < cols; ++i)
    for (int j = i + 1; j < cols; ++j) {
      bool same = true;
      for (int r = 0; r < rows && same; ++r)
        same = v[size_t(r) * cols + i] == v[size_t(r) * cols + j];
      if (same)
        return false;
    }
  return true;
}

int runLayout(const Layout &l, int &differing, std::string &firstDifferences) {
  std::vector<float> a = operand(kM, l.depth, 1), b = operand(l.depth, kN, 2);
  // Each operand's region: up to its last element, in whole 1024 bytes.
  int element = l.kind == 2 ? 4 : 2;
  unsigned aBytes = 0, bBytes = 0;
  for (int m = 0; m < kM; ++m)
    for (int k = 0; k < l.depth; ++k)
      aBytes = std::max(aBytes, l.aOffset(m, k) + element);
  for (int k = 0; k < l.depth; ++k)
    for (int n = 0; n < kN; ++n)
      bBytes = std::max(bBytes, l.bOffset(k, n) + element);
  unsigned bBase = (aBytes + 1023) / 1024 * 1024;
  std::vector<uint8_t> image(bBase + (bBytes + 1023) / 1024 * 1024, 0);
  auto put = [&](unsigned offset, float v) {
    if (l.kind == 2) {
      std::memcpy(&image[offset], &v, 4);
    } else {
      uint16_t h = toHalf(v);
      std::memcpy(&image[offset], &h, 2);
    }
  };
  for (int m = 0; m < kM; ++m)
    for (int k = 0; k < l.depth; ++k)
      put(l.aOffset(m, k), a[m * l.depth + k]);
  for (int k = 0; k < l.depth; ++k)
    for (int n = 0; n < kN; ++n)
      put(bBase + l.bOffset(k, n), b[k * kN + n]);

  Job job{};
  job.imageBytes = unsigned(image.size());
  job.windowBytes = kWindowBytes;
  if (job.imageBytes > job.windowBytes) {
    std::printf("layout %s [%s]: error (an image of %u bytes passes the "
                "%u-byte window)\n",
                l.family.c_str(), l.reading.c_str(), job.imageBytes,
                job.windowBytes);
    return 1;
  }
  job.steps = unsigned(l.depth / l.stepDepth);
  for (unsigned s = 0; s < job.steps; ++s) {
    job.aStart[s] = l.aStep(s);
    job.bStart[s] = bBase + l.bStep(s);
  }
  job.aLbo = l.aLbo, job.aSbo = l.aSbo, job.aSwizzle = l.aSwizzle;
  job.bLbo = l.bLbo, job.bSbo = l.bSbo, job.bSwizzle = l.bSwizzle;

  uint4 *dImage;
  float *dOut;
  if (cudaError_t e = cudaMalloc(&dImage, image.size()); e != cudaSuccess) {
    std::printf("layout %s [%s]: error (cudaMalloc: %s)\n", l.family.c_str(),
                l.reading.c_str(), cudaGetErrorString(e));
    return 1;
  }
  if (cudaError_t e = cudaMalloc(&dOut, kM * kN * 4); e != cudaSuccess) {
    std::printf("layout %s [%s]: error (cudaMalloc: %s)\n", l.family.c_str(),
                l.reading.c_str(), cudaGetErrorString(e));
    return 1;
  }
  cudaMemcpy(dImage, image.data(), image.size(), cudaMemcpyHostToDevice);
  cudaMemset(dOut, 0xff, kM * kN * 4);
  auto launch = [&](auto kernel) {
    int bytes = int(job.windowBytes) + 1024;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         bytes);
    kernel<<<1, 128, bytes>>>(dImage, job, dOut);
  };
  if (l.kind == 0)
    launch(probe<0>);
  else if (l.kind == 1)
    launch(probe<1>);
  else
    launch(probe<2>);
  cudaError_t status = cudaDeviceSynchronize();
  std::vector<float> out(kM * kN);
  cudaMemcpy(out.data(), dOut, kM * kN * 4, cudaMemcpyDeviceToHost);
  cudaFree(dImage);
  cudaFree(dOut);
  if (status != cudaSuccess) {
    std::printf("layout %s [%s]: error (%s)\n", l.family.c_str(),
                l.reading.c_str(), cudaGetErrorString(status));
    return 1;
  }
  // The first differences go with the finding, after its line: enough to
  // tell a misread operand from a misread D fragment layout.
  differing = 0;
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n) {
      float expected = 0.f;
      for (int k = 0; k < l.depth; ++k)
        expected += a[m * l.depth + k] * b[k * kN + n];
      if (out[m * kN + n] != expected && differing++ < 4) {
        char line[96];
        std::snprintf(line, sizeof line, "  D(%d, %d) = %g, A B has %g\n", m, n,
                      out[m * kN + n], expected);
        firstDifferences += line;
      }
    }
  return 0;
}

/// Core matrices without swizzle: 8 rows of 16 bytes, 128 contiguous
/// bytes. `along` strides between core matrices along the rows (M or N)
/// and `across` along the 16-byte columns (K).
std::function<unsigned(int, int)> interleaved(int bytes, unsigned along,
                                              unsigned across) {
  return [=](int r, int c) {
    unsigned byte = unsigned(c * bytes);
    return unsigned(r / 8) * along + byte / 16 * across + unsigned(r % 8) * 16 +
           byte % 16;
  };
}

/// 128-byte swizzle: atoms of 8 rows of 128 bytes (1024 bytes), the 16-byte
/// chunk c of row r stored at chunk c ^ (r % 8); atoms `along` apart.
std::function<unsigned(int, int)> swizzled128(int bytes, unsigned along) {
  return [=](int r, int c) {
    unsigned byte = unsigned(c * bytes);
    unsigned chunk = (byte / 16) ^ unsigned(r % 8);
    return unsigned(r / 8) * along + unsigned(r % 8) * 128 + chunk * 16 +
           byte % 16;
  };
}

std::vector<Layout> layouts() {
  std::vector<Layout> all;
  auto transposed = [](std::function<unsigned(int, int)> f) {
    return [f](int k, int n) { return f(n, k); };
  };
  // K-major, no swizzle: f16 (K = 32) and tf32 (K = 16), four core
  // matrices along K either way. Reading "lbo-k": LBO strides along K, SBO
  // along M / N (CUTLASS's interleaved canonical form); "lbo-mn" the other
  // way round.
  struct Type {
    const char *family;
    int kind, bytes, depth, stepDepth;
  };
  for (Type t : {Type{"f16 K-major none", 0, 2, 32, 16},
                 Type{"tf32 K-major none", 2, 4, 16, 8}})
    for (bool lboAlongK : {true, false}) {
      unsigned kStride = lboAlongK ? 128 : 1024,
               rowStride = lboAlongK ? 512 : 128;
      Layout l;
      l.family = t.family, l.reading = lboAlongK ? "lbo-k" : "lbo-mn";
      l.kind = t.kind, l.depth = t.depth, l.stepDepth = t.stepDepth;
      l.aOffset = interleaved(t.bytes, rowStride, kStride);
      l.bOffset = transposed(interleaved(t.bytes, rowStride, kStride));
      l.aLbo = l.bLbo = lboAlongK ? kStride : rowStride;
      l.aSbo = l.bSbo = lboAlongK ? rowStride : kStride;
      l.aSwizzle = l.bSwizzle = 0;
      l.aStep = l.bStep = [=](int s) { return unsigned(s) * 2 * kStride; };
      all.push_back(l);
    }
  // B MN-major (N contiguous: the weights as they are), no swizzle, f16;
  // A K-major as "lbo-k". Core matrices of 8 k-rows of 8 n; "lbo-n": LBO
  // strides along N, SBO along K; "lbo-k" the other way round.
  for (bool lboAlongN : {true, false}) {
    unsigned nStride = lboAlongN ? 128 : 1024, kStride = lboAlongN ? 1024 : 128;
    Layout l;
    l.family = "f16 B-MN-major none", l.reading = lboAlongN ? "lbo-n" : "lbo-k";
    l.kind = 1, l.depth = 32, l.stepDepth = 16;
    l.aOffset = interleaved(2, 512, 128);
    l.bOffset = [=](int k, int n) {
      return unsigned(n / 8) * nStride + unsigned(k / 8) * kStride +
             unsigned(k % 8) * 16 + unsigned(n % 8) * 2;
    };
    l.aLbo = 128, l.aSbo = 512, l.aSwizzle = 0;
    l.bLbo = lboAlongN ? nStride : kStride;
    l.bSbo = lboAlongN ? kStride : nStride;
    l.bSwizzle = 0;
    l.aStep = [](int s) { return unsigned(s) * 256; };
    l.bStep = [=](int s) { return unsigned(s) * 2 * kStride; };
    all.push_back(l);
  }
  // 128-byte swizzle, K-major, f16 (K = 64, a row of an atom) and tf32
  // (K = 32): SBO 1024 between atoms along M / N, LBO unused (1); a k step
  // starts 32 bytes further into the atom.
  for (int kind : {0, 2}) {
    int bytes = kind == 2 ? 4 : 2;
    Layout l;
    l.family = std::string(kind == 2 ? "tf32" : "f16") + " K-major swizzle-128";
    l.reading = "sbo-mn";
    l.kind = kind, l.depth = 128 / bytes, l.stepDepth = kind == 2 ? 8 : 16;
    l.aOffset = swizzled128(bytes, 1024);
    l.bOffset = transposed(swizzled128(bytes, 1024));
    l.aLbo = l.bLbo = 16, l.aSbo = l.bSbo = 1024;
    l.aSwizzle = l.bSwizzle = 1;
    l.aStep = l.bStep = [](int s) { return unsigned(s) * 32; };
    all.push_back(l);
  }
  // B MN-major with 128-byte swizzle (what TMA writes from the weights, N =
  // 64 = one atom row): atoms of 8 k-rows of 64 n, 1024 bytes apart along
  // K. "sbo-k": SBO strides along K; "lbo-k" the other way round. A as
  // K-major swizzle-128.
  for (bool sboAlongK : {true, false}) {
    Layout l;
    l.family = "f16 B-MN-major swizzle-128",
    l.reading = sboAlongK ? "sbo-k" : "lbo-k";
    l.kind = 1, l.depth = 64, l.stepDepth = 16;
    l.aOffset = swizzled128(2, 1024);
    l.bOffset = swizzled128(2, 1024); // rows are k, columns n
    l.aLbo = 16, l.aSbo = 1024, l.aSwizzle = 1;
    l.bLbo = sboAlongK ? 8192 : 1024;
    l.bSbo = sboAlongK ? 1024 : 8192;
    l.bSwizzle = 1;
    l.aStep = [](int s) { return unsigned(s) * 32; };
    l.bStep = [](int s) { return unsigned(s) * 2048; };
    all.push_back(l);
  }
  return all;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<Layout> all = layouts();
  int only = -1;
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    for (size_t i = 0; i < all.size(); ++i)
      std::printf("candidate %zu %s [%s]\n", i, all[i].family.c_str(),
                  all[i].reading.c_str());
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "--check-data") == 0) {
    bool ok = true;
    for (const Layout &l : all) {
      bool aOk = distinct(operand(kM, l.depth, 1), kM, l.depth);
      bool bOk = distinct(operand(l.depth, kN, 2), l.depth, kN);
      if (!aOk || !bOk)
        std::printf("candidate %s [%s]: %s has equal rows or columns\n",
                    l.family.c_str(), l.reading.c_str(), aOk ? "B" : "A");
      ok = ok && aOk && bOk;
    }
    std::printf(ok ? "data ok\n" : "data cannot tell layouts apart\n");
    return ok ? 0 : 1;
  }
  if (argc == 3 && std::strcmp(argv[1], "--only") == 0) {
    char *end = nullptr;
    long i = std::strtol(argv[2], &end, 10);
    if (*argv[2] == '\0' || *end != '\0' || i < 0 || i >= long(all.size())) {
      std::fprintf(stderr, "wgmma-layouts: error: --only takes 0 to %zu\n",
                   all.size() - 1);
      return 1;
    }
    only = int(i);
  } else if (argc != 1) {
    std::fprintf(stderr,
                 "usage: wgmma-layouts [--list | --only I | --check-data]\n");
    return 1;
  }
  int device = 0;
  cudaDeviceProp properties;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    std::printf("wgmma-layouts: no CUDA device\n");
    return 2;
  }
  if (properties.major != 9 || properties.minor != 0) {
    std::printf("wgmma-layouts: %s is sm_%d%d; the probe needs sm_90\n",
                properties.name, properties.major, properties.minor);
    return 2;
  }
  std::printf("wgmma-layouts on %s\n", properties.name);
  int matched = 0, count = 0;
  bool contextLost = false;
  for (size_t i = 0; i < all.size(); ++i) {
    const Layout &l = all[i];
    if (only >= 0 && int(i) != only)
      continue;
    ++count;
    if (contextLost) {
      std::printf("layout %s [%s]: not run (an earlier candidate's fault "
                  "ended this process's CUDA context)\n",
                  l.family.c_str(), l.reading.c_str());
      continue;
    }
    int differing = 0;
    std::string firstDifferences;
    if (runLayout(l, differing, firstDifferences) != 0) {
      contextLost = true;
      continue;
    }
    if (differing == 0) {
      ++matched;
      std::printf("layout %s [%s]: match\n", l.family.c_str(),
                  l.reading.c_str());
    } else {
      std::printf("layout %s [%s]: mismatch (%d of %d elements differ)\n%s",
                  l.family.c_str(), l.reading.c_str(), differing, kM * kN,
                  firstDifferences.c_str());
    }
  }
  std::printf("%d of %d layouts matched\n", matched, count);
  return 0;
}
