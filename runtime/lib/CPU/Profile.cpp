//===- Profile.cpp - Per-op wall-clock timers for lowered code ------------===//
//
// Lowered code calls begin/end around each rulebook op when compiled with
// spconv-profile. Calls come from the thread that runs the lowered
// function, between parallel regions; the lock only guards against two
// such functions running at once.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <chrono>
#include <mutex>
#include <vector>

namespace {
struct Entry {
  std::chrono::steady_clock::time_point start;
  double milliseconds = 0;
  int64_t rows = 0;
  int64_t calls = 0;
};
std::mutex profileMutex;
std::vector<Entry> entries;
} // namespace

extern "C" {

void spconv_rt_profile_begin(int64_t id) {
  if (id < 0)
    return;
  std::lock_guard<std::mutex> lock(profileMutex);
  if (static_cast<size_t>(id) >= entries.size())
    entries.resize(static_cast<size_t>(id) + 1);
  entries[id].start = std::chrono::steady_clock::now();
}

void spconv_rt_profile_end(int64_t id, int64_t rows) {
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(profileMutex);
  if (id < 0 || static_cast<size_t>(id) >= entries.size())
    return;
  Entry &entry = entries[id];
  entry.milliseconds +=
      std::chrono::duration<double, std::milli>(now - entry.start).count();
  entry.rows = rows;
  ++entry.calls;
}

void spconv_rt_profile_reset(void) {
  std::lock_guard<std::mutex> lock(profileMutex);
  entries.clear();
}

int64_t spconv_rt_profile_count(void) {
  std::lock_guard<std::mutex> lock(profileMutex);
  return static_cast<int64_t>(entries.size());
}

int spconv_rt_profile_get(int64_t id, double *milliseconds, int64_t *rows,
                          int64_t *calls) {
  std::lock_guard<std::mutex> lock(profileMutex);
  if (id < 0 || static_cast<size_t>(id) >= entries.size())
    return spconv::rt::setError(SPCONV_RT_ERR_OUT_OF_RANGE,
                                "spconv_rt_profile_get: no entry %lld",
                                static_cast<long long>(id));
  if (!milliseconds || !rows || !calls)
    return spconv::rt::setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                                "spconv_rt_profile_get: null output pointer");
  *milliseconds = entries[id].milliseconds;
  *rows = entries[id].rows;
  *calls = entries[id].calls;
  return SPCONV_RT_OK;
}

} // extern "C"
