//===- Pipelines.cpp - SpConv pass pipelines ------------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Pipelines/Pipelines.h"
#include "SpConv/Conversion/Passes.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::spconv;

void mlir::spconv::buildSpConvToCPUPipeline(
    OpPassManager &pm, const SpConvToCPUPipelineOptions &options) {
  // High level first: pointwise subm convs become matmuls, subm layers read
  // their producers' coordinates.
  pm.addPass(createCanonicalizerPass());
  // Rulebook level: one build per (sites, geometry), shared by every layer.
  pm.addNestedPass<func::FuncOp>(createSpConvDecomposePass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createSpConvShareRulebooksPass());
  pm.addPass(createCSEPass());
  if (options.profile)
    pm.addPass(createSpConvProfilePass());

  // Loops specialised per geometry, then buffers.
  pm.addPass(createConvertSpConvToSCFPass(
      ConvertSpConvToSCFPassOptions{options.blockSize, options.submSearch}));
  // The hash probe is called inside the builders' innermost loops: inline
  // it (and the builders into their callers).
  pm.addPass(createInlinerPass());
  // Element-wise arith on tensors (residual adds) becomes linalg, which
  // bufferizes.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  bufferization::OneShotBufferizePassOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  bufferization::buildBufferDeallocationPipeline(pm);
  // Deallocation clones what a function returns without owning it (e.g. a
  // subm layer's coordinates, which are its argument's).
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Matmuls (pointwise subm convs) and element-wise ops become affine loops
  // whose parallel dimensions (not the reductions) run on threads.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToAffineLoopsPass());
  pm.addNestedPass<func::FuncOp>(affine::createAffineParallelize());
  pm.addPass(createCanonicalizerPass());

  // LLVM, with the parallel loops on OpenMP threads.
  if (options.openmp)
    pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::spconv::registerSpConvPipelines() {
  PassPipelineRegistration<SpConvToCPUPipelineOptions>(
      "spconv-to-cpu",
      "Lower spconv ops on tensors to the LLVM dialect for the CPU: "
      "decompose, share rulebooks, specialised loops, bufferization, OpenMP",
      buildSpConvToCPUPipeline);
}
