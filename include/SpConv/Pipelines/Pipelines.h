//===- Pipelines.h - SpConv pass pipelines ----------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_PIPELINES_PIPELINES_H
#define SPCONV_PIPELINES_PIPELINES_H

#include "SpConv/Conversion/LoweringOptions.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace mlir::spconv {

/// Options of the `spconv-to-cpu` pipeline.
struct SpConvToCPUPipelineOptions
    : public PassPipelineOptions<SpConvToCPUPipelineOptions> {
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Sites per block when counting and writing rulebook "
                     "pairs (convert-spconv-to-scf)"),
      llvm::cl::init(256)};
  PassOptions::Option<SubmSearch> submSearch{
      *this, "subm-search",
      llvm::cl::desc("How subm rulebook builders find neighbours: sorted "
                     "(merge sorted keys) or hash (probe the hash table)"),
      llvm::cl::init(SubmSearch::Sorted), optionValues<SubmSearch>()};
  PassOptions::Option<int64_t> chunkBytes{
      *this, "chunk-bytes",
      llvm::cl::desc("Feature and accumulator bytes per chunk of sites of the "
                     "compute (cache blocking; convert-spconv-to-scf)"),
      llvm::cl::init(2 << 20)};
  PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("Run scf.parallel loops on OpenMP threads (needs libomp "
                     "at run time); otherwise they become sequential loops"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Bits of one vector register of the target CPU (128, "
                     "256 or 512; spconv-run and spconv-compile pass their "
                     "target's)"),
      llvm::cl::init(512)};
  PassOptions::Option<int64_t> vectorRegisters{
      *this, "vector-registers",
      llvm::cl::desc("Vector registers of the target CPU (AVX-512 32, AVX "
                     "16, NEON 32)"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> fmaPipes{
      *this, "fma-pipes",
      llvm::cl::desc("FMAs of one vector register's width the target CPU "
                     "issues per cycle (spconv-run and spconv-compile pass "
                     "their target's, from LLVM's scheduling model)"),
      llvm::cl::init(2)};
  PassOptions::Option<int64_t> fmaLatency{
      *this, "fma-latency",
      llvm::cl::desc("Cycles before an FMA's sum feeds the next FMA on the "
                     "target CPU"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> maxUnrolledOffsets{
      *this, "max-unrolled-offsets",
      llvm::cl::desc("Kernels of at most this many offsets get unrolled "
                     "offset loops; larger ones loop over their offsets "
                     "(convert-spconv-to-scf)"),
      llvm::cl::init(125)};
  PassOptions::Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Apply element-wise ops that consume a conv (BatchNorm "
                     "scale and shift, activations, residual adds) as it "
                     "writes its rows (spconv-fuse-epilogues)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("Time every rulebook build and compute at run time "
                     "(spconv-profile)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> outlineKernels{
      *this, "outline-kernels",
      llvm::cl::desc("Lower each distinct layer once, as a function of its "
                     "own that its layers call (spconv-outline-kernels)"),
      llvm::cl::init(true)};
};

/// spconv ops on tensors -> the LLVM dialect: decompose, share rulebooks,
/// lower to specialised loops, bufferize, free buffers, OpenMP, LLVM.
/// The front end followed by the back end below.
void buildSpConvToCPUPipeline(OpPassManager &pm,
                              const SpConvToCPUPipelineOptions &options);

/// spconv-to-cpu's first half, on spconv ops: decompose, share rulebooks,
/// fuse epilogues, and (outline-kernels) each distinct layer into a kernel
/// function (spconv-outline-kernels). A tool that compiles kernels on their
/// own splits the module here (KernelModules.h).
void buildSpConvToCPUFrontEnd(OpPassManager &pm,
                              const SpConvToCPUPipelineOptions &options);

/// spconv-to-cpu's second half: what the front end left (a whole module,
/// a kernel alone, or a module whose kernels are declarations), to the
/// LLVM dialect.
void buildSpConvToCPUBackEnd(OpPassManager &pm,
                             const SpConvToCPUPipelineOptions &options);

/// Options the GPU pipelines share (spconv-to-cuda, spconv-to-gpu-emulator):
/// how kernels are launched and how the lowering shapes them. `Derived` is
/// the pipeline's own options struct (PassPipelineOptions is CRTP).
template <typename Derived>
struct GPUKernelPipelineOptions : public PassPipelineOptions<Derived> {
  mlir::detail::PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of every kernel (1 to 1024)"),
      llvm::cl::init(256)};
  mlir::detail::PassOptions::Option<int64_t> maxBlocks{
      *this, "max-blocks",
      llvm::cl::desc("Most blocks per launch, 0 for no cap; grid-stride "
                     "loops cover the rest"),
      llvm::cl::init(65535)};
  mlir::detail::PassOptions::Option<int64_t> maxUnrolledOffsets{
      *this, "max-unrolled-offsets",
      llvm::cl::desc("Kernels of at most this many offsets get unrolled "
                     "offset loops; larger ones loop over their offsets "
                     "(convert-spconv-to-scf). 0 on the GPU: unrolled "
                     "builders hold a site's candidates in 82 to 170 "
                     "registers (12-25 % occupancy), looped ones 32 to 40 "
                     "(75-100 %)"),
      llvm::cl::init(0)};
  mlir::detail::PassOptions::Option<GPUConv> gpuConv{
      *this, "gpu-conv",
      llvm::cl::desc("How convolutions with static channel counts run: "
                     "implicit-gemm (one tiled launch per layer) or "
                     "gather-scatter (per offset, one thread per pair and "
                     "output channel) (convert-spconv-to-scf)"),
      llvm::cl::init(GPUConv::ImplicitGemm), optionValues<GPUConv>()};
  mlir::detail::PassOptions::Option<GPUMatmul> gpuMatmul{
      *this, "gpu-matmul",
      llvm::cl::desc("How the implicit GEMM multiplies: tensor-cores (f16 "
                     "and bf16 on tensor cores, f32 on FMA), tf32 (f32 on "
                     "tensor cores too, inputs rounded to TF32) or fma "
                     "(convert-spconv-to-scf)"),
      llvm::cl::init(GPUMatmul::TensorCores), optionValues<GPUMatmul>()};
  mlir::detail::PassOptions::Option<GPUMmaOps> gpuMmaOps{
      *this, "gpu-mma-ops",
      llvm::cl::desc("Which ops tensor-core tiles multiply their fragments "
                     "with: mma-sync (nvgpu.ldmatrix and nvgpu.mma.sync), "
                     "subgroup-mma (gpu.subgroup_mma, WMMA) or auto "
                     "(mma-sync for every fragment type) "
                     "(convert-spconv-to-scf)"),
      llvm::cl::init(GPUMmaOps::Auto), optionValues<GPUMmaOps>()};
  mlir::detail::PassOptions::Option<std::string> gpuTiles{
      *this, "gpu-tiles",
      llvm::cl::desc("A JSON tile table (spconv-gpu-tiles/1) whose entries "
                     "replace the implicit GEMM's built-in tiles for the "
                     "channel counts, type and math they list; empty for "
                     "none (convert-spconv-to-scf)"),
      llvm::cl::init("")};
  mlir::detail::PassOptions::Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Apply element-wise ops that consume a conv (BatchNorm "
                     "scale and shift, activations, residual adds) as it "
                     "writes its rows (spconv-fuse-epilogues)"),
      llvm::cl::init(true)};
  mlir::detail::PassOptions::Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("Time every rulebook build and compute at run time "
                     "(spconv-profile)"),
      llvm::cl::init(false)};
};

/// Options of the `spconv-to-cuda` pipeline.
struct SpConvToCUDAPipelineOptions
    : public GPUKernelPipelineOptions<SpConvToCUDAPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target GPU architecture (sm_80 = A100, sm_90 = H100)"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features, e.g. +ptx80 (the PTX ISA version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu-module-to-binary embeds: isa (PTX text), bin "
                     "(cubin, assembled by the CUDA toolkit's ptxas) or "
                     "fatbin (cubin and PTX)"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level",
      llvm::cl::desc("LLVM optimisation level of the device code"),
      llvm::cl::init(3)};
};

/// spconv ops on tensors -> host code in the LLVM dialect that launches
/// one kernel per distinct loop (per geometry for rulebook builders),
/// serialised to a gpu.binary through NVVM; buffers go where their uses need
/// them (spconv-gpu-memory: device, managed or host memory).
void buildSpConvToCUDAPipeline(OpPassManager &pm,
                               const SpConvToCUDAPipelineOptions &options);

/// Options of the `spconv-to-gpu-emulator` pipeline.
struct SpConvToGPUEmulatorPipelineOptions
    : public GPUKernelPipelineOptions<SpConvToGPUEmulatorPipelineOptions> {
  PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("Run the emulated blocks on OpenMP threads"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> raceCheck{
      *this, "race-check",
      llvm::cl::desc("Fail the run at the first data race between two "
                     "threads of a launch (spconv-gpu-kernels-to-cpu; "
                     "blocks then run one after another)"),
      llvm::cl::init(false)};
};

/// The kernels of `spconv-to-cuda`, up to the NVVM lowering, run on the CPU
/// (spconv-gpu-kernels-to-cpu): a test target for machines without a GPU.
void buildSpConvToGPUEmulatorPipeline(
    OpPassManager &pm, const SpConvToGPUEmulatorPipelineOptions &options);

/// Registers `spconv-to-cpu`, `spconv-to-cuda` and `spconv-to-gpu-emulator`
/// with the pass registry (once per process: SpConv/InitAll.h's
/// `registerAllPasses` is the entry point that guards it).
void registerSpConvPipelines();

} // namespace mlir::spconv

#endif // SPCONV_PIPELINES_PIPELINES_H
