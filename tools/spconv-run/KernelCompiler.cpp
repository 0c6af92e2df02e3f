//===- KernelCompiler.cpp - spconv-run's LLVM steps, and its kernels ------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "KernelCompiler.h"

#include "SpConv/Pipelines/HoistStaticAllocas.h"
#include "SpConv/Pipelines/KernelModules.h"
#include "SpConv/Pipelines/OptimizeLLVM.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <atomic>
#include <chrono>

using namespace llvm;
using namespace spconv::run;

Error spconv::run::optimizeForJIT(Module &module, StringRef keep,
                                  const JITCodegen &codegen) {
  mlir::spconv::hoistStaticAllocas(module);
  internalizeModule(module, [&](const GlobalValue &value) {
    return value.getName() == keep;
  });
  // Another CPU than this one: every function is compiled for it alone
  // (its own features, not this machine's).
  if (!codegen.host)
    for (Function &function : module) {
      function.addFnAttr("target-cpu", codegen.cpu);
      function.addFnAttr("target-features", "");
    }
  // Without a target machine, as ExecutionEngine's own transformer runs it.
  mlir::spconv::OptimizeLLVMOptions options;
  options.parts = codegen.llvmParts;
  options.threads = codegen.compileThreads;
  return mlir::spconv::optimizeLLVMModule(
      module, options, [] { return std::unique_ptr<TargetMachine>(); });
}

namespace {
using Clock = std::chrono::steady_clock;

/// Milliseconds since `start`.
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// Microseconds since `start`, added to `total` (shared by the threads).
void addElapsed(std::atomic<int64_t> &total, Clock::time_point start) {
  total += std::chrono::duration_cast<std::chrono::microseconds>(
               Clock::now() - start)
               .count();
}
} // namespace

/// Optimises `module` and compiles it to an object for this machine.
static Expected<std::string> compileToObject(Module &module, StringRef name,
                                             const JITCodegen &codegen,
                                             std::atomic<int64_t> &optimizeUs,
                                             std::atomic<int64_t> &codegenUs) {
  // The target machine MLIR's ExecutionEngine compiles with (this
  // machine's), so that the object links as its own do; one per thread.
  auto builder = orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  module.setDataLayout((*machine)->createDataLayout());
  module.setTargetTriple((*machine)->getTargetTriple());
  auto start = Clock::now();
  if (Error error = optimizeForJIT(module, name, codegen))
    return std::move(error);
  addElapsed(optimizeUs, start);

  start = Clock::now();
  SmallVector<char, 0> object;
  raw_svector_ostream os(object);
  legacy::PassManager passes;
  if ((*machine)->addPassesToEmitFile(passes, os, nullptr,
                                      CodeGenFileType::ObjectFile))
    return createStringError("the target cannot emit objects");
  passes.run(module);
  addElapsed(codegenUs, start);
  return std::string(object.data(), object.size());
}

Expected<std::vector<std::string>> spconv::run::compileKernels(
    ArrayRef<mlir::func::FuncOp> kernels,
    const mlir::spconv::SpConvToCPUPipelineOptions &options,
    const JITCodegen &codegen, KernelCompileTimes &times) {
  if (kernels.empty())
    return std::vector<std::string>();
  mlir::func::FuncOp first = kernels.front();
  mlir::MLIRContext *context = first.getContext();
  // One module per kernel, siblings in a container that the back end's
  // pass manager, nested one level, lowers in parallel.
  mlir::OwningOpRef<mlir::ModuleOp> container =
      mlir::ModuleOp::create(first.getLoc());
  std::vector<mlir::ModuleOp> modules;
  for (mlir::func::FuncOp kernel : kernels) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::spconv::extractKernel(kernel);
    modules.push_back(*module);
    container->getBody()->push_back(module.release());
  }
  auto start = Clock::now();
  mlir::PassManager pm(context);
  mlir::spconv::buildSpConvToCPUBackEnd(pm.nest<mlir::ModuleOp>(), options);
  if (mlir::failed(pm.run(*container)))
    return createStringError("lowering the kernels failed");
  times.lowerMs += msSince(start);

  // Translated one after another (it may touch the shared MLIRContext),
  // then optimised and compiled at once, one LLVMContext each.
  start = Clock::now();
  std::vector<std::unique_ptr<LLVMContext>> llvmContexts;
  std::vector<std::unique_ptr<Module>> llvmModules;
  std::vector<std::string> names;
  for (auto [constKernel, module] : llvm::zip_equal(kernels, modules)) {
    mlir::func::FuncOp kernel = constKernel;
    StringRef name = kernel.getSymName();
    names.push_back(name.str());
    llvmContexts.push_back(std::make_unique<LLVMContext>());
    llvmModules.push_back(
        mlir::translateModuleToLLVMIR(module, *llvmContexts.back(), name));
    if (!llvmModules.back())
      return createStringError("translating kernel @" + name +
                               " to LLVM IR failed");
  }
  container = nullptr;
  times.translateMs += msSince(start);

  std::vector<std::string> objects(kernels.size()), errors(kernels.size());
  std::atomic<int64_t> optimizeUs = 0, codegenUs = 0;
  // Each kernel's optimiser runs on one thread (its module is one part),
  // so the threads are spent across kernels.
  JITCodegen perKernel = codegen;
  perKernel.compileThreads = 1;
  {
    DefaultThreadPool pool(hardware_concurrency(codegen.compileThreads));
    for (size_t i = 0; i < kernels.size(); ++i)
      pool.async([&, i] {
        Expected<std::string> object = compileToObject(
            *llvmModules[i], names[i], perKernel, optimizeUs, codegenUs);
        if (object)
          objects[i] = std::move(*object);
        else
          errors[i] = toString(object.takeError());
        llvmModules[i] = nullptr;
      });
    pool.wait();
  }
  times.optimizeMs += optimizeUs / 1000.0;
  times.codegenMs += codegenUs / 1000.0;
  for (size_t i = 0; i < kernels.size(); ++i)
    if (!errors[i].empty())
      return createStringError("compiling kernel @" + llvm::Twine(names[i]) +
                               " failed: " + errors[i]);
  return objects;
}
