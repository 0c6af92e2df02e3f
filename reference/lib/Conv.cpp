//===- Conv.cpp - Sparse and inverse convolution --------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Sites.h"

using namespace spconv::ref;

/// out[o] += in[x] @ weight[j] for every pair (x -> o, j), in offset order,
/// then + bias. `reversed` reads each pair backwards (o -> x), for the
/// inverse conv; `inRow` maps the pair's input side to a row of `in`.
static void accumulate(const Rulebook &rb, bool reversed,
                       const std::vector<int64_t> &inRow, const Tensor &in,
                       const Tensor &weight, const Tensor *bias, Tensor &out) {
  int64_t cin = weight.shape[1], cout = weight.shape[2];
  for (size_t j = 0; j < rb.pairs.size(); ++j) {
    for (const Pair &pair : rb.pairs[j]) {
      int64_t src = reversed ? inRow[pair.out] : inRow[pair.in];
      int64_t dst = reversed ? pair.in : pair.out;
      for (int64_t co = 0; co < cout; ++co) {
        double sum = 0;
        for (int64_t ci = 0; ci < cin; ++ci)
          sum += in.at(src, ci) * weight.at(j, ci, co);
        out.at(dst, co) += sum;
      }
    }
  }
  if (bias)
    for (int64_t r = 0; r < out.shape[0]; ++r)
      for (int64_t co = 0; co < cout; ++co)
        out.at(r, co) += bias->data[co];
}

bool spconv::ref::sparseConv(const Geometry &geometry,
                             const std::vector<int64_t> &grid,
                             const Coords &coords, const Tensor &features,
                             const Tensor &weight, const Tensor *bias,
                             Coords &outCoords, Tensor &outFeatures,
                             std::string &error) {
  Rulebook rb;
  if (!buildRulebook(geometry, grid, coords, rb, error) ||
      !checkFeatures(features, coords.rows(), "features", error) ||
      !checkWeight(weight, static_cast<int64_t>(rb.pairs.size()),
                   features.shape[1], bias, error))
    return false;
  std::vector<int64_t> identity(coords.rows());
  for (int64_t r = 0; r < coords.rows(); ++r)
    identity[r] = r;
  outCoords = rb.outCoords;
  outFeatures = Tensor({rb.outCoords.rows(), weight.shape[2]});
  accumulate(rb, /*reversed=*/false, identity, features, weight, bias,
             outFeatures);
  return true;
}

bool spconv::ref::inverseConv(const Geometry &geometry,
                              const std::vector<int64_t> &grid,
                              const Coords &coords, const Coords &sourceCoords,
                              const Tensor &features, const Tensor &weight,
                              const Tensor *bias, Tensor &outFeatures,
                              std::string &error) {
  if (geometry.kind != ConvKind::Inverse &&
      geometry.kind != ConvKind::Regular) {
    error = "inverse conv needs the window of a regular conv, got kind '" +
            std::string(convKindName(geometry.kind)) + "'";
    return false;
  }
  Geometry forward = geometry;
  forward.kind = ConvKind::Regular;
  Rulebook rb;
  if (!buildRulebook(forward, grid, coords, rb, error) ||
      !checkCoords(sourceCoords, rb.outGrid, "source coords", error) ||
      !checkFeatures(features, sourceCoords.rows(), "features", error) ||
      !checkWeight(weight, static_cast<int64_t>(rb.pairs.size()),
                   features.shape[1], bias, error))
    return false;

  // Row of `features` holding each forward output site.
  SiteMap source = indexSites(sourceCoords);
  std::vector<int64_t> sourceRow(rb.outCoords.rows());
  for (int64_t o = 0; o < rb.outCoords.rows(); ++o) {
    sourceRow[o] = lookupSite(source, rb.outCoords.site(o));
    if (sourceRow[o] < 0) {
      error = "source coords lack the site " +
              siteToString(rb.outCoords.site(o)) +
              ", an output of the regular conv being inverted";
      return false;
    }
  }
  outFeatures = Tensor({coords.rows(), weight.shape[2]});
  accumulate(rb, /*reversed=*/true, sourceRow, features, weight, bias,
             outFeatures);
  return true;
}
