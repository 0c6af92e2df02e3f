//===- OptimizeLLVM.h - LLVM's -O pipeline, in parallel parts ---*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_PIPELINES_OPTIMIZELLVM_H
#define SPCONV_PIPELINES_OPTIMIZELLVM_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::spconv {

/// The most parts a module may be split into (OptimizeLLVMOptions::parts).
constexpr unsigned kMaxLLVMOptimizationParts = 64;

struct OptimizeLLVMOptions {
  /// LLVM's -O level (0 to 3).
  unsigned optLevel = 3;
  /// How many parts the module is optimized in: 0 picks by its size (one
  /// part below about 20k instructions, at most 8), 1 optimizes it whole,
  /// at most kMaxLLVMOptimizationParts. The parts, and so the code, never
  /// depend on `threads`.
  unsigned parts = 0;
  /// Threads that optimize parts at once; 0: one per hardware thread.
  unsigned threads = 0;
};

/// Creates the target machine a part is optimized for (its TTI); may return
/// null (LLVM's target-independent defaults). Called once per thread.
using TargetMachineFactory =
    llvm::function_ref<std::unique_ptr<llvm::TargetMachine>()>;

/// The number of parts `optimizeLLVMModule` splits `module` into.
unsigned llvmOptimizationParts(const llvm::Module &module,
                               const OptimizeLLVMOptions &options);

/// Runs LLVM's default per-module pipeline at `options.optLevel` over
/// `module`, in place.
///
/// A lowered network is one entry function and hundreds of outlined OpenMP
/// regions, which the entry passes to the OpenMP runtime by address and
/// never calls: independent work for the optimizer, which is most of a cold
/// compile and runs on one thread. So the module is split into parts (ThinLTO
/// and ORC's concurrent compilation do the same): functions joined by direct
/// calls stay in one part, so the inliner sees every callee it saw before;
/// each part is optimized in its own LLVMContext on its own thread, and the
/// parts are linked back. A symbol that one part references and another
/// defines is made external while the parts are apart, and gets its own
/// linkage back; a constant global is visible to every part that reads it
/// (available_externally), so loads of it still fold.
llvm::Error optimizeLLVMModule(llvm::Module &module,
                               const OptimizeLLVMOptions &options,
                               TargetMachineFactory makeTargetMachine);

} // namespace mlir::spconv

#endif // SPCONV_PIPELINES_OPTIMIZELLVM_H
