//===- InitAll.h - Everything spconv registers ------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// The one registration entry point for embedders, and what the project's own
// tools (spconv-opt, spconv-run, spconv-compile, the mlir-opt plugin and the
// C API) call: a consumer that calls `registerEverything` gets exactly what
// spconv-opt has.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_INITALL_H
#define SPCONV_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::spconv {

/// Inserts into `registry` the spconv dialect, every upstream dialect and
/// extension the pipelines produce or consume, and the translations to LLVM
/// IR that serialising GPU kernels and exporting host code need. Safe to
/// call on a registry that already holds some of them.
void registerAllDialects(DialectRegistry &registry);

/// Registers with the global pass registry the spconv passes, the conversion
/// passes, the pipelines `spconv-to-cpu`, `spconv-to-cuda` and
/// `spconv-to-gpu-emulator`, and every upstream pass. Registers once per
/// process, however often it is called.
void registerAllPasses();

/// Both of the above.
void registerEverything(DialectRegistry &registry);

} // namespace mlir::spconv

#endif // SPCONV_INITALL_H
