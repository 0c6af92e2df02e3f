//===- ConvTest.cpp - Sparse convs against dense PyTorch semantics --------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Random cases over 1-D to 4-D checked against the dense oracle: subm and
// regular against conv, transposed and inverse against conv_transpose, all
// sampled at the active outputs; the active sets against a brute-force scan
// of the output grid.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>

using namespace spconv::ref;
using namespace spconv::ref::test;

namespace {

constexpr int kCasesPerDim = 50;

/// The sites of `batches x grid` that `isActive` accepts, in key order.
template <typename Pred>
Coords scanGrid(int64_t batches, const std::vector<int64_t> &grid,
                Pred isActive) {
  Coords coords(grid.size());
  int64_t volume = 1;
  for (int64_t s : grid)
    volume *= s;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t flat = 0; flat < volume; ++flat) {
      std::vector<int64_t> o = unravelIndex(flat, grid);
      if (isActive(b, o)) {
        std::vector<int32_t> site = {static_cast<int32_t>(b)};
        for (int64_t v : o)
          site.push_back(static_cast<int32_t>(v));
        coords.append(site);
      }
    }
  return coords;
}

/// Output features == dense result (+ bias) at every output site.
void expectMatchesDense(const Case &c, const Coords &outCoords,
                        const Tensor &out, const Tensor &dense) {
  ASSERT_EQ(out.shape[0], outCoords.rows());
  for (int64_t r = 0; r < outCoords.rows(); ++r)
    for (int64_t co = 0; co < out.shape[1]; ++co)
      ASSERT_NEAR(out.at(r, co),
                  sampleDense(dense, outCoords.site(r), co) +
                      (c.hasBias ? c.bias.data[co] : 0),
                  1e-9)
          << "row " << r << " channel " << co << "\n"
          << c.describe();
}

/// The reference conv of `c` (with its bias, if any).
::testing::AssertionResult runCase(const Case &c, Coords &outCoords,
                                   Tensor &out) {
  std::string error;
  if (sparseConv(c.geometry, c.grid, c.coords, c.features, c.weight,
                 c.hasBias ? &c.bias : nullptr, outCoords, out, error))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << error << "\n" << c.describe();
}

class ConvByDims : public ::testing::TestWithParam<int64_t> {};

TEST_P(ConvByDims, SubmMatchesDenseConv) {
  std::mt19937 rng(100 + GetParam());
  for (int i = 0; i < kCasesPerDim; ++i) {
    Case c = randomCase(rng, ConvKind::Subm, GetParam());
    Coords outCoords;
    Tensor out;
    ASSERT_TRUE(runCase(c, outCoords, out));
    // Same sites, same order.
    ASSERT_EQ(outCoords.data, c.coords.data);
    // Inactive sites are zero in the dense input, so the dense conv with
    // padding k/2*d sums over exactly the active neighbours.
    Tensor dense = denseConv(
        scatterToDense(c.coords, c.features, c.batches, c.grid),
        toTorchConvWeight(c.weight, c.geometry.kernel), c.geometry.stride,
        c.geometry.padding, c.geometry.dilation);
    expectMatchesDense(c, outCoords, out, dense);
  }
}

TEST_P(ConvByDims, RegularMatchesDenseConv) {
  std::mt19937 rng(200 + GetParam());
  for (int i = 0; i < kCasesPerDim; ++i) {
    Case c = randomCase(rng, ConvKind::Regular, GetParam());
    const Geometry &g = c.geometry;
    Coords outCoords;
    Tensor out;
    ASSERT_TRUE(runCase(c, outCoords, out));
    std::string error;

    // DESIGN.md literally: o is active iff some active x = o*s - p + j*d.
    std::vector<int64_t> outGrid;
    ASSERT_TRUE(outputGrid(g, c.grid, outGrid, error));
    auto active = siteRows(c.coords);
    Coords expected = scanGrid(c.batches, outGrid, [&](int64_t b,
                                                       const std::vector<
                                                           int64_t> &o) {
      for (int64_t j = 0; j < kernelVolume(g); ++j) {
        std::vector<int64_t> jj = kernelIndex(g, j);
        std::vector<int32_t> x = {static_cast<int32_t>(b)};
        for (size_t d = 0; d < o.size(); ++d)
          x.push_back(static_cast<int32_t>(o[d] * g.stride[d] - g.padding[d] +
                                           jj[d] * g.dilation[d]));
        if (active.count(x))
          return true;
      }
      return false;
    });
    ASSERT_EQ(outCoords.data, expected.data) << c.describe();

    Tensor dense = denseConv(
        scatterToDense(c.coords, c.features, c.batches, c.grid),
        toTorchConvWeight(c.weight, g.kernel), g.stride, g.padding,
        g.dilation);
    expectMatchesDense(c, outCoords, out, dense);
    // And the dense conv is zero wherever no output is active.
    auto outRows = siteRows(outCoords);
    for (int64_t b = 0; b < c.batches; ++b)
      scanGrid(1, outGrid, [&](int64_t, const std::vector<int64_t> &o) {
        std::vector<int32_t> site = {static_cast<int32_t>(b)};
        for (int64_t v : o)
          site.push_back(static_cast<int32_t>(v));
        if (outRows.count(site))
          return false;
        for (int64_t co = 0; co < out.shape[1]; ++co)
          EXPECT_EQ(sampleDense(dense, site, co), 0.0);
        return false;
      });
  }
}

TEST_P(ConvByDims, TransposedMatchesDenseConvTranspose) {
  std::mt19937 rng(300 + GetParam());
  for (int i = 0; i < kCasesPerDim; ++i) {
    Case c = randomCase(rng, ConvKind::Transposed, GetParam());
    const Geometry &g = c.geometry;
    Coords outCoords;
    Tensor out;
    ASSERT_TRUE(runCase(c, outCoords, out));
    std::string error;

    // o is active iff o = x*s - p + j*d for an active x and some j.
    std::vector<int64_t> outGrid;
    ASSERT_TRUE(outputGrid(g, c.grid, outGrid, error));
    auto active = siteRows(c.coords);
    Coords expected = scanGrid(c.batches, outGrid, [&](int64_t b,
                                                       const std::vector<
                                                           int64_t> &o) {
      for (int64_t j = 0; j < kernelVolume(g); ++j) {
        std::vector<int64_t> jj = kernelIndex(g, j);
        std::vector<int32_t> x = {static_cast<int32_t>(b)};
        bool exact = true;
        for (size_t d = 0; d < o.size(); ++d) {
          int64_t t = o[d] + g.padding[d] - jj[d] * g.dilation[d];
          exact &= t >= 0 && t % g.stride[d] == 0;
          x.push_back(static_cast<int32_t>(t / g.stride[d]));
        }
        if (exact && active.count(x))
          return true;
      }
      return false;
    });
    ASSERT_EQ(outCoords.data, expected.data) << c.describe();

    Tensor dense = denseConvTranspose(
        scatterToDense(c.coords, c.features, c.batches, c.grid),
        toTorchConvTransposeWeight(c.weight, g.kernel), g.stride, g.padding,
        g.dilation, outGrid);
    expectMatchesDense(c, outCoords, out, dense);
  }
}

// The inverse of a regular conv equals conv_transpose with the forward
// geometry, applied to the coarse features scattered onto the coarse grid
// and sampled at the fine sites: a coarse site o reaches fine site x through
// offset j exactly when (x -> o, j) is a forward pair, because every active
// coarse site the window of an active x touches is a forward output. Extra
// coarse sites (not forward outputs) therefore touch no active fine site.
TEST_P(ConvByDims, InverseMatchesDenseConvTranspose) {
  std::mt19937 rng(400 + GetParam());
  for (int i = 0; i < kCasesPerDim; ++i) {
    Case c = randomCase(rng, ConvKind::Regular, GetParam());
    Geometry g = c.geometry;
    g.kind = ConvKind::Inverse;
    Rulebook forward;
    std::string error;
    ASSERT_TRUE(buildRulebook(c.geometry, c.grid, c.coords, forward, error))
        << error;

    // Coarse sites: the forward outputs plus a few others, shuffled.
    Coords coarse = forward.outCoords;
    Coords extra = randomSites(rng, c.batches, forward.outGrid, 3);
    auto present = siteRows(coarse);
    for (int64_t r = 0; r < extra.rows(); ++r)
      if (!present.count(extra.site(r)))
        coarse.append(extra.site(r));
    std::vector<int64_t> order(coarse.rows());
    for (size_t r = 0; r < order.size(); ++r)
      order[r] = r;
    std::shuffle(order.begin(), order.end(), rng);
    Coords shuffled(coarse.dims);
    for (int64_t r : order)
      shuffled.append(coarse.site(r));

    int64_t cin = c.weight.shape[2], cout = c.weight.shape[1];
    Tensor features = randomTensor(rng, {shuffled.rows(), cin});
    Tensor weight = randomTensor(rng, {kernelVolume(g), cin, cout});
    Tensor bias = randomTensor(rng, {cout});
    Tensor out;
    ASSERT_TRUE(inverseConv(g, c.grid, c.coords, shuffled, features, weight,
                            c.hasBias ? &bias : nullptr, out, error))
        << error << "\n"
        << c.describe();
    ASSERT_EQ(out.shape, (std::vector<int64_t>{c.coords.rows(), cout}));

    Tensor dense = denseConvTranspose(
        scatterToDense(shuffled, features, c.batches, forward.outGrid),
        toTorchConvTransposeWeight(weight, g.kernel), g.stride, g.padding,
        g.dilation, c.grid);
    for (int64_t r = 0; r < c.coords.rows(); ++r)
      for (int64_t co = 0; co < cout; ++co)
        ASSERT_NEAR(out.at(r, co),
                    sampleDense(dense, c.coords.site(r), co) +
                        (c.hasBias ? bias.data[co] : 0),
                    1e-9)
            << c.describe();
  }
}

// <conv(f; W), y> == <f, inverse(y; W^T)>: the inverse conv is the adjoint
// of the regular conv when each offset's weight is transposed.
TEST_P(ConvByDims, InverseIsAdjointOfRegular) {
  std::mt19937 rng(500 + GetParam());
  for (int i = 0; i < kCasesPerDim / 2; ++i) {
    Case c = randomCase(rng, ConvKind::Regular, GetParam());
    Coords outCoords;
    Tensor out;
    std::string error;
    ASSERT_TRUE(sparseConv(c.geometry, c.grid, c.coords, c.features, c.weight,
                           nullptr, outCoords, out, error));
    Tensor y = randomTensor(rng, out.shape);
    int64_t k = c.weight.shape[0], cin = c.weight.shape[1],
            cout = c.weight.shape[2];
    Tensor transposed({k, cout, cin});
    for (int64_t j = 0; j < k; ++j)
      for (int64_t a = 0; a < cin; ++a)
        for (int64_t b = 0; b < cout; ++b)
          transposed.at(j, b, a) = c.weight.at(j, a, b);
    Geometry g = c.geometry;
    g.kind = ConvKind::Inverse;
    Tensor back;
    ASSERT_TRUE(inverseConv(g, c.grid, c.coords, outCoords, y, transposed,
                            nullptr, back, error))
        << error;
    double lhs = 0, rhs = 0;
    for (size_t e = 0; e < out.data.size(); ++e)
      lhs += out.data[e] * y.data[e];
    for (size_t e = 0; e < back.data.size(); ++e)
      rhs += c.features.data[e] * back.data[e];
    EXPECT_NEAR(lhs, rhs, 1e-9 * (1 + std::fabs(lhs))) << c.describe();
  }
}

TEST_P(ConvByDims, RulebookProperties) {
  std::mt19937 rng(600 + GetParam());
  for (ConvKind kind :
       {ConvKind::Subm, ConvKind::Regular, ConvKind::Transposed}) {
    for (int i = 0; i < kCasesPerDim / 2; ++i) {
      Case c = randomCase(rng, kind, GetParam());
      Rulebook rb;
      std::string error;
      ASSERT_TRUE(buildRulebook(c.geometry, c.grid, c.coords, rb, error))
          << error;
      int64_t k = kernelVolume(c.geometry);
      ASSERT_EQ(static_cast<int64_t>(rb.pairs.size()), k);
      for (int64_t j = 0; j < k; ++j) {
        std::set<int64_t> ins, outs;
        for (size_t p = 0; p < rb.pairs[j].size(); ++p) {
          const Pair &pair = rb.pairs[j][p];
          // Each offset is a partial one-to-one map, sorted by input row.
          EXPECT_TRUE(ins.insert(pair.in).second);
          EXPECT_TRUE(outs.insert(pair.out).second);
          if (p) {
            EXPECT_LT(rb.pairs[j][p - 1].in, pair.in);
          }
          // The pair satisfies its kind's rule.
          std::vector<int32_t> x = c.coords.site(pair.in),
                               o = rb.outCoords.site(pair.out);
          EXPECT_EQ(x[0], o[0]);
          std::vector<int64_t> jj = kernelIndex(c.geometry, j);
          const Geometry &g = c.geometry;
          for (int64_t d = 0; d < g.rank(); ++d)
            EXPECT_EQ(kind == ConvKind::Transposed ? o[d + 1] : x[d + 1],
                      (kind == ConvKind::Transposed ? x[d + 1] : o[d + 1]) *
                              g.stride[d] -
                          g.padding[d] + jj[d] * g.dilation[d]);
        }
      }
      if (kind == ConvKind::Subm) {
        bool allOdd = true;
        for (int64_t kd : c.geometry.kernel)
          allOdd &= kd % 2 == 1;
        if (allOdd) {
          // The centre maps every site to itself; j and K-1-j mirror.
          ASSERT_EQ(static_cast<int64_t>(rb.pairs[k / 2].size()),
                    c.coords.rows());
          for (int64_t r = 0; r < c.coords.rows(); ++r)
            EXPECT_TRUE((rb.pairs[k / 2][r] == Pair{r, r}));
          for (int64_t j = 0; j < k; ++j)
            EXPECT_EQ(rb.pairs[j].size(), rb.pairs[k - 1 - j].size());
        }
      } else {
        // Every output has a pair, and output keys strictly increase.
        std::vector<bool> reached(rb.outCoords.rows(), false);
        for (const auto &offsetPairs : rb.pairs)
          for (const Pair &pair : offsetPairs)
            reached[pair.out] = true;
        for (bool r : reached)
          EXPECT_TRUE(r);
        for (int64_t r = 1; r < rb.outCoords.rows(); ++r)
          EXPECT_LT(siteKey(rb.outCoords.site(r - 1), rb.outGrid),
                    siteKey(rb.outCoords.site(r), rb.outGrid));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, ConvByDims, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int64_t> &info) {
                           return std::to_string(info.param) + "D";
                         });

// Keys past 2^32 (where spconv's int32 keys wrap) still order correctly.
TEST(Conv, LargeGridKeysAre64Bit) {
  std::vector<int64_t> grid = {41, 1600, 1408};
  Coords coords(3);
  coords.append({400, 40, 1599, 1407});
  coords.append({400, 0, 0, 0});
  coords.append({0, 20, 800, 704});
  coords.append({399, 39, 1598, 1406});
  Geometry g;
  g.kind = ConvKind::Regular;
  g.kernel = {3, 3, 3};
  g.stride = {2, 2, 2};
  g.padding = {1, 1, 1};
  Tensor features({4, 1});
  for (int64_t r = 0; r < 4; ++r)
    features.at(r, 0) = r + 1;
  Tensor weight({27, 1, 1});
  for (double &w : weight.data)
    w = 1;
  Coords outCoords;
  Tensor out;
  std::string error;
  ASSERT_TRUE(sparseConv(g, grid, coords, features, weight, nullptr,
                         outCoords, out, error))
      << error;
  std::vector<int64_t> outGrid = {21, 800, 704};
  ASSERT_GT(outCoords.rows(), 4);
  EXPECT_EQ(outCoords.site(0), (std::vector<int32_t>{0, 10, 400, 352}));
  EXPECT_EQ(outCoords.site(outCoords.rows() - 1),
            (std::vector<int32_t>{400, 20, 799, 703}));
  EXPECT_GT(siteKey(outCoords.site(outCoords.rows() - 1), outGrid),
            int64_t(1) << 32);
  for (int64_t r = 1; r < outCoords.rows(); ++r)
    EXPECT_LT(siteKey(outCoords.site(r - 1), outGrid),
              siteKey(outCoords.site(r), outGrid));
}

} // namespace
