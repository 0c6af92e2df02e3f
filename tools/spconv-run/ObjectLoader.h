//===- ObjectLoader.h - Run a cached object without recompiling -*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// Links an object file that MLIR's ExecutionEngine compiled earlier (kept
// by the compile cache) into a fresh JIT, resolving the runtime, OpenMP and
// the C runner utilities in this process the way the ExecutionEngine does,
// and finds a function's packed entry point.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TOOLS_SPCONV_RUN_OBJECTLOADER_H
#define SPCONV_TOOLS_SPCONV_RUN_OBJECTLOADER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace llvm {
class MemoryBuffer;
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace spconv::run {

struct LoadedObject {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  /// The ExecutionEngine's packed wrapper of the function: one pointer
  /// argument, an array of pointers to the arguments (and results).
  void (*packed)(void **) = nullptr;

  LoadedObject();
  LoadedObject(LoadedObject &&);
  LoadedObject &operator=(LoadedObject &&);
  ~LoadedObject();
};

/// Links `object` and looks up the packed wrapper of `function` (a C
/// interface name such as _mlir_ciface_net).
llvm::Expected<LoadedObject>
loadObject(std::unique_ptr<llvm::MemoryBuffer> object,
           llvm::StringRef function);

} // namespace spconv::run

#endif // SPCONV_TOOLS_SPCONV_RUN_OBJECTLOADER_H
