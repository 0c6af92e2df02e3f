//===- spconv-compile.cpp - Ahead-of-time compilation of a network --------===//
//
// Part of the spconv-mlir project.
//
// spconv-compile FILE.mlir -o NET.o [--header NET.h] [--entry NAME ...]
//                [--target cpu|cuda|gpu-emulator] [--emit obj|asm|llvm]
//                [options]
//
// Lowers FILE with the target's pipeline (spconv-to-cpu, spconv-to-cuda or
// spconv-to-gpu-emulator), compiles the host code for a CPU (this machine's
// by default, --mcpu for another) and writes an object file exporting one C
// function per entry, plus a C header declaring them (docs/Compiler.md,
// "Ahead-of-time compilation").
//
//===----------------------------------------------------------------------===//

#include "CHeader.h"
#include "EntryPoints.h"
#include "Manifest.h"
#include "ObjectEmitter.h"
#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/InitAll.h"
#include "SpConv/Pipelines/KeepEntries.h"
#include "SpConv/Pipelines/OptimizeLLVM.h"
#include "SpConv/Pipelines/Pipelines.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace ::spconv::compile;
namespace cl = llvm::cl;

static cl::OptionCategory category("spconv-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<FILE.mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string>
    outputFile("o",
               cl::desc("Where the object (or --emit's output) goes; '-' is "
                        "stdout"),
               cl::value_desc("file"), cl::Required, cl::cat(category));
static cl::opt<std::string> headerFile(
    "header",
    cl::desc("Also write a C header declaring the entry points, their "
             "memref descriptor structs and the ABI"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> manifestFile(
    "manifest",
    cl::desc("Also write a JSON manifest of the entry points (symbols, "
             "argument and result ranks and elements, libraries), for "
             "binders that cannot read C"),
    cl::value_desc("file"), cl::cat(category));
static cl::list<std::string>
    entryNames("entry",
               cl::desc("Export this public function (repeatable; default: "
                        "every public function with a body)"),
               cl::value_desc("name"), cl::cat(category));
static cl::opt<std::string> symbolPrefix(
    "prefix",
    cl::desc("Prepended to every exported C symbol (e.g. net_), so that "
             "networks with the same function names link together"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string>
    target("target",
           cl::desc("What to compile for: cpu (spconv-to-cpu), cuda "
                    "(spconv-to-cuda: host code for this CPU that launches "
                    "kernels embedded in the object; arguments and results "
                    "are GPU memory) or gpu-emulator (spconv-to-gpu-emulator: "
                    "the cuda target's kernels run on the CPU, for testing "
                    "them where there is no GPU; host memory)"),
           cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    gpuChip("gpu-chip",
            cl::desc("--target cuda: GPU architecture (default sm_80)"),
            cl::init("sm_80"), cl::cat(category));
static cl::opt<std::string>
    gpuFeatures("gpu-features",
                cl::desc("--target cuda: PTX features (default +ptx80)"),
                cl::init("+ptx80"), cl::cat(category));
static cl::opt<std::string> gpuFormat(
    "gpu-format",
    cl::desc("--target cuda: what the object embeds: fatbin (default; cubin "
             "and PTX), bin (cubin) or isa (PTX, compiled by the driver)"),
    cl::init("fatbin"), cl::cat(category));
static cl::opt<int64_t>
    gpuBlockSize("gpu-block-size",
                 cl::desc("--target cuda and gpu-emulator: threads per block "
                          "(default 256)"),
                 cl::init(256), cl::cat(category));
static cl::opt<int64_t>
    gpuMaxBlocks("gpu-max-blocks",
                 cl::desc("--target cuda and gpu-emulator: most blocks per "
                          "launch, 0 for no cap (default 65535)"),
                 cl::init(65535), cl::cat(category));
static cl::opt<std::string> gpuConv(
    "gpu-conv",
    cl::desc("--target cuda and gpu-emulator: how convolutions with static "
             "channel counts run: implicit-gemm (default) or gather-scatter"),
    cl::init("implicit-gemm"), cl::cat(category));
static cl::opt<std::string> gpuMatmul(
    "gpu-matmul",
    cl::desc("--target cuda and gpu-emulator: how the implicit GEMM "
             "multiplies: tensor-cores (default: f16 and bf16 on tensor "
             "cores, f32 on FMA), tf32 (f32 on tensor cores too, inputs "
             "rounded to TF32) or fma"),
    cl::init("tensor-cores"), cl::cat(category));
static cl::opt<std::string> gpuMmaOps(
    "gpu-mma-ops",
    cl::desc("--target cuda and gpu-emulator: which ops tensor-core tiles "
             "multiply with: auto (default: mma-sync for every fragment "
             "type), mma-sync or subgroup-mma"),
    cl::init("auto"), cl::cat(category));
static cl::opt<std::string> gpuTiles(
    "gpu-tiles",
    cl::desc("--target cuda and gpu-emulator: a JSON tile table (format "
             "spconv-gpu-tiles/1, docs/GPU.md \"Tuning table\") whose "
             "entries replace the implicit GEMM's built-in tiles"),
    cl::value_desc("file"), cl::init(""), cl::cat(category));
static cl::opt<bool> gpuRaceCheck(
    "gpu-race-check",
    cl::desc("--target gpu-emulator: fail a call at the first data race "
             "between two threads of a kernel launch (blocks then run one "
             "after another)"),
    cl::init(false), cl::cat(category));
static cl::opt<OutputKind> emitKind(
    "emit", cl::desc("What -o receives"), cl::init(OutputKind::Object),
    cl::values(clEnumValN(OutputKind::Object, "obj", "an ELF object (default)"),
               clEnumValN(OutputKind::Assembly, "asm", "assembly text"),
               clEnumValN(OutputKind::LLVMIR, "llvm",
                          "optimised LLVM IR text, for debugging")),
    cl::cat(category));
static cl::opt<std::string> cpuName(
    "mcpu",
    cl::desc("CPU to generate code for: host (default: this machine's CPU "
             "and all its features, like spconv-run's JIT) or an LLVM CPU "
             "name such as x86-64-v3 for portable objects; its vector "
             "registers also size the CPU lowering's row chunks"),
    cl::init("host"), cl::cat(category));
static cl::opt<unsigned>
    optLevel("opt-level", cl::desc("LLVM optimisation level, 0-3 (default 3)"),
             cl::init(3), cl::cat(category));
static cl::opt<unsigned> compileThreads(
    "compile-threads",
    cl::desc("Threads that run LLVM's optimiser over the parts of the "
             "module at once (default 0: one per hardware thread); the code "
             "does not depend on it"),
    cl::init(0), cl::cat(category));
static cl::opt<unsigned> llvmParts(
    "llvm-parts",
    cl::desc("Parts the LLVM module is split into for optimisation, 1 to 64 "
             "(default 0: by its size, one part below about 20k "
             "instructions, at most 8); 1 optimises it whole"),
    cl::init(0), cl::cat(category));
static cl::opt<int64_t> blockSize(
    "block-size",
    cl::desc("Sites per block when rulebook builders count and write pairs "
             "(default 256)"),
    cl::init(256), cl::cat(category));
static cl::opt<std::string> submSearch(
    "subm-search",
    cl::desc("How subm rulebooks find neighbours: sorted (default) or hash"),
    cl::init("sorted"), cl::cat(category));
static cl::opt<bool> openmp(
    "openmp",
    cl::desc("Run parallel loops (gpu-emulator: the emulated blocks) on "
             "OpenMP threads; the program then links libomp (default true; "
             "--openmp=false: sequential loops)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool>
    profile("profile",
            cl::desc("Time every rulebook build and compute at run time "
                     "(read with spconv_rt_profile_get; the header lists the "
                     "operations)"),
            cl::cat(category));

namespace {
int fail(const llvm::Twine &message) {
  llvm::errs() << "spconv-compile: error: " << message << "\n";
  return 1;
}

/// The options both GPU pipelines take, from the command line.
template <typename Options>
void setGPUKernelOptions(
    mlir::spconv::GPUKernelPipelineOptions<Options> &options) {
  options.blockSize = gpuBlockSize;
  options.maxBlocks = gpuMaxBlocks;
  // Checked in buildTargetPipeline.
  options.gpuConv = *mlir::spconv::symbolizeOption<mlir::spconv::GPUConv>(gpuConv);
  options.gpuMatmul =
      *mlir::spconv::symbolizeOption<mlir::spconv::GPUMatmul>(gpuMatmul);
  options.gpuMmaOps =
      *mlir::spconv::symbolizeOption<mlir::spconv::GPUMmaOps>(gpuMmaOps);
  options.gpuTiles = gpuTiles;
  options.profile = profile;
}

/// Adds the lowering of spconv ops on tensors to the LLVM dialect for
/// `targetName` to `pm`; the only place that knows the targets.
LogicalResult buildTargetPipeline(StringRef targetName, OpPassManager &pm,
                                  std::string &error) {
  if (targetName == "cpu") {
    for (const cl::Option *gpuOnly : std::initializer_list<const cl::Option *>{
             &gpuChip, &gpuFeatures, &gpuFormat, &gpuBlockSize, &gpuMaxBlocks,
             &gpuConv, &gpuMatmul, &gpuMmaOps, &gpuTiles, &gpuRaceCheck})
      if (gpuOnly->getNumOccurrences()) {
        error = "--" + gpuOnly->ArgStr.str() +
                " applies to --target cuda and gpu-emulator only";
        return failure();
      }
    mlir::spconv::SpConvToCPUPipelineOptions options;
    options.blockSize = blockSize;
    options.submSearch =
        *mlir::spconv::symbolizeOption<mlir::spconv::SubmSearch>(submSearch);
    options.openmp = openmp;
    options.profile = profile;
    // Row updates blocked for the registers and FMA units of the CPU the
    // code is for.
    CodegenOptions codegen;
    codegen.cpu = cpuName;
    llvm::Expected<TargetVectorUnits> units = targetVectorUnits(codegen);
    if (!units) {
      error = llvm::toString(units.takeError());
      return failure();
    }
    options.vectorBits = units->registers.bits;
    options.vectorRegisters = units->registers.count;
    options.fmaPipes = units->fma.pipes;
    options.fmaLatency = units->fma.latency;
    mlir::spconv::buildSpConvToCPUPipeline(pm, options);
    return success();
  }
  // The CPU target's loop shapes do not apply to the GPU targets: theirs
  // are fixed.
  for (const cl::Option *cpuOnly :
       std::initializer_list<const cl::Option *>{&blockSize, &submSearch})
    if (cpuOnly->getNumOccurrences()) {
      error = "--" + cpuOnly->ArgStr.str() + " applies to --target cpu only";
      return failure();
    }
  if (gpuBlockSize < 1 || gpuBlockSize > 1024 || gpuMaxBlocks < 0) {
    error = "--gpu-block-size must be in [1, 1024] and --gpu-max-blocks "
            "not negative";
    return failure();
  }
  if (!mlir::spconv::symbolizeOption<mlir::spconv::GPUConv>(gpuConv)) {
    error = "--gpu-conv must be " +
            mlir::spconv::optionSpellings<mlir::spconv::GPUConv>() +
            ", got '" + gpuConv + "'";
    return failure();
  }
  if (!mlir::spconv::symbolizeOption<mlir::spconv::GPUMatmul>(gpuMatmul)) {
    error = "--gpu-matmul must be " +
            mlir::spconv::optionSpellings<mlir::spconv::GPUMatmul>() +
            ", got '" + gpuMatmul + "'";
    return failure();
  }
  if (!mlir::spconv::symbolizeOption<mlir::spconv::GPUMmaOps>(gpuMmaOps)) {
    error = "--gpu-mma-ops must be " +
            mlir::spconv::optionSpellings<mlir::spconv::GPUMmaOps>() +
            ", got '" + gpuMmaOps + "'";
    return failure();
  }
  if (targetName == "cuda") {
    for (const cl::Option *notCuda :
         std::initializer_list<const cl::Option *>{&openmp, &gpuRaceCheck})
      if (notCuda->getNumOccurrences()) {
        error = "--" + notCuda->ArgStr.str() +
                " does not apply to --target "
                "cuda";
        return failure();
      }
    if (gpuFormat != "fatbin" && gpuFormat != "bin" && gpuFormat != "isa") {
      error =
          "--gpu-format must be fatbin, bin or isa, got '" + gpuFormat + "'";
      return failure();
    }
    mlir::spconv::SpConvToCUDAPipelineOptions options;
    setGPUKernelOptions(options);
    options.chip = gpuChip;
    options.features = gpuFeatures;
    options.format = gpuFormat;
    mlir::spconv::buildSpConvToCUDAPipeline(pm, options);
    return success();
  }
  if (targetName == "gpu-emulator") {
    for (const cl::Option *cudaOnly : std::initializer_list<const cl::Option *>{
             &gpuChip, &gpuFeatures, &gpuFormat})
      if (cudaOnly->getNumOccurrences()) {
        error =
            "--" + cudaOnly->ArgStr.str() + " applies to --target cuda only";
        return failure();
      }
    mlir::spconv::SpConvToGPUEmulatorPipelineOptions options;
    setGPUKernelOptions(options);
    options.openmp = openmp;
    options.raceCheck = gpuRaceCheck;
    mlir::spconv::buildSpConvToGPUEmulatorPipeline(pm, options);
    return success();
  }
  error = "--target must be cpu, cuda or gpu-emulator, got '" +
          targetName.str() + "'";
  return failure();
}

/// The notes of the header banner.
std::string describeCompilation() {
  std::string text = "target " + target + ", ";
  if (target == "cuda")
    text += gpuChip + " " + gpuFormat;
  else
    text += openmp ? "OpenMP" : "no OpenMP";
  if (target != "cpu")
    text += ", gpu-conv " + gpuConv + ", gpu-matmul " + gpuMatmul +
            ", gpu-mma-ops " + gpuMmaOps;
  if (!gpuTiles.empty())
    text += ", gpu-tiles " + llvm::sys::path::filename(gpuTiles).str();
  if (gpuRaceCheck)
    text += ", race check";
  text += ", mcpu " + cpuName;
  if (profile)
    text += ", profile";
  return text;
}

/// Entry arguments are only read: bufferization may not write into them,
/// which the header promises.
void prepareEntries(ModuleOp module, ArrayRef<EntryPoint> entries) {
  MLIRContext *context = module.getContext();
  for (const EntryPoint &entry : entries) {
    auto function = module.lookupSymbol<func::FuncOp>(entry.mlirName);
    function->setAttr("llvm.emit_c_interface", UnitAttr::get(context));
    for (unsigned i = 0; i < function.getNumArguments(); ++i)
      if (isa<TensorType>(function.getArgumentTypes()[i]))
        function.setArgAttr(
            i, bufferization::BufferizationDialect::kWritableAttrName,
            BoolAttr::get(context, false));
  }
}

std::unique_ptr<llvm::ToolOutputFile>
openOutput(StringRef path, const char *what, std::string &error) {
  std::string message;
  auto file = openOutputFile(path, &message);
  if (!file)
    error = std::string(what) + ": " + message;
  return file;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // --mlir-timing and MLIR's other pass manager options (accepted, not
  // listed by --help).
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "spconv-compile: compile the public functions of a .mlir file of "
      "spconv ops to an object file with a C interface, and a C header\n");

  std::string error;
  if (!mlir::spconv::symbolizeOption<mlir::spconv::SubmSearch>(submSearch))
    return fail("--subm-search must be " +
                mlir::spconv::optionSpellings<mlir::spconv::SubmSearch>() +
                ", got '" + submSearch + "'");
  if (blockSize <= 0)
    return fail("--block-size must be positive");
  if (optLevel > 3)
    return fail("--opt-level must be 0, 1, 2 or 3");
  if (llvmParts > mlir::spconv::kMaxLLVMOptimizationParts)
    return fail("--llvm-parts must be 0 (by size) or 1 to " +
                std::to_string(mlir::spconv::kMaxLLVMOptimizationParts) +
                ", got " + std::to_string(llvmParts));

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  mlir::spconv::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  PassManager pm(&context);
  if (failed(mlir::applyPassManagerCLOptions(pm)))
    return fail("bad pass manager options");
  mlir::applyDefaultTimingPassManagerCLOptions(pm);
  if (failed(buildTargetPipeline(target, pm, error)))
    return fail(error);

  // Outputs are opened first so that an unwritable path fails fast; they
  // are kept only if everything succeeds.
  auto output = openOutput(outputFile, "-o", error);
  if (!output)
    return fail(error);
  std::unique_ptr<llvm::ToolOutputFile> header;
  if (!headerFile.empty() &&
      !(header = openOutput(headerFile, "--header", error)))
    return fail(error);
  std::unique_ptr<llvm::ToolOutputFile> manifest;
  if (!manifestFile.empty() &&
      !(manifest = openOutput(manifestFile, "--manifest", error)))
    return fail(error);

  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + inputFile);

  std::vector<EntryPoint> entries;
  if (failed(collectEntryPoints(*module, entryNames, symbolPrefix, entries,
                                error)))
    return fail(inputFile + ": " + error);
  // With --entry, only what the named functions reach is compiled.
  if (!entryNames.empty())
    mlir::spconv::keepOnlyEntries(*module, entryNames);
  prepareEntries(*module, entries);

  if (failed(pm.run(*module)))
    return fail("lowering " + inputFile + " for --target " + target +
                " failed");
  HeaderInfo info;
  info.sourceName = llvm::sys::path::filename(inputFile).str();
  info.guard = guardForPath(headerFile);
  info.compiledWith = describeCompilation();
  info.gpuMemory = target == "cuda";
  // The labels are for the header, not for the LLVM translation.
  if (auto labels = (*module)->getAttrOfType<ArrayAttr>(
          mlir::spconv::SpConvDialect::kProfileLabelsAttrName)) {
    for (Attribute label : labels)
      info.profileLabels.push_back(cast<StringAttr>(label).str());
    (*module)->removeAttr(mlir::spconv::SpConvDialect::kProfileLabelsAttrName);
  }

  CodegenOptions codegen;
  codegen.kind = emitKind;
  codegen.cpu = cpuName;
  codegen.optLevel = optLevel;
  codegen.llvmParts = llvmParts;
  codegen.compileThreads = compileThreads;
  LinkRequirements needs;
  if (failed(emitCode(*module, entries, codegen, output->os(), needs, error)))
    return fail(error);
  info.libraries = needs.libraries;
  if (header)
    writeCHeader(header->os(), info, entries);
  if (manifest)
    writeManifest(manifest->os(), info, target, entries);

  output->keep();
  if (header)
    header->keep();
  if (manifest)
    manifest->keep();
  return 0;
}
