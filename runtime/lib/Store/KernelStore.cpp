//===- KernelStore.cpp - spconv-mlir's store of compiled code -------------===//
//
// Part of the spconv-mlir project.
//
// The layout under a root:
//
//   kernels-v1/<key>/MANIFEST   the entry's files and sizes; its mtime is the
//   kernels-v1/<key>/<file>...  entry's last use
//   staging/new-XXXXXX/         entries being written
//   staging/removed-XXXXXX/     entries being deleted
//
// No locks: every change of what kernels-v1 holds is one rename(2), which is
// atomic, and every step tolerates another process having got there first.
//
//===----------------------------------------------------------------------===//

#include "spconv-rt/KernelStore.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

thread_local std::string lastError;

constexpr const char *kManifest = "MANIFEST";
constexpr const char *kManifestHeader = "spconv-mlir kernel store entry v1\n";
// Staging directories untouched for this long belong to crashed writers.
constexpr int64_t kAbandonedAfterSeconds = 24 * 60 * 60;

int fail(const std::string &message) {
  lastError = message;
  return SPCONV_STORE_ERROR;
}

int copyOut(const std::string &value, char *out, size_t size) {
  if (!out || value.size() + 1 > size)
    return fail("a path of " + std::to_string(value.size()) +
                " characters does not fit the caller's buffer of " +
                std::to_string(size) + " bytes");
  std::memcpy(out, value.c_str(), value.size() + 1);
  return SPCONV_STORE_OK;
}

bool validKey(const char *key) {
  if (!key)
    return false;
  size_t length = std::strlen(key);
  if (length == 0 || length > 128)
    return false;
  return std::all_of(key, key + length, [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' ||
           c == '-';
  });
}

int badKey(const char *key) {
  return fail(std::string("invalid kernel store key '") + (key ? key : "") +
              "': 1 to 128 characters of [0-9a-z_-]");
}

int badRoot() { return fail("no kernel store root given"); }

fs::path entriesDir(const char *root) {
  return fs::path(root) /
         ("kernels-v" + std::to_string(SPCONV_STORE_FORMAT_VERSION));
}
fs::path stagingDir(const char *root) { return fs::path(root) / "staging"; }

/// A fresh directory `<prefix>XXXXXX` under the root's staging directory.
bool makeStagingDir(const char *root, const char *prefix, fs::path &result,
                    std::string &error) {
  std::error_code ec;
  fs::path parent = stagingDir(root);
  fs::create_directories(parent, ec);
  if (ec) {
    error = "cannot create " + parent.string() + ": " + ec.message();
    return false;
  }
  std::string model = (parent / prefix).string() + "XXXXXX";
  if (!mkdtemp(model.data())) {
    error = "cannot create a directory in " + parent.string() + ": " +
            std::strerror(errno);
    return false;
  }
  // mkdtemp makes it 0700; entries are ordinary files of the user's cache.
  ::chmod(model.c_str(), 0755);
  result = model;
  return true;
}

/// Moves `dir` out of sight (one rename) and deletes it. False if it was
/// not there (another process removed it first).
bool removeDir(const char *root, const fs::path &dir) {
  fs::path trash;
  std::string error;
  if (!makeStagingDir(root, "removed-", trash, error))
    return false;
  std::error_code ec, ignored;
  // Onto the empty directory just made: rename(2) replaces it.
  fs::rename(dir, trash, ec);
  fs::remove_all(trash, ignored);
  return !ec;
}

/// The mtime of `path` in nanoseconds since the epoch, -1 if none.
int64_t modificationTime(const fs::path &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return -1;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 +
         st.st_mtim.tv_nsec;
}

/// Whether the entry in `dir` is whole: its MANIFEST names files of the
/// sizes it says. `bytes` receives the entry's size, MANIFEST included.
bool wholeEntry(const fs::path &dir, uint64_t &bytes) {
  fs::path manifest = dir / kManifest;
  FILE *file = std::fopen(manifest.c_str(), "r");
  if (!file)
    return false;
  bool whole = true;
  char line[512];
  if (!std::fgets(line, sizeof(line), file) ||
      std::strcmp(line, kManifestHeader) != 0)
    whole = false;
  std::error_code ec;
  bytes = fs::file_size(manifest, ec);
  if (ec)
    whole = false;
  while (whole && std::fgets(line, sizeof(line), file)) {
    char *end = nullptr;
    errno = 0;
    unsigned long long size = std::strtoull(line, &end, 10);
    if (errno || end == line || *end != ' ') {
      whole = false;
      break;
    }
    std::string name(end + 1);
    if (name.empty() || name.back() != '\n') {
      whole = false;
      break;
    }
    name.pop_back();
    uint64_t actual = fs::file_size(dir / name, ec);
    if (ec || actual != size || name.find('/') != std::string::npos) {
      whole = false;
      break;
    }
    bytes += actual;
  }
  std::fclose(file);
  return whole;
}

/// Writes the MANIFEST of the files in `staging`.
bool writeManifest(const fs::path &staging, std::string &error) {
  std::vector<std::pair<std::string, uint64_t>> files;
  std::error_code ec;
  for (fs::directory_iterator it(staging, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) {
      error = "'" + name + "' in " + staging.string() +
              " is not a regular file: an entry holds files only";
      return false;
    }
    if (name == kManifest || name.find('\n') != std::string::npos) {
      error = "'" + name + "' is not a valid file name in an entry";
      return false;
    }
    uint64_t size = it->file_size(ec);
    if (ec)
      break;
    files.emplace_back(name, size);
  }
  if (ec) {
    error = "cannot read " + staging.string() + ": " + ec.message();
    return false;
  }
  std::sort(files.begin(), files.end());
  fs::path manifest = staging / kManifest;
  FILE *file = std::fopen(manifest.c_str(), "w");
  if (!file) {
    error = "cannot write " + manifest.string() + ": " + std::strerror(errno);
    return false;
  }
  bool ok = std::fputs(kManifestHeader, file) >= 0;
  for (const auto &[name, size] : files)
    ok = ok &&
         std::fprintf(file, "%llu %s\n", static_cast<unsigned long long>(size),
                      name.c_str()) > 0;
  ok = (std::fclose(file) == 0) && ok;
  if (!ok)
    error = "cannot write " + manifest.string() + ": " + std::strerror(errno);
  return ok;
}

struct Entry {
  std::string key;
  uint64_t bytes;
  int64_t lastUsed; // nanoseconds since the epoch
};

/// The whole entries, least recently used first. Damaged ones are removed.
std::vector<Entry> wholeEntries(const char *root) {
  std::vector<Entry> entries;
  std::vector<fs::path> damaged;
  std::error_code ec;
  for (fs::directory_iterator it(entriesDir(root), ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string key = it->path().filename().string();
    if (!validKey(key.c_str()))
      continue;
    uint64_t bytes = 0;
    int64_t lastUsed = modificationTime(it->path() / kManifest);
    if (lastUsed < 0 || !wholeEntry(it->path(), bytes))
      damaged.push_back(it->path());
    else
      entries.push_back({key, bytes, lastUsed});
  }
  for (const fs::path &dir : damaged)
    removeDir(root, dir);
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.lastUsed != b.lastUsed ? a.lastUsed < b.lastUsed : a.key < b.key;
  });
  return entries;
}

void removeAbandonedStaging(const char *root) {
  int64_t now = static_cast<int64_t>(std::time(nullptr)) * 1000000000;
  std::error_code ec;
  std::vector<fs::path> abandoned;
  for (fs::directory_iterator it(stagingDir(root), ec), end; !ec && it != end;
       it.increment(ec)) {
    int64_t time = modificationTime(it->path());
    if (time >= 0 && now - time > kAbandonedAfterSeconds * 1000000000)
      abandoned.push_back(it->path());
  }
  for (const fs::path &dir : abandoned)
    fs::remove_all(dir, ec);
}

uint64_t evictTo(const char *root, uint64_t maxBytes, const char *keep) {
  removeAbandonedStaging(root);
  std::vector<Entry> entries = wholeEntries(root);
  uint64_t total = 0;
  for (const Entry &entry : entries)
    total += entry.bytes;
  uint64_t freed = 0;
  for (const Entry &entry : entries) {
    if (total <= maxBytes)
      break;
    if (keep && entry.key == keep)
      continue;
    fs::path dir = entriesDir(root) / entry.key;
    int64_t lastUsed = modificationTime(dir / kManifest);
    if (lastUsed < 0) { // another process removed it
      total -= entry.bytes;
      continue;
    }
    if (lastUsed != entry.lastUsed) // used since the scan: keep it
      continue;
    if (removeDir(root, dir))
      freed += entry.bytes;
    total -= entry.bytes;
  }
  return freed;
}

int lookup(const char *root, const char *key, fs::path &dir) {
  dir = entriesDir(root) / key;
  uint64_t bytes;
  if (!wholeEntry(dir, bytes)) {
    std::error_code ec;
    if (fs::exists(dir, ec))
      removeDir(root, dir);
    return SPCONV_STORE_MISS;
  }
  // Marks the entry used: eviction goes by the MANIFEST's mtime.
  ::utimensat(AT_FDCWD, (dir / kManifest).c_str(), nullptr, 0);
  return SPCONV_STORE_OK;
}

} // namespace

extern "C" {

const char *spconv_store_last_error(void) { return lastError.c_str(); }

int spconv_store_default_root(char *path, size_t size) {
  std::string root;
  if (const char *dir = std::getenv("SPCONV_MLIR_CACHE_DIR")) {
    if (std::strcmp(dir, "off") != 0)
      root = dir;
  } else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    root = (fs::path(xdg) / "spconv-mlir").string();
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    root = (fs::path(home) / ".cache" / "spconv-mlir").string();
  }
  return copyOut(root, path, size);
}

int spconv_store_parse_size(const char *text, uint64_t *bytes) {
  if (!text || !bytes)
    return fail("spconv_store_parse_size: no size or no result pointer");
  auto malformed = [&] {
    return fail(std::string("'") + text +
                "' is not a size: a number of bytes, optionally followed by "
                "K, M or G (KiB, MiB, GiB)");
  };
  uint64_t value = 0;
  const char *c = text;
  if (*c < '0' || *c > '9')
    return malformed();
  for (; *c >= '0' && *c <= '9'; ++c) {
    if (value > (UINT64_MAX - 9) / 10)
      return malformed();
    value = value * 10 + static_cast<uint64_t>(*c - '0');
  }
  unsigned shift = 0;
  switch (*c) {
  case '\0':
    break;
  case 'K':
  case 'k':
    shift = 10;
    break;
  case 'M':
  case 'm':
    shift = 20;
    break;
  case 'G':
  case 'g':
    shift = 30;
    break;
  default:
    return malformed();
  }
  if (shift && (c[1] != '\0' || value > (UINT64_MAX >> shift)))
    return malformed();
  *bytes = value << shift;
  return SPCONV_STORE_OK;
}

int spconv_store_size_limit(uint64_t *bytes) {
  if (!bytes)
    return fail("spconv_store_size_limit: no result pointer");
  const char *text = std::getenv("SPCONV_MLIR_CACHE_SIZE");
  if (!text) {
    *bytes = SPCONV_STORE_DEFAULT_SIZE_LIMIT;
    return SPCONV_STORE_OK;
  }
  if (spconv_store_parse_size(text, bytes) != SPCONV_STORE_OK)
    return fail("SPCONV_MLIR_CACHE_SIZE=" + lastError);
  return SPCONV_STORE_OK;
}

int spconv_store_lookup(const char *root, const char *key, char *path,
                        size_t size) {
  if (!root || !*root)
    return badRoot();
  if (!validKey(key))
    return badKey(key);
  fs::path dir;
  int status = lookup(root, key, dir);
  if (status != SPCONV_STORE_OK)
    return status;
  return copyOut(dir.string(), path, size);
}

int spconv_store_begin(const char *root, char *path, size_t size) {
  if (!root || !*root)
    return badRoot();
  fs::path staging;
  std::string error;
  if (!makeStagingDir(root, "new-", staging, error))
    return fail(error);
  int status = copyOut(staging.string(), path, size);
  if (status != SPCONV_STORE_OK) {
    std::error_code ec;
    fs::remove_all(staging, ec);
  }
  return status;
}

int spconv_store_publish(const char *root, const char *key, const char *staging,
                         uint64_t maxBytes, char *path, size_t size) {
  if (!root || !*root)
    return badRoot();
  if (!validKey(key))
    return badKey(key);
  std::error_code ec;
  fs::path given = fs::path(staging ? staging : "").lexically_normal();
  if (!given.has_filename())
    given = given.parent_path();
  if (!staging || given.parent_path() != stagingDir(root).lexically_normal() ||
      !fs::is_directory(given, ec))
    return fail(std::string("'") + (staging ? staging : "") +
                "' is not a staging directory of the kernel store at " + root);
  std::string error;
  if (!writeManifest(given, error))
    return fail(error);
  fs::path entries = entriesDir(root);
  fs::create_directories(entries, ec);
  if (ec)
    return fail("cannot create " + entries.string() + ": " + ec.message());
  fs::path dir = entries / key;
  // A rename onto a whole entry fails (the directory is not empty): another
  // process published the key first, and its entry is kept. If that entry
  // is damaged or vanishes meanwhile, the lookup removes it and we retry.
  for (int attempt = 0; attempt < 3; ++attempt) {
    fs::rename(given, dir, ec);
    if (!ec) {
      evictTo(root, maxBytes, key);
      return copyOut(dir.string(), path, size);
    }
    if (ec != std::errc::directory_not_empty && ec != std::errc::file_exists)
      return fail("cannot publish " + dir.string() + ": " + ec.message());
    if (lookup(root, key, dir) == SPCONV_STORE_OK) {
      fs::remove_all(given, ec);
      return copyOut(dir.string(), path, size);
    }
  }
  return fail("cannot publish " + dir.string() +
              ": other processes keep replacing it");
}

int spconv_store_abandon(const char *staging) {
  if (!staging)
    return fail("spconv_store_abandon: no staging directory");
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (ec)
    return fail("cannot remove " + std::string(staging) + ": " + ec.message());
  return SPCONV_STORE_OK;
}

int spconv_store_remove(const char *root, const char *key) {
  if (!root || !*root)
    return badRoot();
  if (!validKey(key))
    return badKey(key);
  std::error_code ec;
  fs::path dir = entriesDir(root) / key;
  if (!fs::exists(dir, ec))
    return SPCONV_STORE_MISS;
  return removeDir(root, dir) ? SPCONV_STORE_OK : SPCONV_STORE_MISS;
}

int spconv_store_evict(const char *root, uint64_t maxBytes, uint64_t *freed) {
  if (!root || !*root)
    return badRoot();
  uint64_t bytes = evictTo(root, maxBytes, nullptr);
  if (freed)
    *freed = bytes;
  return SPCONV_STORE_OK;
}

int spconv_store_list(const char *root,
                      int (*visit)(const SpConvStoreEntry *, void *),
                      void *data) {
  if (!root || !*root)
    return badRoot();
  if (!visit)
    return fail("spconv_store_list: no visitor");
  for (const Entry &entry : wholeEntries(root)) {
    SpConvStoreEntry view = {entry.key.c_str(), entry.bytes,
                             entry.lastUsed / 1000000000};
    if (visit(&view, data))
      break;
  }
  return SPCONV_STORE_OK;
}

} // extern "C"
