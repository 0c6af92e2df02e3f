//===- spconv-run.cpp - Compile and run a function on .npy inputs ---------===//
//
// Part of the spconv-mlir project.
//
// spconv-run FILE.mlir --entry NAME --input A.npy [--input B.npy ...]
//            --output-dir DIR [--time] [--profile] [--repeat N]
//            [--num-threads N] [--print-ir-after-all] [--fail-each-allocation]
// spconv-run FILE.mlir --entry NAME --compile-only [--cache-dir DIR]
//
// Compiles FILE with the spconv-to-cpu pipeline, JIT-compiles it, calls
// NAME with the inputs (one .npy per tensor argument, in order) and writes
// its results to DIR/out0.npy, DIR/out1.npy, ... With --compile-only it
// compiles NAME into the kernel store and stops (scripts/fill-store.sh).
// The interface is stable: other tools script it.
//
//===----------------------------------------------------------------------===//

#include "CompileCache.h"
#include "CudaMemory.h"
#include "KernelCompiler.h"
#include "MemRefArgs.h"
#include "ObjectLoader.h"
#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/InitAll.h"
#include "SpConv/Pipelines/HoistStaticAllocas.h"
#include "SpConv/Pipelines/KeepEntries.h"
#include "SpConv/Pipelines/KernelModules.h"
#include "SpConv/Pipelines/OptimizeLLVM.h"
#include "SpConv/Pipelines/Pipelines.h"
#include "SpConv/Support/Npy.h"
#include "SpConv/Support/TargetCPU.h"
#include "spconv-rt/SpConvRuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <chrono>
#include <functional>
#include <omp.h>
#include <set>
#include <sys/resource.h>

using namespace mlir;
namespace npy = ::spconv::npy;
namespace run = ::spconv::run;
using run::copyToDevice;
using run::copyToHost;
using run::cudaUnavailable;
using run::freeDevice;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<FILE.mlir>"),
                                            llvm::cl::Required);
static llvm::cl::opt<std::string>
    entryName("entry", llvm::cl::desc("Function to run"), llvm::cl::Required);
static llvm::cl::list<std::string>
    inputs("input", llvm::cl::desc("A .npy file per argument, in order"));
static llvm::cl::opt<std::string>
    outputDir("output-dir", llvm::cl::desc("Where out0.npy, out1.npy, ... go "
                                           "(required unless --compile-only)"));
static llvm::cl::opt<bool> compileOnly(
    "compile-only",
    llvm::cl::desc("Compile the entry into the kernel store, its kernels "
                   "and the module, and stop: no --input, no run, no "
                   "--output-dir. Fills the store ahead of time "
                   "(scripts/fill-store.sh)"));
static llvm::cl::opt<bool>
    printTimes("time", llvm::cl::desc("Print per-phase wall times to stderr, "
                                      "and the process's peak resident "
                                      "memory"));
static llvm::cl::opt<bool>
    printIR("print-ir-after-all",
            llvm::cl::desc("Print the IR after every pass of the pipeline"));
static llvm::cl::opt<int>
    numThreads("num-threads",
               llvm::cl::desc("Threads for parallel loops and the runtime "
                              "(default: OpenMP's choice)"),
               llvm::cl::init(0));
static llvm::cl::opt<bool>
    profile("profile",
            llvm::cl::desc("Time every rulebook build and compute and print "
                           "a table (ms, rows produced, op) to stdout"));
static llvm::cl::opt<std::string> submSearch(
    "subm-search",
    llvm::cl::desc("How subm rulebooks find neighbours: sorted (default) or "
                   "hash"),
    llvm::cl::init("sorted"));
static llvm::cl::opt<int> repeat(
    "repeat",
    llvm::cl::desc("Run the function this many times on the same inputs; "
                   "--time and --profile report the last run, --time the first "
                   "(cold) one too as \"first\" (default 1)"),
    llvm::cl::init(1));
static llvm::cl::opt<bool> failAllocations(
    "fail-each-allocation",
    llvm::cl::desc("Testing aid: call the function once per heap allocation "
                   "it makes, the n-th allocation failing in call n (n = 1, "
                   "2, ...), until a call succeeds; each failed call must "
                   "report out of memory and free everything it allocated. "
                   "The outputs are the successful call's. Targets cpu and "
                   "gpu-emulator"));
static llvm::cl::opt<std::string> target(
    "target",
    llvm::cl::desc("Where to run: cpu (spconv-to-cpu), cuda (spconv-to-cuda; "
                   "needs a GPU; inputs are copied to device memory and "
                   "results back) or gpu-emulator (the CUDA target's kernels "
                   "run on the CPU, for testing: spconv-to-gpu-emulator)"),
    llvm::cl::init("cpu"));
static llvm::cl::opt<int64_t> chunkBytes(
    "chunk-bytes",
    llvm::cl::desc("--target cpu: feature and accumulator bytes per chunk of "
                   "sites of the compute (cache blocking; default 2 MiB)"),
    llvm::cl::init(2 << 20));
static llvm::cl::opt<bool> fuseEpilogues(
    "fuse-epilogues",
    llvm::cl::desc("Apply the element-wise ops that consume a conv (BatchNorm "
                   "scale and shift, activations, residual adds) as it "
                   "writes its rows (default on; "
                   "--fuse-epilogues=false runs them as separate ops)"),
    llvm::cl::init(true));
static llvm::cl::opt<bool> outlineKernels(
    "outline-kernels",
    llvm::cl::desc("--target cpu: lower each distinct layer once, as a "
                   "function that its layers call (default on; "
                   "--outline-kernels=false lowers every layer inline)"),
    llvm::cl::init(true));
static llvm::cl::opt<int64_t> maxUnrolledOffsets(
    "max-unrolled-offsets",
    llvm::cl::desc("Kernels of at most this many offsets get unrolled offset "
                   "loops; larger ones loop over their offsets (default 125 "
                   "on the CPU, 0 on the GPU targets)"),
    llvm::cl::init(125));
static llvm::cl::opt<int64_t> gpuBlockSize(
    "gpu-block-size",
    llvm::cl::desc("Threads per block of the GPU targets' kernels"),
    llvm::cl::init(256));
static llvm::cl::opt<int64_t> gpuMaxBlocks(
    "gpu-max-blocks",
    llvm::cl::desc("Most blocks per launch of the GPU targets (0: no cap); "
                   "grid-stride loops cover the rest"),
    llvm::cl::init(65535));
static llvm::cl::opt<std::string> gpuConv(
    "gpu-conv",
    llvm::cl::desc("How the GPU targets compute convolutions with static "
                   "channel counts: implicit-gemm (default) or "
                   "gather-scatter"),
    llvm::cl::init("implicit-gemm"));
static llvm::cl::opt<std::string> gpuMatmul(
    "gpu-matmul",
    llvm::cl::desc("How the GPU targets' implicit GEMM multiplies: "
                   "tensor-cores (default: f16 and bf16 on tensor cores, "
                   "f32 on FMA), tf32 (f32 on tensor cores too, inputs "
                   "rounded to TF32) or fma"),
    llvm::cl::init("tensor-cores"));
static llvm::cl::opt<std::string> gpuMmaOps(
    "gpu-mma-ops",
    llvm::cl::desc("Which ops the GPU targets' tensor-core tiles multiply "
                   "with: auto (default: mma-sync for every fragment "
                   "type), mma-sync or subgroup-mma"),
    llvm::cl::init("auto"));
static llvm::cl::opt<std::string> gpuTiles(
    "gpu-tiles",
    llvm::cl::desc("A JSON tile table (format spconv-gpu-tiles/1, "
                   "docs/GPU.md) whose entries replace the GPU targets' "
                   "implicit-GEMM tiles for the channel counts, type and "
                   "math they list"),
    llvm::cl::value_desc("file"), llvm::cl::init(""));
static llvm::cl::opt<bool> gpuRaceCheck(
    "gpu-race-check",
    llvm::cl::desc("--target gpu-emulator: fail at the first data race "
                   "between two threads of a kernel launch (slower: blocks "
                   "run one after another)"),
    llvm::cl::init(false));
static llvm::cl::opt<bool> misalignInputs(
    "misalign-inputs",
    llvm::cl::desc("Pass each input at an address one element past a "
                   "16-byte boundary, as a slice of a larger array may be "
                   "(tests the kernels' paths for unaligned data). Targets "
                   "cpu and gpu-emulator"),
    llvm::cl::init(false));
static llvm::cl::opt<std::string>
    gpuChip("gpu-chip", llvm::cl::desc("GPU architecture of --target cuda"),
            llvm::cl::init("sm_80"));
static llvm::cl::opt<std::string> mcpu(
    "mcpu",
    llvm::cl::desc("CPU the JIT compiles for (--target cpu and gpu-emulator): "
                   "host (default: this machine's, with all its features) or "
                   "an LLVM CPU name such as haswell, whose code must run "
                   "here; the CPU lowering sizes its vector chunks by it"),
    llvm::cl::init("host"));
static llvm::cl::opt<std::string> cacheDir(
    "cache-dir",
    llvm::cl::desc("The kernel store that keeps compiled code, so that a "
                   "second run of the same module, entry, options and host "
                   "loads it instead of compiling (default: "
                   "$SPCONV_MLIR_CACHE_DIR, 'off' for none; else "
                   "$XDG_CACHE_HOME/spconv-mlir or ~/.cache/spconv-mlir; "
                   "bounded by $SPCONV_MLIR_CACHE_SIZE). Targets cpu and "
                   "gpu-emulator"));
static llvm::cl::opt<unsigned> compileThreads(
    "compile-threads",
    llvm::cl::desc("Threads that run LLVM's optimiser over the parts of the "
                   "module at once (default 0: one per hardware thread); the "
                   "code does not depend on it"),
    llvm::cl::init(0));
static llvm::cl::opt<unsigned> llvmParts(
    "llvm-parts",
    llvm::cl::desc("Parts the LLVM module is split into for optimisation, 1 "
                   "to 64 (default 0: by its size, one part below about 20k "
                   "instructions, at most 8); 1 optimises it whole"),
    llvm::cl::init(0));
static llvm::cl::opt<bool>
    noCache("no-cache",
            llvm::cl::desc("Compile from scratch, neither reading nor "
                           "writing the cache"));

namespace {
/// Reports an error and returns exit code 1.
int fail(const llvm::Twine &message) {
  llvm::errs() << "spconv-run: error: " << message << "\n";
  return 1;
}

/// Wall-clock phases for --time.
class PhaseTimer {
public:
  void start() { begin = std::chrono::steady_clock::now(); }
  /// Prints the time since start() under `phase` (nothing if null).
  void stop(const char *phase) {
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - begin)
                    .count();
    if (printTimes && phase)
      llvm::errs() << llvm::format("spconv-run: %-8s %10.3f ms\n", phase, ms);
  }

private:
  std::chrono::steady_clock::time_point begin;
};

/// The .npy dtype of a tensor element type, if it has one.
std::optional<npy::DType> dtypeOf(Type type) {
  if (type.isF16())
    return npy::DType::Float16;
  if (type.isF32())
    return npy::DType::Float32;
  if (type.isF64())
    return npy::DType::Float64;
  if (type.isSignlessInteger(32))
    return npy::DType::Int32;
  if (type.isSignlessInteger(64))
    return npy::DType::Int64;
  if (type.isSignlessInteger(8))
    return npy::DType::Int8;
  return std::nullopt;
}

std::string describe(RankedTensorType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// Checks `array` against argument `index` of type `type`.
int checkInput(unsigned index, const std::string &path,
               const npy::NpyArray &array, Type type) {
  std::string name = "--input #" + std::to_string(index) + " (" + path + ")";
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return fail(name + ": argument " + std::to_string(index) +
                " is not a ranked tensor; spconv-run passes tensors only");
  std::optional<npy::DType> expected = dtypeOf(tensor.getElementType());
  if (!expected)
    return fail(name + ": element type of argument " + std::to_string(index) +
                " (" + describe(tensor) + ") has no .npy dtype");
  if (array.dtype != *expected)
    return fail(name + ": dtype " + npy::dtypeName(array.dtype) +
                " does not match argument " + std::to_string(index) + " (" +
                describe(tensor) + ", dtype " + npy::dtypeName(*expected) +
                ")");
  if (array.rank() != tensor.getRank())
    return fail(name + ": rank " + std::to_string(array.rank()) +
                " does not match argument " + std::to_string(index) + " (" +
                describe(tensor) + ")");
  for (int64_t d = 0; d < tensor.getRank(); ++d)
    if (!tensor.isDynamicDim(d) && tensor.getDimSize(d) != array.shape[d])
      return fail(name + ": shape " + array.describe() +
                  " does not match argument " + std::to_string(index) + " (" +
                  describe(tensor) + ") in dimension " + std::to_string(d));
  return 0;
}
/// The CPU the JIT compiles for (--mcpu), its vector registers and FMA
/// units.
struct JITCPU {
  std::string name;
  /// With all of this machine's features (--mcpu host).
  bool host = true;
  /// LLVM feature string: this machine's for the host, else the CPU's own
  /// (empty).
  std::string features;
  mlir::spconv::VectorRegisters registers;
  mlir::spconv::FmaUnits fma;
};

llvm::Expected<JITCPU> jitCPU() {
  std::string triple = llvm::sys::getProcessTriple(), error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), error);
  if (!target)
    return llvm::createStringError(error);
  JITCPU cpu;
  cpu.host = mcpu == "host";
  cpu.name = cpu.host ? llvm::sys::getHostCPUName().str() : std::string(mcpu);
  if (cpu.host)
    cpu.features = mlir::spconv::hostCPUFeatures();
  // Asked before the real one is made, which would warn on stderr.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      target->createMCSubtargetInfo(llvm::Triple(triple), "", ""));
  if (!generic || !generic->isCPUStringValid(cpu.name))
    return llvm::createStringError("--mcpu: '" + cpu.name +
                                   "' is not a CPU of " + triple);
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(llvm::Triple(triple), cpu.name,
                                    cpu.features));
  cpu.registers = mlir::spconv::vectorRegistersOf(*subtarget);
  std::unique_ptr<llvm::MCInstrInfo> instructions(target->createMCInstrInfo());
  cpu.fma = mlir::spconv::fmaUnitsOf(*subtarget, *instructions, cpu.registers);
  return cpu;
}

/// The options both GPU pipelines take, from the command line.
template <typename Options>
void setGPUKernelOptions(
    mlir::spconv::GPUKernelPipelineOptions<Options> &options) {
  options.profile = profile;
  options.blockSize = gpuBlockSize;
  options.maxBlocks = gpuMaxBlocks;
  if (maxUnrolledOffsets.getNumOccurrences())
    options.maxUnrolledOffsets = maxUnrolledOffsets;
  // Checked in main().
  options.gpuConv = *mlir::spconv::symbolizeOption<mlir::spconv::GPUConv>(gpuConv);
  options.gpuMatmul =
      *mlir::spconv::symbolizeOption<mlir::spconv::GPUMatmul>(gpuMatmul);
  options.gpuMmaOps =
      *mlir::spconv::symbolizeOption<mlir::spconv::GPUMmaOps>(gpuMmaOps);
  options.gpuTiles = gpuTiles;
  options.fuseEpilogues = fuseEpilogues;
}

/// spconv-to-cpu's options, for `cpu`.
void setCPUPipelineOptions(mlir::spconv::SpConvToCPUPipelineOptions &options,
                           const JITCPU &cpu) {
  options.profile = profile;
  options.submSearch =
      *mlir::spconv::symbolizeOption<mlir::spconv::SubmSearch>(submSearch);
  // Row updates blocked for the registers and FMA units of the CPU the JIT
  // targets.
  options.vectorBits = cpu.registers.bits;
  options.vectorRegisters = cpu.registers.count;
  options.fmaPipes = cpu.fma.pipes;
  options.fmaLatency = cpu.fma.latency;
  options.chunkBytes = chunkBytes;
  options.maxUnrolledOffsets = maxUnrolledOffsets;
  options.fuseEpilogues = fuseEpilogues;
  options.outlineKernels = outlineKernels;
}

run::JITCodegen jitCodegen(const JITCPU &cpu) {
  run::JITCodegen codegen;
  codegen.cpu = cpu.name;
  codegen.host = cpu.host;
  codegen.llvmParts = llvmParts;
  codegen.compileThreads = compileThreads;
  return codegen;
}

/// The pipeline of --target.
void buildPipeline(PassManager &pm, const JITCPU &cpu) {
  if (target == "cuda") {
    mlir::spconv::SpConvToCUDAPipelineOptions options;
    setGPUKernelOptions(options);
    options.chip = gpuChip;
    mlir::spconv::buildSpConvToCUDAPipeline(pm, options);
    return;
  }
  if (target == "gpu-emulator") {
    mlir::spconv::SpConvToGPUEmulatorPipelineOptions options;
    setGPUKernelOptions(options);
    options.raceCheck = gpuRaceCheck;
    mlir::spconv::buildSpConvToGPUEmulatorPipeline(pm, options);
    return;
  }
  mlir::spconv::SpConvToCPUPipelineOptions options;
  setCPUPipelineOptions(options, cpu);
  mlir::spconv::buildSpConvToCPUPipeline(pm, options);
}
/// Every option that changes the compiled code, for the cache key.
std::string codegenOptions() {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "target=" << target << " profile=" << profile
     << " subm-search=" << submSearch << " chunk-bytes=" << chunkBytes
     << " fuse-epilogues=" << fuseEpilogues
     << " outline-kernels=" << outlineKernels
     << " max-unrolled-offsets=" << maxUnrolledOffsets << "/"
     << maxUnrolledOffsets.getNumOccurrences()
     << " gpu-block-size=" << gpuBlockSize << " gpu-max-blocks=" << gpuMaxBlocks
     << " gpu-conv=" << gpuConv << " gpu-matmul=" << gpuMatmul
     << " gpu-mma-ops=" << gpuMmaOps << " gpu-race-check=" << gpuRaceCheck
     << " gpu-chip=" << gpuChip << " llvm-parts=" << llvmParts;
  // The table's contents, not its name: the file may change between runs.
  if (!gpuTiles.empty()) {
    os << " gpu-tiles=";
    if (auto table = llvm::MemoryBuffer::getFile(gpuTiles))
      os << (*table)->getBuffer();
    else
      os << "<unreadable " << gpuTiles << ">";
  }
  return text;
}

/// The cache this run reads and writes, if any.
run::CompileCache openCache() {
  // --target cuda's objects load their kernels from global constructors,
  // which the cache's object loader does not run; --print-ir-after-all
  // needs the lowering.
  if (noCache || printIR || target == "cuda")
    return run::CompileCache("");
  return run::CompileCache(cacheDir.getNumOccurrences()
                               ? std::string(cacheDir)
                               : run::CompileCache::defaultDirectory());
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // --mlir-timing and MLIR's other pass manager options (docs/Compiler.md,
  // "Where a cold compile goes").
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "spconv-run: compile a .mlir file for the CPU and run one function on "
      ".npy inputs\n");
  // LLVM registers a `--threads` of its own, which would take the value
  // and leave this tool's threads alone (bench/training.py fell for it).
  if (auto *llvmThreads = llvm::cl::getRegisteredOptions().lookup("threads");
      llvmThreads && llvmThreads->getNumOccurrences())
    return fail("--threads is not spconv-run's option (it is one of LLVM's, "
                "and does nothing here): use --num-threads");
  if (llvmParts > mlir::spconv::kMaxLLVMOptimizationParts)
    return fail("--llvm-parts must be 0 (by size) or 1 to " +
                std::to_string(mlir::spconv::kMaxLLVMOptimizationParts) +
                ", got " + std::to_string(llvmParts));
  if (target != "cpu" && target != "cuda" && target != "gpu-emulator")
    return fail("--target must be cpu, cuda or gpu-emulator, got '" + target +
                "'");
  if (misalignInputs && target == "cuda")
    return fail("--misalign-inputs applies to --target cpu and gpu-emulator "
                "only");
  bool onGPU = target == "cuda";
  if (onGPU) {
    if (std::string why = cudaUnavailable(); !why.empty())
      return fail("--target cuda: " + why);
  }
  if (target != "cpu" && submSearch.getNumOccurrences())
    return fail("--subm-search applies to --target cpu only (the GPU "
                "targets probe the hash table)");
  if (target != "cpu" && chunkBytes.getNumOccurrences())
    return fail("--chunk-bytes applies to --target cpu only");
  if (!mlir::spconv::symbolizeOption<mlir::spconv::GPUConv>(gpuConv))
    return fail("--gpu-conv must be " +
                mlir::spconv::optionSpellings<mlir::spconv::GPUConv>() +
                ", got '" + gpuConv + "'");
  if (target == "cpu" && gpuConv.getNumOccurrences())
    return fail("--gpu-conv applies to the GPU targets only");
  if (!mlir::spconv::symbolizeOption<mlir::spconv::GPUMatmul>(gpuMatmul))
    return fail("--gpu-matmul must be " +
                mlir::spconv::optionSpellings<mlir::spconv::GPUMatmul>() +
                ", got '" + gpuMatmul + "'");
  if (target == "cpu" && gpuMatmul.getNumOccurrences())
    return fail("--gpu-matmul applies to the GPU targets only");
  if (!mlir::spconv::symbolizeOption<mlir::spconv::GPUMmaOps>(gpuMmaOps))
    return fail("--gpu-mma-ops must be " +
                mlir::spconv::optionSpellings<mlir::spconv::GPUMmaOps>() +
                ", got '" + gpuMmaOps + "'");
  if (target == "cpu" && gpuMmaOps.getNumOccurrences())
    return fail("--gpu-mma-ops applies to the GPU targets only");
  if (target == "cpu" && !gpuTiles.empty())
    return fail("--gpu-tiles applies to the GPU targets only");
  if (target != "gpu-emulator" && gpuRaceCheck)
    return fail("--gpu-race-check applies to --target gpu-emulator only");
  if (chunkBytes < 1)
    return fail("--chunk-bytes must be positive");
  if (maxUnrolledOffsets < 0)
    return fail("--max-unrolled-offsets must be nonnegative");
  if (!mlir::spconv::symbolizeOption<mlir::spconv::SubmSearch>(submSearch))
    return fail("--subm-search must be " +
                mlir::spconv::optionSpellings<mlir::spconv::SubmSearch>() +
                ", got '" + submSearch + "'");
  if (repeat < 1)
    return fail("--repeat must be positive");
  if (failAllocations && target == "cuda")
    return fail("--fail-each-allocation applies to --target cpu and "
                "gpu-emulator only");
  if (failAllocations && repeat != 1)
    return fail("--fail-each-allocation and --repeat exclude each other");
  if (numThreads < 0)
    return fail("--num-threads must be positive");
  if (numThreads > 0) {
    omp_set_num_threads(numThreads);
    spconv_rt_set_num_threads(numThreads);
  }

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  mlir::spconv::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  PhaseTimer timer;
  timer.start();
  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + inputFile);
  timer.stop("parse");

  auto entry = module->lookupSymbol<func::FuncOp>(entryName);
  if (!entry || entry.isExternal()) {
    std::string names;
    module->walk([&](func::FuncOp f) {
      if (!f.isExternal() && f.isPublic())
        names += (names.empty() ? "" : ", ") + f.getSymName().str();
    });
    return fail(
        "unknown entry function '" + entryName +
        "'; the module defines: " + (names.empty() ? "nothing" : names));
  }
  FunctionType entryType = entry.getFunctionType();
  if (compileOnly && (!inputs.empty() || !outputDir.empty()))
    return fail("--compile-only runs nothing: it takes no --input and no "
                "--output-dir");
  if (!compileOnly && outputDir.empty())
    return fail("--output-dir is required (unless --compile-only)");
  if (!compileOnly && inputs.size() != entryType.getNumInputs())
    return fail("@" + entryName + " takes " +
                std::to_string(entryType.getNumInputs()) + " arguments but " +
                std::to_string(inputs.size()) + " --input files were given");
  SmallVector<npy::DType> resultTypes;
  SmallVector<int64_t> resultRanks;
  for (auto [i, type] : llvm::enumerate(entryType.getResults())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<npy::DType> dtype =
        tensor ? dtypeOf(tensor.getElementType()) : std::nullopt;
    if (!dtype)
      return fail("result " + std::to_string(i) + " of @" + entryName +
                  " is not a ranked tensor with a .npy dtype");
    resultTypes.push_back(*dtype);
    resultRanks.push_back(tensor.getRank());
  }

  timer.start();
  std::vector<npy::NpyArray> arrays(inputs.size());
  for (auto [i, path] : llvm::enumerate(inputs)) {
    if (!npy::readNpy(path, arrays[i], error))
      return fail("--input #" + std::to_string(i) + " (" + path +
                  "): " + error);
    if (int status = checkInput(i, path, arrays[i], entryType.getInput(i)))
      return status;
  }
  timer.stop("read");

  // The compiled code: from the cache, or lowered, JIT-compiled and then
  // cached.
  std::string symbol = "_mlir_ciface_" + entryName;
  std::vector<std::string> profileLabels;
  run::LoadedObject loaded;
  std::unique_ptr<ExecutionEngine> engine;
  void (*packedEntry)(void **) = nullptr;
  llvm::Expected<JITCPU> cpu = jitCPU();
  if (!cpu)
    return fail(llvm::toString(cpu.takeError()));
  timer.start();
  run::CompileCache cache = openCache();
  std::string cacheKey;
  if (cache.enabled())
    cacheKey = run::CompileCache::key(
        {sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer(),
         entryName, codegenOptions(), cpu->name, cpu->features});
  // --target cpu compiles each kernel (spconv-outline-kernels) on its own
  // and keeps it in the store, where other modules with its layer find it.
  bool storeKernels = cache.enabled() && target == "cpu" && outlineKernels;
  if (std::optional<run::CachedModule> cached = cache.lookup(cacheKey)) {
    std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
    objects.push_back(std::move(cached->object));
    for (const std::string &kernelKey : cached->kernelKeys)
      if (auto kernel = cache.lookupKernel(kernelKey))
        objects.push_back(std::move(kernel));
    // A kernel evicted since: compile the module again.
    if (objects.size() == cached->kernelKeys.size() + 1) {
      if (auto object = run::loadObjects(std::move(objects), symbol)) {
        loaded = std::move(*object);
        packedEntry = loaded.packed;
        profileLabels = std::move(cached->profileLabels);
        timer.stop("load");
      } else {
        // A damaged entry: compile again and replace it, and its kernels.
        llvm::errs() << "spconv-run: warning: the cached code in "
                     << cache.getDirectory() << " did not load ("
                     << llvm::toString(object.takeError())
                     << "); compiling it again\n";
        cache.remove(cacheKey);
        for (const std::string &kernelKey : cached->kernelKeys)
          cache.remove(kernelKey);
      }
    }
  }

  // The kernels' code, linked into a JIT of its own that the module's
  // resolves them from.
  std::unique_ptr<llvm::orc::LLJIT> kernelJIT;
  if (!packedEntry) {
    timer.start();
    // Only what the entry reaches is lowered and compiled.
    mlir::spconv::keepOnlyEntries(*module, {entryName});
    entry->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
    PassManager pm(&context);
    if (printIR) {
      context.disableMultithreading();
      pm.enableIRPrinting();
    }
    if (failed(mlir::applyPassManagerCLOptions(pm)))
      return fail("bad pass manager options");
    mlir::applyDefaultTimingPassManagerCLOptions(pm);
    std::vector<std::string> kernelKeys, kernelNames;
    std::vector<std::unique_ptr<llvm::MemoryBuffer>> kernelObjects;
    if (storeKernels) {
      mlir::spconv::SpConvToCPUPipelineOptions options;
      setCPUPipelineOptions(options, *cpu);
      PassManager frontEnd(&context);
      mlir::applyDefaultTimingPassManagerCLOptions(frontEnd);
      mlir::spconv::buildSpConvToCPUFrontEnd(frontEnd, options);
      if (failed(frontEnd.run(*module)))
        return fail("lowering " + inputFile + " failed");
      timer.stop("front end");
      timer.start();
      // Found in the store, or compiled all at once (in parallel).
      std::vector<mlir::func::FuncOp> missing;
      std::vector<size_t> missingAt;
      for (mlir::func::FuncOp kernel : mlir::spconv::getKernels(*module)) {
        std::string key = run::CompileCache::kernelKey(
            {mlir::spconv::kernelText(kernel), codegenOptions(), cpu->name,
             cpu->features});
        std::unique_ptr<llvm::MemoryBuffer> object = cache.lookupKernel(key);
        if (!object) {
          missing.push_back(kernel);
          missingAt.push_back(kernelObjects.size());
        }
        kernelKeys.push_back(key);
        kernelNames.push_back(kernel.getSymName().str());
        kernelObjects.push_back(std::move(object));
      }
      run::KernelCompileTimes kernelTimes;
      auto compiled =
          run::compileKernels(missing, options, jitCodegen(*cpu), kernelTimes);
      if (!compiled)
        return fail(llvm::toString(compiled.takeError()));
      for (auto [at, code] : llvm::zip_equal(missingAt, *compiled)) {
        // Not fatal: the code runs; the next run compiles it again.
        if (llvm::Error error = cache.storeKernel(kernelKeys[at], code))
          llvm::errs() << "spconv-run: warning: kernel not cached: "
                       << llvm::toString(std::move(error)) << "\n";
        kernelObjects[at] =
            llvm::MemoryBuffer::getMemBufferCopy(code, kernelKeys[at]);
      }
      size_t compiledCount = missing.size();
      mlir::spconv::declareKernels(*module);
      timer.stop("kernels");
      if (printTimes) {
        llvm::errs() << "spconv-run: kernels " << compiledCount << " compiled, "
                     << kernelKeys.size() - compiledCount
                     << " from the store\n";
        if (compiledCount)
          llvm::errs() << llvm::format(
              "spconv-run: kernels' compile, summed over threads: lower "
              "%.1f ms, translate %.1f ms, optimize %.1f ms, codegen %.1f "
              "ms\n",
              kernelTimes.lowerMs, kernelTimes.translateMs,
              kernelTimes.optimizeMs, kernelTimes.codegenMs);
      }
      timer.start();
      mlir::spconv::buildSpConvToCPUBackEnd(pm, options);
    } else {
      buildPipeline(pm, *cpu);
    }
    if (failed(pm.run(*module)))
      return fail("lowering " + inputFile + " failed");
    // The labels are for this tool, not for the LLVM translation.
    if (auto labels = (*module)->getAttrOfType<ArrayAttr>(
            mlir::spconv::SpConvDialect::kProfileLabelsAttrName)) {
      for (Attribute label : labels)
        profileLabels.push_back(cast<StringAttr>(label).str());
      (*module)->removeAttr(
          mlir::spconv::SpConvDialect::kProfileLabelsAttrName);
    }
    timer.stop("lower");

    timer.start();
    // ExecutionEngineOptions::transformer is a function_ref: the
    // std::function it refers to must outlive ExecutionEngine::create (a
    // temporary did not; ASan: stack-use-after-scope).
    std::function<llvm::Error(llvm::Module *)> optimize =
        [&](llvm::Module *llvmModule) {
          // Only the entry's packed wrapper is called by name: every other
          // function may be inlined and dropped, as spconv-compile's are.
          return run::optimizeForJIT(*llvmModule, "_mlir_" + symbol,
                                     jitCodegen(*cpu));
        };
    ExecutionEngineOptions engineOptions;
    engineOptions.transformer = optimize;
    // Keeps the object, for the cache.
    engineOptions.enableObjectDump = cache.enabled();
    auto created = ExecutionEngine::create(*module, engineOptions);
    if (!created)
      return fail("JIT compilation failed: " +
                  llvm::toString(created.takeError()));
    engine = std::move(*created);
    if (!kernelObjects.empty()) {
      auto linked = run::linkObjects(std::move(kernelObjects));
      if (!linked)
        return fail("linking the kernels failed: " +
                    llvm::toString(linked.takeError()));
      kernelJIT = std::move(*linked);
      std::vector<std::pair<std::string, llvm::orc::ExecutorAddr>> addresses;
      for (const std::string &name : kernelNames) {
        auto address = kernelJIT->lookup(name);
        if (!address)
          return fail("linking the kernels failed: " +
                      llvm::toString(address.takeError()));
        addresses.emplace_back(name, *address);
      }
      engine->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
        llvm::orc::SymbolMap map;
        for (auto &[name, address] : addresses)
          map[interner(name)] = {address, llvm::JITSymbolFlags::Exported};
        return map;
      });
    }
    // Code is generated on the first lookup: do it here, not in "run".
    auto compiled = engine->lookupPacked(symbol);
    if (!compiled)
      return fail("JIT compilation failed: " +
                  llvm::toString(compiled.takeError()));
    packedEntry = *compiled;
    timer.stop("jit");

    if (cache.enabled()) {
      timer.start();
      // Not fatal: the code runs; the next run compiles again.
      if (llvm::Error error = cache.store(
              cacheKey, [&](StringRef path) { engine->dumpToObjectFile(path); },
              profileLabels, kernelKeys))
        llvm::errs() << "spconv-run: warning: compiled code not cached: "
                     << llvm::toString(std::move(error)) << "\n";
      timer.stop("store");
    }
  }
  if (compileOnly)
    return 0;

  // _mlir_ciface_NAME([results*], args*...), called through its packed form.
  std::vector<std::vector<int64_t>> descriptors;
  // On the GPU, the compiled code reads device copies of its inputs.
  std::vector<void *> deviceInputs;
  llvm::scope_exit freeDeviceInputs([&] {
    for (void *pointer : deviceInputs)
      freeDevice(pointer);
  });
  // --misalign-inputs: each input copied to one element past a 16-byte
  // boundary.
  std::vector<std::vector<uint8_t>> misaligned;
  for (npy::NpyArray &array : arrays) {
    descriptors.push_back(run::makeDescriptor(array));
    if (misalignInputs) {
      size_t item = array.itemSize();
      std::vector<uint8_t> &copy =
          misaligned.emplace_back(array.data.size() + 16 + item);
      auto address = reinterpret_cast<uintptr_t>(copy.data());
      uint8_t *start = copy.data() + (16 - address % 16) % 16 + item;
      std::copy(array.data.begin(), array.data.end(), start);
      descriptors.back()[0] = descriptors.back()[1] =
          reinterpret_cast<int64_t>(start);
    }
    if (!onGPU)
      continue;
    void *copy = copyToDevice(array.data.data(), array.data.size());
    if (!copy && !array.data.empty())
      return fail("--target cuda: cannot copy an input to the device: " +
                  std::string(spconv_rt_last_error()));
    deviceInputs.push_back(copy);
    descriptors.back()[0] = descriptors.back()[1] =
        reinterpret_cast<int64_t>(copy);
  }
  size_t resultWords = 0;
  for (int64_t rank : resultRanks)
    resultWords += run::descriptorWords(rank);
  std::vector<int64_t> results(resultWords);
  void *resultPointer = results.data();
  std::vector<void *> descriptorPointers;
  for (auto &descriptor : descriptors)
    descriptorPointers.push_back(descriptor.data());
  SmallVector<void *> packed;
  if (!resultRanks.empty())
    packed.push_back(&resultPointer);
  for (void *&pointer : descriptorPointers)
    packed.push_back(&pointer);

  // Result allocations are the caller's: free each once (never an input's,
  // which a function may return as is).
  std::set<int64_t> inputPointers;
  for (auto &descriptor : descriptors)
    inputPointers.insert(descriptor[0]);
  auto freeResults = [&] {
    std::set<int64_t> freed;
    const int64_t *descriptor = results.data();
    for (int64_t rank : resultRanks) {
      int64_t allocated = descriptor[0];
      if (!inputPointers.count(allocated) && freed.insert(allocated).second) {
        if (onGPU)
          freeDevice(reinterpret_cast<void *>(allocated));
        else // The runtime's allocator's free(): its live count stays true.
          _mlir_memref_to_llvm_free(reinterpret_cast<void *>(allocated));
      }
      descriptor += run::descriptorWords(rank);
    }
  };

  // Earlier repetitions warm caches and the allocator; times and the
  // profile are the last run's.
  std::string runtimeError;
  for (int repetition = 0; repetition < repeat; ++repetition) {
    if (repetition > 0)
      freeResults();
    timer.start();
    spconv_rt_clear_error();
    spconv_rt_profile_reset();
    packedEntry(packed.data());
    // With --repeat, the first (cold) call is reported too, as "first".
    timer.stop(repetition + 1 == repeat ? "run"
               : repetition == 0        ? "first"
                                        : nullptr);
    runtimeError = spconv_rt_last_error();
    if (!runtimeError.empty())
      break;
  }
  // The failed calls of the sweep, then the successful one's outputs.
  if (failAllocations && runtimeError.empty())
    freeResults();
  for (int64_t n = 1; failAllocations && runtimeError.empty(); ++n) {
    int64_t live = spconv_rt_test_live_buffers();
    spconv_rt_clear_error();
    spconv_rt_test_fail_allocation(n);
    packedEntry(packed.data());
    spconv_rt_test_fail_allocation(0);
    std::string error = spconv_rt_last_error();
    if (error.empty()) {
      llvm::errs() << "spconv-run: @" << entryName << ": " << n - 1
                   << " allocations, each failure reported\n";
      break;
    }
    freeResults();
    if (spconv_rt_last_status() != SPCONV_RT_ERR_OUT_OF_MEMORY)
      return fail("--fail-each-allocation: allocation " + llvm::Twine(n) +
                  " failed, but the call reported: " + error);
    if (int64_t left = spconv_rt_test_live_buffers() - live)
      return fail("--fail-each-allocation: allocation " + llvm::Twine(n) +
                  " failed (" + error + ") and " + llvm::Twine(left) +
                  " buffers were not freed");
  }
  if (!runtimeError.empty()) {
    // Nothing of a failed call is read: its results may be null.
    freeResults();
    return fail("@" + entryName + ": " + runtimeError);
  }

  timer.start();
  std::vector<npy::NpyArray> outputs;
  const int64_t *descriptor = results.data();
  for (auto [dtype, rank] : llvm::zip_equal(resultTypes, resultRanks)) {
    size_t words = run::descriptorWords(rank);
    // A device result: its elements' span copied to the host first.
    std::vector<int64_t> onHost(descriptor, descriptor + words);
    std::vector<uint8_t> staging;
    if (onGPU) {
      staging.resize(run::spanElements(descriptor, rank) *
                     npy::dtypeSize(dtype));
      if (!copyToHost(staging.data(),
                      reinterpret_cast<const void *>(descriptor[1]),
                      staging.size())) {
        freeResults();
        return fail("--target cuda: cannot copy a result to the host: " +
                    std::string(spconv_rt_last_error()));
      }
      onHost[1] = reinterpret_cast<int64_t>(staging.data());
    }
    outputs.push_back(run::copyResult(onHost.data(), rank, dtype));
    descriptor += words;
  }
  freeResults();

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return fail("--output-dir " + outputDir + ": " + ec.message());
  for (auto [i, array] : llvm::enumerate(outputs)) {
    std::string path = outputDir + "/out" + std::to_string(i) + ".npy";
    if (!npy::writeNpy(path, array, error))
      return fail(error);
  }
  timer.stop("write");
  // The process's peak resident memory: inputs, compiled code and the
  // call's buffers (docs/Limits.md sizes a layer by it).
  if (printTimes) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) == 0)
      llvm::errs() << llvm::format("spconv-run: %-8s %10.1f MiB\n", "peak",
                                   usage.ru_maxrss / 1024.0);
  }

  if (profile) {
    llvm::outs() << llvm::format("%4s %10s %10s  %s\n", "#", "ms", "rows",
                                 "op");
    double total = 0;
    for (auto [id, label] : llvm::enumerate(profileLabels)) {
      double ms = 0;
      int64_t rows = 0, calls = 0;
      if (spconv_rt_profile_get(id, &ms, &rows, &calls) != 0 || calls == 0)
        continue;
      total += ms;
      llvm::outs() << llvm::format("%4d %10.3f %10lld  %s\n", int(id), ms,
                                   static_cast<long long>(rows), label.c_str());
    }
    llvm::outs() << llvm::format("%4s %10.3f %10s  %s\n", "", total, "",
                                 "total of the timed ops");
  }
  return 0;
}
