//===- spconv-ref.cpp - Run the reference on .npy files -------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Runs one reference operation on .npy inputs and writes its results to
// DIR/out0.npy, DIR/out1.npy, ... in the order of the matching op's results.
// Exit status: 0 on success, 1 when the inputs are rejected (unreadable
// file, bad shape, duplicate site, ...), 2 on a command-line error. An
// error is reported on stderr as "spconv-ref: error: <message>" (usage errors
// add a line pointing at --help); nothing is written to stdout except by
// `rulebook`, which prints its counts.
//
//===----------------------------------------------------------------------===//

#include "spconv-ref/NpyBridge.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sys/stat.h>

using namespace spconv;
using namespace spconv::ref;

static const char *const kUsage = R"(usage: spconv-ref COMMAND OPTIONS

Commands and their results (written as DIR/out<i>.npy):
  conv --kind subm|regular|transposed --kernel K --grid G --coords C.npy
       --features F.npy --weight W.npy [--bias B.npy] [--stride S]
       [--padding P] [--dilation D] [--output-padding OP] --out-dir DIR
      out0: output coords (i4, subm: the input coords; otherwise sorted by
      key), out1: output features (the dtype of F).
  inverse --kernel K --grid FINE --coords FINE.npy --source-coords COARSE.npy
       --features F.npy --weight W.npy [--bias B.npy] [--stride S]
       [--padding P] [--dilation D] --out-dir DIR
      out0: features on the fine sites, in their order.
  pool --mode max|avg --kernel K --grid G --coords C.npy --features F.npy
       [--stride S] [--padding P] [--dilation D] --out-dir DIR
      out0: output coords (sorted by key), out1: pooled features.
  rulebook --kind subm|regular|transposed --kernel K --grid G --coords C.npy
       [--stride S] [--padding P] [--dilation D] [--output-padding OP]
       --out-dir DIR
      out0: pairs per kernel offset (i8, K), out1: output coords,
      out2: pairs (i4, P x 3: offset, input row, output row; by offset, then
      input row). Also prints the counts.
  unfold --kernel K --input X.npy [--stride S] [--padding P] [--dilation D]
       --out-dir DIR
      out0: N x (C*K) x L.
  fold --kernel K --output-size S --input X.npy [--stride S] [--padding P]
       [--dilation D] --out-dir DIR
      out0: N x C x S...
  segment-max --segments M --data D.npy --index I.npy --out-dir DIR
      out0: values (B x C x M, the dtype of D), out1: positions (i4).

Lists are comma-separated (3,3,3); a single value applies to every spatial
dimension. Options may also be written --name=value.
)";

namespace {

/// A command's accepted and required options.
struct Command {
  const char *name;
  std::vector<std::string> required;
  std::vector<std::string> optional;
};

const Command kCommands[] = {
    {"conv",
     {"kind", "kernel", "grid", "coords", "features", "weight", "out-dir"},
     {"bias", "stride", "padding", "dilation", "output-padding"}},
    {"inverse",
     {"kernel", "grid", "coords", "source-coords", "features", "weight",
      "out-dir"},
     {"bias", "stride", "padding", "dilation"}},
    {"pool",
     {"mode", "kernel", "grid", "coords", "features", "out-dir"},
     {"stride", "padding", "dilation"}},
    {"rulebook",
     {"kind", "kernel", "grid", "coords", "out-dir"},
     {"stride", "padding", "dilation", "output-padding"}},
    {"unfold", {"kernel", "input", "out-dir"}, {"stride", "padding", "dilation"}},
    {"fold",
     {"kernel", "output-size", "input", "out-dir"},
     {"stride", "padding", "dilation"}},
    {"segment-max", {"segments", "data", "index", "out-dir"}, {}},
};

/// A failure: the message and the exit status.
struct Failure {
  std::string message;
  int status = 0;
  bool failed() const { return status != 0; }
};

Failure usageError(const std::string &message) { return {message, 2}; }
Failure inputError(const std::string &message) { return {message, 1}; }

class Args {
public:
  std::map<std::string, std::string> values;

  bool has(const std::string &name) const { return values.count(name); }
  const std::string &get(const std::string &name) const {
    return values.at(name);
  }
};

bool parseInt(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end || text[0] == ' ' || text[0] == '+')
    return false;
  value = v;
  return true;
}

/// "3,3,3" (or "3", broadcast to `rank` when rank > 0).
Failure parseList(const Args &args, const std::string &name, int64_t rank,
                  std::vector<int64_t> &list) {
  list.clear();
  if (!args.has(name))
    return {};
  const std::string &text = args.get(name);
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos
                                              ? std::string::npos
                                              : comma - start);
    int64_t v;
    if (!parseInt(item, v))
      return usageError("--" + name +
                        ": expected a comma-separated list of integers, got '" +
                        text + "'");
    list.push_back(v);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (rank > 0 && list.size() == 1)
    list.assign(rank, list[0]);
  if (rank > 0 && static_cast<int64_t>(list.size()) != rank)
    return usageError("--" + name + ": expected " + std::to_string(rank) +
                      " values (one per spatial dimension) or 1, got " +
                      std::to_string(list.size()));
  return {};
}

/// The window options; the rank comes from `rank`.
Failure parseGeometry(const Args &args, ConvKind kind, int64_t rank,
                      Geometry &g) {
  g.kind = kind;
  Failure f;
  if ((f = parseList(args, "kernel", rank, g.kernel)).failed() ||
      (f = parseList(args, "stride", rank, g.stride)).failed() ||
      (f = parseList(args, "padding", rank, g.padding)).failed() ||
      (f = parseList(args, "dilation", rank, g.dilation)).failed() ||
      (f = parseList(args, "output-padding", rank, g.outputPadding)).failed())
    return f;
  std::string error;
  Geometry check = g;
  if (!normalizeGeometry(check, error))
    return usageError("geometry: " + error);
  return {};
}

Failure parseGrid(const Args &args, std::vector<int64_t> &grid) {
  Failure f = parseList(args, "grid", 0, grid);
  if (f.failed())
    return f;
  std::string error;
  if (!checkGrid(grid, error))
    return usageError("--grid: " + error);
  return {};
}

Failure load(const Args &args, const std::string &name, npy::NpyArray &out) {
  std::string error;
  if (!npy::readNpy(args.get(name), out, error))
    return inputError("--" + name + ": " + error);
  return {};
}

Failure loadTensor(const Args &args, const std::string &name, int64_t rank,
                   Tensor &tensor, npy::DType *dtype = nullptr) {
  npy::NpyArray array;
  Failure f = load(args, name, array);
  if (f.failed())
    return f;
  std::string error;
  if (!npyToTensor(array, rank, "--" + name, tensor, error))
    return inputError(error);
  if (dtype)
    *dtype = array.dtype;
  return {};
}

Failure loadCoords(const Args &args, const std::string &name, Coords &coords) {
  npy::NpyArray array;
  Failure f = load(args, name, array);
  if (f.failed())
    return f;
  std::string error;
  if (!npyToCoords(array, "--" + name, coords, error))
    return inputError(error);
  return {};
}

/// Writes DIR/out<i>.npy for each result, creating DIR if needed.
Failure writeResults(const Args &args,
                     const std::vector<npy::NpyArray> &results) {
  const std::string &dir = args.get("out-dir");
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    return inputError("--out-dir: cannot create '" + dir +
                      "': " + std::strerror(errno));
  for (size_t i = 0; i < results.size(); ++i) {
    std::string error;
    if (!npy::writeNpy(dir + "/out" + std::to_string(i) + ".npy", results[i],
                       error))
      return inputError(error);
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Commands
//===----------------------------------------------------------------------===//

Failure parseKind(const Args &args, ConvKind &kind) {
  if (!parseConvKind(args.get("kind"), kind) || kind == ConvKind::Inverse)
    return usageError("--kind: expected subm, regular or transposed, got '" +
                      args.get("kind") + "'");
  return {};
}

/// --kind, --grid and the geometry options of a conv or rulebook command.
Failure parseLayer(const Args &args, ConvKind &kind, std::vector<int64_t> &grid,
                   Geometry &g) {
  Failure f;
  if ((f = parseKind(args, kind)).failed() || (f = parseGrid(args, grid)).failed())
    return f;
  return parseGeometry(args, kind, grid.size(), g);
}

Failure runConv(const Args &args) {
  ConvKind kind;
  std::vector<int64_t> grid;
  Geometry g;
  Failure f;
  if ((f = parseLayer(args, kind, grid, g)).failed())
    return f;
  Coords coords;
  Tensor features, weight, bias;
  npy::DType dtype;
  if ((f = loadCoords(args, "coords", coords)).failed() ||
      (f = loadTensor(args, "features", 2, features, &dtype)).failed() ||
      (f = loadTensor(args, "weight", 3, weight)).failed() ||
      (args.has("bias") && (f = loadTensor(args, "bias", 1, bias)).failed()))
    return f;
  Coords outCoords;
  Tensor outFeatures;
  std::string error;
  if (!sparseConv(g, grid, coords, features, weight,
                  args.has("bias") ? &bias : nullptr, outCoords, outFeatures,
                  error))
    return inputError(error);
  return writeResults(args,
                      {coordsToNpy(outCoords), tensorToNpy(outFeatures, dtype)});
}

Failure runInverse(const Args &args) {
  std::vector<int64_t> grid;
  Geometry g;
  Failure f;
  if ((f = parseGrid(args, grid)).failed() ||
      (f = parseGeometry(args, ConvKind::Inverse, grid.size(), g)).failed())
    return f;
  Coords coords, source;
  Tensor features, weight, bias;
  npy::DType dtype;
  if ((f = loadCoords(args, "coords", coords)).failed() ||
      (f = loadCoords(args, "source-coords", source)).failed() ||
      (f = loadTensor(args, "features", 2, features, &dtype)).failed() ||
      (f = loadTensor(args, "weight", 3, weight)).failed() ||
      (args.has("bias") && (f = loadTensor(args, "bias", 1, bias)).failed()))
    return f;
  Tensor out;
  std::string error;
  if (!inverseConv(g, grid, coords, source, features, weight,
                   args.has("bias") ? &bias : nullptr, out, error))
    return inputError(error);
  return writeResults(args, {tensorToNpy(out, dtype)});
}

Failure runPool(const Args &args) {
  PoolMode mode;
  if (args.get("mode") == "max")
    mode = PoolMode::Max;
  else if (args.get("mode") == "avg")
    mode = PoolMode::Avg;
  else
    return usageError("--mode: expected max or avg, got '" + args.get("mode") +
                      "'");
  std::vector<int64_t> grid;
  Geometry g;
  Failure f;
  if ((f = parseGrid(args, grid)).failed() ||
      (f = parseGeometry(args, ConvKind::Regular, grid.size(), g)).failed())
    return f;
  Coords coords;
  Tensor features;
  npy::DType dtype;
  if ((f = loadCoords(args, "coords", coords)).failed() ||
      (f = loadTensor(args, "features", 2, features, &dtype)).failed())
    return f;
  Coords outCoords;
  Tensor out;
  std::string error;
  if (!sparsePool(mode, g, grid, coords, features, outCoords, out, error))
    return inputError(error);
  return writeResults(args, {coordsToNpy(outCoords), tensorToNpy(out, dtype)});
}

Failure runRulebook(const Args &args) {
  ConvKind kind;
  std::vector<int64_t> grid;
  Geometry g;
  Failure f;
  if ((f = parseLayer(args, kind, grid, g)).failed())
    return f;
  Coords coords;
  if ((f = loadCoords(args, "coords", coords)).failed())
    return f;
  Rulebook rb;
  std::string error;
  if (!buildRulebook(g, grid, coords, rb, error))
    return inputError(error);
  int64_t k = static_cast<int64_t>(rb.pairs.size());
  npy::NpyArray counts = npy::NpyArray::zeros(npy::DType::Int64, {k});
  npy::NpyArray pairs =
      npy::NpyArray::zeros(npy::DType::Int32, {rb.numPairs(), 3});
  int64_t row = 0;
  for (int64_t j = 0; j < k; ++j) {
    counts.setInt(j, static_cast<int64_t>(rb.pairs[j].size()));
    for (const Pair &p : rb.pairs[j]) {
      pairs.setInt(3 * row, j);
      pairs.setInt(3 * row + 1, p.in);
      pairs.setInt(3 * row + 2, p.out);
      ++row;
    }
  }
  f = writeResults(args, {counts, coordsToNpy(rb.outCoords), pairs});
  if (f.failed())
    return f;
  std::printf("outputs: %lld\npairs: %lld\ncounts:",
              static_cast<long long>(rb.outCoords.rows()),
              static_cast<long long>(rb.numPairs()));
  for (int64_t j = 0; j < k; ++j)
    std::printf(" %lld", static_cast<long long>(rb.pairs[j].size()));
  std::printf("\n");
  return {};
}

Failure runUnfold(const Args &args) {
  Tensor input;
  npy::DType dtype;
  Failure f;
  if ((f = loadTensor(args, "input", -1, input, &dtype)).failed())
    return f;
  if (input.rank() < 3 || input.rank() > 6)
    return inputError("--input: expected N x C x spatial (1 to 4 spatial "
                      "dims), got rank " +
                      std::to_string(input.rank()));
  Geometry g;
  if ((f = parseGeometry(args, ConvKind::Regular, input.rank() - 2, g))
          .failed())
    return f;
  Tensor out;
  std::string error;
  if (!unfold(g, input, out, error))
    return inputError(error);
  return writeResults(args, {tensorToNpy(out, dtype)});
}

Failure runFold(const Args &args) {
  std::vector<int64_t> size;
  Failure f;
  if ((f = parseList(args, "output-size", 0, size)).failed())
    return f;
  for (int64_t s : size)
    if (s < 1 || size.size() > 4)
      return usageError("--output-size: expected 1 to 4 positive extents");
  Geometry g;
  if ((f = parseGeometry(args, ConvKind::Regular, size.size(), g)).failed())
    return f;
  Tensor input;
  npy::DType dtype;
  if ((f = loadTensor(args, "input", 3, input, &dtype)).failed())
    return f;
  Tensor out;
  std::string error;
  if (!fold(g, size, input, out, error))
    return inputError(error);
  return writeResults(args, {tensorToNpy(out, dtype)});
}

Failure runSegmentMax(const Args &args) {
  int64_t segments;
  if (!parseInt(args.get("segments"), segments) || segments < 0)
    return usageError("--segments: expected a nonnegative integer, got '" +
                      args.get("segments") + "'");
  Tensor data;
  npy::DType dtype;
  Failure f;
  if ((f = loadTensor(args, "data", 3, data, &dtype)).failed())
    return f;
  npy::NpyArray indexArray;
  if ((f = load(args, "index", indexArray)).failed())
    return f;
  std::vector<int64_t> index;
  std::string error;
  if (!npyToIndex(indexArray, 2, "--index", index, error))
    return inputError(error);
  if (indexArray.shape[0] != data.shape[0] ||
      indexArray.shape[1] != data.shape[2])
    return inputError("--index: expected shape B x P = " +
                      std::to_string(data.shape[0]) + " x " +
                      std::to_string(data.shape[2]) + ", got " +
                      indexArray.describe());
  Tensor values;
  std::vector<int32_t> positions;
  if (!segmentMax(data, index, segments, values, positions, error))
    return inputError(error);
  npy::NpyArray pos = npy::NpyArray::zeros(npy::DType::Int32, values.shape);
  for (size_t i = 0; i < positions.size(); ++i)
    pos.setInt(i, positions[i]);
  return writeResults(args, {tensorToNpy(values, dtype), pos});
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

Failure parseArgs(const Command &command, int argc, char **argv, Args &args) {
  auto accepted = [&](const std::string &name) {
    for (const auto *list : {&command.required, &command.optional})
      for (const std::string &n : *list)
        if (n == name)
          return true;
    return false;
  };
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0)
      return usageError("unexpected argument '" + arg + "'");
    std::string name = arg.substr(2), value;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else {
      if (i + 1 >= argc)
        return usageError("--" + name + ": missing value");
      value = argv[++i];
    }
    if (!accepted(name))
      return usageError("unknown option --" + name + " for '" + command.name +
                        "'");
    if (!args.values.emplace(name, value).second)
      return usageError("--" + name + " given twice");
  }
  for (const std::string &name : command.required)
    if (!args.has(name))
      return usageError("'" + std::string(command.name) + "' needs --" + name);
  return {};
}

Failure run(int argc, char **argv) {
  if (argc < 2)
    return usageError("missing command");
  std::string name = argv[1];
  for (const Command &command : kCommands) {
    if (name != command.name)
      continue;
    Args args;
    Failure f = parseArgs(command, argc, argv, args);
    if (f.failed())
      return f;
    if (name == "conv")
      return runConv(args);
    if (name == "inverse")
      return runInverse(args);
    if (name == "pool")
      return runPool(args);
    if (name == "rulebook")
      return runRulebook(args);
    if (name == "unfold")
      return runUnfold(args);
    if (name == "fold")
      return runFold(args);
    return runSegmentMax(args);
  }
  return usageError("unknown command '" + name + "'");
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 ||
                    std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  Failure f = run(argc, argv);
  if (f.failed()) {
    std::fprintf(stderr, "spconv-ref: error: %s\n", f.message.c_str());
    if (f.status == 2)
      std::fprintf(stderr, "run 'spconv-ref --help' for usage\n");
  }
  return f.status;
}
