//===- Sites.cpp - Site and operand checks of the reference ---------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Sites.h"

#include <limits>

using namespace spconv::ref;

SiteMap spconv::ref::indexSites(const Coords &coords) {
  SiteMap map;
  for (int64_t row = 0; row < coords.rows(); ++row)
    map.emplace(coords.site(row), row);
  return map;
}

std::string spconv::ref::siteToString(const Site &site) {
  std::string s = "(";
  for (size_t i = 0; i < site.size(); ++i)
    s += (i ? ", " : "") + std::to_string(site[i]);
  return s + ")";
}

bool spconv::ref::checkCoords(const Coords &coords,
                              const std::vector<int64_t> &grid,
                              const std::string &what, std::string &error) {
  if (!checkGrid(grid, error))
    return false;
  if (coords.dims != static_cast<int64_t>(grid.size())) {
    error = what + " have " + std::to_string(coords.dims + 1) +
            " columns, expected 1 + " + std::to_string(grid.size()) +
            " (batch + spatial dims of the grid)";
    return false;
  }
  if (coords.data.size() % (coords.dims + 1) != 0) {
    error = what + " hold a partial row";
    return false;
  }
  int64_t volume = 1;
  for (int64_t s : grid)
    volume *= s;
  SiteMap seen;
  for (int64_t row = 0; row < coords.rows(); ++row) {
    Site site = coords.site(row);
    if (site[0] < 0) {
      error = what + " row " + std::to_string(row) + ": negative batch index " +
              std::to_string(site[0]);
      return false;
    }
    // The key b * volume + (offset within the grid) must fit int64.
    if (site[0] > (std::numeric_limits<int64_t>::max() - volume + 1) / volume) {
      error = what + " row " + std::to_string(row) + ": batch index " +
              std::to_string(site[0]) + " makes the site key overflow int64";
      return false;
    }
    for (int64_t i = 0; i < coords.dims; ++i) {
      if (site[i + 1] < 0 || site[i + 1] >= grid[i]) {
        error = what + " row " + std::to_string(row) + ": coordinate " +
                std::to_string(site[i + 1]) + " of spatial dim " +
                std::to_string(i) + " is outside the grid [0, " +
                std::to_string(grid[i]) + ")";
        return false;
      }
    }
    auto inserted = seen.emplace(site, row);
    if (!inserted.second) {
      error = what + " rows " + std::to_string(inserted.first->second) +
              " and " + std::to_string(row) + " are the same site " +
              siteToString(site);
      return false;
    }
  }
  return true;
}

bool spconv::ref::checkFeatures(const Tensor &features, int64_t rows,
                                const std::string &what, std::string &error) {
  if (features.rank() != 2 || features.shape[0] != rows) {
    error = what + " must be " + std::to_string(rows) +
            " x C (one row per site), got rank " +
            std::to_string(features.rank()) +
            (features.rank() ? " with " + std::to_string(features.shape[0]) +
                                   " rows"
                             : "");
    return false;
  }
  return true;
}

bool spconv::ref::checkWeight(const Tensor &weight, int64_t kernelVolume,
                              int64_t cin, const Tensor *bias,
                              std::string &error) {
  if (weight.rank() != 3 || weight.shape[0] != kernelVolume ||
      weight.shape[1] != cin) {
    std::string got = "rank " + std::to_string(weight.rank());
    if (weight.rank() == 3)
      got = std::to_string(weight.shape[0]) + " x " +
            std::to_string(weight.shape[1]) + " x " +
            std::to_string(weight.shape[2]);
    error = "weight must be K x Cin x Cout = " + std::to_string(kernelVolume) +
            " x " + std::to_string(cin) + " x Cout, got " + got;
    return false;
  }
  if (bias && (bias->rank() != 1 || bias->shape[0] != weight.shape[2])) {
    error = "bias must have Cout = " + std::to_string(weight.shape[2]) +
            " elements";
    return false;
  }
  return true;
}
