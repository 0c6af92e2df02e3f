/*===- KernelStore.h - The kernel store of spconv-mlir ------------*- C -*-===*\
|*                                                                            *|
|* One store on disk for the code spconv-mlir compiles, shared by every tool  *|
|* that compiles or loads it: spconv-run's objects, the Python front end's    *|
|* and the PyTorch ops' libraries (libspconv_store; docs/Compiler.md, "The    *|
|* kernel store").                                                            *|
|*                                                                            *|
|*   - content-addressed: an entry's key is a hash, made by its producer, of  *|
|*     everything its code depends on; the store never interprets it;         *|
|*   - an entry is a directory of files, written in a staging directory and   *|
|*     published by one rename, so a process sees a whole entry or none;      *|
|*     two processes that publish the same key keep the first one;            *|
|*   - each entry lists its files and their sizes (MANIFEST): an entry that   *|
|*     does not match its list is damaged, removed, and looked up as a miss;  *|
|*   - bounded: publishing evicts the least recently used entries (a lookup   *|
|*     marks an entry used) until the store fits its size limit;              *|
|*   - safe under concurrent processes without locks: removal renames an     *|
|*     entry away before deleting it, and files already opened or mapped      *|
|*     stay readable.                                                         *|
|*                                                                            *|
|* Every function returns an SpConvStoreStatus and never aborts or throws;    *|
|* on SPCONV_STORE_ERROR, spconv_store_last_error() says why. Paths are       *|
|* written to caller buffers, NUL-terminated (an error if they do not fit).   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SPCONV_RT_KERNELSTORE_H
#define SPCONV_RT_KERNELSTORE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define SPCONV_STORE_EXPORT __declspec(dllexport)
#else
#define SPCONV_STORE_EXPORT __attribute__((visibility("default")))
#endif

/* The on-disk format: entries live in <root>/kernels-v<format>/<key>/. A
 * change that older readers would misread bumps it. */
#define SPCONV_STORE_FORMAT_VERSION 1

/* The size limit when $SPCONV_MLIR_CACHE_SIZE is unset: 2 GiB. */
#define SPCONV_STORE_DEFAULT_SIZE_LIMIT (UINT64_C(2) << 30)

#ifdef __cplusplus
extern "C" {
#endif

enum SpConvStoreStatus {
  SPCONV_STORE_OK = 0,
  /* No whole entry under the key (none, or a damaged one, now removed). */
  SPCONV_STORE_MISS = 1,
  SPCONV_STORE_ERROR = -1,
};

/* Message of the last SPCONV_STORE_ERROR on the calling thread ("" if
 * none); valid until the next store call on this thread. */
SPCONV_STORE_EXPORT const char *spconv_store_last_error(void);

/* The store's root unless told otherwise: $SPCONV_MLIR_CACHE_DIR, else
 * $XDG_CACHE_HOME/spconv-mlir, else $HOME/.cache/spconv-mlir. Writes "" when
 * the store is off ($SPCONV_MLIR_CACHE_DIR empty or "off", or no home). */
SPCONV_STORE_EXPORT int spconv_store_default_root(char *path, size_t size);

/* Parses a size: a number of bytes, optionally followed by K, M or G (KiB,
 * MiB, GiB). A malformed or overflowing size is an error. */
SPCONV_STORE_EXPORT int spconv_store_parse_size(const char *text,
                                                uint64_t *bytes);

/* The size limit in bytes: $SPCONV_MLIR_CACHE_SIZE (as parsed by
 * spconv_store_parse_size), else SPCONV_STORE_DEFAULT_SIZE_LIMIT. */
SPCONV_STORE_EXPORT int spconv_store_size_limit(uint64_t *bytes);

/* Keys are 1 to 128 characters of [0-9a-z_-]: a producer's prefix and a
 * hash ("jit-1f0c...", "lib-77ab..."). */

/* Looks up `key` in the store at `root`. On SPCONV_STORE_OK writes the
 * entry's directory to `path` and marks the entry used; SPCONV_STORE_MISS
 * when there is no whole entry. */
SPCONV_STORE_EXPORT int spconv_store_lookup(const char *root, const char *key,
                                            char *path, size_t size);

/* Creates an empty staging directory in the store for a new entry's files
 * (regular files, no subdirectories) and writes its path to `path`. */
SPCONV_STORE_EXPORT int spconv_store_begin(const char *root, char *path,
                                           size_t size);

/* Publishes the staging directory `staging` (from spconv_store_begin) as the
 * entry `key`, then evicts least recently used entries, never this one,
 * until the store holds at most `max_bytes`. Writes the entry's directory to
 * `path`: `staging` moved into place, or the entry another process published
 * first under the same key (`staging` is then removed). */
SPCONV_STORE_EXPORT int spconv_store_publish(const char *root, const char *key,
                                             const char *staging,
                                             uint64_t max_bytes, char *path,
                                             size_t size);

/* Removes a staging directory that will not be published. */
SPCONV_STORE_EXPORT int spconv_store_abandon(const char *staging);

/* Removes the entry `key` (SPCONV_STORE_MISS if there is none): for an
 * entry whose files a caller found unusable. */
SPCONV_STORE_EXPORT int spconv_store_remove(const char *root, const char *key);

/* Evicts least recently used entries until the store holds at most
 * `max_bytes` (0 empties it), and removes staging directories abandoned by
 * crashed writers (older than a day). `freed` (may be NULL) receives the
 * bytes removed. */
SPCONV_STORE_EXPORT int spconv_store_evict(const char *root, uint64_t max_bytes,
                                           uint64_t *freed);

/* One entry, as spconv_store_list reports it. */
typedef struct SpConvStoreEntry {
  const char *key;
  uint64_t bytes;
  /* Last use (publication or lookup), seconds since the epoch. */
  int64_t last_used;
} SpConvStoreEntry;

/* Calls `visit` for every whole entry, least recently used first; a nonzero
 * return stops the walk. The entry's strings live until `visit` returns. */
SPCONV_STORE_EXPORT int
spconv_store_list(const char *root,
                  int (*visit)(const SpConvStoreEntry *entry, void *data),
                  void *data);

#ifdef __cplusplus
}
#endif

#endif /* SPCONV_RT_KERNELSTORE_H */
