//===- RuntimeBench.cpp - Runtime primitives vs standard containers -------===//
//
// Build + lookup of a coordinate hash table with LiDAR-like keys (see
// test/LidarKeys.h) and the 27 neighbour queries of a submanifold 3x3x3
// convolution, side by side with tsl::robin_map and std::unordered_map; and
// unique / sort against std::sort + std::unique. Every variant allocates its
// table inside the timed loop.
//
//===----------------------------------------------------------------------===//

#include "spconv-rt/SpConvRuntime.h"

#include "LidarKeys.h"

#include <benchmark/benchmark.h>
#include <tsl/robin_map.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <unordered_map>

using namespace spconv_rt_test;

namespace {

struct Workload {
  std::vector<int64_t> keys;
  std::vector<int64_t> queries;
};

/// Keys and queries per size, built once. Above 1e6 keys, the queries are
/// the neighbourhoods of the first 2e6 (shuffled, so random) keys, to bound
/// memory; the key set itself is complete.
const Workload &workload(int64_t n) {
  static std::map<int64_t, std::unique_ptr<Workload>> cache;
  auto &slot = cache[n];
  if (!slot) {
    slot = std::make_unique<Workload>();
    slot->keys = makeLidarScene(n, 42).keys;
    std::vector<int64_t> sample(
        slot->keys.begin(),
        slot->keys.begin() + std::min<int64_t>(n, 2000000));
    slot->queries = subm27Queries(sample);
  }
  return *slot;
}

void setCounters(benchmark::State &state, const Workload &w) {
  state.counters["keys"] = double(w.keys.size());
  state.counters["queries"] = double(w.queries.size());
  state.SetItemsProcessed(int64_t(state.iterations()) *
                          int64_t(w.keys.size() + w.queries.size()));
}

void BM_BuildLookup_SpConvRt(benchmark::State &state, int threads) {
  const Workload &w = workload(state.range(0));
  spconv_rt_set_num_threads(threads);
  int64_t n = int64_t(w.keys.size()), m = int64_t(w.queries.size());
  std::vector<int32_t> out(w.queries.size());
  for (auto _ : state) {
    int64_t capacity;
    spconv_rt_hash_capacity(n, &capacity);
    std::unique_ptr<int64_t[]> tk(new int64_t[size_t(capacity)]);
    std::unique_ptr<int32_t[]> tv(new int32_t[size_t(capacity)]);
    if (spconv_rt_hash_build(w.keys.data(), n, tk.get(), tv.get(), capacity,
                             nullptr) ||
        spconv_rt_hash_lookup(tk.get(), tv.get(), capacity, w.queries.data(),
                              m, out.data()))
      state.SkipWithError(spconv_rt_last_error());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  spconv_rt_set_num_threads(0);
  setCounters(state, w);
}

template <typename Map> void BM_BuildLookup_Map(benchmark::State &state) {
  const Workload &w = workload(state.range(0));
  std::vector<int32_t> out(w.queries.size());
  for (auto _ : state) {
    Map map;
    map.reserve(w.keys.size());
    for (size_t i = 0; i < w.keys.size(); ++i)
      map.emplace(w.keys[i], int32_t(i));
    for (size_t i = 0; i < w.queries.size(); ++i) {
      auto it = map.find(w.queries[i]);
      out[i] = it == map.end() ? -1 : it->second;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  setCounters(state, w);
}

/// Regular-conv output candidates: stride-2 downsampled keys, ~4x repeats.
const std::vector<int64_t> &downsampledKeys(int64_t n) {
  static std::map<int64_t, std::vector<int64_t>> cache;
  auto &keys = cache[n];
  if (keys.empty()) {
    keys = makeLidarScene(n, 43).keys;
    for (auto &k : keys) {
      int64_t x = k % kGridX, y = (k / kGridX) % kGridY,
              z = (k / (kGridX * kGridY)) % kGridZ,
              b = k / (kGridX * kGridY * kGridZ);
      k = lidarKey(b, z / 2, y / 2, x / 2);
    }
  }
  return keys;
}

void BM_Unique_SpConvRt(benchmark::State &state, int threads) {
  const auto &keys = downsampledKeys(state.range(0));
  spconv_rt_set_num_threads(threads);
  size_t n = keys.size();
  std::vector<int64_t> u(n);
  std::vector<int32_t> first(n), inverse(n);
  int64_t count = 0;
  for (auto _ : state) {
    if (spconv_rt_unique(keys.data(), int64_t(n), u.data(), first.data(),
                         inverse.data(), &count))
      state.SkipWithError(spconv_rt_last_error());
    benchmark::DoNotOptimize(count);
  }
  spconv_rt_set_num_threads(0);
  state.counters["unique"] = double(count);
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(n));
}

void BM_Unique_StdSortUnique(benchmark::State &state) {
  const auto &keys = downsampledKeys(state.range(0));
  std::vector<int64_t> work(keys.size());
  size_t count = 0;
  for (auto _ : state) {
    std::copy(keys.begin(), keys.end(), work.begin());
    std::sort(work.begin(), work.end());
    count = size_t(std::unique(work.begin(), work.end()) - work.begin());
    benchmark::DoNotOptimize(count);
  }
  state.counters["unique"] = double(count);
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(keys.size()));
}

void BM_Sort_SpConvRt(benchmark::State &state, int threads) {
  const auto &keys = downsampledKeys(state.range(0));
  spconv_rt_set_num_threads(threads);
  std::vector<int64_t> work(keys.size());
  for (auto _ : state) {
    std::copy(keys.begin(), keys.end(), work.begin());
    if (spconv_rt_sort_keys(work.data(), int64_t(work.size())))
      state.SkipWithError(spconv_rt_last_error());
    benchmark::DoNotOptimize(work.data());
  }
  spconv_rt_set_num_threads(0);
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(keys.size()));
}

void BM_Sort_StdSort(benchmark::State &state) {
  const auto &keys = downsampledKeys(state.range(0));
  std::vector<int64_t> work(keys.size());
  for (auto _ : state) {
    std::copy(keys.begin(), keys.end(), work.begin());
    std::sort(work.begin(), work.end());
    benchmark::DoNotOptimize(work.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(keys.size()));
}

void sizes(benchmark::internal::Benchmark *b) {
  b->Arg(100000)->Arg(1000000)->Arg(10000000)->Unit(benchmark::kMillisecond);
}
void smallSizes(benchmark::internal::Benchmark *b) {
  b->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
}

} // namespace

BENCHMARK_CAPTURE(BM_BuildLookup_SpConvRt, threads_default, 0)->Apply(sizes);
BENCHMARK_CAPTURE(BM_BuildLookup_SpConvRt, threads_1, 1)->Apply(sizes);
BENCHMARK_TEMPLATE(BM_BuildLookup_Map, tsl::robin_map<int64_t, int32_t>)
    ->Apply(sizes);
// std::unordered_map at 1e7 takes tens of seconds per iteration: skipped.
BENCHMARK_TEMPLATE(BM_BuildLookup_Map, std::unordered_map<int64_t, int32_t>)
    ->Apply(smallSizes);
BENCHMARK_CAPTURE(BM_Unique_SpConvRt, threads_default, 0)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Unique_SpConvRt, threads_1, 1)->Apply(sizes);
BENCHMARK(BM_Unique_StdSortUnique)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Sort_SpConvRt, threads_default, 0)->Apply(sizes);
BENCHMARK(BM_Sort_StdSort)->Apply(sizes);

BENCHMARK_MAIN();
