//===- CompileCache.cpp - spconv-run's cache of compiled code -------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "CompileCache.h"

#include "spconv-rt/SpConvRuntime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdint>

using namespace llvm;
using namespace spconv::run;

std::string CompileCache::defaultDirectory() {
  if (std::optional<std::string> dir = sys::Process::GetEnv("SPCONV_CACHE_DIR"))
    return *dir == "off" ? std::string() : *dir;
  SmallString<256> path;
  if (std::optional<std::string> xdg = sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty())
    path = *xdg;
  else if (std::optional<std::string> home = sys::Process::GetEnv("HOME");
           home && !home->empty())
    sys::path::append(path, *home, ".cache");
  else
    return std::string();
  sys::path::append(path, "spconv-mlir");
  return std::string(path);
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

std::string CompileCache::key(ArrayRef<StringRef> parts) {
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
  return utohexstr(hash.high64, /*LowerCase=*/true, /*Width=*/16) +
         utohexstr(hash.low64, /*LowerCase=*/true, /*Width=*/16);
}

std::string CompileCache::path(StringRef key, StringRef extension) const {
  SmallString<256> result(directory);
  sys::path::append(result, key + extension);
  return std::string(result);
}

std::optional<CachedModule> CompileCache::lookup(StringRef key) const {
  if (!enabled())
    return std::nullopt;
  // The labels go in first and the object last: an object means a whole
  // entry.
  auto object = MemoryBuffer::getFile(path(key, ".o"), /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  auto labels = MemoryBuffer::getFile(path(key, ".labels"));
  if (!object || !labels)
    return std::nullopt;
  CachedModule entry;
  entry.object = std::move(*object);
  SmallVector<StringRef> split;
  StringRef text = (*labels)->getBuffer();
  if (!text.empty())
    text.drop_back().split(split, '\0');
  for (StringRef label : split)
    entry.profileLabels.push_back(label.str());
  return entry;
}

Expected<std::string> CompileCache::temporaryPath() const {
  if (std::error_code ec = sys::fs::create_directories(directory))
    return createStringError(ec, "cannot create the cache directory " +
                                     directory + ": " + ec.message());
  SmallString<256> model(directory);
  sys::path::append(model, "tmp-%%%%%%%%%%%%");
  int fd;
  SmallString<256> result;
  if (std::error_code ec = sys::fs::createUniqueFile(model, fd, result))
    return createStringError(ec, "cannot write to the cache directory " +
                                     directory + ": " + ec.message());
  sys::fs::closeFile(fd);
  return std::string(result);
}

Error CompileCache::store(StringRef key,
                          function_ref<void(StringRef)> writeObject,
                          ArrayRef<std::string> profileLabels) const {
  Expected<std::string> objectFile = temporaryPath();
  if (!objectFile)
    return objectFile.takeError();
  Expected<std::string> labelsFile = temporaryPath();
  if (!labelsFile) {
    sys::fs::remove(*objectFile);
    return labelsFile.takeError();
  }
  auto fail = [&](std::error_code ec, const Twine &what) {
    sys::fs::remove(*objectFile);
    sys::fs::remove(*labelsFile);
    return createStringError(ec, what);
  };
  writeObject(*objectFile);
  uint64_t size = 0;
  if (sys::fs::file_size(*objectFile, size) || size == 0)
    return fail(std::make_error_code(std::errc::io_error),
                "the object was not written to " + *objectFile);
  {
    std::error_code ec;
    raw_fd_ostream os(*labelsFile, ec);
    if (ec)
      return fail(ec, "cannot write " + *labelsFile);
    for (const std::string &label : profileLabels)
      os << label << '\0';
  }
  // Labels first, the object last (lookup wants both); renames replace
  // atomically: a reader sees the old entry or the new.
  if (std::error_code ec = sys::fs::rename(*labelsFile, path(key, ".labels")))
    return fail(ec, "cannot store a cache entry: " + ec.message());
  if (std::error_code ec = sys::fs::rename(*objectFile, path(key, ".o")))
    return fail(ec, "cannot store a cache entry: " + ec.message());
  return Error::success();
}
