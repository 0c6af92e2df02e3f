//===- Pipelines.h - SpConv pass pipelines ----------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_PIPELINES_PIPELINES_H
#define SPCONV_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
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
  PassOptions::Option<std::string> submSearch{
      *this, "subm-search",
      llvm::cl::desc("How subm rulebook builders find neighbours: sorted "
                     "(merge sorted keys) or hash (probe the hash table)"),
      llvm::cl::init("sorted")};
  PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("Run scf.parallel loops on OpenMP threads (needs libomp "
                     "at run time); otherwise they become sequential loops"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("Time every rulebook build and compute at run time "
                     "(spconv-profile)"),
      llvm::cl::init(false)};
};

/// spconv ops on tensors -> the LLVM dialect: decompose, share rulebooks,
/// lower to specialised loops, bufferize, free buffers, OpenMP, LLVM.
void buildSpConvToCPUPipeline(OpPassManager &pm,
                              const SpConvToCPUPipelineOptions &options);

/// Registers `spconv-to-cpu` with the pass registry.
void registerSpConvPipelines();

} // namespace mlir::spconv

#endif // SPCONV_PIPELINES_PIPELINES_H
