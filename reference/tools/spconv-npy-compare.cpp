//===- spconv-npy-compare.cpp - Compare two .npy files --------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// spconv-npy-compare ACTUAL.npy EXPECTED.npy [--rtol R] [--atol A]
//
// Exit status 0 iff the dtypes and shapes are equal and every element is
// close: integers and bools exactly; floats when |a - e| <= atol + rtol * |e|
// (NumPy's isclose, EXPECTED being the reference), infinities of the same
// sign, and NaN only against NaN. 1 on a mismatch, printing it (and the
// worst element) on stderr; 2 on a usage or file error. On a match, one
// summary line on stdout.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Support/Npy.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace spconv::npy;

static const char *const kUsage =
    "usage: spconv-npy-compare ACTUAL.npy EXPECTED.npy [--rtol R] [--atol A]\n"
    "  floats match when |actual - expected| <= atol + rtol * |expected|\n"
    "  (defaults: rtol 1e-5, atol 1e-8); integers must be equal.\n"
    "  exit 0: match, 1: mismatch, 2: usage or file error\n";

static int usageError(const std::string &message) {
  std::fprintf(stderr, "spconv-npy-compare: error: %s\n%s", message.c_str(),
               kUsage);
  return 2;
}

static bool parseTolerance(const char *text, double &value) {
  char *end = nullptr;
  errno = 0;
  value = std::strtod(text, &end);
  return *text && !*end && !errno && std::isfinite(value) && value >= 0;
}

/// "[2, 5]" for flat index `i` of `shape`.
static std::string indexToString(int64_t i, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = i % shape[d];
    i /= shape[d];
  }
  std::string s = "[";
  for (size_t d = 0; d < index.size(); ++d)
    s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

static std::string valueToString(const NpyArray &a, int64_t i) {
  char buffer[64];
  if (isFloat(a.dtype))
    std::snprintf(buffer, sizeof(buffer), "%.*g",
                  a.dtype == DType::Float64 ? 17 : 9, a.getDouble(i));
  else if (a.dtype == DType::UInt64)
    std::snprintf(buffer, sizeof(buffer), "%llu",
                  static_cast<unsigned long long>(a.getInt(i)));
  else
    std::snprintf(buffer, sizeof(buffer), "%lld",
                  static_cast<long long>(a.getInt(i)));
  return buffer;
}

int main(int argc, char **argv) {
  std::vector<std::string> files;
  double rtol = 1e-5, atol = 1e-8;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--rtol" || arg == "--atol") {
      if (i + 1 >= argc)
        return usageError(arg + ": missing value");
      if (!parseTolerance(argv[++i], arg == "--rtol" ? rtol : atol))
        return usageError(arg + ": expected a nonnegative number, got '" +
                          argv[i] + "'");
      continue;
    }
    if (arg.rfind("--", 0) == 0)
      return usageError("unknown option " + arg);
    files.push_back(arg);
  }
  if (files.size() != 2)
    return usageError("expected two .npy files, got " +
                      std::to_string(files.size()));

  NpyArray actual, expected;
  std::string error;
  if (!readNpy(files[0], actual, error) || !readNpy(files[1], expected, error))
    return usageError(error);
  if (actual.dtype != expected.dtype || actual.shape != expected.shape) {
    std::fprintf(stderr,
                 "spconv-npy-compare: mismatch: %s is %s, %s is %s\n",
                 files[0].c_str(), actual.describe().c_str(),
                 files[1].c_str(), expected.describe().c_str());
    return 1;
  }

  // The worst element is the one exceeding its tolerance by the most;
  // a NaN or infinity mismatch counts as infinitely far.
  int64_t n = actual.numElements(), bad = 0, worst = -1;
  double worstExcess = -1, maxDiff = 0;
  bool isFloatType = isFloat(actual.dtype);
  for (int64_t i = 0; i < n; ++i) {
    double excess;
    if (isFloatType) {
      double a = actual.getDouble(i), e = expected.getDouble(i);
      if (std::isnan(a) || std::isnan(e) || std::isinf(a) || std::isinf(e)) {
        bool same = (std::isnan(a) && std::isnan(e)) || a == e;
        excess = same ? 0 : std::numeric_limits<double>::infinity();
      } else {
        double diff = std::fabs(a - e), tolerance = atol + rtol * std::fabs(e);
        maxDiff = std::fmax(maxDiff, diff);
        excess = diff <= tolerance ? 0 : diff - tolerance;
      }
    } else {
      int64_t a = actual.getInt(i), e = expected.getInt(i);
      excess = a == e ? 0 : std::fabs(static_cast<double>(a) - e) + 1;
      maxDiff = std::fmax(maxDiff, std::fabs(static_cast<double>(a) - e));
    }
    if (excess > 0) {
      ++bad;
      if (excess > worstExcess) {
        worstExcess = excess;
        worst = i;
      }
    }
  }
  if (bad == 0) {
    std::printf("match: %lld elements of %s (max |actual - expected| = %g)\n",
                static_cast<long long>(n), actual.describe().c_str(),
                maxDiff);
    return 0;
  }
  std::fprintf(stderr,
               "spconv-npy-compare: mismatch: %lld of %lld elements differ "
               "(rtol %g, atol %g)\n"
               "worst at %s: actual %s, expected %s\n",
               static_cast<long long>(bad), static_cast<long long>(n), rtol,
               atol, indexToString(worst, actual.shape).c_str(),
               valueToString(actual, worst).c_str(),
               valueToString(expected, worst).c_str());
  return 1;
}
