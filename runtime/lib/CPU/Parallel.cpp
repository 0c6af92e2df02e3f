//===- Parallel.cpp - Thread-count policy and fork-join helper -----------===//
//
// The runtime uses plain pthreads rather than OpenMP: it is loaded into
// processes that JIT OpenMP code against libomp, and a second OpenMP runtime
// (libgomp) in the same process is a source of conflicts. pthread_create also
// reports failure by return code, so running out of threads degrades to
// sequential execution instead of an exception or abort.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <atomic>
#include <cstdlib>
#include <pthread.h>
#include <thread>

using namespace spconv::rt;

namespace {
std::atomic<int> requestedThreads{0};

int defaultThreads() {
  if (const char *env = std::getenv("SPCONV_RT_NUM_THREADS")) {
    long value = std::strtol(env, nullptr, 10);
    if (value > 0)
      return value > kMaxThreads ? kMaxThreads : static_cast<int>(value);
  }
  unsigned hw = std::thread::hardware_concurrency();
  if (hw == 0)
    return 1;
  return hw > kMaxThreads ? kMaxThreads : static_cast<int>(hw);
}

int currentThreads() {
  int n = requestedThreads.load(std::memory_order_relaxed);
  if (n > 0)
    return n;
  static const int fallback = defaultThreads();
  return fallback;
}

struct Task {
  void (*body)(void *, int);
  void *ctx;
  int tid;
};

void *threadMain(void *arg) {
  Task *task = static_cast<Task *>(arg);
  task->body(task->ctx, task->tid);
  return nullptr;
}
} // namespace

int spconv::rt::threadsFor(int64_t work, int64_t minPerThread) {
  int threads = currentThreads();
  if (minPerThread < 1)
    minPerThread = 1;
  int64_t useful = work / minPerThread;
  if (useful < threads)
    threads = useful < 1 ? 1 : static_cast<int>(useful);
  return threads;
}

void spconv::rt::runThreadsImpl(int numThreads, void (*body)(void *, int),
                                void *ctx) {
  if (numThreads > kMaxThreads)
    numThreads = kMaxThreads;
  Task tasks[kMaxThreads];
  pthread_t handles[kMaxThreads];
  bool started[kMaxThreads] = {};
  for (int t = 1; t < numThreads; ++t) {
    tasks[t] = {body, ctx, t};
    started[t] = pthread_create(&handles[t], nullptr, threadMain, &tasks[t]) == 0;
  }
  body(ctx, 0);
  for (int t = 1; t < numThreads; ++t) {
    if (started[t])
      pthread_join(handles[t], nullptr);
    else
      body(ctx, t);
  }
}

extern "C" int spconv_rt_set_num_threads(int32_t numThreads) {
  if (numThreads < 0)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "spconv_rt_set_num_threads: negative thread count %d",
                    numThreads);
  requestedThreads.store(numThreads > kMaxThreads ? kMaxThreads : numThreads,
                         std::memory_order_relaxed);
  return SPCONV_RT_OK;
}

extern "C" int spconv_rt_get_num_threads(int32_t *numThreads) {
  if (!numThreads)
    return setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                    "spconv_rt_get_num_threads: null output pointer");
  *numThreads = currentThreads();
  return SPCONV_RT_OK;
}
