//===- Emulator.cpp - Support for emulated GPU kernels --------------------===//
//
// The race detector of spconv-gpu-kernels-to-cpu (race-check). For every
// element a launch touches it keeps the last write and up to two recent
// reads by other threads (shadow memory keyed by address, and by block for
// workgroup memory, which each block has its own copy of). Two accesses
// conflict when different threads make them, one writes, and nothing orders
// them: they are in different blocks, or in the same block with no barrier
// between (the same phase). Keeping only two readers can miss a race
// between a write and a third reader; it never reports one that is not
// there. The first race of a launch becomes the thread's last error.
//
// The shadow memory and the names are standard containers, which throw
// std::bad_alloc when memory runs out. This file alone is built with
// -fexceptions, and each entry point that allocates turns that exception
// into an out-of-memory error (and stops checking the launch): it must not
// reach the runtime's or the JIT's frames, where it would abort the process.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cinttypes>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Access {
  int64_t block = -1; // -1: none
  int64_t thread = -1;
  int64_t phase = -1;

  bool valid() const { return block >= 0; }
  bool sameThread(const Access &other) const {
    return block == other.block && thread == other.thread;
  }
  /// Whether no barrier orders the two accesses.
  bool unordered(const Access &other) const {
    return block != other.block || phase == other.phase;
  }
};

struct Shadow {
  Access write;
  Access reads[2];
};

struct Key {
  int64_t block; // -1 for global memory, shared by all blocks
  int64_t address;
  bool operator==(const Key &other) const {
    return block == other.block && address == other.address;
  }
};

struct KeyHash {
  size_t operator()(const Key &key) const {
    return std::hash<int64_t>()(key.address) * 31u +
           std::hash<int64_t>()(key.block);
  }
};

struct Launch {
  std::mutex mutex;
  bool active = false;
  bool raced = false;
  /// A container could not grow during the launch.
  bool outOfMemory = false;
  std::vector<std::string> names; // kernel, then buffers
  int64_t numArguments = 0;
  int64_t phase = 0;
  std::unordered_map<Key, Shadow, KeyHash> shadow;
};

Launch &launch() {
  static Launch state;
  return state;
}

std::vector<std::string> splitLines(int64_t address, int64_t length) {
  std::vector<std::string> lines;
  if (!address || length <= 0)
    return lines;
  std::string text(reinterpret_cast<const char *>(address),
                   static_cast<size_t>(length));
  size_t start = 0;
  while (true) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    if (end == std::string::npos)
      return lines;
    start = end + 1;
  }
}

/// The kernel a names string starts with ("kernel\nbuffer 0\n...").
std::string kernelName(int64_t names, int64_t length) {
  std::vector<std::string> lines = splitLines(names, length);
  return lines.empty() ? "<unknown>" : lines[0];
}

int reportRace(Launch &state, int64_t buffer, int64_t offset,
               const Access &first, bool firstWrites, const Access &second,
               bool secondWrites) {
  state.raced = true;
  const char *kernel =
      state.names.empty() ? "<unknown>" : state.names[0].c_str();
  std::string bufferName = "buffer " + std::to_string(buffer);
  if (buffer >= 0 && static_cast<size_t>(buffer) + 1 < state.names.size())
    bufferName = state.names[buffer + 1];
  return spconv::rt::setError(
      SPCONV_RT_ERR_EMULATION,
      "data race in kernel @%s on %s at byte offset %" PRId64
      ": %s by thread %" PRId64 " of block %" PRId64
      " and %s by thread %" PRId64 " of block %" PRId64 "%s",
      kernel, bufferName.c_str(), offset, firstWrites ? "written" : "read",
      first.thread, first.block, secondWrites ? "written" : "read",
      second.thread, second.block,
      first.block == second.block ? " with no barrier between them"
                                  : ", in different blocks");
}

/// The handler of the entry points that allocate (function-try-blocks):
/// records out of memory and ends checking of the launch, whose state stays
/// valid (the containers give the strong guarantee on insertion).
int outOfMemory() {
  Launch &state = launch();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.active)
    state.outOfMemory = true;
  state.active = false;
  state.shadow.clear();
  return spconv_rt_internal_set_alloc_failure(0, 0,
                                              "race checker: out of memory");
}

} // namespace

extern "C" {

int spconv_rt_emu_report_partial_warp(int64_t names, int64_t namesLength,
                                      int64_t threads) try {
  return spconv::rt::setError(
      SPCONV_RT_ERR_EMULATION,
      "kernel @%s uses warp-level operations but was launched with %" PRId64
      " threads per block, not a whole number of 32-thread warps",
      kernelName(names, namesLength).c_str(), threads);
} catch (const std::bad_alloc &) {
  return outOfMemory();
}

int spconv_rt_emu_report_divergent_warp(int64_t names, int64_t namesLength,
                                        int64_t thread) try {
  return spconv::rt::setError(
      SPCONV_RT_ERR_EMULATION,
      "kernel @%s: thread %" PRId64 " and the first lane of its warp disagree "
      "on a branch around warp-level operations (a divergent warp)",
      kernelName(names, namesLength).c_str(), thread);
} catch (const std::bad_alloc &) {
  return outOfMemory();
}

int spconv_rt_emu_report_divergent_block(int64_t names, int64_t namesLength,
                                         int64_t thread) try {
  return spconv::rt::setError(
      SPCONV_RT_ERR_EMULATION,
      "kernel @%s: thread %" PRId64 " and thread 0 of its block disagree on "
      "a branch or loop bound around a barrier (a barrier in divergent "
      "control flow)",
      kernelName(names, namesLength).c_str(), thread);
} catch (const std::bad_alloc &) {
  return outOfMemory();
}

int spconv_rt_emu_launch_begin(int64_t names, int64_t namesLength,
                               int64_t numArguments) try {
  Launch &state = launch();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.active = true;
  state.raced = false;
  state.outOfMemory = false;
  state.names = splitLines(names, namesLength);
  state.numArguments = numArguments;
  state.phase = 0;
  state.shadow.clear();
  return SPCONV_RT_OK;
} catch (const std::bad_alloc &) {
  return outOfMemory();
}

int spconv_rt_emu_access(int64_t buffer, int64_t address, int64_t offset,
                         int64_t elementBytes, int64_t count, int64_t isWrite,
                         int64_t block, int64_t thread) try {
  Launch &state = launch();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!state.active || state.raced)
    return SPCONV_RT_OK;
  Access now{block, thread, state.phase};
  bool shared = buffer >= state.numArguments;
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = address + i * elementBytes;
    int64_t atOffset = offset + i * elementBytes;
    Shadow &shadow = state.shadow[Key{shared ? block : -1, at}];
    if (shadow.write.valid() && !shadow.write.sameThread(now) &&
        shadow.write.unordered(now))
      return reportRace(state, buffer, atOffset, shadow.write, true, now,
                        isWrite != 0);
    if (isWrite) {
      for (const Access &read : shadow.reads)
        if (read.valid() && !read.sameThread(now) && read.unordered(now))
          return reportRace(state, buffer, atOffset, read, false, now, true);
      // Earlier reads are either this thread's or ordered before this
      // write; later accesses conflict with the write if with anything.
      shadow.write = now;
      shadow.reads[0] = shadow.reads[1] = Access{};
      continue;
    }
    if (shadow.reads[0].sameThread(now))
      shadow.reads[0] = now;
    else if (shadow.reads[1].sameThread(now))
      shadow.reads[1] = now;
    else {
      shadow.reads[0] = shadow.reads[1];
      shadow.reads[1] = now;
    }
  }
  return SPCONV_RT_OK;
} catch (const std::bad_alloc &) {
  return outOfMemory();
}

int spconv_rt_emu_barrier(void) {
  Launch &state = launch();
  std::lock_guard<std::mutex> lock(state.mutex);
  ++state.phase;
  return SPCONV_RT_OK;
}

int spconv_rt_emu_launch_end(void) {
  Launch &state = launch();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.active = false;
  state.shadow.clear();
  if (state.outOfMemory)
    return SPCONV_RT_ERR_OUT_OF_MEMORY;
  return state.raced ? SPCONV_RT_ERR_EMULATION : SPCONV_RT_OK;
}

} // extern "C"
