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
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::spconv;

/// High level first: helper functions inlined, element-wise arith on
/// tensors (residual adds) as linalg; pointwise subm convs become matmuls,
/// subm layers read their producers' coordinates; backward functions
/// generated at the rulebook level; then one build per
/// (sites, geometry), shared by every layer, and each conv's element-wise
/// consumers in its epilogue.
static void addFrontEnd(OpPassManager &pm, StringRef pipeline,
                        bool fuseEpilogues, bool profile) {
  SpConvCheckInputPassOptions check;
  check.pipeline = pipeline.str();
  pm.addPass(createSpConvCheckInputPass(check));
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createSpConvDecomposePass());
  pm.addPass(createCanonicalizerPass());
  // Backward functions (spconv.backward) from the rulebook-level forward
  // ones, before builds are shared and epilogues fused.
  pm.addPass(createSpConvGenerateBackwardPass());
  pm.addNestedPass<func::FuncOp>(createSpConvShareRulebooksPass());
  pm.addPass(createCSEPass());
  if (fuseEpilogues)
    pm.addNestedPass<func::FuncOp>(createSpConvFuseEpiloguesPass());
  if (profile)
    pm.addPass(createSpConvProfilePass());
}

/// Tensors to buffers, with every buffer freed.
static void addBufferization(OpPassManager &pm) {
  // Element-wise arith on tensors (residual adds) becomes linalg, which
  // bufferizes.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  bufferization::OneShotBufferizePassOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Loops that carry tensors (a training loop's parameters) yield new ones
  // each iteration; the deallocation pipeline frees the old.
  bufferization.allowReturnAllocsFromLoops = true;
  // Kernels compiled on their own are declarations here: their calls take
  // buffers, so that the analysis need not guess what they alias.
  pm.addPass(createSpConvBufferizeKernelCallsPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  // Out of memory is an error, never a crash: no code runs after a failed
  // allocation. Before deallocation, so that the skipped path frees what
  // was allocated too.
  pm.addPass(createSpConvGuardAllocationsPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  // Deallocation clones what a function returns without owning it (e.g. a
  // subm layer's coordinates, which are its argument's); the copy into a
  // clone runs only if it was allocated.
  pm.addPass(createConvertBufferizationToMemRefPass());
  SpConvGuardAllocationsPassOptions afterDeallocation;
  afterDeallocation.afterDeallocation = true;
  pm.addPass(createSpConvGuardAllocationsPass(afterDeallocation));
}

/// spconv-check-lowered naming `pipeline` in its messages.
static void addCheckLowered(OpPassManager &pm, StringRef pipeline) {
  SpConvCheckLoweredPassOptions options;
  options.pipeline = pipeline.str();
  pm.addPass(createSpConvCheckLoweredPass(options));
}

/// Host code on the CPU: LLVM, with the parallel loops on OpenMP threads.
static void addCPUToLLVM(OpPassManager &pm, bool openmp) {
  // affine.parallel loops (of element-wise ops) become scf.parallel first,
  // so that they run on threads too.
  pm.addPass(createLowerAffinePass());
  if (openmp) {
    pm.addPass(createConvertSCFToOpenMPPass());
    // One team per nest of sequential loops around parallel ones (the
    // conv's chunks and offsets), not one per parallel loop.
    pm.addNestedPass<func::FuncOp>(createSpConvHoistOpenMPParallelPass());
  }
  pm.addPass(memref::createExpandStridedMetadataPass());
  // The views' offsets and sizes it computes are affine.apply ops.
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSpConvNullBuffersToLLVMPass());
  // Buffers come from the runtime's cache of freed blocks
  // (runtime/lib/CPU/Memory.cpp), not straight from malloc: glibc would give
  // large ones back to the kernel and every call fault them in again.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createSpConvLowerNDVectorOpsPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // The translation's outlining of each region walks its whole function.
  if (openmp)
    pm.addPass(createSpConvOutlineOpenMPParallelPass());
}

void mlir::spconv::buildSpConvToCPUPipeline(
    OpPassManager &pm, const SpConvToCPUPipelineOptions &options) {
  buildSpConvToCPUFrontEnd(pm, options);
  buildSpConvToCPUBackEnd(pm, options);
}

void mlir::spconv::buildSpConvToCPUFrontEnd(
    OpPassManager &pm, const SpConvToCPUPipelineOptions &options) {
  addFrontEnd(pm, "spconv-to-cpu", options.fuseEpilogues, options.profile);
  // Equal layers share one kernel function; the inliner of the back end
  // leaves the calls (no_inline).
  if (options.outlineKernels)
    pm.addPass(createSpConvOutlineKernelsPass());
}

void mlir::spconv::buildSpConvToCPUBackEnd(
    OpPassManager &pm, const SpConvToCPUPipelineOptions &options) {
  // Loops specialised per geometry, then buffers.
  ConvertSpConvToSCFPassOptions lowering;
  lowering.blockSize = options.blockSize;
  lowering.submSearch = options.submSearch;
  lowering.target = LoopTarget::CPU;
  lowering.chunkBytes = options.chunkBytes;
  lowering.vectorBits = options.vectorBits;
  lowering.vectorRegisters = options.vectorRegisters;
  lowering.fmaPipes = options.fmaPipes;
  lowering.fmaLatency = options.fmaLatency;
  lowering.maxUnrolledOffsets = options.maxUnrolledOffsets;
  pm.addPass(createConvertSpConvToSCFPass(lowering));
  // The hash probe is called inside the builders' innermost loops: inline
  // it (and the builders into their callers). One canonicalization of the
  // result, not the inliner's own after each function: the same IR, and
  // 10-20 % of the pipeline's time on the example networks.
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
  pm.addPass(createCanonicalizerPass());
  addBufferization(pm);
  // Matmuls (pointwise subm convs) become vectorized row loops; the rest
  // (element-wise ops a conv's epilogue did not take) affine loops whose
  // outermost parallel dimension runs on threads.
  SpConvMatmulToRowLoopsPassOptions rowLoops;
  rowLoops.vectorBits = options.vectorBits;
  rowLoops.vectorRegisters = options.vectorRegisters;
  rowLoops.fmaPipes = options.fmaPipes;
  rowLoops.fmaLatency = options.fmaLatency;
  pm.addNestedPass<func::FuncOp>(createSpConvMatmulToRowLoopsPass(rowLoops));
  // Concatenations copy into strided column views: parallel loops, not
  // the runner library's element-by-element memrefCopy.
  pm.addNestedPass<func::FuncOp>(createSpConvGPUStridedCopiesPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToAffineLoopsPass());
  // One level of parallel loops per nest on threads (the outermost loop,
  // if parallel); those inside stay loops, which LLVM vectorizes.
  pm.addNestedPass<func::FuncOp>(createSpConvParallelizeOuterLoopsPass());
  pm.addPass(createCanonicalizerPass());
  addCPUToLLVM(pm, options.openmp);
  addCheckLowered(pm, "spconv-to-cpu");
}

/// The GPU targets' common part: loops shaped for one thread per item,
/// buffers, and one kernel per distinct outermost parallel loop.
template <typename Derived>
static void addGPUKernels(OpPassManager &pm, StringRef pipeline,
                          const GPUKernelPipelineOptions<Derived> &options) {
  addFrontEnd(pm, pipeline, options.fuseEpilogues, options.profile);
  // One site per parallel iteration; the hash search is the one a GPU
  // thread can run on its own.
  ConvertSpConvToSCFPassOptions lowering;
  lowering.blockSize = 1;
  lowering.submSearch = SubmSearch::Hash;
  lowering.target = LoopTarget::GPU;
  lowering.maxUnrolledOffsets = options.maxUnrolledOffsets;
  lowering.gpuConv = options.gpuConv;
  lowering.gpuMatmul = options.gpuMatmul;
  lowering.gpuMmaOps = options.gpuMmaOps;
  lowering.gpuTiles = options.gpuTiles;
  pm.addPass(createConvertSpConvToSCFPass(lowering));
  addBufferization(pm);
  // Matmuls, element-wise ops and copies of strided views
  // (concatenations): parallel loops over their parallel dimensions,
  // sequential reductions inside.
  pm.addNestedPass<func::FuncOp>(createSpConvGPUStridedCopiesPass());
  pm.addNestedPass<func::FuncOp>(createSpConvGPUParallelDimsFirstPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  SpConvParallelLoopsToGPUPassOptions kernels;
  kernels.blockSize = options.blockSize;
  kernels.maxBlocks = options.maxBlocks;
  pm.addPass(createSpConvParallelLoopsToGPUPass(kernels));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::spconv::buildSpConvToCUDAPipeline(
    OpPassManager &pm, const SpConvToCUDAPipelineOptions &options) {
  addGPUKernels(pm, "spconv-to-cuda", options);
  // Kernels staging more than 48 KiB (pipelined tiles) take it dynamically.
  pm.addPass(createSpConvGPUDynamicSharedMemoryPass());
  // Builders into their layers, so that each buffer is placed by what its
  // consumers do with it; then placement, and one stream per function.
  pm.addPass(createInlinerPass());
  pm.addPass(createSpConvGPURuntimeCallsPass());
  pm.addPass(createSpConvGPUMemoryPass());
  pm.addPass(createSpConvGPUStreamOrderPass());
  // Loops and ifs become blocks first: upstream convert-nvgpu-to-nvvm, the
  // NVVM pipeline's first pass, converts scf's types with a converter that
  // knows neither !gpu.mma_matrix (kernel loops carrying tensor-core
  // fragments) nor !gpu.async.token (host code threading the stream) and
  // fails on them; block arguments it leaves alone.
  pm.addNestedPass<gpu::GPUModuleOp>(createSCFToControlFlowPass());
  pm.addNestedPass<func::FuncOp>(createSCFToControlFlowPass());
  // bf16 multiplies, which upstream's nvgpu-to-nvvm cannot type, straight
  // to NVVM; tensor-core fragments are 2-D vectors, NVVM's conversion takes
  // 1-D ops.
  pm.addNestedPass<gpu::GPUModuleOp>(createSpConvGPUBf16MmaSyncPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createSpConvLowerNDVectorOpsPass());
  pm.addPass(createSpConvGPUCheckNVPTXTypesPass());
  // Kernels through NVVM to a gpu.binary; host code to LLVM with calls of
  // the mgpu* wrappers (runtime/lib/CUDA).
  pm.addPass(createConvertSpConvNullBuffersToLLVMPass());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  addCheckLowered(pm, "spconv-to-cuda");
}

void mlir::spconv::buildSpConvToGPUEmulatorPipeline(
    OpPassManager &pm, const SpConvToGPUEmulatorPipelineOptions &options) {
  addGPUKernels(pm, "spconv-to-gpu-emulator", options);
  SpConvGPUKernelsToCPUPassOptions emulation;
  emulation.raceCheck = options.raceCheck;
  pm.addPass(createSpConvGPUKernelsToCPUPass(emulation));
  pm.addPass(createCanonicalizerPass());
  addCPUToLLVM(pm, options.openmp);
  addCheckLowered(pm, "spconv-to-gpu-emulator");
}

void mlir::spconv::registerSpConvPipelines() {
  PassPipelineRegistration<SpConvToCPUPipelineOptions>(
      "spconv-to-cpu",
      "Lower spconv ops on tensors to the LLVM dialect for the CPU: "
      "decompose, share rulebooks, specialised loops, bufferization, OpenMP",
      buildSpConvToCPUPipeline);
  PassPipelineRegistration<SpConvToCUDAPipelineOptions>(
      "spconv-to-cuda",
      "Lower spconv ops on tensors to host code in the LLVM dialect that "
      "launches CUDA kernels, one per distinct loop (per geometry for "
      "rulebook builders), compiled through NVVM into a gpu.binary",
      buildSpConvToCUDAPipeline);
  PassPipelineRegistration<SpConvToGPUEmulatorPipelineOptions>(
      "spconv-to-gpu-emulator",
      "Test target: the kernels of spconv-to-cuda, before NVVM, run on the "
      "CPU (block and thread ids become loop indices)",
      buildSpConvToGPUEmulatorPipeline);
}
