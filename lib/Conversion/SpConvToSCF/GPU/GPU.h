//===- GPU.h - The GPU's forms of the convs ---------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The two pattern sets of the GPU target (GPU/Patterns.cpp):
//  - the per-pair forms (PairForms.cpp), which take any conv and weight
//    gradient: per offset a thread per (pair, output channel), and a thread
//    per weight-gradient element;
//  - the tiled forms, registered at a higher benefit where the target is a
//    GPU and the pass's gpu-conv is implicit-gemm, for static channel counts
//    and no groups: the implicit GEMM (TiledConv.cpp, its kernels in
//    ImplicitGemm.cpp and TensorCoreGemm.cpp), the subm build that makes its
//    neighbour table directly, and the tiled weight gradient
//    (TiledWeightGrad.cpp).
// What the other ops lower to is the same loops on every target (Compute/,
// Rulebook/, Primitives/).
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_GPU_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_GPU_H

#include "Compute/Conv.h"
#include "Compute/WeightGrad.h"
#include "SpConv/Conversion/LoweringOptions.h"
#include "Utils/LoweringContext.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::spconv::lowering {

class GPUTileTable;

/// The per-pair conv (PairForms.cpp): for each offset, a thread per (pair,
/// output channel) adding one dot product into an accumulator row.
Value lowerPairChannelConv(LoweringContext &ctx, OpBuilder &b,
                           RulebookConvOp op, const ConvBuffers &buffers);

/// The per-element weight gradient (PairForms.cpp): a thread per (offset,
/// input channel, output channel), its sum in a register.
void lowerElementPerThreadWeightGrad(OpBuilder &b, Location loc,
                                     const WeightGradBuffers &buffers);

/// What the tiled forms are tuned by: the pass's gpu-matmul and gpu-mma-ops
/// and the tuned tiles of its gpu-tiles (or null).
struct TiledFormOptions {
  GPUMatmul matmul = GPUMatmul::TensorCores;
  GPUMmaOps mmaOps = GPUMmaOps::Auto;
  const GPUTileTable *tileTable = nullptr;
};

/// Whether the tiled forms take an op of `groups` groups whose weight (or
/// weight gradient) is `kernelBlocks`, `K x Cin x Cout`: one dense block per
/// offset, both counts static.
bool tiledFormApplies(int64_t groups, Type kernelBlocks);
bool tiledFormApplies(RulebookConvOp op);

/// The implicit-GEMM conv (TiledConv.cpp): one launch, every output row
/// written once in the result's element type.
Value lowerTiledConv(LoweringContext &ctx, OpBuilder &b, RulebookConvOp op,
                     const ConvBuffers &buffers,
                     const TiledFormOptions &options);

/// The tiled weight gradient (TiledWeightGrad.cpp).
void lowerTiledWeightGrad(OpBuilder &b, Location loc,
                          const WeightGradBuffers &buffers);

/// The GPU's per-pair forms of the conv and its weight gradient.
void populateGPUPairPatterns(const TypeConverter &converter,
                             LoweringContext &ctx, RewritePatternSet &patterns);

/// The GPU's tiled forms, at `benefit` (above the per-pair forms', which
/// take what these do not).
void populateGPUTiledPatterns(const TypeConverter &converter,
                              LoweringContext &ctx,
                              const TiledFormOptions &options,
                              RewritePatternSet &patterns,
                              PatternBenefit benefit);

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_GPU_H
