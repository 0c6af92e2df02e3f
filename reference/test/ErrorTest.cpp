//===- ErrorTest.cpp - Rejected inputs and their messages -----------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace spconv::ref;
using namespace spconv::ref::test;

namespace {

Geometry regular3() {
  Geometry g;
  g.kernel = {3, 3};
  return g;
}

/// Runs a 2-D regular conv and returns its error ("" on success).
std::string convError(const Geometry &g, const std::vector<int64_t> &grid,
                      const Coords &coords, const Tensor &features,
                      const Tensor &weight, const Tensor *bias = nullptr) {
  Coords outCoords;
  Tensor out;
  std::string error;
  if (sparseConv(g, grid, coords, features, weight, bias, outCoords, out,
                 error))
    return "";
  return error;
}

Coords twoSites(std::vector<int32_t> a, std::vector<int32_t> b) {
  Coords c(a.size() - 1);
  c.append(a);
  c.append(b);
  return c;
}

TEST(Errors, BadSites) {
  Tensor f({2, 1}), w({9, 1, 1});
  EXPECT_EQ(convError(regular3(), {4, 4}, twoSites({0, 1, 2}, {0, 1, 2}), f, w),
            "coords rows 0 and 1 are the same site (0, 1, 2)");
  EXPECT_EQ(convError(regular3(), {4, 4}, twoSites({0, 1, 2}, {-1, 1, 2}), f,
                      w),
            "coords row 1: negative batch index -1");
  EXPECT_EQ(convError(regular3(), {4, 4}, twoSites({0, 1, 4}, {0, 1, 2}), f, w),
            "coords row 0: coordinate 4 of spatial dim 1 is outside the grid "
            "[0, 4)");
  EXPECT_EQ(convError(regular3(), {4, 4}, twoSites({0, -1, 0}, {0, 1, 2}), f,
                      w),
            "coords row 0: coordinate -1 of spatial dim 0 is outside the grid "
            "[0, 4)");
  EXPECT_EQ(convError(regular3(), {4, 4, 4}, twoSites({0, 1, 1}, {0, 1, 2}), f,
                      w),
            "grid has 3 dimensions, the kernel 2");
  Geometry g3;
  g3.kernel = {3, 3, 3};
  EXPECT_EQ(convError(g3, {4, 4, 4}, twoSites({0, 1, 1}, {0, 1, 2}), f,
                      Tensor({27, 1, 1})),
            "coords have 3 columns, expected 1 + 3 (batch + spatial dims of "
            "the grid)");
  // Keys must fit int64: batch * volume overflows on a huge grid.
  Geometry g1;
  g1.kernel = {1, 1};
  EXPECT_NE(convError(g1, {int64_t(1) << 31, int64_t(1) << 31},
                      twoSites({0, 1, 1}, {1 << 30, 1, 2}), f,
                      Tensor({1, 1, 1})),
            "");
}

TEST(Errors, BadShapes) {
  Coords coords = twoSites({0, 1, 1}, {0, 1, 2});
  EXPECT_EQ(convError(regular3(), {4, 4}, coords, Tensor({3, 1}),
                      Tensor({9, 1, 1})),
            "features must be 2 x C (one row per site), got rank 2 with 3 "
            "rows");
  EXPECT_EQ(convError(regular3(), {4, 4}, coords, Tensor({2, 2}),
                      Tensor({9, 1, 1})),
            "weight must be K x Cin x Cout = 9 x 2 x Cout, got 9 x 1 x 1");
  EXPECT_EQ(convError(regular3(), {4, 4}, coords, Tensor({2, 1}),
                      Tensor({8, 1, 1})),
            "weight must be K x Cin x Cout = 9 x 1 x Cout, got 8 x 1 x 1");
  Tensor bias({3});
  EXPECT_EQ(convError(regular3(), {4, 4}, coords, Tensor({2, 1}),
                      Tensor({9, 1, 2}), &bias),
            "bias must have Cout = 2 elements");
}

TEST(Errors, BadGeometry) {
  auto normalizeError = [](Geometry g) {
    std::string error;
    return normalizeGeometry(g, error) ? std::string() : error;
  };
  Geometry g;
  g.kind = ConvKind::Subm;
  g.kernel = {3};
  g.stride = {2};
  EXPECT_EQ(normalizeError(g), "subm conv must have stride 1, got [2]");
  g.stride = {};
  g.padding = {0};
  EXPECT_EQ(normalizeError(g),
            "subm conv padding is implied as kernel/2*dilation = [1], got [0]");
  g = Geometry();
  g.kind = ConvKind::Transposed;
  g.kernel = {3, 3};
  g.stride = {2, 2};
  g.outputPadding = {2, 0};
  EXPECT_EQ(normalizeError(g), "output padding 2 in dim 0 must be smaller "
                               "than the stride (2) or the dilation (1)");
  g.dilation = {3, 1};
  EXPECT_EQ(normalizeError(g), ""); // Smaller than the dilation: allowed.
  g.kind = ConvKind::Regular;
  EXPECT_EQ(normalizeError(g),
            "output padding is only allowed for transposed conv");
  g = Geometry();
  g.kernel = {3, 0};
  EXPECT_EQ(normalizeError(g),
            "kernel [3, 0] must be positive and at most 2^31");
  g.kernel = {3, 3};
  g.padding = {1};
  EXPECT_EQ(normalizeError(g), "padding has 1 entries, the kernel 2");
  g.kernel = {1, 1, 1, 1, 1};
  g.padding = {};
  EXPECT_EQ(normalizeError(g), "kernel must have 1 to 4 dimensions, got 5");

  // A window larger than the padded grid leaves no output.
  Geometry big;
  big.kernel = {5};
  std::vector<int64_t> out;
  std::string error;
  ASSERT_TRUE(normalizeGeometry(big, error));
  EXPECT_FALSE(outputGrid(big, {3}, out, error));
  EXPECT_EQ(error, "regular conv output grid is empty in dim 0 (input extent "
                   "3)");
  EXPECT_FALSE(checkGrid({0, 3}, error));
}

TEST(Errors, InverseNeedsEveryForwardOutput) {
  Geometry g;
  g.kind = ConvKind::Inverse;
  g.kernel = {2};
  g.stride = {2};
  Coords fine(1), coarse(1);
  fine.append({0, 0});
  fine.append({0, 3});
  coarse.append({0, 0}); // (0, 1) missing.
  Tensor out;
  std::string error;
  EXPECT_FALSE(inverseConv(g, {4}, fine, coarse, Tensor({1, 1}),
                           Tensor({2, 1, 1}), nullptr, out, error));
  EXPECT_EQ(error, "source coords lack the site (0, 1), an output of the "
                   "regular conv being inverted");
  coarse.append({0, 2}); // Outside the coarse grid [0, 2).
  EXPECT_FALSE(inverseConv(g, {4}, fine, coarse, Tensor({2, 1}),
                           Tensor({2, 1, 1}), nullptr, out, error));
  EXPECT_EQ(error, "source coords row 1: coordinate 2 of spatial dim 0 is "
                   "outside the grid [0, 2)");
  g.kind = ConvKind::Transposed;
  EXPECT_FALSE(inverseConv(g, {4}, fine, coarse, Tensor({2, 1}),
                           Tensor({2, 1, 1}), nullptr, out, error));
  EXPECT_NE(error.find("regular conv"), std::string::npos);
}

} // namespace
