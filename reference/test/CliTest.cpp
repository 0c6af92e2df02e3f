//===- CliTest.cpp - spconv-ref and spconv-npy-compare end to end ---------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Runs the built tools on files in a temporary directory and checks their
// outputs, exit statuses and messages, which lit tests will rely on.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "spconv-ref/NpyBridge.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace spconv;
using namespace spconv::ref;
using namespace spconv::ref::test;

namespace {

class Cli : public ::testing::Test {
protected:
  void SetUp() override {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp ? tmp : "/tmp") + "/spconv-ref-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back(0);
    ASSERT_NE(::mkdtemp(buffer.data()), nullptr);
    dir = buffer.data();
  }
  void TearDown() override {
    std::system(("rm -rf '" + dir + "'").c_str());
  }

  std::string path(const std::string &name) { return dir + "/" + name; }

  void write(const std::string &name, const npy::NpyArray &a) {
    std::string error;
    ASSERT_TRUE(npy::writeNpy(path(name), a, error)) << error;
  }
  npy::NpyArray read(const std::string &name) {
    npy::NpyArray a;
    std::string error;
    EXPECT_TRUE(npy::readNpy(path(name), a, error)) << error;
    return a;
  }

  /// Runs `tool args` in `dir`; returns the exit status and keeps stdout
  /// and stderr.
  int run(const std::string &tool, const std::string &args) {
    std::string cmd = "cd '" + dir + "' && '" + tool + "' " + args +
                      " >stdout.txt 2>stderr.txt";
    int status = std::system(cmd.c_str());
    out = slurp("stdout.txt");
    err = slurp("stderr.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  int ref(const std::string &args) { return run(SPCONV_REF_TOOL, args); }
  int compare(const std::string &args) {
    return run(SPCONV_COMPARE_TOOL, args);
  }

  std::string slurp(const std::string &name) {
    std::ifstream in(path(name));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  /// Two 2-D sites and matching f4 features / 3x3 weights.
  void writeSmallConv() {
    Coords coords(2);
    coords.append({0, 1, 1});
    coords.append({0, 2, 1});
    write("c.npy", coordsToNpy(coords));
    write("f.npy", tensorToNpy(Tensor({2, 3}), npy::DType::Float32));
    write("w.npy", tensorToNpy(Tensor({9, 3, 2}), npy::DType::Float32));
  }

  std::string dir, out, err;
};

// f16 in, f16 out: the result is the double-precision reference rounded
// once to f16.
TEST_F(Cli, ConvKeepsFloat16) {
  std::mt19937 rng(1100);
  Case c = randomCase(rng, ConvKind::Subm, 3);
  while (c.coords.rows() == 0)
    c = randomCase(rng, ConvKind::Subm, 3);
  // Round the operands to f16 first; the reference sees those values.
  npy::NpyArray f = tensorToNpy(c.features, npy::DType::Float16);
  npy::NpyArray w = tensorToNpy(c.weight, npy::DType::Float16);
  ASSERT_TRUE(npyToTensor(f, 2, "f", c.features, err));
  ASSERT_TRUE(npyToTensor(w, 3, "w", c.weight, err));
  write("c.npy", coordsToNpy(c.coords));
  write("f.npy", f);
  write("w.npy", w);
  std::string geometry = "--kernel " + std::to_string(c.geometry.kernel[0]) +
                         "," + std::to_string(c.geometry.kernel[1]) + "," +
                         std::to_string(c.geometry.kernel[2]) +
                         " --dilation " +
                         std::to_string(c.geometry.dilation[0]) + "," +
                         std::to_string(c.geometry.dilation[1]) + "," +
                         std::to_string(c.geometry.dilation[2]) + " --grid " +
                         std::to_string(c.grid[0]) + "," +
                         std::to_string(c.grid[1]) + "," +
                         std::to_string(c.grid[2]);
  ASSERT_EQ(ref("conv --kind subm " + geometry +
                " --coords c.npy --features f.npy --weight w.npy --out-dir "
                "res"),
            0)
      << err;
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");

  Coords outCoords;
  Tensor expected;
  std::string error;
  ASSERT_TRUE(sparseConv(c.geometry, c.grid, c.coords, c.features, c.weight,
                         nullptr, outCoords, expected, error));
  write("expected0.npy", coordsToNpy(outCoords));
  write("expected1.npy", tensorToNpy(expected, npy::DType::Float16));
  EXPECT_EQ(read("res/out1.npy").dtype, npy::DType::Float16);
  EXPECT_EQ(compare("res/out0.npy expected0.npy"), 0) << err;
  EXPECT_EQ(compare("res/out1.npy expected1.npy --rtol 0 --atol 0"), 0) << err;
  EXPECT_EQ(out.rfind("match: ", 0), 0u) << out;
}

TEST_F(Cli, EveryCommandWritesItsResults) {
  writeSmallConv();
  write("b.npy", tensorToNpy(Tensor({2}), npy::DType::Float32));
  ASSERT_EQ(ref("conv --kind regular --kernel 3 --stride 2 --padding 1 "
                "--grid 5,5 --coords c.npy --features f.npy --weight w.npy "
                "--bias b.npy --out-dir r1"),
            0)
      << err;
  // Inputs (1,1) and (2,1) reach outputs (0..1, 0..1) and (1, 0..1).
  EXPECT_EQ(read("r1/out0.npy").describe(), "i4[4, 3]");
  EXPECT_EQ(read("r1/out1.npy").describe(), "f4[4, 2]");

  ASSERT_EQ(ref("inverse --kernel 3 --stride 2 --padding 1 --grid 5,5 "
                "--coords c.npy --source-coords r1/out0.npy --features "
                "r1/out1.npy --weight w.npy --out-dir r2"),
            1);
  EXPECT_EQ(err, "spconv-ref: error: weight must be K x Cin x Cout = 9 x 2 x "
                 "Cout, got 9 x 3 x 2\n");
  write("wt.npy", tensorToNpy(Tensor({9, 2, 3}), npy::DType::Float32));
  ASSERT_EQ(ref("inverse --kernel=3 --stride=2 --padding=1 --grid=5,5 "
                "--coords c.npy --source-coords r1/out0.npy --features "
                "r1/out1.npy --weight wt.npy --out-dir r2"),
            0)
      << err;
  EXPECT_EQ(read("r2/out0.npy").describe(), "f4[2, 3]");

  ASSERT_EQ(ref("pool --mode avg --kernel 2,2 --stride 2 --grid 5,5 --coords "
                "c.npy --features f.npy --out-dir r3"),
            0)
      << err;
  EXPECT_EQ(read("r3/out0.npy").describe(), "i4[2, 3]");

  ASSERT_EQ(ref("rulebook --kind subm --kernel 3 --grid 5,5 --coords c.npy "
                "--out-dir r4"),
            0)
      << err;
  // o = (1,1) pairs with itself (j 4) and (2,1) (j 7); o = (2,1) with
  // (1,1) (j 1) and itself (j 4).
  EXPECT_EQ(out, "outputs: 2\npairs: 4\ncounts: 0 1 0 0 2 0 0 1 0\n");
  npy::NpyArray counts = read("r4/out0.npy"), pairs = read("r4/out2.npy");
  EXPECT_EQ(counts.describe(), "i8[9]");
  EXPECT_EQ(pairs.describe(), "i4[4, 3]");
  // Offset 1 (j = (0, 1)): x = o + (-1, 0): site (1,1) from (2,1)'s row.
  EXPECT_EQ(pairs.getInt(0), 1);
  EXPECT_EQ(pairs.getInt(1), 0);
  EXPECT_EQ(pairs.getInt(2), 1);

  Tensor x({1, 2, 4, 4});
  write("x.npy", tensorToNpy(x, npy::DType::Float64));
  ASSERT_EQ(ref("unfold --kernel 3 --padding 1 --input x.npy --out-dir r5"), 0)
      << err;
  EXPECT_EQ(read("r5/out0.npy").describe(), "f8[1, 18, 16]");
  ASSERT_EQ(ref("fold --kernel 3 --padding 1 --output-size 4,4 --input "
                "r5/out0.npy --out-dir r6"),
            0)
      << err;
  EXPECT_EQ(read("r6/out0.npy").describe(), "f8[1, 2, 4, 4]");

  npy::NpyArray data = npy::NpyArray::zeros(npy::DType::Float32, {1, 2, 3});
  npy::NpyArray index = npy::NpyArray::zeros(npy::DType::Int64, {1, 3});
  index.setInt(2, 2);
  write("d.npy", data);
  write("i.npy", index);
  ASSERT_EQ(ref("segment-max --segments 4 --data d.npy --index i.npy "
                "--out-dir r7"),
            0)
      << err;
  npy::NpyArray positions = read("r7/out1.npy");
  EXPECT_EQ(positions.describe(), "i4[1, 2, 4]");
  EXPECT_EQ(positions.getInt(0), 0);
  EXPECT_EQ(positions.getInt(1), -1);
  EXPECT_EQ(positions.getInt(2), 2);
  ASSERT_EQ(ref("segment-max --segments 2 --data d.npy --index i.npy "
                "--out-dir r7"),
            1);
  EXPECT_EQ(err, "spconv-ref: error: segment_max index[0, 2] = 2 is outside "
                 "[0, 2)\n");
}

TEST_F(Cli, RejectsBadInputsWithStatus1) {
  Coords coords(2);
  coords.append({0, 1, 1});
  coords.append({0, 1, 1});
  write("c.npy", coordsToNpy(coords));
  write("f.npy", tensorToNpy(Tensor({2, 3}), npy::DType::Float32));
  write("w.npy", tensorToNpy(Tensor({9, 3, 2}), npy::DType::Float32));
  const std::string rest =
      " --grid 5,5 --features f.npy --weight w.npy --out-dir r";
  EXPECT_EQ(ref("conv --kind subm --kernel 3 --coords c.npy" + rest), 1);
  EXPECT_EQ(err, "spconv-ref: error: coords rows 0 and 1 are the same site "
                 "(0, 1, 1)\n");
  EXPECT_EQ(ref("conv --kind subm --kernel 3 --coords missing.npy" + rest), 1);
  EXPECT_EQ(err.rfind("spconv-ref: error: --coords: cannot open "
                      "'missing.npy': No such file or directory",
                      0),
            0u)
      << err;
  EXPECT_EQ(ref("conv --kind subm --kernel 3 --coords f.npy" + rest), 1);
  EXPECT_EQ(err, "spconv-ref: error: --coords: expected an i4 array of shape "
                 "N x (1 + D), got f4[2, 3]\n");
}

TEST_F(Cli, RejectsBadCommandLinesWithStatus2) {
  writeSmallConv();
  const std::string rest = " --grid 5,5 --coords c.npy --features f.npy "
                           "--weight w.npy --out-dir r";
  struct {
    std::string args, message;
  } cases[] = {
      {"", "missing command"},
      {"convolve", "unknown command 'convolve'"},
      {"conv --kind subm --kernel 3 --foo 1" + rest,
       "unknown option --foo for 'conv'"},
      {"conv --kind subm --kernel 3 --source-coords c.npy" + rest,
       "unknown option --source-coords for 'conv'"},
      {"conv --kind subm" + rest, "'conv' needs --kernel"},
      {"conv --kind sparse --kernel 3" + rest,
       "--kind: expected subm, regular or transposed, got 'sparse'"},
      {"conv --kind subm --kernel 3,x" + rest,
       "--kernel: expected a comma-separated list of integers, got '3,x'"},
      {"conv --kind subm --kernel 3,3,3" + rest,
       "--kernel: expected 2 values (one per spatial dimension) or 1, got 3"},
      {"conv --kind subm --kernel 3 --stride 2" + rest,
       "geometry: subm conv must have stride 1, got [2, 2]"},
      {"conv --kind subm --kernel 3 --kernel 3" + rest,
       "--kernel given twice"},
      {"conv --kind regular --kernel 3 --grid 0,5 --coords c.npy --features "
       "f.npy --weight w.npy --out-dir r",
       "--grid: grid [0, 5] must have extents in [1, 2^31]"},
      {"pool --mode min --kernel 2 --grid 5,5 --coords c.npy --features f.npy "
       "--out-dir r",
       "--mode: expected max or avg, got 'min'"},
      {"conv --kind subm --kernel 3" + rest + " --bias", "--bias: missing value"},
  };
  for (const auto &c : cases) {
    EXPECT_EQ(ref(c.args), 2) << c.args;
    EXPECT_EQ(err, "spconv-ref: error: " + c.message +
                       "\nrun 'spconv-ref --help' for usage\n")
        << c.args;
  }
  EXPECT_EQ(ref("--help"), 0);
  EXPECT_NE(out.find("usage: spconv-ref COMMAND"), std::string::npos);
}

TEST_F(Cli, CompareStatusesAndMessages) {
  npy::NpyArray a = npy::NpyArray::zeros(npy::DType::Float32, {2, 2});
  a.setDouble(0, 1.0);
  a.setDouble(2, NAN);
  npy::NpyArray b = a;
  write("a.npy", a);
  write("b.npy", b);
  EXPECT_EQ(compare("a.npy b.npy"), 0);
  EXPECT_EQ(out, "match: 4 elements of f4[2, 2] (max |actual - expected| = "
                 "0)\n");
  b.setDouble(0, 1.000001); // Within rtol 1e-5.
  b.setDouble(3, 0.5);
  write("b.npy", b);
  EXPECT_EQ(compare("a.npy b.npy"), 1);
  EXPECT_EQ(err, "spconv-npy-compare: mismatch: 1 of 4 elements differ (rtol "
                 "1e-05, atol 1e-08)\nworst at [1, 1]: actual 0, expected "
                 "0.5\n");
  EXPECT_EQ(compare("a.npy b.npy --atol 0.5"), 0) << err;
  b.setDouble(2, 1.0); // NaN only matches NaN.
  write("b.npy", b);
  EXPECT_EQ(compare("a.npy b.npy --atol 1"), 1);
  EXPECT_NE(err.find("worst at [1, 0]: actual nan, expected 1"),
            std::string::npos)
      << err;

  write("c.npy", npy::NpyArray::zeros(npy::DType::Float64, {2, 2}));
  EXPECT_EQ(compare("a.npy c.npy"), 1);
  EXPECT_EQ(err, "spconv-npy-compare: mismatch: a.npy is f4[2, 2], c.npy is "
                 "f8[2, 2]\n");
  write("d.npy", npy::NpyArray::zeros(npy::DType::Float32, {4}));
  EXPECT_EQ(compare("a.npy d.npy"), 1);

  npy::NpyArray i = npy::NpyArray::zeros(npy::DType::Int32, {3});
  write("i.npy", i);
  i.setInt(1, 1);
  write("j.npy", i);
  EXPECT_EQ(compare("i.npy j.npy --atol 10"), 1); // Integers: exact.
  EXPECT_NE(err.find("worst at [1]: actual 0, expected 1"), std::string::npos);

  EXPECT_EQ(compare("a.npy missing.npy"), 2);
  EXPECT_EQ(compare("a.npy"), 2);
  EXPECT_EQ(compare("a.npy b.npy --rtol -1"), 2);
  EXPECT_NE(err.find("--rtol: expected a nonnegative number, got '-1'"),
            std::string::npos);
}

} // namespace
