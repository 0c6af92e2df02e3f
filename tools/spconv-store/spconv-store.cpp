//===- spconv-store.cpp - Inspect and trim the kernel store ---------------===//
//
// Part of the spconv-mlir project.
//
// spconv-store info | list | evict [--max-size SIZE] | remove KEY... | clear
//              [--cache-dir DIR]
//
// The kernel store (spconv-rt/KernelStore.h) is where spconv-run, the Python
// front end and the PyTorch ops keep what they compiled. This tool shows what
// it holds and trims it (docs/Compiler.md, "The kernel store").
//
//===----------------------------------------------------------------------===//

#include "spconv-rt/KernelStore.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <ctime>
#include <string>

namespace cl = llvm::cl;

static cl::SubCommand info("info", "The store's root, entries, size and "
                                   "size limit");
static cl::SubCommand list("list", "Every entry, least recently used first: "
                                   "key, bytes, last use (UTC)");
static cl::SubCommand evict("evict", "Evict least recently used entries "
                                     "until the store fits a size");
static cl::SubCommand removeCommand("remove", "Remove the entries named");
static cl::SubCommand clear("clear", "Remove every entry");

static cl::opt<std::string>
    cacheDir("cache-dir",
             cl::desc("The store's root (default: $SPCONV_MLIR_CACHE_DIR, else "
                      "$XDG_CACHE_HOME/spconv-mlir or ~/.cache/spconv-mlir)"),
             cl::value_desc("dir"), cl::sub(cl::SubCommand::getAll()));
static cl::opt<std::string> maxSize(
    "max-size",
    cl::desc("The size to evict to: bytes, or a number followed by K, M or G "
             "(default: the size limit, $SPCONV_MLIR_CACHE_SIZE or 2G)"),
    cl::value_desc("size"), cl::sub(evict));
static cl::list<std::string> keys(cl::Positional, cl::desc("<key>..."),
                                  cl::OneOrMore, cl::sub(removeCommand));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "spconv-store: error: " << message << "\n";
  return 1;
}

static int storeFailure() { return fail(spconv_store_last_error()); }

/// The size of the entries and their number.
struct Totals {
  uint64_t entries = 0;
  uint64_t bytes = 0;
};

static int printEntry(const SpConvStoreEntry *entry, void *) {
  char when[32] = "?";
  std::time_t time = static_cast<std::time_t>(entry->last_used);
  if (std::tm utc; gmtime_r(&time, &utc))
    std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &utc);
  llvm::outs() << entry->key << " " << entry->bytes << " " << when << "\n";
  return 0;
}

static int addEntry(const SpConvStoreEntry *entry, void *data) {
  auto *totals = static_cast<Totals *>(data);
  ++totals->entries;
  totals->bytes += entry->bytes;
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "spconv-store: inspect and trim the kernel "
                              "store of spconv-mlir\n");
  std::string root = cacheDir;
  if (root.empty()) {
    char path[4096];
    if (spconv_store_default_root(path, sizeof(path)) != SPCONV_STORE_OK)
      return storeFailure();
    root = path;
    if (root.empty())
      return fail("the kernel store is off (SPCONV_MLIR_CACHE_DIR is '" +
                  llvm::Twine(std::getenv("SPCONV_MLIR_CACHE_DIR")
                                  ? std::getenv("SPCONV_MLIR_CACHE_DIR")
                                  : "") +
                  "' or there is no home directory); name one with "
                  "--cache-dir");
  }

  if (info) {
    uint64_t limit;
    if (spconv_store_size_limit(&limit) != SPCONV_STORE_OK)
      return storeFailure();
    Totals totals;
    if (spconv_store_list(root.c_str(), addEntry, &totals) != SPCONV_STORE_OK)
      return storeFailure();
    llvm::outs() << "root: " << root << "\n"
                 << "entries: " << totals.entries << "\n"
                 << "bytes: " << totals.bytes << "\n"
                 << "size limit: " << limit << "\n";
    return 0;
  }
  if (list) {
    if (spconv_store_list(root.c_str(), printEntry, nullptr) != SPCONV_STORE_OK)
      return storeFailure();
    return 0;
  }
  if (evict || clear) {
    uint64_t limit = 0;
    if (evict) {
      int status = maxSize.empty()
                       ? spconv_store_size_limit(&limit)
                       : spconv_store_parse_size(maxSize.c_str(), &limit);
      if (status != SPCONV_STORE_OK)
        return fail(maxSize.empty()
                        ? llvm::Twine(spconv_store_last_error())
                        : "--max-size: " +
                              llvm::Twine(spconv_store_last_error()));
    }
    uint64_t freed = 0;
    if (spconv_store_evict(root.c_str(), limit, &freed) != SPCONV_STORE_OK)
      return storeFailure();
    llvm::outs() << "freed: " << freed << "\n";
    return 0;
  }
  if (removeCommand) {
    int result = 0;
    for (const std::string &key : keys) {
      int status = spconv_store_remove(root.c_str(), key.c_str());
      if (status == SPCONV_STORE_ERROR)
        result = storeFailure();
      else if (status == SPCONV_STORE_MISS)
        result = fail("no entry '" + key + "' in " + root);
    }
    return result;
  }
  return fail("name a command: info, list, evict, remove or clear (--help "
              "says more)");
}
