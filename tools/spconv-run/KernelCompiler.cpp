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
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/Internalize.h"

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

Expected<std::string> spconv::run::compileKernel(
    mlir::func::FuncOp kernel,
    const mlir::spconv::SpConvToCPUPipelineOptions &options,
    const JITCodegen &codegen) {
  std::string name = kernel.getSymName().str();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::spconv::extractKernel(kernel);
  mlir::PassManager pm(kernel.getContext());
  mlir::spconv::buildSpConvToCPUBackEnd(pm, options);
  if (mlir::failed(pm.run(*module)))
    return createStringError("lowering kernel @" + name + " failed");

  LLVMContext context;
  std::unique_ptr<Module> llvmModule =
      mlir::translateModuleToLLVMIR(*module, context, name);
  if (!llvmModule)
    return createStringError("translating kernel @" + name +
                             " to LLVM IR failed");
  // The target machine MLIR's ExecutionEngine compiles with (this
  // machine's), so that the object links as its own do.
  auto builder = orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  if (Error error = optimizeForJIT(*llvmModule, name, codegen))
    return std::move(error);

  SmallVector<char, 0> object;
  raw_svector_ostream os(object);
  legacy::PassManager passes;
  if ((*machine)->addPassesToEmitFile(passes, os, nullptr,
                                      CodeGenFileType::ObjectFile))
    return createStringError("the target cannot emit objects");
  passes.run(*llvmModule);
  return std::string(object.data(), object.size());
}
