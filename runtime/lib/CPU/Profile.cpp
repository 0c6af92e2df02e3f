//===- Profile.cpp - Per-op wall-clock timers for lowered code ------------===//
//
// Lowered code calls begin/end around each rulebook op when compiled with
// spconv-profile. Calls come from the thread that runs the lowered
// function, between parallel regions; the lock only guards against two
// such functions running at once. Ids are bounded
// (SPCONV_RT_PROFILE_MAX_ENTRIES), so no id can make the table allocate
// more than that many entries; growing it reports failure, never aborts.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <type_traits>

namespace {
struct Entry {
  std::chrono::steady_clock::time_point start;
  double milliseconds;
  int64_t rows;
  int64_t calls;
  bool running;
};
static_assert(std::is_trivially_copyable<Entry>::value,
              "entries are moved with realloc");

std::mutex profileMutex;
// A malloc'ed table (the runtime is built without exceptions, so a
// std::vector that cannot grow would abort): `count` entries in use out of
// `capacity`.
Entry *entries = nullptr;
int64_t count = 0, capacity = 0;

/// Fails with SPCONV_RT_ERR_OUT_OF_RANGE unless `id` is a valid entry id.
int checkId(const char *fn, int64_t id) {
  if (id < 0 || id >= SPCONV_RT_PROFILE_MAX_ENTRIES)
    return spconv::rt::setError(
        SPCONV_RT_ERR_OUT_OF_RANGE, "%s: entry id %lld is outside [0, %lld)",
        fn, static_cast<long long>(id),
        static_cast<long long>(SPCONV_RT_PROFILE_MAX_ENTRIES));
  return SPCONV_RT_OK;
}

/// Makes entries [0, id] exist (new ones zero); the lock is held.
int grow(int64_t id) {
  if (id < count)
    return SPCONV_RT_OK;
  if (id >= capacity) {
    int64_t wanted = capacity < 16 ? 16 : 2 * capacity;
    if (wanted <= id)
      wanted = id + 1;
    if (wanted > SPCONV_RT_PROFILE_MAX_ENTRIES)
      wanted = SPCONV_RT_PROFILE_MAX_ENTRIES;
    size_t bytes = static_cast<size_t>(wanted) * sizeof(Entry);
    // Counted like every runtime allocation, so injection can fail it.
    void *grown = spconv_rt_internal_count_allocation()
                      ? nullptr
                      : std::realloc(entries, bytes);
    if (!grown) {
      char message[256];
      std::snprintf(message, sizeof(message),
                    "out of memory: %s for %lld profile entries",
                    spconv::rt::HumanBytes(bytes).c_str(),
                    static_cast<long long>(wanted));
      return spconv_rt_internal_set_alloc_failure(1, bytes, message);
    }
    entries = static_cast<Entry *>(grown);
    capacity = wanted;
  }
  for (; count <= id; ++count)
    entries[count] = Entry{};
  return SPCONV_RT_OK;
}
} // namespace

extern "C" {

int spconv_rt_profile_begin(int64_t id) {
  if (int status = checkId("spconv_rt_profile_begin", id))
    return status;
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(profileMutex);
  if (int status = grow(id))
    return status;
  entries[id].start = now;
  entries[id].running = true;
  return SPCONV_RT_OK;
}

int spconv_rt_profile_end(int64_t id, int64_t rows) {
  auto now = std::chrono::steady_clock::now();
  if (int status = checkId("spconv_rt_profile_end", id))
    return status;
  std::lock_guard<std::mutex> lock(profileMutex);
  if (id >= count || !entries[id].running)
    return spconv::rt::setError(
        SPCONV_RT_ERR_INVALID_ARGUMENT,
        "spconv_rt_profile_end: entry %lld was not begun",
        static_cast<long long>(id));
  Entry &entry = entries[id];
  entry.milliseconds +=
      std::chrono::duration<double, std::milli>(now - entry.start).count();
  entry.rows = rows;
  entry.running = false;
  ++entry.calls;
  return SPCONV_RT_OK;
}

void spconv_rt_profile_reset(void) {
  std::lock_guard<std::mutex> lock(profileMutex);
  // Give the memory back too: a large id must not pin its table.
  std::free(entries);
  entries = nullptr;
  count = capacity = 0;
}

int64_t spconv_rt_profile_count(void) {
  std::lock_guard<std::mutex> lock(profileMutex);
  return count;
}

int spconv_rt_profile_get(int64_t id, double *milliseconds, int64_t *rows,
                          int64_t *calls) {
  if (!milliseconds || !rows || !calls)
    return spconv::rt::setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                                "spconv_rt_profile_get: null output pointer");
  std::lock_guard<std::mutex> lock(profileMutex);
  if (id < 0 || id >= count)
    return spconv::rt::setError(SPCONV_RT_ERR_OUT_OF_RANGE,
                                "spconv_rt_profile_get: no entry %lld",
                                static_cast<long long>(id));
  *milliseconds = entries[id].milliseconds;
  *rows = entries[id].rows;
  *calls = entries[id].calls;
  return SPCONV_RT_OK;
}

} // extern "C"
