//===- NpyTest.cpp - .npy reading and writing tests -----------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Support/Npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

using namespace spconv::npy;

namespace {

std::string tempPath(const std::string &name) {
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/spconv-npy-test-" +
         std::to_string(getpid()) + "-" + name;
}

std::vector<uint8_t> bytesOf(const std::string &s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

/// A file with the given version and header text (padded like NumPy does)
/// followed by `data`.
std::vector<uint8_t> makeFile(int major, std::string dict,
                              const std::vector<uint8_t> &data) {
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64)
    dict += ' ';
  dict += '\n';
  std::vector<uint8_t> out = bytesOf(std::string("\x93NUMPY", 6));
  out.push_back(static_cast<uint8_t>(major));
  out.push_back(0);
  uint32_t len = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back((len >> (8 * i)) & 0xff);
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

bool parse(const std::vector<uint8_t> &bytes, NpyArray &a, std::string &err) {
  return parseNpy(bytes.data(), bytes.size(), "x.npy", a, err);
}

void expectRejected(const std::vector<uint8_t> &bytes,
                    const std::string &fragment) {
  NpyArray a;
  std::string err;
  EXPECT_FALSE(parse(bytes, a, err));
  EXPECT_NE(err.find(fragment), std::string::npos) << err;
  EXPECT_EQ(err.rfind("x.npy: ", 0), 0u) << err;
}

class NpyRoundTrip : public ::testing::TestWithParam<DType> {};

TEST_P(NpyRoundTrip, ThroughAFile) {
  DType dtype = GetParam();
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{}, {5}, {2, 3}, {0, 3}, {2, 1, 3, 2}}) {
    NpyArray a = NpyArray::zeros(dtype, shape);
    // Small values that every dtype holds, negative ones where it can.
    bool isSigned = isFloat(dtype) || dtype == DType::Int8 ||
                    dtype == DType::Int16 || dtype == DType::Int32 ||
                    dtype == DType::Int64;
    for (int64_t i = 0; i < a.numElements(); ++i)
      a.setDouble(i, dtype == DType::Bool ? i % 2 : i % 7 - (isSigned ? 3 : 0));
    std::string path = tempPath(std::string(dtypeName(dtype)) + ".npy");
    std::string err;
    ASSERT_TRUE(writeNpy(path, a, err)) << err;
    NpyArray b;
    ASSERT_TRUE(readNpy(path, b, err)) << err;
    std::remove(path.c_str());
    EXPECT_EQ(b.dtype, dtype);
    EXPECT_EQ(b.shape, shape);
    EXPECT_EQ(b.data, a.data);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllDTypes, NpyRoundTrip,
    ::testing::Values(DType::Bool, DType::Int8, DType::UInt8, DType::Int16,
                      DType::UInt16, DType::Int32, DType::UInt32, DType::Int64,
                      DType::UInt64, DType::Float16, DType::Float32,
                      DType::Float64));

TEST(Npy, WritesNumPysHeader) {
  NpyArray a = NpyArray::zeros(DType::Float32, {2, 3});
  std::vector<uint8_t> bytes;
  std::string err;
  ASSERT_TRUE(serializeNpy(a, bytes, err)) << err;
  // What numpy.save writes: a 128-byte header, data 64-byte aligned.
  ASSERT_EQ(bytes.size(), 128u + 24u);
  std::string header(bytes.begin(), bytes.begin() + 128);
  EXPECT_EQ(header.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(bytes[8] | (bytes[9] << 8), 118);
  EXPECT_EQ(header.substr(10),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
                std::string(58, ' ') + "\n");

  NpyArray v = NpyArray::zeros(DType::UInt8, {4});
  ASSERT_TRUE(serializeNpy(v, bytes, err)) << err;
  std::string text(bytes.begin() + 10, bytes.begin() + 128);
  EXPECT_EQ(text.find("{'descr': '|u1', 'fortran_order': False, 'shape': "
                      "(4,), }"),
            0u);
}

TEST(Npy, TypedValues) {
  NpyArray a = NpyArray::zeros(DType::Float16, {3});
  a.setDouble(0, 1.5);
  a.setDouble(1, -65504);
  a.setDouble(2, 1e6);
  EXPECT_EQ(a.dataAs<uint16_t>()[0], 0x3e00);
  EXPECT_EQ(a.getDouble(1), -65504.0);
  EXPECT_TRUE(std::isinf(a.getDouble(2)));
  NpyArray i = NpyArray::zeros(DType::Int64, {1});
  i.setInt(0, -(int64_t(1) << 60));
  EXPECT_EQ(i.getInt(0), -(int64_t(1) << 60));
  EXPECT_EQ(i.describe(), "i8[1]");
}

TEST(Npy, ReadsVersion2And3) {
  std::vector<uint8_t> data = {1, 0, 0, 0, 2, 0, 0, 0};
  for (int major : {2, 3}) {
    NpyArray a;
    std::string err;
    ASSERT_TRUE(parse(makeFile(major,
                               "{'descr': '<i4', 'fortran_order': False, "
                               "'shape': (2,), }",
                               data),
                      a, err))
        << err;
    EXPECT_EQ(a.dtype, DType::Int32);
    EXPECT_EQ(a.shape, std::vector<int64_t>{2});
    EXPECT_EQ(a.getInt(1), 2);
  }
}

TEST(Npy, WritesVersion2ForHugeHeaders) {
  // 30000 dimensions of extent 1 need a header longer than 65535 bytes.
  NpyArray a = NpyArray::zeros(DType::Int8, std::vector<int64_t>(30000, 1));
  std::vector<uint8_t> bytes;
  std::string err;
  ASSERT_TRUE(serializeNpy(a, bytes, err)) << err;
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ((bytes.size() - 1) % 64, 0u);
  NpyArray b;
  ASSERT_TRUE(parse(bytes, b, err)) << err;
  EXPECT_EQ(b.shape.size(), 30000u);
}

TEST(Npy, AcceptsHeaderVariants) {
  // Double quotes, Python 2 longs, other key order, no trailing comma.
  NpyArray a;
  std::string err;
  ASSERT_TRUE(parse(makeFile(1,
                             "{\"shape\": (1L, 2L), \"fortran_order\": False,"
                             " \"descr\": \"<f8\"}",
                             std::vector<uint8_t>(16, 0)),
                    a, err))
      << err;
  EXPECT_EQ(a.dtype, DType::Float64);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{1, 2}));
  // A scalar.
  ASSERT_TRUE(parse(makeFile(1,
                             "{'descr': '|b1', 'fortran_order': False, "
                             "'shape': (), }",
                             {1}),
                    a, err))
      << err;
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.numElements(), 1);
}

TEST(Npy, RejectsMissingFile) {
  NpyArray a;
  std::string err;
  EXPECT_FALSE(readNpy(tempPath("does-not-exist.npy"), a, err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
  EXPECT_NE(err.find("No such file"), std::string::npos) << err;
}

TEST(Npy, RejectsMalformedFiles) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, ";
  std::vector<uint8_t> good = makeFile(1, f4 + "'shape': (2,), }",
                                       std::vector<uint8_t>(8, 0));
  std::vector<uint8_t> badMagic = good;
  badMagic[1] = 'X';
  expectRejected(badMagic, "bad magic");
  expectRejected(bytesOf("\x93NUM"), "bad magic");

  std::vector<uint8_t> badVersion = good;
  badVersion[6] = 4;
  expectRejected(badVersion, "unsupported .npy format version 4.0");

  expectRejected(makeFile(1,
                          "{'descr': '<f4', 'fortran_order': True, "
                          "'shape': (2,), }",
                          std::vector<uint8_t>(8, 0)),
                 "Fortran-order");
  expectRejected(makeFile(1,
                          "{'descr': '>f4', 'fortran_order': False, "
                          "'shape': (2,), }",
                          std::vector<uint8_t>(8, 0)),
                 "big-endian");
  expectRejected(makeFile(1,
                          "{'descr': '<c8', 'fortran_order': False, "
                          "'shape': (2,), }",
                          std::vector<uint8_t>(16, 0)),
                 "unsupported dtype '<c8'");
  expectRejected(makeFile(1,
                          "{'descr': [('a', '<f4')], 'fortran_order': False,"
                          " 'shape': (2,), }",
                          std::vector<uint8_t>(8, 0)),
                 "structured dtypes");
  expectRejected(makeFile(1, f4 + "'shape': (3,), }",
                          std::vector<uint8_t>(8, 0)),
                 "truncated data: 12 bytes expected");
  std::vector<uint8_t> shortHeader(good.begin(), good.begin() + 40);
  expectRejected(shortHeader, "truncated header");
  expectRejected(makeFile(1, f4 + "'shape': (4611686018427387904, 4), }", {}),
                 "overflows int64");
  expectRejected(makeFile(1, f4 + "'shape': (99999999999999999999,), }", {}),
                 "'shape'");
  expectRejected(makeFile(1, "{'descr': '<f4', 'shape': (2,), }",
                          std::vector<uint8_t>(8, 0)),
                 "lacks 'fortran_order'");
  expectRejected(makeFile(1, f4 + "'shape': (2,), 'x': 1, }",
                          std::vector<uint8_t>(8, 0)),
                 "unexpected header key 'x'");
  expectRejected(makeFile(1, f4 + "'shape': (-2,), }", {}), "'shape'");
}

TEST(Npy, WriteRejectsInconsistentArrays) {
  NpyArray a = NpyArray::zeros(DType::Float32, {2});
  a.data.pop_back();
  std::string err;
  EXPECT_FALSE(writeNpy(tempPath("bad.npy"), a, err));
  EXPECT_NE(err.find("holds 7 bytes, expected 8"), std::string::npos) << err;
  NpyArray b = NpyArray::zeros(DType::Float32, {1});
  EXPECT_FALSE(writeNpy("/nonexistent-dir/x.npy", b, err));
  EXPECT_NE(err.find("cannot create"), std::string::npos) << err;
}

} // namespace
