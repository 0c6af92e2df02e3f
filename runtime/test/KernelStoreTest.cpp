//===- KernelStoreTest.cpp - The kernel store on disk ---------------------===//

#include "spconv-rt/KernelStore.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace {

constexpr size_t kPath = 4096;

/// A fresh store root, removed at the end of the test.
class KernelStore : public ::testing::Test {
protected:
  void SetUp() override {
    std::string model = (fs::temp_directory_path() / "kernel-store-XXXXXX");
    ASSERT_NE(mkdtemp(model.data()), nullptr);
    root = model;
  }
  void TearDown() override { fs::remove_all(root); }

  /// Publishes `files` (name -> contents) as `key`; the entry's directory.
  std::string
  publish(const std::string &key,
          const std::vector<std::pair<std::string, std::string>> &files,
          uint64_t maxBytes = UINT64_MAX) {
    char staging[kPath], entry[kPath];
    EXPECT_EQ(spconv_store_begin(root.c_str(), staging, kPath),
              SPCONV_STORE_OK);
    for (const auto &[name, contents] : files)
      std::ofstream(fs::path(staging) / name, std::ios::binary) << contents;
    int status = spconv_store_publish(root.c_str(), key.c_str(), staging,
                                      maxBytes, entry, kPath);
    EXPECT_EQ(status, SPCONV_STORE_OK) << spconv_store_last_error();
    return status == SPCONV_STORE_OK ? entry : "";
  }

  int lookup(const std::string &key, std::string *dir = nullptr) {
    char path[kPath];
    int status = spconv_store_lookup(root.c_str(), key.c_str(), path, kPath);
    if (dir && status == SPCONV_STORE_OK)
      *dir = path;
    return status;
  }

  /// Sets the entry's last use to `seconds` after the epoch.
  void setLastUse(const std::string &key, int64_t seconds) {
    struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
    fs::path manifest = fs::path(root) / "kernels-v1" / key / "MANIFEST";
    ASSERT_EQ(::utimensat(AT_FDCWD, manifest.c_str(), times, 0), 0);
  }

  std::vector<std::string> keys() {
    std::vector<std::string> result;
    EXPECT_EQ(spconv_store_list(
                  root.c_str(),
                  [](const SpConvStoreEntry *entry, void *data) {
                    static_cast<std::vector<std::string> *>(data)->push_back(
                        entry->key);
                    return 0;
                  },
                  &result),
              SPCONV_STORE_OK);
    return result;
  }

  static std::string read(const fs::path &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream contents;
    contents << in.rdbuf();
    return contents.str();
  }

  std::string root;
};

TEST_F(KernelStore, PublishedEntryIsFoundWithItsFiles) {
  EXPECT_EQ(lookup("jit-00ff"), SPCONV_STORE_MISS);
  std::string entry =
      publish("jit-00ff", {{"module.o", "object bytes"}, {"labels", ""}});
  std::string found;
  ASSERT_EQ(lookup("jit-00ff", &found), SPCONV_STORE_OK);
  EXPECT_EQ(found, entry);
  EXPECT_EQ(read(fs::path(found) / "module.o"), "object bytes");
  EXPECT_EQ(read(fs::path(found) / "labels"), "");
  // Nothing is left behind in the staging area.
  EXPECT_TRUE(fs::is_empty(fs::path(root) / "staging"));
}

TEST_F(KernelStore, RejectsMalformedKeysAndForeignStagingDirectories) {
  char path[kPath];
  for (const char *key : {"", "UPPER", "a/b", "..", "key with space"}) {
    EXPECT_EQ(spconv_store_lookup(root.c_str(), key, path, kPath),
              SPCONV_STORE_ERROR)
        << key;
    EXPECT_NE(std::string(spconv_store_last_error())
                  .find("invalid kernel "
                        "store key"),
              std::string::npos);
  }
  EXPECT_EQ(spconv_store_lookup(root.c_str(), std::string(129, 'a').c_str(),
                                path, kPath),
            SPCONV_STORE_ERROR);
  EXPECT_EQ(spconv_store_lookup("", "k", path, kPath), SPCONV_STORE_ERROR);

  // Only a directory from spconv_store_begin can become an entry.
  fs::path elsewhere = fs::path(root) / "elsewhere";
  fs::create_directories(elsewhere);
  EXPECT_EQ(spconv_store_publish(root.c_str(), "k", elsewhere.c_str(),
                                 UINT64_MAX, path, kPath),
            SPCONV_STORE_ERROR);
  EXPECT_NE(
      std::string(spconv_store_last_error()).find("is not a staging directory"),
      std::string::npos);

  // An entry holds files only.
  char staging[kPath];
  ASSERT_EQ(spconv_store_begin(root.c_str(), staging, kPath), SPCONV_STORE_OK);
  fs::create_directories(fs::path(staging) / "sub");
  EXPECT_EQ(
      spconv_store_publish(root.c_str(), "k", staging, UINT64_MAX, path, kPath),
      SPCONV_STORE_ERROR);
  EXPECT_NE(std::string(spconv_store_last_error()).find("not a regular file"),
            std::string::npos);
  EXPECT_EQ(spconv_store_abandon(staging), SPCONV_STORE_OK);
  EXPECT_FALSE(fs::exists(staging));

  // A path that does not fit the caller's buffer is an error, not a cut.
  publish("k", {{"f", "x"}});
  EXPECT_EQ(spconv_store_lookup(root.c_str(), "k", path, 4),
            SPCONV_STORE_ERROR);
}

TEST_F(KernelStore, DamagedEntryIsAMissAndIsRemoved) {
  std::string entry = publish("lib-1", {{"libnet.so", "0123456789"}});
  // Truncated, as by a full disk or a crash.
  fs::resize_file(fs::path(entry) / "libnet.so", 4);
  EXPECT_EQ(lookup("lib-1"), SPCONV_STORE_MISS);
  EXPECT_FALSE(fs::exists(entry));

  entry = publish("lib-2", {{"libnet.so", "0123456789"}});
  fs::remove(fs::path(entry) / "MANIFEST");
  EXPECT_EQ(lookup("lib-2"), SPCONV_STORE_MISS);
  EXPECT_FALSE(fs::exists(entry));

  // A damaged entry is replaced by the next publication.
  publish("lib-2", {{"libnet.so", "fresh"}});
  std::string found;
  ASSERT_EQ(lookup("lib-2", &found), SPCONV_STORE_OK);
  EXPECT_EQ(read(fs::path(found) / "libnet.so"), "fresh");
}

TEST_F(KernelStore, FirstPublisherOfAKeyWins) {
  char first[kPath], second[kPath], entry[kPath];
  ASSERT_EQ(spconv_store_begin(root.c_str(), first, kPath), SPCONV_STORE_OK);
  ASSERT_EQ(spconv_store_begin(root.c_str(), second, kPath), SPCONV_STORE_OK);
  std::ofstream(fs::path(first) / "f") << "first";
  std::ofstream(fs::path(second) / "f") << "second";
  ASSERT_EQ(
      spconv_store_publish(root.c_str(), "k", first, UINT64_MAX, entry, kPath),
      SPCONV_STORE_OK);
  ASSERT_EQ(
      spconv_store_publish(root.c_str(), "k", second, UINT64_MAX, entry, kPath),
      SPCONV_STORE_OK);
  EXPECT_EQ(read(fs::path(entry) / "f"), "first");
  EXPECT_FALSE(fs::exists(second));
}

TEST_F(KernelStore, ConcurrentWritersAndReadersSeeWholeEntries) {
  // Eight writers publish the same keys while readers look them up: every
  // lookup finds a whole entry or none, and each key ends with one entry.
  constexpr int kWriters = 8, kKeys = 16;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < kKeys; ++k) {
        std::string key = "key-" + std::to_string(k);
        std::string payload(1000 + k, static_cast<char>('a' + k));
        char staging[kPath], entry[kPath];
        if (spconv_store_begin(root.c_str(), staging, kPath) != SPCONV_STORE_OK)
          ++failures;
        std::ofstream(fs::path(staging) / "payload") << payload;
        if (spconv_store_publish(root.c_str(), key.c_str(), staging, UINT64_MAX,
                                 entry, kPath) != SPCONV_STORE_OK ||
            read(fs::path(entry) / "payload") != payload)
          ++failures;
        char found[kPath];
        std::string other = "key-" + std::to_string((k + t) % kKeys);
        int status =
            spconv_store_lookup(root.c_str(), other.c_str(), found, kPath);
        if (status == SPCONV_STORE_ERROR ||
            (status == SPCONV_STORE_OK &&
             read(fs::path(found) / "payload").size() !=
                 1000 + size_t((k + t) % kKeys)))
          ++failures;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(keys().size(), size_t(kKeys));
  EXPECT_TRUE(fs::is_empty(fs::path(root) / "staging"));
}

TEST_F(KernelStore, EvictsLeastRecentlyUsedFirst) {
  publish("a", {{"f", std::string(1000, 'a')}});
  publish("b", {{"f", std::string(1000, 'b')}});
  publish("c", {{"f", std::string(1000, 'c')}});
  setLastUse("a", 100);
  setLastUse("b", 200);
  setLastUse("c", 300);
  EXPECT_EQ(keys(), (std::vector<std::string>{"a", "b", "c"}));
  // A lookup makes "a" the most recently used.
  ASSERT_EQ(lookup("a"), SPCONV_STORE_OK);
  EXPECT_EQ(keys(), (std::vector<std::string>{"b", "c", "a"}));

  uint64_t entryBytes = 0;
  spconv_store_list(
      root.c_str(),
      [](const SpConvStoreEntry *entry, void *data) {
        *static_cast<uint64_t *>(data) = entry->bytes;
        return 1;
      },
      &entryBytes);
  EXPECT_GT(entryBytes, 1000u); // the file and its MANIFEST
  uint64_t freed = 0;
  ASSERT_EQ(spconv_store_evict(root.c_str(), 2 * entryBytes, &freed),
            SPCONV_STORE_OK);
  EXPECT_EQ(freed, entryBytes);
  EXPECT_EQ(keys(), (std::vector<std::string>{"c", "a"}));
  EXPECT_EQ(lookup("b"), SPCONV_STORE_MISS);

  // Publishing evicts too, but never the entry it publishes.
  publish("d", {{"f", std::string(5000, 'd')}}, /*maxBytes=*/0);
  EXPECT_EQ(keys(), (std::vector<std::string>{"d"}));
  ASSERT_EQ(spconv_store_evict(root.c_str(), 0, nullptr), SPCONV_STORE_OK);
  EXPECT_TRUE(keys().empty());
}

TEST_F(KernelStore, EvictionRemovesAbandonedStagingOnly) {
  char abandoned[kPath], fresh[kPath];
  ASSERT_EQ(spconv_store_begin(root.c_str(), abandoned, kPath),
            SPCONV_STORE_OK);
  ASSERT_EQ(spconv_store_begin(root.c_str(), fresh, kPath), SPCONV_STORE_OK);
  // Two days old: its writer crashed.
  int64_t old = static_cast<int64_t>(std::time(nullptr)) - 2 * 24 * 3600;
  struct timespec times[2] = {{old, 0}, {old, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, abandoned, times, 0), 0);
  ASSERT_EQ(spconv_store_evict(root.c_str(), UINT64_MAX, nullptr),
            SPCONV_STORE_OK);
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_TRUE(fs::exists(fresh));
}

TEST_F(KernelStore, RemoveDropsOneEntry) {
  publish("x", {{"f", "1"}});
  publish("y", {{"f", "2"}});
  EXPECT_EQ(spconv_store_remove(root.c_str(), "x"), SPCONV_STORE_OK);
  EXPECT_EQ(spconv_store_remove(root.c_str(), "x"), SPCONV_STORE_MISS);
  EXPECT_EQ(keys(), (std::vector<std::string>{"y"}));
}

/// Sets an environment variable for one scope.
struct ScopedEnv {
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (saved)
      setenv(name, saved->c_str(), 1);
    else
      unsetenv(name);
  }
  const char *name;
  std::optional<std::string> saved;
};

TEST(KernelStoreEnvironment, SizeLimit) {
  uint64_t bytes = 0;
  {
    ScopedEnv env("SPCONV_MLIR_CACHE_SIZE", nullptr);
    ASSERT_EQ(spconv_store_size_limit(&bytes), SPCONV_STORE_OK);
    EXPECT_EQ(bytes, SPCONV_STORE_DEFAULT_SIZE_LIMIT);
  }
  for (auto [text, expected] : std::vector<std::pair<const char *, uint64_t>>{
           {"0", 0},
           {"123", 123},
           {"4K", 4096},
           {"5m", 5u << 20},
           {"3G", uint64_t(3) << 30}}) {
    ScopedEnv env("SPCONV_MLIR_CACHE_SIZE", text);
    ASSERT_EQ(spconv_store_size_limit(&bytes), SPCONV_STORE_OK) << text;
    EXPECT_EQ(bytes, expected) << text;
  }
  for (const char *text : {"", "G", "1.5G", "10T", "1GB", "-1",
                           "99999999999999999999", "17179869184G"}) {
    ScopedEnv env("SPCONV_MLIR_CACHE_SIZE", text);
    EXPECT_EQ(spconv_store_size_limit(&bytes), SPCONV_STORE_ERROR) << text;
    EXPECT_NE(std::string(spconv_store_last_error()).find("is not a size"),
              std::string::npos);
  }
}

TEST(KernelStoreEnvironment, DefaultRoot) {
  char path[kPath];
  auto root = [&] {
    EXPECT_EQ(spconv_store_default_root(path, kPath), SPCONV_STORE_OK);
    return std::string(path);
  };
  ScopedEnv home("HOME", "/home/u");
  {
    ScopedEnv dir("SPCONV_MLIR_CACHE_DIR", "/kernels");
    EXPECT_EQ(root(), "/kernels");
  }
  {
    ScopedEnv dir("SPCONV_MLIR_CACHE_DIR", "off");
    EXPECT_EQ(root(), "");
  }
  {
    ScopedEnv dir("SPCONV_MLIR_CACHE_DIR", "");
    EXPECT_EQ(root(), "");
  }
  ScopedEnv dir("SPCONV_MLIR_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(root(), "/xdg/spconv-mlir");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(root(), "/home/u/.cache/spconv-mlir");
}

} // namespace
