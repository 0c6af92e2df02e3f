//===- HoistStaticAllocas.h - Stack slots in the entry block ----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_PIPELINES_HOISTSTATICALLOCAS_H
#define SPCONV_PIPELINES_HOISTSTATICALLOCAS_H

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::spconv {

/// Moves every fixed-size `alloca` of `module` that is in a loop to the
/// start of its function's entry block, as a C compiler places a loop's
/// local variables: one slot for the whole call instead of a new one each
/// time the loop's body runs. (Those outside loops run once a call and
/// stay, so that the inliner's view of the function is unchanged.)
///
/// Why: allocas outside the entry block are dynamic stack allocations,
/// freed only when the function returns, and the lowering places some in
/// loops: the CUDA offloading handler packs each `gpu.launch_func`'s
/// arguments into allocas where the launch is (LLVM IR translation, past
/// any MLIR pass), and stack buffers of runtime calls sit where the call
/// is. A host loop over 100k rows that launches a kernel per row then grew
/// the stack by 100k packings and faulted in cuLaunchKernel. Every such
/// slot is dead by the end of its block's iteration (the launch copies its
/// arguments; a runtime call returns), so one slot serves every iteration.
/// Run on the translated module before optimization.
void hoistStaticAllocas(llvm::Module &module);

} // namespace mlir::spconv

#endif // SPCONV_PIPELINES_HOISTSTATICALLOCAS_H
