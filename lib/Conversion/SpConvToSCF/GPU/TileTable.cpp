//===- TileTable.cpp - Tuned GPU tile sizes from a file -------------------===//
//
// Part of the spconv-mlir project.
//
// Reads a `spconv-gpu-tiles/1` table with llvm::json and checks each entry
// against what the implicit-GEMM kernels assume (the constraints are listed
// in checkTiles, each with the code that needs it).
//
//===----------------------------------------------------------------------===//

#include "GPU/TileTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

namespace {

/// The element types a table names, as MLIR prints them.
constexpr llvm::StringLiteral kTypes[] = {"f16", "bf16", "f32", "f64"};

/// The largest tile size an entry may give, so that the checks cannot
/// overflow (no tile near it fits in shared memory anyway).
constexpr int64_t kMaxTileSize = 1 << 16;

/// Keys that carry tuning notes: ignored, as is any key starting with `_`.
constexpr llvm::StringLiteral kInformationalKeys[] = {"time_us", "tflops",
                                                      "note"};

/// The keys an entry may set: those `spconv.tile` records (`threads` and
/// `max_registers` are derived from the others and, if given, checked).
constexpr llvm::StringLiteral kEntryKeys[] = {
    "cin",       "cout",        "type",        "math",      "rows",
    "cols",      "depth",       "thread_rows", "thread_cols", "warp_rows",
    "warp_cols", "stages",      "threads",     "max_registers"};

/// The most stages an entry may pin: the deepest pipeline choosePipeline
/// builds, which the emulator and ptxas tests prove.
constexpr int64_t kMaxStages = 3;

constexpr llvm::StringLiteral kTableKeys[] = {"format", "device", "chip",
                                              "entries"};

bool isInformational(StringRef key) {
  return key.starts_with("_") || llvm::is_contained(kInformationalKeys, key);
}

/// The table's name of `type`, or empty.
std::string typeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  type.print(os);
  return llvm::is_contained(kTypes, StringRef(name)) ? name : std::string();
}

/// The first key of `object` (in sorted order, so that the message does not
/// depend on hashing) that is neither in `known` nor informational.
std::optional<std::string> unknownKey(const llvm::json::Object &object,
                                      ArrayRef<llvm::StringLiteral> known) {
  SmallVector<std::string> keys;
  for (const auto &entry : object)
    keys.push_back(entry.first.str());
  llvm::sort(keys);
  for (const std::string &key : keys)
    if (!llvm::is_contained(known, StringRef(key)) && !isInformational(key))
      return key;
  return std::nullopt;
}

std::string unknownKeyMessage(StringRef key) {
  return ("unknown key '" + key +
          "' (informational keys are time_us, tflops, note and any key "
          "starting with '_')")
      .str();
}

/// Reads one entry into `tiles`, `cin`, `cout` and `type`; the error
/// message (without the entry's prefix) on failure.
std::string readEntry(const llvm::json::Value &value, GemmTiles &tiles,
                      int64_t &cin, int64_t &cout, std::string &type) {
  const llvm::json::Object *entry = value.getAsObject();
  if (!entry)
    return "not an object";
  if (std::optional<std::string> key = unknownKey(*entry, kEntryKeys))
    return unknownKeyMessage(*key);
  // Required keys, in a fixed order.
  for (StringRef key : {"cin", "cout", "type", "math", "rows", "cols", "depth"})
    if (!entry->get(key))
      return ("missing '" + key + "'").str();
  std::string error;
  auto integer = [&](StringRef key, int64_t &out,
                     int64_t max = kMaxTileSize) {
    std::optional<int64_t> v = entry->getInteger(key);
    if (!v || *v < 1 || *v > max) {
      if (error.empty())
        error = ("'" + key + "' must be an integer in [1, " + Twine(max) + "]")
                    .str();
      return;
    }
    out = *v;
  };
  integer("cin", cin, std::numeric_limits<int64_t>::max());
  integer("cout", cout, std::numeric_limits<int64_t>::max());
  if (!error.empty())
    return error;
  std::optional<StringRef> typeValue = entry->getString("type");
  if (!typeValue || !llvm::is_contained(kTypes, *typeValue))
    return "'type' must be one of f16, bf16, f32, f64";
  type = typeValue->str();
  std::optional<StringRef> mathValue = entry->getString("math");
  std::optional<GemmMath> math =
      mathValue ? parseGemmMath(*mathValue) : std::nullopt;
  if (!math)
    return "'math' must be one of fma, mma-f16, mma-bf16, mma-tf32";
  tiles.math = *math;
  // What each type can multiply with (GemmTiles::choose): f16 and bf16
  // fragments only hold their own type; tf32 fragments take f32 (rounded)
  // and bf16 (exactly).
  if ((tiles.math == GemmMath::F16MMA && type != "f16") ||
      (tiles.math == GemmMath::BF16MMA && type != "bf16") ||
      (tiles.math == GemmMath::TF32MMA && type != "f32" && type != "bf16"))
    return ("math " + *mathValue + " is not possible for " + type +
            " (mma-f16 takes f16, mma-bf16 bf16, mma-tf32 f32 and bf16, fma "
            "any type)")
        .str();
  integer("rows", tiles.rows);
  integer("cols", tiles.cols);
  integer("depth", tiles.depth);
  if (!error.empty())
    return error;
  bool fma = tiles.math == GemmMath::FMA;
  StringRef own[2] = {fma ? "thread_rows" : "warp_rows",
                      fma ? "thread_cols" : "warp_cols"};
  StringRef other[2] = {fma ? "warp_rows" : "thread_rows",
                        fma ? "warp_cols" : "thread_cols"};
  for (StringRef key : other)
    if (entry->get(key))
      return ("'" + key + "' does not apply to math " + *mathValue +
              " (it takes " + own[0] + " and " + own[1] + ")")
          .str();
  for (StringRef key : own)
    if (!entry->get(key))
      return ("missing '" + key + "' (math " + *mathValue + ")").str();
  int64_t shape[2] = {0, 0};
  integer(own[0], shape[0]);
  integer(own[1], shape[1]);
  if (!error.empty())
    return error;
  if (fma) {
    tiles.threadRows = shape[0];
    tiles.threadCols = shape[1];
  } else {
    // Warp tiles of whole 16 x 16 fragments.
    for (auto [key, size] : llvm::zip_equal(own, shape))
      if (size % 16 != 0)
        return ("'" + key + "' " + Twine(size) +
                " is not a multiple of 16 (whole 16x16 fragments)")
            .str();
    tiles.fragRows = shape[0] / 16;
    tiles.fragCols = shape[1] / 16;
  }
  // A pinned pipeline: one stage, or cp.async copies of whole 16-byte rows
  // of f16 or bf16 (choosePipeline).
  if (entry->get("stages")) {
    integer("stages", tiles.pinnedStages, kMaxStages);
    if (!error.empty())
      return error;
    if (tiles.pinnedStages > 1 && !tiles.halfFragments())
      return ("'stages' " + Twine(tiles.pinnedStages) +
              " needs math mma-f16 or mma-bf16 (only 16-bit tensor-core "
              "tiles are pipelined; 1 is the one-stage form)")
          .str();
    if (tiles.pinnedStages > 1 && (cin % 8 != 0 || cout % 8 != 0))
      return ("'stages' " + Twine(tiles.pinnedStages) +
              " needs cin and cout multiples of 8 (rows of whole 16-byte "
              "copies), not " +
              Twine(cin) + " and " + Twine(cout))
          .str();
    tiles.stages = tiles.pinnedStages;
  }
  if (std::string why = GPUTileTable::checkTiles(tiles, type); !why.empty())
    return why;
  // Derived fields, if the entry copies them from a `spconv.tile`.
  if (entry->get("threads")) {
    int64_t threads = 0;
    integer("threads", threads, std::numeric_limits<int64_t>::max());
    if (!error.empty())
      return error;
    if (threads != tiles.threads())
      return ("'threads' " + Twine(threads) + " does not match the " +
              Twine(tiles.threads()) + " threads of the tile shape")
          .str();
  }
  if (const llvm::json::Value *budget = entry->get("max_registers")) {
    std::optional<int64_t> v = budget->getAsInteger();
    if (!v || *v != tiles.maxRegisters())
      return ("'max_registers' must be the tile's derived budget, " +
              Twine(tiles.maxRegisters()) + " (0: none)")
          .str();
  }
  return "";
}

} // namespace

std::string GPUTileTable::checkTiles(const GemmTiles &tiles, StringRef type) {
  std::string message;
  llvm::raw_string_ostream os(message);
  // A tile's rows are whole groups of the tile schedule (forEachSlice).
  if (tiles.rows % kScheduleGroupRows != 0) {
    os << "rows " << tiles.rows << " is not a multiple of "
       << kScheduleGroupRows << " (the rows of a tile-schedule group)";
    return message;
  }
  int64_t sharedBytes = 0;
  if (!tiles.usesTensorCores()) {
    // Each thread owns a thread_rows x thread_cols register tile
    // (emitImplicitGemmConv).
    if (tiles.rows % tiles.threadRows != 0 ||
        tiles.cols % tiles.threadCols != 0) {
      os << "thread tile " << tiles.threadRows << "x" << tiles.threadCols
         << " does not divide the " << tiles.rows << "x" << tiles.cols
         << " tile";
      return message;
    }
    // The staged inputs (depth x rows) and weights (depth x cols) in the
    // accumulator type (f32, or f64 for f64), and the slots' source rows.
    int64_t accBytes = type == "f64" ? 8 : 4;
    sharedBytes = tiles.depth * (tiles.rows + tiles.cols) * accBytes +
                  tiles.sourceRowBytes();
  } else {
    // Warps tile the block: rows of warps x warps per row
    // (emitTensorCoreConv).
    if (tiles.rows % (16 * tiles.fragRows) != 0 ||
        tiles.cols % (16 * tiles.fragCols) != 0) {
      os << "warp tile " << 16 * tiles.fragRows << "x" << 16 * tiles.fragCols
         << " does not divide the " << tiles.rows << "x" << tiles.cols
         << " tile";
      return message;
    }
    // A slice is whole fragment multiplies (k16 for f16, k8 for tf32).
    if (tiles.depth % tiles.fragDepth() != 0) {
      os << "depth " << tiles.depth << " is not a multiple of "
         << tiles.fragDepth() << " (the depth of one "
         << gemmMathName(tiles.math) << " fragment)";
      return message;
    }
    sharedBytes = tiles.sharedBytes();
  }
  if (tiles.threads() > 1024) {
    os << "the tile needs " << tiles.threads()
       << " threads per block, more than CUDA's 1024";
    return message;
  }
  if (sharedBytes > tiles.sharedLimit()) {
    os << "the tile stages " << sharedBytes
       << " bytes of workgroup memory, more than the " << tiles.sharedLimit()
       << (tiles.stages > 1 ? " a pipelined tile may take"
                            : " of static shared memory");
    return message;
  }
  return message;
}

std::optional<GPUTileTable> GPUTileTable::load(StringRef path,
                                               std::string &error) {
  auto fail = [&](const Twine &what) {
    error = (path + ": " + what).str();
    return std::nullopt;
  };
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return fail("cannot read: " + file.getError().message());
  llvm::Expected<llvm::json::Value> root =
      llvm::json::parse((*file)->getBuffer());
  if (!root)
    return fail("invalid JSON: " + llvm::toString(root.takeError()));
  const llvm::json::Object *table = root->getAsObject();
  if (!table)
    return fail("not a JSON object");
  if (std::optional<std::string> key = unknownKey(*table, kTableKeys))
    return fail(unknownKeyMessage(*key));
  const llvm::json::Value *format = table->get("format");
  if (!format)
    return fail(Twine("missing 'format' (expected \"") + kFormat + "\")");
  if (format->getAsString() != std::optional<StringRef>(kFormat))
    return fail(Twine("'format' must be \"") + kFormat + "\"");
  for (StringRef key : {"device", "chip"})
    if (const llvm::json::Value *v = table->get(key); v && !v->getAsString())
      return fail("'" + key + "' must be a string");
  const llvm::json::Value *entriesValue = table->get("entries");
  if (!entriesValue)
    return fail("missing 'entries'");
  const llvm::json::Array *entries = entriesValue->getAsArray();
  if (!entries)
    return fail("'entries' must be an array");

  GPUTileTable result;
  std::map<Key, size_t> firstIndex;
  for (auto [index, value] : llvm::enumerate(*entries)) {
    GemmTiles tiles;
    int64_t cin = 0, cout = 0;
    std::string type;
    std::string why = readEntry(value, tiles, cin, cout, type);
    if (!why.empty())
      return fail("entries[" + Twine(index) + "]: " + why);
    Key key{cin, cout, type, tiles.math};
    auto [it, inserted] = firstIndex.try_emplace(key, index);
    if (!inserted)
      return fail("entries[" + Twine(index) + "]: repeats entries[" +
                  Twine(it->second) + "] (cin " + Twine(cin) + ", cout " +
                  Twine(cout) + ", " + type + ", " + gemmMathName(tiles.math) +
                  ")");
    result.entries[key] = tiles;
  }
  return result;
}

std::optional<GemmTiles> GPUTileTable::lookup(int64_t channelsIn,
                                              int64_t channelsOut,
                                              Type elementType,
                                              GemmMath math) const {
  auto it =
      entries.find(Key{channelsIn, channelsOut, typeName(elementType), math});
  if (it == entries.end())
    return std::nullopt;
  return it->second;
}
