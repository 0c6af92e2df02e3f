//===- ObjectEmitter.h - Lowered module to object code ----------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TOOLS_SPCONVCOMPILE_OBJECTEMITTER_H
#define SPCONV_TOOLS_SPCONVCOMPILE_OBJECTEMITTER_H

#include "EntryPoints.h"

#include "SpConv/Support/VectorWidth.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace spconv::compile {

enum class OutputKind { Object, Assembly, LLVMIR };

struct CodegenOptions {
  OutputKind kind = OutputKind::Object;
  /// "host" (the CPU this runs on, with all its features) or an LLVM CPU
  /// name such as "x86-64-v3".
  std::string cpu = "host";
  /// LLVM optimisation level, 0 to 3.
  unsigned optLevel = 3;
  /// Parts the LLVM module is optimised in (0: by its size) and threads
  /// that optimise them (0: one per hardware thread); OptimizeLLVM.h.
  unsigned llvmParts = 0;
  unsigned compileThreads = 0;
};

/// What the CPU lowering blocks its row updates by: the vector register
/// file and the FMA units of a CPU.
struct TargetVectorUnits {
  mlir::spconv::VectorRegisters registers;
  mlir::spconv::FmaUnits fma;
};

/// The vector units of the CPU `options` names, or an error message for a
/// CPU the target does not know.
llvm::Expected<TargetVectorUnits>
targetVectorUnits(const CodegenOptions &options);

/// What the emitted code needs from the program that links it.
struct LinkRequirements {
  /// Libraries the code calls into, by CMake target or file name, e.g.
  /// "spconv_runtime", "libomp".
  std::vector<std::string> libraries;
};

/// Translates `module` (in the LLVM dialect, every entry lowered with
/// llvm.emit_c_interface) to LLVM IR, exports each entry's C interface
/// under its C symbol and makes every other definition internal, optimises
/// for the CPU and writes the result to `os`. `needs` tells which
/// libraries the code calls.
mlir::LogicalResult emitCode(mlir::ModuleOp module,
                             llvm::ArrayRef<EntryPoint> entries,
                             const CodegenOptions &options,
                             llvm::raw_pwrite_stream &os,
                             LinkRequirements &needs, std::string &error);

} // namespace spconv::compile

#endif // SPCONV_TOOLS_SPCONVCOMPILE_OBJECTEMITTER_H
