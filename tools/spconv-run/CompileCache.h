//===- CompileCache.h - spconv-run's cache of compiled code ----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// A directory of object files, one per compiled module, keyed by a hash of
// everything the code depends on: the module's text, the entry function, the
// target and its pipeline options, the CPU compiled for and its features
// (the caller's parts), and this spconv-run binary itself (so a rebuilt
// compiler never loads code of an older one). A second run of the same module
// loads the object instead of lowering and JIT-compiling again. Entries are
// written to a temporary file and renamed into place, so concurrent processes
// see a whole entry or none; an entry that does not load is recompiled and
// replaced.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TOOLS_SPCONV_RUN_COMPILECACHE_H
#define SPCONV_TOOLS_SPCONV_RUN_COMPILECACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace spconv::run {

/// A compiled module: its object code and the labels of its profiled ops
/// (empty unless compiled with --profile).
struct CachedModule {
  std::unique_ptr<llvm::MemoryBuffer> object;
  std::vector<std::string> profileLabels;
};

class CompileCache {
public:
  /// The cache in `directory`, which is created when the first entry is
  /// stored. An empty directory disables the cache.
  explicit CompileCache(std::string directory)
      : directory(std::move(directory)) {}

  bool enabled() const { return !directory.empty(); }
  llvm::StringRef getDirectory() const { return directory; }

  /// The directory spconv-run uses unless told otherwise: $SPCONV_CACHE_DIR
  /// ("off" or empty: none), else $XDG_CACHE_HOME/spconv-mlir, else
  /// $HOME/.cache/spconv-mlir.
  static std::string defaultDirectory();

  /// The key of a module compiled from `parts` (the module text, the
  /// options, the CPU, ...) by this binary.
  static std::string key(llvm::ArrayRef<llvm::StringRef> parts);

  /// The entry stored under `key`, if there is a whole one.
  std::optional<CachedModule> lookup(llvm::StringRef key) const;

  /// Stores under `key` the object `writeObject` writes to the path it is
  /// given, and `profileLabels`.
  llvm::Error store(llvm::StringRef key,
                    llvm::function_ref<void(llvm::StringRef)> writeObject,
                    llvm::ArrayRef<std::string> profileLabels) const;

private:
  /// A fresh file in the cache directory, renamed into place once written.
  llvm::Expected<std::string> temporaryPath() const;
  std::string path(llvm::StringRef key, llvm::StringRef extension) const;

  std::string directory;
};

} // namespace spconv::run

#endif // SPCONV_TOOLS_SPCONV_RUN_COMPILECACHE_H
