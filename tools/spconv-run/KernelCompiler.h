//===- KernelCompiler.h - spconv-run's LLVM steps, and its kernels -*- C++ -*-//
//
// Part of the spconv-mlir project.
//
// What spconv-run does to the LLVM IR of lowered code before it is compiled
// (the same for a whole module, which MLIR's ExecutionEngine then compiles,
// and for a kernel compiled on its own), and the compile of one kernel of
// spconv-outline-kernels to an object for the kernel store.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TOOLS_SPCONV_RUN_KERNELCOMPILER_H
#define SPCONV_TOOLS_SPCONV_RUN_KERNELCOMPILER_H

#include "SpConv/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace spconv::run {

/// How spconv-run's code is generated, beyond the pipeline's options.
struct JITCodegen {
  /// The CPU compiled for, and whether it is this machine (with all of its
  /// features) rather than a named CPU with its own.
  std::string cpu;
  bool host = true;
  /// optimizeLLVMModule's parts and threads.
  unsigned llvmParts = 0;
  unsigned compileThreads = 0;
};

/// Prepares `module` and runs -O3 on it: static allocas hoisted, every
/// function but `keep` internal (it may be inlined and dropped), a named
/// CPU's attributes on every function.
llvm::Error optimizeForJIT(llvm::Module &module, llvm::StringRef keep,
                           const JITCodegen &codegen);

/// Where compileKernels' time went, summed over its kernels (and so over
/// its threads: the sum may exceed the wall time).
struct KernelCompileTimes {
  double lowerMs = 0;     // spconv-to-cpu's back end, all kernels at once
  double translateMs = 0; // LLVM dialect to LLVM IR
  double optimizeMs = 0;  // optimizeForJIT (-O3)
  double codegenMs = 0;   // instruction selection to the object
};

/// Lowers each of `kernels` alone with spconv-to-cpu's back end and
/// compiles it to an object for this machine's JIT: the code that a module
/// whose kernels are declarations links against. The kernels compile in
/// parallel: their back ends run as one pass manager over a module of
/// modules (MLIR lowers sibling modules on the context's threads), and each
/// is optimised and compiled in an LLVMContext of its own on
/// `codegen.compileThreads` threads. Each object is the same on any number
/// of threads. Objects come in the order of `kernels`.
llvm::Expected<std::vector<std::string>>
compileKernels(llvm::ArrayRef<mlir::func::FuncOp> kernels,
               const mlir::spconv::SpConvToCPUPipelineOptions &options,
               const JITCodegen &codegen, KernelCompileTimes &times);

} // namespace spconv::run

#endif // SPCONV_TOOLS_SPCONV_RUN_KERNELCOMPILER_H
