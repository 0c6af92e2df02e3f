//===- Sites.h - Site lookup for the reference ------------------*- C++ -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Sites are (batch, x0, x1, ...) tuples of nonnegative values; ordering them
// lexicographically is ordering them by their linear key
// ((b * S0 + x0) * S1 + x1) ..., so an ordered map both looks sites up and
// yields the key order DESIGN.md asks for.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_REF_LIB_SITES_H
#define SPCONV_REF_LIB_SITES_H

#include "spconv-ref/Reference.h"

#include <map>

namespace spconv {
namespace ref {

using Site = std::vector<int32_t>;
using SiteMap = std::map<Site, int64_t>;

/// Site -> row for rows of `coords` (which checkCoords made distinct).
SiteMap indexSites(const Coords &coords);

/// Row of `site` in `map`, or -1.
inline int64_t lookupSite(const SiteMap &map, const Site &site) {
  auto it = map.find(site);
  return it == map.end() ? -1 : it->second;
}

/// "(0, 3, 4)".
std::string siteToString(const Site &site);

/// Checks a features tensor against `rows` sites.
bool checkFeatures(const Tensor &features, int64_t rows,
                   const std::string &what, std::string &error);

/// Checks `weight` (K x Cin x Cout) and `bias` (Cout, may be null).
bool checkWeight(const Tensor &weight, int64_t kernelVolume, int64_t cin,
                 const Tensor *bias, std::string &error);

} // namespace ref
} // namespace spconv

#endif // SPCONV_REF_LIB_SITES_H
