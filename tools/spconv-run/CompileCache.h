//===- CompileCache.h - spconv-run's cache of compiled code ----*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
// spconv-run's entries in the kernel store (spconv-rt/KernelStore.h): one
// per compiled module, its object code and profile labels, keyed by a hash of
// everything the code depends on: the module's text, the entry function, the
// target and its pipeline options, the CPU compiled for and its features
// (the caller's parts), and this spconv-run binary itself (so a rebuilt
// compiler never loads code of an older one). A second run of the same module
// loads the object instead of lowering and JIT-compiling again. The store
// publishes whole entries only and bounds its size; an entry that does not
// load is removed, recompiled and stored again.
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
  /// The keys of the kernels (kernel entries) the object links against.
  std::vector<std::string> kernelKeys;
};

class CompileCache {
public:
  /// The store rooted at `directory`, which is created when the first entry
  /// is stored. An empty directory disables the cache.
  explicit CompileCache(std::string directory)
      : directory(std::move(directory)) {}

  bool enabled() const { return !directory.empty(); }
  llvm::StringRef getDirectory() const { return directory; }

  /// The store's default root (spconv_store_default_root):
  /// $SPCONV_MLIR_CACHE_DIR ("off" or empty: none), else
  /// $XDG_CACHE_HOME/spconv-mlir, else $HOME/.cache/spconv-mlir.
  static std::string defaultDirectory();

  /// The key of a module compiled from `parts` (the module text, the
  /// options, the CPU, ...) by this binary ("jit-...").
  static std::string key(llvm::ArrayRef<llvm::StringRef> parts);
  /// The key of one kernel compiled from `parts` (its text, the options,
  /// the CPU, ...) by this binary ("krn-..."): kernels are shared by every
  /// module that has their layers.
  static std::string kernelKey(llvm::ArrayRef<llvm::StringRef> parts);

  /// The entry stored under `key`, if there is a whole one.
  std::optional<CachedModule> lookup(llvm::StringRef key) const;
  /// The object of the kernel stored under `key`, if there is one.
  std::unique_ptr<llvm::MemoryBuffer> lookupKernel(llvm::StringRef key) const;

  /// Stores under `key` the object `writeObject` writes to the path it is
  /// given, `profileLabels` and the keys of the kernels it links against,
  /// within the store's size limit ($SPCONV_MLIR_CACHE_SIZE).
  llvm::Error store(llvm::StringRef key,
                    llvm::function_ref<void(llvm::StringRef)> writeObject,
                    llvm::ArrayRef<std::string> profileLabels,
                    llvm::ArrayRef<std::string> kernelKeys = {}) const;
  /// Stores a kernel's object under `key`.
  llvm::Error storeKernel(llvm::StringRef key, llvm::StringRef object) const;

  /// Removes the entry under `key`: its code did not load.
  void remove(llvm::StringRef key) const;

private:
  /// Publishes under `key` the files that `write` writes into the staging
  /// directory it is given (an error if one is missing or empty).
  llvm::Error
  publish(llvm::StringRef key,
          llvm::function_ref<llvm::Error(llvm::StringRef)> write) const;

  std::string directory;
};

} // namespace spconv::run

#endif // SPCONV_TOOLS_SPCONV_RUN_COMPILECACHE_H
