//===- Float16Test.cpp - float16 conversion tests -------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Support/Npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace spconv::npy;

namespace {

TEST(Float16, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    float f = halfToFloat(h);
    bool isNaN = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    if (isNaN) {
      EXPECT_TRUE(std::isnan(f)) << bits;
      uint16_t back = floatToHalf(f);
      // Quietened, sign and payload kept.
      EXPECT_EQ(back, h | 0x200) << bits;
    } else {
      EXPECT_EQ(floatToHalf(f), h) << bits;
    }
  }
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  // 65520 is halfway between 65504 (odd mantissa) and 65536: up to Inf.
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(1e9f), 0x7c00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xfc00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
}

TEST(Float16, TiesRoundToEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1).
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 0x3c01 and 0x3c02: to 0x3c02.
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above the tie goes up.
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)),
            0x3c01);
  // Subnormal ties: 2^-25 -> 0, 3 * 2^-25 -> 2 * 2^-24.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25) * 1.0001f), 0x0001);
  EXPECT_EQ(floatToHalf(3 * std::ldexp(1.0f, -25)), 0x0002);
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(floatToHalf(std::ldexp(1023.75f, -24)), 0x0400);
}

// Against a brute-force nearest-even search over neighbouring halves.
TEST(Float16, RandomValuesAreNearest) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-27, 17);
  for (int i = 0; i < 200000; ++i) {
    double x = std::exp2(exponent(rng)) * (rng() & 1 ? 1 : -1);
    uint16_t h = doubleToHalf(x);
    double got = halfToFloat(h);
    if (std::isinf(got)) {
      EXPECT_GE(std::fabs(x), 65520.0);
      continue;
    }
    double err = std::fabs(got - x);
    for (int delta : {-1, 1}) {
      uint16_t n = static_cast<uint16_t>(h + delta);
      if ((n & 0x7fff) >= 0x7c00 || ((n ^ h) & 0x8000))
        continue;
      double otherErr = std::fabs(double(halfToFloat(n)) - x);
      ASSERT_LE(err, otherErr) << x;
      if (err == otherErr) {
        ASSERT_EQ(h & 1, 0) << "tie not to even at " << x;
      }
    }
  }
}

#ifdef __FLT16_MAX__
// The compiler's own conversion as an independent oracle.
TEST(Float16, MatchesCompilerFloat16) {
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    if (std::isnan(f))
      continue;
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t refBits;
    std::memcpy(&refBits, &ref, sizeof(refBits));
    ASSERT_EQ(floatToHalf(f), refBits) << f;
  }
}
#endif

} // namespace
