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
// Asynchronous copies (cp.async) are queued per thread in groups and land
// when their thread waits for the group: a kernel that reads a stage
// before its wait reads what was there before, as it may on a GPU. One host
// thread runs a whole block (spconv-gpu-kernels-to-cpu makes a kernel a
// function of one block), so the queues are the host thread's own and take
// no lock; the race detector's state is shared, and its lock is taken only
// while a launch is checked. With
// race checking, the destination elements of a queued copy are marked, and
// any access to them before the copy lands is reported; the copy itself
// counts as a write by its thread at the wait.
//
// The shadow memory and the names are standard containers, which throw
// std::bad_alloc when memory runs out. This file alone is built with
// -fexceptions, and each entry point that allocates turns that exception
// into an out-of-memory error (and stops checking the launch): it must not
// reach the runtime's or the JIT's frames, where it would abort the process.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstring>
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
  /// Whether the launch is race-checked. Written under `mutex`; read
  /// without it first, so unchecked launches never take the lock.
  std::atomic<bool> active{false};
  bool raced = false;
  /// A container could not grow during the launch.
  bool outOfMemory = false;
  std::vector<std::string> names; // kernel, then buffers
  int64_t numArguments = 0;
  int64_t phase = 0;
  std::unordered_map<Key, Shadow, KeyHash> shadow;
  /// Destination elements of queued asynchronous copies: the copying
  /// thread.
  std::unordered_map<Key, Access, KeyHash> inFlight;

  /// The shadow key of the element at `address` of buffer `buffer` as
  /// block `block` sees it: workgroup buffers are per block.
  Key keyOf(int64_t buffer, int64_t block, int64_t address) const {
    return Key{buffer >= numArguments ? block : -1, address};
  }
};

/// A queued asynchronous copy.
struct AsyncCopy {
  int64_t buffer, dst, offset, src, dstBytes, srcBytes, elementBytes;
};

/// One thread's asynchronous copies, oldest first: the committed groups
/// (each ends where `groupEnds` says), then the open group. Landed copies
/// and groups are skipped by `head` and `groupHead`, and the vectors reused
/// once all have landed.
struct AsyncQueue {
  std::vector<AsyncCopy> copies;
  std::vector<size_t> groupEnds;
  size_t head = 0, groupHead = 0;

  size_t unwaited() const { return copies.size() - head; }
};

/// The queues of the threads of the block this host thread runs, by
/// thread. Emptied at the block's end, and when a block of another launch
/// or another block finds queues its predecessor left (a block that stopped
/// before its end).
struct AsyncCopies {
  int64_t launch = -1, block = -1;
  std::vector<AsyncQueue> threads;
};

/// Launches so far (race-checked ones; unchecked ones are told apart by
/// their blocks' ends).
std::atomic<int64_t> launchCount{0};

/// This host thread's queues, for block `block`.
AsyncCopies &asyncCopies(int64_t block) {
  thread_local AsyncCopies state;
  int64_t current = launchCount.load(std::memory_order_relaxed);
  if (state.launch != current || state.block != block) {
    state.threads.clear();
    state.launch = current;
    state.block = block;
  }
  return state;
}

/// The queue of thread `thread` of block `block`.
AsyncQueue &asyncQueue(int64_t block, int64_t thread) {
  std::vector<AsyncQueue> &threads = asyncCopies(block).threads;
  if (static_cast<size_t>(thread) >= threads.size())
    threads.resize(static_cast<size_t>(thread) + 1);
  return threads[static_cast<size_t>(thread)];
}

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

/// The launch's kernel and buffer `buffer`, as reports name them.
const char *kernelOf(const Launch &state) {
  return state.names.empty() ? "<unknown>" : state.names[0].c_str();
}

std::string bufferOf(const Launch &state, int64_t buffer) {
  if (buffer >= 0 && static_cast<size_t>(buffer) + 1 < state.names.size())
    return state.names[buffer + 1];
  return "buffer " + std::to_string(buffer);
}

int reportRace(Launch &state, int64_t buffer, int64_t offset,
               const Access &first, bool firstWrites, const Access &second,
               bool secondWrites) {
  state.raced = true;
  const char *kernel = kernelOf(state);
  std::string bufferName = bufferOf(state, buffer);
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

/// Records one access of an element (`shadow`) by `now` against the
/// accesses before it; reports a race, else returns SPCONV_RT_OK.
int checkElement(Launch &state, Shadow &shadow, int64_t buffer, int64_t at,
                 const Access &now, bool isWrite) {
  if (shadow.write.valid() && !shadow.write.sameThread(now) &&
      shadow.write.unordered(now))
    return reportRace(state, buffer, at, shadow.write, true, now, isWrite);
  if (isWrite) {
    for (const Access &read : shadow.reads)
      if (read.valid() && !read.sameThread(now) && read.unordered(now))
        return reportRace(state, buffer, at, read, false, now, true);
    // Earlier reads are either this thread's or ordered before this write;
    // later accesses conflict with the write if with anything.
    shadow.write = now;
    shadow.reads[0] = shadow.reads[1] = Access{};
    return SPCONV_RT_OK;
  }
  if (shadow.reads[0].sameThread(now))
    shadow.reads[0] = now;
  else if (shadow.reads[1].sameThread(now))
    shadow.reads[1] = now;
  else {
    shadow.reads[0] = shadow.reads[1];
    shadow.reads[1] = now;
  }
  return SPCONV_RT_OK;
}

/// An access to the destination of an asynchronous copy before it landed.
int reportEarlyAccess(Launch &state, int64_t buffer, int64_t offset,
                      const Access &copier, const Access &now, bool isWrite) {
  state.raced = true;
  const char *kernel = kernelOf(state);
  std::string bufferName = bufferOf(state, buffer);
  return spconv::rt::setError(
      SPCONV_RT_ERR_EMULATION,
      "kernel @%s: %s at byte offset %" PRId64 " %s by thread %" PRId64
      " of block %" PRId64 " before the asynchronous copy of thread %" PRId64
      " that writes it landed (no nvgpu.device_async_wait of that thread "
      "covered it yet)",
      kernel, bufferName.c_str(), offset, isWrite ? "written" : "read",
      now.thread, now.block, copier.thread);
}

/// Lands `copy`, made by thread `thread` of block `block`: the bytes, and
/// with race checking its elements as written by that thread now.
int land(const AsyncCopy &copy, int64_t block, int64_t thread) {
  std::memcpy(reinterpret_cast<void *>(copy.dst),
              reinterpret_cast<const void *>(copy.src),
              static_cast<size_t>(copy.srcBytes));
  std::memset(reinterpret_cast<char *>(copy.dst) + copy.srcBytes, 0,
              static_cast<size_t>(copy.dstBytes - copy.srcBytes));
  Launch &state = launch();
  if (!state.active.load(std::memory_order_acquire))
    return SPCONV_RT_OK;
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!state.active || state.raced)
    return SPCONV_RT_OK;
  Access now{block, thread, state.phase};
  for (int64_t at = 0; at < copy.dstBytes; at += copy.elementBytes) {
    Key key = state.keyOf(copy.buffer, block, copy.dst + at);
    state.inFlight.erase(key);
    if (int status = checkElement(state, state.shadow[key], copy.buffer,
                                  copy.offset + at, now, true))
      return status;
  }
  return SPCONV_RT_OK;
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
  state.inFlight.clear();
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
  launchCount.fetch_add(1, std::memory_order_relaxed);
  Launch &state = launch();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.active = true;
  state.raced = false;
  state.outOfMemory = false;
  state.names = splitLines(names, namesLength);
  state.numArguments = numArguments;
  state.phase = 0;
  state.shadow.clear();
  state.inFlight.clear();
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
  for (int64_t i = 0; i < count; ++i) {
    Key key = state.keyOf(buffer, block, address + i * elementBytes);
    int64_t at = offset + i * elementBytes;
    auto inFlight = state.inFlight.find(key);
    if (inFlight != state.inFlight.end())
      return reportEarlyAccess(state, buffer, at, inFlight->second, now,
                               isWrite != 0);
    if (int status = checkElement(state, state.shadow[key], buffer, at, now,
                                  isWrite != 0))
      return status;
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

int spconv_rt_emu_async_copy(int64_t buffer, int64_t dst, int64_t offset,
                             int64_t src, int64_t dstBytes, int64_t srcBytes,
                             int64_t elementBytes, int64_t block,
                             int64_t thread) try {
  if (srcBytes < 0 || srcBytes > dstBytes || elementBytes <= 0)
    return spconv::rt::setError(
        SPCONV_RT_ERR_EMULATION,
        "asynchronous copy of %" PRId64 " source bytes into %" PRId64
        " destination bytes: the source may not be larger",
        srcBytes, dstBytes);
  asyncQueue(block, thread)
      .copies.push_back(
          {buffer, dst, offset, src, dstBytes, srcBytes, elementBytes});
  Launch &state = launch();
  if (!state.active.load(std::memory_order_acquire))
    return SPCONV_RT_OK;
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!state.active || state.raced)
    return SPCONV_RT_OK;
  Access now{block, thread, state.phase};
  for (int64_t at = 0; at < dstBytes; at += elementBytes) {
    Key key = state.keyOf(buffer, block, dst + at);
    auto inFlight = state.inFlight.find(key);
    if (inFlight != state.inFlight.end())
      return reportEarlyAccess(state, buffer, offset + at, inFlight->second,
                               now, true);
    state.inFlight[key] = now;
  }
  return SPCONV_RT_OK;
} catch (const std::bad_alloc &) {
  return outOfMemory();
}

int spconv_rt_emu_async_commit(int64_t block, int64_t thread) try {
  AsyncQueue &queue = asyncQueue(block, thread);
  queue.groupEnds.push_back(queue.copies.size());
  return SPCONV_RT_OK;
} catch (const std::bad_alloc &) {
  return outOfMemory();
}

int spconv_rt_emu_async_wait(int64_t pending, int64_t block,
                             int64_t thread) try {
  AsyncQueue &queue = asyncQueue(block, thread);
  size_t keep = static_cast<size_t>(std::max<int64_t>(pending, 0));
  while (queue.groupEnds.size() - queue.groupHead > keep) {
    // The group leaves the queue before it lands: a race found while
    // landing it is the error, not the copies left behind.
    size_t first = queue.head, last = queue.groupEnds[queue.groupHead++];
    queue.head = last;
    for (size_t i = first; i < last; ++i)
      if (int status = land(queue.copies[i], block, thread))
        return status;
  }
  if (queue.head == queue.copies.size() &&
      queue.groupHead == queue.groupEnds.size()) {
    queue.copies.clear();
    queue.groupEnds.clear();
    queue.head = queue.groupHead = 0;
  }
  return SPCONV_RT_OK;
} catch (const std::bad_alloc &) {
  return outOfMemory();
}

int spconv_rt_emu_async_block_end(int64_t names, int64_t namesLength,
                                  int64_t block) try {
  int64_t unwaited = 0, thread = -1;
  AsyncCopies &copies = asyncCopies(block);
  for (size_t i = 0; i < copies.threads.size(); ++i) {
    size_t count = copies.threads[i].unwaited();
    if (count && thread < 0)
      thread = static_cast<int64_t>(i);
    unwaited += static_cast<int64_t>(count);
  }
  copies.threads.clear();
  if (!unwaited)
    return SPCONV_RT_OK;
  return spconv::rt::setError(
      SPCONV_RT_ERR_EMULATION,
      "kernel @%s: block %" PRId64 " ended with %" PRId64
      " asynchronous copies no thread waited for (the first of thread %" PRId64
      ")",
      kernelName(names, namesLength).c_str(), block, unwaited, thread);
} catch (const std::bad_alloc &) {
  return outOfMemory();
}

int spconv_rt_emu_launch_end(void) {
  Launch &state = launch();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.active = false;
  state.shadow.clear();
  state.inFlight.clear();
  if (state.outOfMemory)
    return SPCONV_RT_ERR_OUT_OF_MEMORY;
  return state.raced ? SPCONV_RT_ERR_EMULATION : SPCONV_RT_OK;
}

} // extern "C"
