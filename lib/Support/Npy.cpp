//===- Npy.cpp - NumPy .npy file reading and writing ----------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The format: the magic "\x93NUMPY", a major and minor version byte, the
// header length (uint16 for 1.0, uint32 for 2.0 and 3.0, little-endian), a
// Python dict literal with 'descr', 'fortran_order' and 'shape', padded with
// spaces and ended by '\n', then the raw data.
//
//===----------------------------------------------------------------------===//

#include "SpConv/Support/Npy.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace spconv::npy;

namespace {
struct DTypeInfo {
  DType dtype;
  const char *name;
  size_t size;
};
} // namespace

static const DTypeInfo kDTypes[] = {
    {DType::Bool, "b1", 1},     {DType::Int8, "i1", 1},
    {DType::UInt8, "u1", 1},    {DType::Int16, "i2", 2},
    {DType::UInt16, "u2", 2},   {DType::Int32, "i4", 4},
    {DType::UInt32, "u4", 4},   {DType::Int64, "i8", 8},
    {DType::UInt64, "u8", 8},   {DType::Float16, "f2", 2},
    {DType::Float32, "f4", 4},  {DType::Float64, "f8", 8},
};

static const DTypeInfo &info(DType dtype) {
  for (const DTypeInfo &i : kDTypes)
    if (i.dtype == dtype)
      return i;
  assert(false && "unknown dtype");
  return kDTypes[0];
}

size_t spconv::npy::dtypeSize(DType dtype) { return info(dtype).size; }
const char *spconv::npy::dtypeName(DType dtype) { return info(dtype).name; }

bool spconv::npy::parseDTypeName(const std::string &name, DType &dtype) {
  for (const DTypeInfo &i : kDTypes) {
    if (name == i.name) {
      dtype = i.dtype;
      return true;
    }
  }
  return false;
}

bool spconv::npy::isFloat(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::Float32 ||
         dtype == DType::Float64;
}

bool spconv::npy::isInteger(DType dtype) { return !isFloat(dtype); }

bool spconv::npy::checkedElementCount(const std::vector<int64_t> &shape,
                                      int64_t &count) {
  count = 1;
  for (int64_t extent : shape) {
    if (extent < 0)
      return false;
    if (extent != 0 && count > std::numeric_limits<int64_t>::max() / extent)
      return false;
    count *= extent;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// NpyArray
//===----------------------------------------------------------------------===//

NpyArray NpyArray::zeros(DType dtype, std::vector<int64_t> shape) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  int64_t count = 0;
  bool ok = checkedElementCount(a.shape, count);
  assert(ok && "element count overflows int64");
  (void)ok;
  a.data.assign(static_cast<size_t>(count) * dtypeSize(dtype), 0);
  return a;
}

int64_t NpyArray::numElements() const {
  int64_t count = 0;
  checkedElementCount(shape, count);
  return count;
}

template <typename T> static T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T> static void store(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

double NpyArray::getDouble(int64_t i) const {
  const uint8_t *p = data.data() + static_cast<size_t>(i) * itemSize();
  switch (dtype) {
  case DType::Float16:
    return halfToFloat(load<uint16_t>(p));
  case DType::Float32:
    return load<float>(p);
  case DType::Float64:
    return load<double>(p);
  case DType::UInt64:
    return static_cast<double>(load<uint64_t>(p));
  default:
    return static_cast<double>(getInt(i));
  }
}

int64_t NpyArray::getInt(int64_t i) const {
  const uint8_t *p = data.data() + static_cast<size_t>(i) * itemSize();
  switch (dtype) {
  case DType::Bool:
    return load<uint8_t>(p) != 0;
  case DType::Int8:
    return load<int8_t>(p);
  case DType::UInt8:
    return load<uint8_t>(p);
  case DType::Int16:
    return load<int16_t>(p);
  case DType::UInt16:
    return load<uint16_t>(p);
  case DType::Int32:
    return load<int32_t>(p);
  case DType::UInt32:
    return load<uint32_t>(p);
  case DType::Int64:
    return load<int64_t>(p);
  case DType::UInt64:
    return static_cast<int64_t>(load<uint64_t>(p));
  default:
    return static_cast<int64_t>(getDouble(i));
  }
}

// Truncates toward zero, saturating, with NaN -> 0 (a plain cast is UB).
static int64_t toInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9.2233720368547758e18)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

void NpyArray::setDouble(int64_t i, double v) {
  uint8_t *p = data.data() + static_cast<size_t>(i) * itemSize();
  switch (dtype) {
  case DType::Float16:
    return store<uint16_t>(p, doubleToHalf(v));
  case DType::Float32:
    return store<float>(p, static_cast<float>(v));
  case DType::Float64:
    return store<double>(p, v);
  case DType::Bool:
    return store<uint8_t>(p, v != 0);
  default:
    return setInt(i, toInt(v));
  }
}

void NpyArray::setInt(int64_t i, int64_t v) {
  uint8_t *p = data.data() + static_cast<size_t>(i) * itemSize();
  switch (dtype) {
  case DType::Bool:
    return store<uint8_t>(p, v != 0);
  case DType::Int8:
  case DType::UInt8:
    return store<uint8_t>(p, static_cast<uint8_t>(v));
  case DType::Int16:
  case DType::UInt16:
    return store<uint16_t>(p, static_cast<uint16_t>(v));
  case DType::Int32:
  case DType::UInt32:
    return store<uint32_t>(p, static_cast<uint32_t>(v));
  case DType::Int64:
  case DType::UInt64:
    return store<uint64_t>(p, static_cast<uint64_t>(v));
  default:
    return setDouble(i, static_cast<double>(v));
  }
}

std::string NpyArray::describe() const {
  std::string s = dtypeName(dtype);
  s += "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

namespace {
/// A tiny parser for the dict literal NumPy writes; it accepts either quote
/// character and Python 2's "3L" integers.
class HeaderParser {
public:
  HeaderParser(const std::string &text) : text(text) {}

  bool parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape,
             std::string &error);

private:
  void skipSpace() {
    while (pos < text.size() &&
           (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n'))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool parseString(std::string &s);
  bool parseInt(int64_t &v);

  const std::string &text;
  size_t pos = 0;
};
} // namespace

bool HeaderParser::parseString(std::string &s) {
  skipSpace();
  if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
    return false;
  char quote = text[pos++];
  size_t end = text.find(quote, pos);
  if (end == std::string::npos)
    return false;
  s = text.substr(pos, end - pos);
  pos = end + 1;
  return true;
}

bool HeaderParser::parseInt(int64_t &v) {
  skipSpace();
  size_t start = pos;
  v = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    int digit = text[pos++] - '0';
    if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
      return false;
    v = v * 10 + digit;
  }
  if (pos == start)
    return false;
  if (pos < text.size() && text[pos] == 'L')
    ++pos;
  return true;
}

bool HeaderParser::parse(std::string &descr, bool &fortran,
                         std::vector<int64_t> &shape, std::string &error) {
  bool haveDescr = false, haveFortran = false, haveShape = false;
  if (!consume('{')) {
    error = "header is not a dict literal";
    return false;
  }
  while (!consume('}')) {
    std::string key;
    if (!parseString(key) || !consume(':')) {
      error = "malformed header near offset " + std::to_string(pos);
      return false;
    }
    skipSpace();
    if (key == "descr") {
      if (!parseString(descr)) {
        error = "unsupported dtype: 'descr' is not a simple type string "
                "(structured dtypes are not supported)";
        return false;
      }
      haveDescr = true;
    } else if (key == "fortran_order") {
      if (text.compare(pos, 4, "True") == 0) {
        fortran = true;
        pos += 4;
      } else if (text.compare(pos, 5, "False") == 0) {
        fortran = false;
        pos += 5;
      } else {
        error = "'fortran_order' is neither True nor False";
        return false;
      }
      haveFortran = true;
    } else if (key == "shape") {
      if (!consume('(')) {
        error = "'shape' is not a tuple";
        return false;
      }
      shape.clear();
      while (!consume(')')) {
        int64_t extent;
        if (!parseInt(extent)) {
          error = "'shape' holds something other than nonnegative integers "
                  "that fit int64";
          return false;
        }
        shape.push_back(extent);
        if (!consume(',')) {
          if (!consume(')')) {
            error = "malformed 'shape' tuple";
            return false;
          }
          break;
        }
      }
      haveShape = true;
    } else {
      error = "unexpected header key '" + key + "'";
      return false;
    }
    if (!consume(',')) {
      if (!consume('}')) {
        error = "malformed header near offset " + std::to_string(pos);
        return false;
      }
      break;
    }
  }
  if (!haveDescr || !haveFortran || !haveShape) {
    error = std::string("header lacks '") +
            (!haveDescr ? "descr" : !haveFortran ? "fortran_order" : "shape") +
            "'";
    return false;
  }
  return true;
}

bool spconv::npy::parseNpy(const uint8_t *bytes, size_t size,
                           const std::string &name, NpyArray &out,
                           std::string &error) {
  auto fail = [&](const std::string &what) {
    error = name + ": " + what;
    return false;
  };
  static const char kMagic[] = "\x93NUMPY";
  if (size < 8 || std::memcmp(bytes, kMagic, 6) != 0)
    return fail("not a .npy file (bad magic)");
  unsigned major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return fail("unsupported .npy format version " + std::to_string(major) +
                "." + std::to_string(minor));
  size_t prefix = major == 1 ? 10 : 12;
  if (size < prefix)
    return fail("truncated header");
  size_t headerLen = major == 1 ? load<uint16_t>(bytes + 8)
                                : load<uint32_t>(bytes + 8);
  if (size - prefix < headerLen)
    return fail("truncated header: " + std::to_string(headerLen) +
                " bytes announced, " + std::to_string(size - prefix) +
                " present");
  std::string header(reinterpret_cast<const char *>(bytes + prefix),
                     headerLen);

  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  std::string parseError;
  if (!HeaderParser(header).parse(descr, fortran, shape, parseError))
    return fail(parseError);

  if (descr.empty())
    return fail("unsupported dtype ''");
  char order = descr[0];
  std::string code = descr.substr(1);
  DType dtype;
  if ((order != '<' && order != '>' && order != '|' && order != '=') ||
      !parseDTypeName(code, dtype))
    return fail("unsupported dtype '" + descr +
                "' (supported: b1 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8)");
  if (order == '>' && dtypeSize(dtype) > 1)
    return fail("big-endian data ('" + descr + "') is not supported");
  if (fortran)
    return fail("Fortran-order arrays are not supported");

  int64_t count;
  if (!checkedElementCount(shape, count) ||
      count > std::numeric_limits<int64_t>::max() /
                  static_cast<int64_t>(dtypeSize(dtype)))
    return fail("shape's element count overflows int64");
  uint64_t dataBytes = static_cast<uint64_t>(count) * dtypeSize(dtype);
  uint64_t available = size - prefix - headerLen;
  if (available < dataBytes)
    return fail("truncated data: " + std::to_string(dataBytes) +
                " bytes expected for " + descr + " shape with " +
                std::to_string(count) + " elements, " +
                std::to_string(available) + " present");

  out.dtype = dtype;
  out.shape = std::move(shape);
  const uint8_t *begin = bytes + prefix + headerLen;
  out.data.assign(begin, begin + dataBytes);
  return true;
}

bool spconv::npy::readNpy(const std::string &path, NpyArray &out,
                          std::string &error) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::vector<uint8_t> bytes;
  uint8_t buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + n);
  bool readError = std::ferror(file);
  std::fclose(file);
  if (readError) {
    error = "cannot read '" + path + "'";
    return false;
  }
  return parseNpy(bytes.data(), bytes.size(), path, out, error);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

bool spconv::npy::serializeNpy(const NpyArray &a, std::vector<uint8_t> &bytes,
                               std::string &error) {
  int64_t count;
  if (!checkedElementCount(a.shape, count)) {
    error = "shape " + a.describe() + " is invalid or overflows int64";
    return false;
  }
  if (a.data.size() != static_cast<uint64_t>(count) * a.itemSize()) {
    error = "array " + a.describe() + " holds " +
            std::to_string(a.data.size()) + " bytes, expected " +
            std::to_string(static_cast<uint64_t>(count) * a.itemSize());
    return false;
  }
  std::string dict = "{'descr': '";
  dict += a.itemSize() == 1 ? '|' : '<';
  dict += dtypeName(a.dtype);
  dict += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i) {
    if (i)
      dict += ", ";
    dict += std::to_string(a.shape[i]);
  }
  if (a.shape.size() == 1)
    dict += ",";
  dict += "), }";

  // Pad with spaces so that the data starts on a 64-byte boundary.
  size_t prefix = 10;
  size_t total = prefix + dict.size() + 1;
  if (((total + 63) / 64) * 64 - prefix > 0xffff)
    prefix = 12;
  total = ((prefix + dict.size() + 1 + 63) / 64) * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';

  bytes.clear();
  bytes.reserve(total + a.data.size());
  static const char kMagic[] = "\x93NUMPY";
  bytes.insert(bytes.end(), kMagic, kMagic + 6);
  bytes.push_back(prefix == 10 ? 1 : 2);
  bytes.push_back(0);
  uint32_t len = static_cast<uint32_t>(dict.size());
  bytes.push_back(len & 0xff);
  bytes.push_back((len >> 8) & 0xff);
  if (prefix == 12) {
    bytes.push_back((len >> 16) & 0xff);
    bytes.push_back((len >> 24) & 0xff);
  }
  bytes.insert(bytes.end(), dict.begin(), dict.end());
  bytes.insert(bytes.end(), a.data.begin(), a.data.end());
  return true;
}

bool spconv::npy::writeNpy(const std::string &path, const NpyArray &a,
                           std::string &error) {
  std::vector<uint8_t> bytes;
  if (!serializeNpy(a, bytes, error)) {
    error = path + ": " + error;
    return false;
  }
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    error = "cannot create '" + path + "': " + std::strerror(errno);
    return false;
  }
  size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file);
  bool ok = written == bytes.size();
  ok &= std::fclose(file) == 0;
  if (!ok) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  return true;
}
