//===- ObjectLoader.h - Run a cached object without recompiling -*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// Links object files that MLIR's ExecutionEngine or spconv-run compiled
// earlier (kept in the kernel store) into a fresh JIT, resolving the runtime,
// OpenMP and the C runner utilities in this process the way the ExecutionEngine
// does, and finds a function's packed entry point.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TOOLS_SPCONV_RUN_OBJECTLOADER_H
#define SPCONV_TOOLS_SPCONV_RUN_OBJECTLOADER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

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

/// Links `objects` (a module's object and those of the kernels it calls)
/// into one fresh JIT.
llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>>
linkObjects(std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects);

/// Links `objects` and looks up the packed wrapper of `function` (a C
/// interface name such as _mlir_ciface_net), which the first one defines.
llvm::Expected<LoadedObject>
loadObjects(std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects,
            llvm::StringRef function);

} // namespace spconv::run

#endif // SPCONV_TOOLS_SPCONV_RUN_OBJECTLOADER_H
