//===- TileTable.h - Tuned GPU tile sizes from a file -----------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// A GPU tile table (`gpu-tiles` of convert-spconv-to-scf) overrides
// GemmTiles::choose for the channel counts, element type and math it lists.
// The file is JSON (format "spconv-gpu-tiles/1", docs/GPU.md "Tuning
// table"); every entry is checked when it is loaded, against what the
// implicit-GEMM kernels (ImplicitGemm.cpp, TensorCoreGemm.cpp) can run.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_TILETABLE_H
#define SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_TILETABLE_H

#include "GPU/ImplicitGemm.h"

#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace mlir::spconv::lowering {

/// The tuned tiles of one file, by (Cin, Cout, element type, math).
class GPUTileTable {
public:
  /// The value of the table's `format` key.
  static constexpr llvm::StringLiteral kFormat = "spconv-gpu-tiles/1";

  /// Reads and checks the table at `path`; on failure `error` says what is
  /// wrong (naming the file and, for an entry, its index in `entries`).
  static std::optional<GPUTileTable> load(llvm::StringRef path,
                                          std::string &error);

  /// The tiles listed for a conv of `channelsIn` -> `channelsOut` in
  /// `elementType` multiplied with `math`, if any.
  std::optional<GemmTiles> lookup(int64_t channelsIn, int64_t channelsOut,
                                  Type elementType, GemmMath math) const;

  /// Why `tiles` cannot run for convs of the element type named `type`
  /// (f16, bf16, f32, f64): the kernels' constraints; empty if they can.
  static std::string checkTiles(const GemmTiles &tiles, llvm::StringRef type);

private:
  using Key = std::tuple<int64_t, int64_t, std::string, GemmMath>;
  std::map<Key, GemmTiles> entries;
};

} // namespace mlir::spconv::lowering

#endif // SPCONV_LIB_CONVERSION_SPCONVTOSCF_GPU_TILETABLE_H
