//===- CompileCache.cpp - spconv-run's cache of compiled code -------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "CompileCache.h"

#include "spconv-rt/KernelStore.h"
#include "spconv-rt/SpConvRuntime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdint>

using namespace llvm;
using namespace spconv::run;

/// The store's buffers for paths: ample for any path the system opens.
constexpr size_t kPathSize = 4096;

std::string CompileCache::defaultDirectory() {
  char root[kPathSize];
  if (spconv_store_default_root(root, kPathSize) != SPCONV_STORE_OK)
    return std::string();
  return root;
}

/// Identifies the code this binary generates: its own bytes (the compiler
/// is linked into it), the MLIR/LLVM release of libMLIR.so and the runtime
/// ABI the code calls.
static std::string compilerIdentity() {
  std::string identity =
      LLVM_VERSION_STRING " rt" + std::to_string(SPCONV_RT_ABI_VERSION) + " ";
  std::string self = sys::fs::getMainExecutable(nullptr, nullptr);
  if (auto binary = MemoryBuffer::getFile(self, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false)) {
    XXH128_hash_t hash =
        xxh3_128bits(arrayRefFromStringRef((*binary)->getBuffer()));
    identity += utohexstr(hash.high64) + utohexstr(hash.low64);
  } else {
    // Unreadable: never match an entry of another build.
    identity += self + " unreadable";
  }
  return identity;
}

/// `prefix` and the hash of the compiler's identity and `parts`.
static std::string hashedKey(StringRef prefix, ArrayRef<StringRef> parts) {
  static const std::string identity = compilerIdentity();
  SmallVector<StringRef> all = {identity};
  all.append(parts.begin(), parts.end());
  // Length-prefixed, so that no two lists of parts hash the same bytes.
  std::string material;
  for (StringRef part : all) {
    uint64_t size = part.size();
    material.append(reinterpret_cast<const char *>(&size), sizeof(size));
    material.append(part.data(), part.size());
  }
  XXH128_hash_t hash = xxh3_128bits(arrayRefFromStringRef(material));
  return (prefix + utohexstr(hash.high64, /*LowerCase=*/true, /*Width=*/16) +
          utohexstr(hash.low64, /*LowerCase=*/true, /*Width=*/16))
      .str();
}

// spconv-run's entries, among the other producers' in the store: "jit-"
// for modules, "krn-" for kernels.
std::string CompileCache::key(ArrayRef<StringRef> parts) {
  return hashedKey("jit-", parts);
}

std::string CompileCache::kernelKey(ArrayRef<StringRef> parts) {
  return hashedKey("krn-", parts);
}

static constexpr const char *kObjectFile = "module.o";
static constexpr const char *kLabelsFile = "labels";
static constexpr const char *kKernelsFile = "kernels";
static constexpr const char *kKernelObjectFile = "kernel.o";

static std::string pathIn(StringRef directory, StringRef file) {
  SmallString<256> result(directory);
  sys::path::append(result, file);
  return std::string(result);
}

std::optional<CachedModule> CompileCache::lookup(StringRef key) const {
  if (!enabled())
    return std::nullopt;
  char entry[kPathSize];
  if (spconv_store_lookup(directory.c_str(), key.str().c_str(), entry,
                          kPathSize) != SPCONV_STORE_OK)
    return std::nullopt;
  // Evicted by another process since the lookup: a miss.
  auto object = MemoryBuffer::getFile(pathIn(entry, kObjectFile),
                                      /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  auto labels = MemoryBuffer::getFile(pathIn(entry, kLabelsFile));
  auto kernels = MemoryBuffer::getFile(pathIn(entry, kKernelsFile));
  if (!object || !labels || !kernels)
    return std::nullopt;
  CachedModule cached;
  cached.object = std::move(*object);
  SmallVector<StringRef> split;
  StringRef text = (*labels)->getBuffer();
  if (!text.empty())
    text.drop_back().split(split, '\0');
  for (StringRef label : split)
    cached.profileLabels.push_back(label.str());
  split.clear();
  (*kernels)->getBuffer().split(split, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef kernel : split)
    cached.kernelKeys.push_back(kernel.str());
  return cached;
}

std::unique_ptr<MemoryBuffer> CompileCache::lookupKernel(StringRef key) const {
  if (!enabled())
    return nullptr;
  char entry[kPathSize];
  if (spconv_store_lookup(directory.c_str(), key.str().c_str(), entry,
                          kPathSize) != SPCONV_STORE_OK)
    return nullptr;
  auto object = MemoryBuffer::getFile(pathIn(entry, kKernelObjectFile),
                                      /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  return object ? std::move(*object) : nullptr;
}

static Error ioError(const Twine &what) {
  return createStringError(std::make_error_code(std::errc::io_error), what);
}

/// Writes `text` to `file`.
static Error writeFile(StringRef file, StringRef text) {
  std::error_code ec;
  raw_fd_ostream os(file, ec);
  if (ec)
    return ioError("cannot write " + file + ": " + ec.message());
  os << text;
  return Error::success();
}

Error CompileCache::publish(StringRef key,
                            function_ref<Error(StringRef)> write) const {
  uint64_t maxBytes;
  if (spconv_store_size_limit(&maxBytes) != SPCONV_STORE_OK)
    return ioError(spconv_store_last_error());
  char staging[kPathSize];
  if (spconv_store_begin(directory.c_str(), staging, kPathSize) !=
      SPCONV_STORE_OK)
    return ioError(spconv_store_last_error());
  if (Error error = write(staging)) {
    spconv_store_abandon(staging);
    return error;
  }
  char entry[kPathSize];
  if (spconv_store_publish(directory.c_str(), key.str().c_str(), staging,
                           maxBytes, entry, kPathSize) != SPCONV_STORE_OK) {
    Error error = ioError(spconv_store_last_error());
    spconv_store_abandon(staging);
    return error;
  }
  return Error::success();
}

Error CompileCache::store(StringRef key,
                          function_ref<void(StringRef)> writeObject,
                          ArrayRef<std::string> profileLabels,
                          ArrayRef<std::string> kernelKeys) const {
  return publish(key, [&](StringRef staging) -> Error {
    std::string objectFile = pathIn(staging, kObjectFile);
    writeObject(objectFile);
    uint64_t size = 0;
    if (sys::fs::file_size(objectFile, size) || size == 0)
      return ioError("the object was not written to " + objectFile);
    std::string labels, kernels;
    for (const std::string &label : profileLabels)
      (labels += label) += '\0';
    for (const std::string &kernel : kernelKeys)
      (kernels += kernel) += '\n';
    if (Error error = writeFile(pathIn(staging, kLabelsFile), labels))
      return error;
    return writeFile(pathIn(staging, kKernelsFile), kernels);
  });
}

Error CompileCache::storeKernel(StringRef key, StringRef object) const {
  return publish(key, [&](StringRef staging) -> Error {
    if (object.empty())
      return ioError("an empty object for kernel entry " + key);
    return writeFile(pathIn(staging, kKernelObjectFile), object);
  });
}

void CompileCache::remove(StringRef key) const {
  if (enabled())
    spconv_store_remove(directory.c_str(), key.str().c_str());
}
