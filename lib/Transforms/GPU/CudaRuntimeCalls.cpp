//===- CudaRuntimeCalls.cpp - Runtime primitives on the GPU ---------------===//
//
// Part of the spconv-mlir project.
//
// The host code of the CUDA target calls the runtime's CUDA twins of the
// data-parallel primitives (hash build, unique, scans) instead of the CPU
// ones: same descriptors, same results, computed where the data lives.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGPURUNTIMECALLSPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

/// CPU entry points with a CUDA twin in libspconv_runtime_cuda.
constexpr llvm::StringLiteral kCpuPrefix = "spconv_rt_memref_";
constexpr llvm::StringLiteral kCudaPrefix = "spconv_rt_cuda_memref_";
constexpr llvm::StringLiteral kWithCudaTwin[] = {
    "hash_build",         "unique",
    "exclusive_scan_i32", "exclusive_scan_i64",
    "sort_pairs_bits",    "hash_build_deferred",
    "unique_deferred",    "exclusive_scan_i64_deferred",
    "report_build_error", "hash_lookup",
    "linearize_coords",   "delinearize_keys"};

struct SpConvGPURuntimeCallsPass
    : spconv::impl::SpConvGPURuntimeCallsPassBase<SpConvGPURuntimeCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> twins;
    for (StringRef primitive : kWithCudaTwin) {
      auto cpu = symbols.lookup<func::FuncOp>((kCpuPrefix + primitive).str());
      if (!cpu)
        continue;
      std::string name = (kCudaPrefix + primitive).str();
      auto cuda = symbols.lookup<func::FuncOp>(name);
      if (!cuda) {
        cuda = cast<func::FuncOp>(cpu->clone());
        cuda.setSymName(name);
        symbols.insert(cuda, Block::iterator(cpu));
      }
      twins[cpu.getSymName()] = cuda;
    }
    if (twins.empty())
      return;
    for (auto function : module.getOps<func::FuncOp>())
      function.walk([&](func::CallOp call) {
        if (func::FuncOp cuda = twins.lookup(call.getCallee()))
          call.setCallee(cuda.getSymName());
      });
    for (auto &[name, cuda] : twins)
      if (auto cpu = symbols.lookup<func::FuncOp>(name);
          cpu && SymbolTable::symbolKnownUseEmpty(cpu, module))
        symbols.erase(cpu);
  }
};

} // namespace
