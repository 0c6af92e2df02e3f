//===- HashRulebook.cpp - spconv v1's CPU rulebook construction -----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The algorithm of spconv v1's CPU indice-pair functions, written anew for
// this baseline: one tsl::robin_map of site key -> row filled in input order
// without reserve(), as in v1 (reserving would save ~7 %), then one pass
// over the inputs that enumerates every output each input reaches. Keys are
// 64-bit (v1's are int32, which overflow on large grids).
//
//===----------------------------------------------------------------------===//

#include "Rulebook.h"

#include <tsl/robin_map.h>

using namespace spconv::bench;

Rulebook spconv::bench::buildHashRulebook(const Sites &sites,
                                          const ConvGeometry &geom) {
  const int64_t n = sites.size();
  Rulebook rb;
  rb.numOffsets = geom.volume();
  rb.capacity = n;
  rb.inIdx.resize(rb.numOffsets * n);
  rb.outIdx.resize(rb.numOffsets * n);
  rb.counts.assign(rb.numOffsets, 0);
  const Dims3 outGrid = geom.outputGrid(sites.grid);
  int32_t *inIdx = rb.inIdx.data();
  int32_t *outIdx = rb.outIdx.data();
  int64_t *counts = rb.counts.data();
  const int64_t cap = n;

  tsl::robin_map<int64_t, int32_t> table;
  if (geom.subm) {
    for (int64_t i = 0; i < n; ++i)
      table.emplace(sites.key(i), static_cast<int32_t>(i));
    for (int64_t i = 0; i < n; ++i) {
      const int32_t *site = sites.row(i);
      forEachOutput(
          site, geom, outGrid, [&](int64_t j, int64_t z, int64_t y, int64_t x) {
            auto it = table.find(linearKey(site[0], z, y, x, outGrid));
            if (it == table.end())
              return;
            int64_t c = counts[j]++;
            inIdx[j * cap + c] = static_cast<int32_t>(i);
            outIdx[j * cap + c] = it->second;
          });
    }
    rb.numOut = n;
    return rb;
  }

  // Regular conv: the table maps output keys to output rows, assigned in
  // the order the outputs are first reached.
  int32_t numOut = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t *site = sites.row(i);
    forEachOutput(
        site, geom, outGrid, [&](int64_t j, int64_t z, int64_t y, int64_t x) {
          auto res =
              table.try_emplace(linearKey(site[0], z, y, x, outGrid), numOut);
          if (res.second) {
            ++numOut;
            rb.outCoords.insert(rb.outCoords.end(),
                                {site[0], static_cast<int32_t>(z),
                                 static_cast<int32_t>(y),
                                 static_cast<int32_t>(x)});
          }
          int64_t c = counts[j]++;
          inIdx[j * cap + c] = static_cast<int32_t>(i);
          outIdx[j * cap + c] = res.first->second;
        });
  }
  rb.numOut = numOut;
  return rb;
}
