//===- ObjectEmitter.cpp - Lowered module to object code ------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "ObjectEmitter.h"

#include "SpConv/Pipelines/HoistStaticAllocas.h"
#include "SpConv/Pipelines/OptimizeLLVM.h"
#include "SpConv/Support/TargetCPU.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/IPO/Internalize.h"

using namespace mlir;
using namespace ::spconv::compile;
namespace compile = ::spconv::compile;

namespace {
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const CodegenOptions &options, std::string &error) {
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  std::string cpu = options.cpu, features;
  if (cpu == "host") {
    // What the JIT of spconv-run targets: this CPU and all its features.
    cpu = llvm::sys::getHostCPUName().str();
    features = mlir::spconv::hostCPUFeatures();
  }
  llvm::CodeGenOptLevel level =
      options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                              : llvm::CodeGenOptLevel::Default;
  // PIC: the object may go into a PIE executable (the default of Debian's
  // compilers) or a shared library.
  // Assembly carries the code generator's comments (spills among them).
  llvm::TargetOptions targetOptions;
  targetOptions.MCOptions.AsmVerbose = options.kind == OutputKind::Assembly;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpu, features, targetOptions,
                                  llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine) {
    error = "cannot create a target machine for " + triple.str();
    return nullptr;
  }
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpu)) {
    error = "--mcpu: '" + cpu + "' is not a CPU of " + triple.str();
    return nullptr;
  }
  return machine;
}

} // namespace

llvm::Expected<compile::TargetVectorUnits>
compile::targetVectorUnits(const CodegenOptions &options) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine)
    return llvm::createStringError(error);
  TargetVectorUnits units;
  units.registers =
      mlir::spconv::vectorRegistersOf(*machine->getMCSubtargetInfo());
  units.fma =
      mlir::spconv::fmaUnitsOf(*machine->getMCSubtargetInfo(),
                               *machine->getMCInstrInfo(), units.registers);
  return units;
}

namespace {
/// Gives each entry's C-interface wrapper its C symbol and makes every
/// other definition internal, so that objects of several networks (which
/// share builder names) link into one program.
LogicalResult exportEntries(llvm::Module &module, ArrayRef<EntryPoint> entries,
                            std::string &error) {
  // The bodies keep MLIR's exploded-descriptor signature; free their names
  // first, which wrappers may take.
  for (const EntryPoint &entry : entries)
    if (llvm::Function *body = module.getFunction(entry.mlirName))
      body->setName(entry.mlirName + ".body");
  llvm::StringSet<> exported;
  for (const EntryPoint &entry : entries) {
    llvm::Function *wrapper =
        module.getFunction("_mlir_ciface_" + entry.mlirName);
    if (!wrapper || wrapper->isDeclaration()) {
      error = "@" + entry.mlirName + " has no C interface after lowering";
      return failure();
    }
    wrapper->setName(entry.symbol);
    if (wrapper->getName() != entry.symbol) {
      error = "@" + entry.mlirName + ": the symbol '" + entry.symbol +
              "' is already used by the compiled code; choose a --prefix";
      return failure();
    }
    exported.insert(entry.symbol);
  }
  llvm::internalizeModule(module, [&](const llvm::GlobalValue &value) {
    return exported.contains(value.getName());
  });
  return success();
}

/// The libraries that define the functions `module` calls but does not
/// define, beyond the C library.
LinkRequirements findLinkRequirements(const llvm::Module &module) {
  bool runtime = false, cudaRuntime = false, openmp = false,
       runnerUtils = false;
  for (const llvm::Function &function : module.functions()) {
    if (!function.isDeclaration() || function.isIntrinsic() ||
        function.use_empty())
      continue;
    StringRef name = function.getName();
    // The runtime also defines the bfloat truncation builtin that CPUs
    // without a native conversion call (runtime/lib/CPU/Builtins.cpp)
    // and the allocation functions of lowered memrefs.
    runtime |= name.contains("spconv_rt_") || name == "__truncsfbf2" ||
               name.starts_with("_mlir_memref_to_llvm_");
    // The CUDA driver wrappers that gpu-to-llvm lowering calls.
    cudaRuntime |= name.starts_with("mgpu");
    openmp |= name.starts_with("__kmpc_") || name.starts_with("omp_");
    // Lowered copies of non-contiguous buffers.
    runnerUtils |= name == "memrefCopy";
  }
  LinkRequirements needs;
  if (runtime)
    needs.libraries.push_back("spconv_runtime");
  if (cudaRuntime)
    needs.libraries.push_back("spconv_runtime_cuda");
  if (openmp)
    needs.libraries.push_back("libomp");
  if (runnerUtils)
    needs.libraries.push_back("mlir_c_runner_utils");
  return needs;
}
} // namespace

LogicalResult compile::emitCode(ModuleOp module, ArrayRef<EntryPoint> entries,
                                const CodegenOptions &options,
                                llvm::raw_pwrite_stream &os,
                                LinkRequirements &needs, std::string &error) {
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine)
    return failure();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return failure();
  }
  mlir::spconv::hoistStaticAllocas(*llvmModule);
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple());
  if (failed(exportEntries(*llvmModule, entries, error)))
    return failure();

  mlir::spconv::OptimizeLLVMOptions optimize;
  optimize.optLevel = options.optLevel;
  optimize.parts = options.llvmParts;
  optimize.threads = options.compileThreads;
  // A target machine per thread: one is not safe to share.
  auto makeMachine = [&] {
    std::string ignored;
    return createTargetMachine(options, ignored);
  };
  if (llvm::Error optError = mlir::spconv::optimizeLLVMModule(
          *llvmModule, optimize, makeMachine)) {
    error = "LLVM optimisation failed: " + llvm::toString(std::move(optError));
    return failure();
  }
  needs = findLinkRequirements(*llvmModule);

  if (options.kind == OutputKind::LLVMIR) {
    llvmModule->print(os, nullptr);
    return success();
  }
  llvm::legacy::PassManager codegen;
  llvm::CodeGenFileType fileType = options.kind == OutputKind::Object
                                       ? llvm::CodeGenFileType::ObjectFile
                                       : llvm::CodeGenFileType::AssemblyFile;
  if (machine->addPassesToEmitFile(codegen, os, nullptr, fileType)) {
    error = "the target cannot emit this kind of file";
    return failure();
  }
  codegen.run(*llvmModule);
  return success();
}
