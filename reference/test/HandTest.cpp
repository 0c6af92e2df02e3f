//===- HandTest.cpp - Tiny cases worked out by hand -----------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// One channel in and out, weight w = [1, 2, 3] (offset j -> w[j]).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace spconv::ref;
using namespace spconv::ref::test;

namespace {

Tensor column(std::vector<double> values) {
  Tensor t({static_cast<int64_t>(values.size()), 1});
  t.data = std::move(values);
  return t;
}

Tensor scalarWeight() {
  Tensor w({3, 1, 1});
  w.data = {1, 2, 3};
  return w;
}

Coords sites1D(std::vector<int32_t> xs, int32_t batch = 0) {
  Coords c(1);
  for (int32_t x : xs)
    c.append({batch, x});
  return c;
}

Geometry geom(ConvKind kind, int64_t k, int64_t s = 1, int64_t p = 0,
              int64_t d = 1, int64_t op = 0) {
  Geometry g;
  g.kind = kind;
  g.kernel = {k};
  g.stride = {s};
  if (kind != ConvKind::Subm)
    g.padding = {p};
  g.dilation = {d};
  g.outputPadding = {op};
  return g;
}

// Regular, grid 7, k 3, s 2, p 1: O = floor((7 + 2 - 2 - 1) / 2) + 1 = 4 and
// output o reads x = 2o - 1 + j. Sites x = 1 (value 1), x = 4 (value 10):
//   o = 0: x in {-1, 0, 1}: x = 1 at j = 2      -> 1 * 3  = 3
//   o = 1: x in {1, 2, 3}:  x = 1 at j = 0      -> 1 * 1  = 1
//   o = 2: x in {3, 4, 5}:  x = 4 at j = 1      -> 10 * 2 = 20
//   o = 3: x in {5, 6, 7}:  none                -> inactive
TEST(Hand, Regular1D) {
  Coords coords = sites1D({4, 1}), outCoords;
  Tensor out;
  std::string error;
  Geometry g = geom(ConvKind::Regular, 3, 2, 1);
  ASSERT_TRUE(sparseConv(g, {7}, coords, column({10, 1}), scalarWeight(),
                         nullptr, outCoords, out, error))
      << error;
  EXPECT_EQ(outCoords.data, (std::vector<int32_t>{0, 0, 0, 1, 0, 2}));
  EXPECT_EQ(out.data, (std::vector<double>{3, 1, 20}));

  Rulebook rb;
  ASSERT_TRUE(buildRulebook(g, {7}, coords, rb, error));
  // Input rows: 0 is x = 4, 1 is x = 1.
  EXPECT_EQ(rb.pairs[0], (std::vector<Pair>{{1, 1}}));
  EXPECT_EQ(rb.pairs[1], (std::vector<Pair>{{0, 2}}));
  EXPECT_EQ(rb.pairs[2], (std::vector<Pair>{{1, 0}}));
}

// Transposed, grid 3, k 3, s 2, p 1: O = (3 - 1) * 2 - 2 + 2 + 0 + 1 = 5 and
// x scatters to o = 2x - 1 + j. Sites x = 0 (1), x = 2 (10):
//   x = 0: o = -1 (dropped), 0 (j 1: 2), 1 (j 2: 3)
//   x = 2: o = 3 (j 0: 10), 4 (j 1: 20), 5 (dropped, O = 5)
TEST(Hand, Transposed1D) {
  Coords outCoords;
  Tensor out;
  std::string error;
  ASSERT_TRUE(sparseConv(geom(ConvKind::Transposed, 3, 2, 1), {3},
                         sites1D({2, 0}), column({10, 1}), scalarWeight(),
                         nullptr, outCoords, out, error))
      << error;
  EXPECT_EQ(outCoords.data, (std::vector<int32_t>{0, 0, 0, 1, 0, 3, 0, 4}));
  EXPECT_EQ(out.data, (std::vector<double>{2, 3, 10, 20}));
  // Output padding 1 grows the grid to 6 and keeps o = 5 (j 2: 30).
  ASSERT_TRUE(sparseConv(geom(ConvKind::Transposed, 3, 2, 1, 1, 1), {3},
                         sites1D({2, 0}), column({10, 1}), scalarWeight(),
                         nullptr, outCoords, out, error))
      << error;
  EXPECT_EQ(out.data, (std::vector<double>{2, 3, 10, 20, 30}));
}

// Subm, grid 5, k 3, d 2: x = o - 2 + 2j. Sites in order 3 (100), 0 (1),
// 2 (10):
//   o = 3: x in {1, 3, 5}: x = 3 at j 1             -> 200
//   o = 0: x in {-2, 0, 2}: x = 0 at j 1, 2 at j 2  -> 2 + 30 = 32
//   o = 2: x in {0, 2, 4}: x = 0 at j 0, 2 at j 1   -> 1 + 20 = 21
TEST(Hand, Subm1DDilated) {
  Coords coords = sites1D({3, 0, 2}), outCoords;
  Tensor out, bias({1});
  bias.data = {0.5};
  std::string error;
  ASSERT_TRUE(sparseConv(geom(ConvKind::Subm, 3, 1, 0, 2), {5}, coords,
                         column({100, 1, 10}), scalarWeight(), &bias,
                         outCoords, out, error))
      << error;
  EXPECT_EQ(outCoords.data, coords.data);
  EXPECT_EQ(out.data, (std::vector<double>{200.5, 32.5, 21.5}));
}

// Inverse of Hand.Regular1D: coarse values g(0) = 1, g(1) = 10, g(2) = 100
// (given in the order 2, 0, 1). out[x] sums g[o] * w[j] over the forward
// pairs: x = 1 has (1 -> 1, j 0) and (1 -> 0, j 2): 10 + 3 = 13;
// x = 4 has (4 -> 2, j 1): 200.
TEST(Hand, Inverse1D) {
  Tensor out;
  std::string error;
  ASSERT_TRUE(inverseConv(geom(ConvKind::Inverse, 3, 2, 1), {7},
                          sites1D({4, 1}), sites1D({2, 0, 1}),
                          column({100, 1, 10}), scalarWeight(), nullptr, out,
                          error))
      << error;
  EXPECT_EQ(out.data, (std::vector<double>{200, 13}));
}

// Batches never mix: the same spatial site in two batches.
TEST(Hand, BatchesAreIndependent) {
  Coords coords(1), outCoords;
  coords.append({1, 1});
  coords.append({0, 1});
  Tensor out;
  std::string error;
  ASSERT_TRUE(sparseConv(geom(ConvKind::Regular, 3, 2, 1), {7}, coords,
                         column({10, 1}), scalarWeight(), nullptr, outCoords,
                         out, error));
  EXPECT_EQ(outCoords.data, (std::vector<int32_t>{0, 0, 0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(out.data, (std::vector<double>{3, 1, 30, 10}));
}

// N = 0 gives empty outputs of the right width.
TEST(Hand, NoSites) {
  Coords coords(3), outCoords;
  Geometry g;
  g.kind = ConvKind::Regular;
  g.kernel = {3, 1, 3};
  g.stride = {2, 1, 2};
  Tensor out, w({9, 5, 7});
  std::string error;
  ASSERT_TRUE(sparseConv(g, {9, 9, 9}, coords, Tensor({0, 5}), w, nullptr,
                         outCoords, out, error))
      << error;
  EXPECT_EQ(outCoords.rows(), 0);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{0, 7}));
}

} // namespace
