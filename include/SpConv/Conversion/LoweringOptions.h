//===- LoweringOptions.h - The typed options of the lowering ----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The choices of convert-spconv-to-scf that are one of a set, as enums, and
// their spellings: one list per enum, which the pass's options (Passes.td)
// and the pipelines' options (Pipelines.h) parse with and the tools' flags
// are checked against, so a value is added in one place.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_CONVERSION_LOWERINGOPTIONS_H
#define SPCONV_CONVERSION_LOWERINGOPTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::spconv {

/// How subm builders find neighbours.
enum class SubmSearch {
  Sorted, ///< merge the sorted site keys (Rulebook/SortedSubm.cpp)
  Hash    ///< probe the runtime's hash table inline
};

/// Where the parallel loops will run: CPU threads, or GPU threads once
/// `spconv-parallel-loops-to-gpu` makes kernels of them.
enum class LoopTarget {
  CPU, ///< few wide iterations: blocks of sites, vector row updates
  GPU  ///< one thread per item: scalar dot products, no prefetch hints
};

/// How the GPU target computes a convolution.
enum class GPUConv {
  /// One tiled, output-stationary GEMM per layer over a neighbour table
  /// (GPU/ImplicitGemm.cpp); needs static channel counts.
  ImplicitGemm,
  /// Per offset, one thread per (pair, output channel) adding into an
  /// accumulator (any channel counts).
  GatherScatter
};

/// What the GPU target's tiled convolution multiplies with.
enum class GPUMatmul {
  /// f16 and bf16 on tensor cores (f32 accumulation), f32 and f64 on FMA.
  TensorCores,
  /// As TensorCores, and f32 too, its inputs rounded to TF32.
  TF32,
  /// Every type on FMA (SIMT).
  FMA
};

/// Which ops a tensor-core tile multiplies its fragments with.
enum class GPUMmaOps {
  /// MmaSync for every fragment type (docs/GPU.md, "Two families of
  /// fragment ops": fewer instructions, no spill at the 128-register
  /// budget); the seam where a chip's own form (wgmma) will be picked.
  Auto,
  /// nvgpu.ldmatrix and nvgpu.mma.sync: PTX's lane layouts, lane offsets
  /// computed once per tile.
  MmaSync,
  /// Upstream's gpu.subgroup_mma_* (WMMA): opaque 16x16 fragments.
  SubgroupMma
};

/// One value of an option enum: its spelling and what it means.
template <typename EnumT> struct OptionSpelling {
  EnumT value;
  llvm::StringLiteral name;
  llvm::StringLiteral help;
};

/// The spellings of each enum, in declaration order.
inline llvm::ArrayRef<OptionSpelling<SubmSearch>> spellings(SubmSearch) {
  static const OptionSpelling<SubmSearch> list[] = {
      {SubmSearch::Sorted, "sorted", "merge the sorted site keys"},
      {SubmSearch::Hash, "hash", "probe the runtime's hash table inline"}};
  return list;
}
inline llvm::ArrayRef<OptionSpelling<LoopTarget>> spellings(LoopTarget) {
  static const OptionSpelling<LoopTarget> list[] = {
      {LoopTarget::CPU, "cpu", "threads over blocks of sites"},
      {LoopTarget::GPU, "gpu", "loops shaped for one GPU thread per item"}};
  return list;
}
inline llvm::ArrayRef<OptionSpelling<GPUConv>> spellings(GPUConv) {
  static const OptionSpelling<GPUConv> list[] = {
      {GPUConv::ImplicitGemm, "implicit-gemm", "one tiled launch per layer"},
      {GPUConv::GatherScatter, "gather-scatter",
       "per offset, one thread per pair and output channel"}};
  return list;
}
inline llvm::ArrayRef<OptionSpelling<GPUMatmul>> spellings(GPUMatmul) {
  static const OptionSpelling<GPUMatmul> list[] = {
      {GPUMatmul::TensorCores, "tensor-cores",
       "f16 and bf16 on tensor cores, f32 and f64 on FMA"},
      {GPUMatmul::TF32, "tf32", "as tensor-cores, f32 too (TF32 inputs)"},
      {GPUMatmul::FMA, "fma", "every type on FMA"}};
  return list;
}

inline llvm::ArrayRef<OptionSpelling<GPUMmaOps>> spellings(GPUMmaOps) {
  static const OptionSpelling<GPUMmaOps> list[] = {
      {GPUMmaOps::Auto, "auto", "mma-sync for every fragment type"},
      {GPUMmaOps::MmaSync, "mma-sync", "nvgpu.ldmatrix and nvgpu.mma.sync"},
      {GPUMmaOps::SubgroupMma, "subgroup-mma",
       "gpu.subgroup_mma_* (WMMA fragments)"}};
  return list;
}

/// The value spelled `name`, or none.
template <typename EnumT>
std::optional<EnumT> symbolizeOption(llvm::StringRef name) {
  for (const OptionSpelling<EnumT> &s : spellings(EnumT()))
    if (s.name == name)
      return s.value;
  return std::nullopt;
}

/// "a, b or c": the spellings, for messages.
template <typename EnumT> std::string optionSpellings() {
  llvm::ArrayRef<OptionSpelling<EnumT>> list = spellings(EnumT());
  std::string text;
  for (size_t i = 0; i < list.size(); ++i) {
    if (i)
      text += i + 1 == list.size() ? " or " : ", ";
    text += list[i].name.str();
  }
  return text;
}

/// An `llvm::cl` modifier giving an option of type EnumT (a pass's, a
/// pipeline's or a tool's) the spellings as its values, like
/// `llvm::cl::values`.
template <typename EnumT> struct OptionValues {
  template <typename Opt> void apply(Opt &option) const {
    for (const OptionSpelling<EnumT> &s : spellings(EnumT()))
      option.getParser().addLiteralOption(s.name, s.value, s.help);
  }
};
template <typename EnumT> OptionValues<EnumT> optionValues() { return {}; }

} // namespace mlir::spconv

#endif // SPCONV_CONVERSION_LOWERINGOPTIONS_H
