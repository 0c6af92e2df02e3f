//===- BuiltinsTest.cpp - The compiler builtins the runtime defines -------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

extern "C" float __truncsfbf2(float value);

namespace {

/// The bfloat bits __truncsfbf2 returns in the low half of its register.
uint16_t truncate(float value) {
  float result = __truncsfbf2(value);
  uint32_t bits;
  std::memcpy(&bits, &result, sizeof(bits));
  return static_cast<uint16_t>(bits & 0xffffu);
}

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

TEST(Builtins, TruncSFBF2RoundsToNearestEven) {
  EXPECT_EQ(truncate(1.0f), 0x3f80);
  EXPECT_EQ(truncate(-2.0f), 0xc000);
  EXPECT_EQ(truncate(0.0f), 0x0000);
  EXPECT_EQ(truncate(-0.0f), 0x8000);
  // Halfway cases go to the even neighbour; just above halfway rounds up.
  EXPECT_EQ(truncate(fromBits(0x3f808000u)), 0x3f80);
  EXPECT_EQ(truncate(fromBits(0x3f818000u)), 0x3f82);
  EXPECT_EQ(truncate(fromBits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(truncate(fromBits(0x3f807fffu)), 0x3f80);
  // The largest floats round to infinity; infinities stay.
  EXPECT_EQ(truncate(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(truncate(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(truncate(-std::numeric_limits<float>::infinity()), 0xff80);
  // Subnormals round like any other value.
  EXPECT_EQ(truncate(fromBits(0x00018000u)), 0x0002);
}

TEST(Builtins, TruncSFBF2KeepsNaNs) {
  // A NaN whose payload sits in the low bits must not become an infinity.
  uint16_t quiet = truncate(fromBits(0x7f800001u));
  EXPECT_EQ(quiet & 0x7f80, 0x7f80);
  EXPECT_NE(quiet & 0x007f, 0);
  EXPECT_EQ(truncate(-std::nanf("")) & 0x8000, 0x8000);
}

} // namespace
