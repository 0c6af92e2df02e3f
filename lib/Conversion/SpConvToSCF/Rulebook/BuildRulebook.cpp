//===- BuildRulebook.cpp - Geometry-specialised rulebook builders ---------===//
//
// Part of the spconv-mlir project.
//
// Each distinct (geometry, grid) gets one private builder function whose
// geometry is folded into constants and whose kernel-offset loops are
// unrolled. The pairs are counted per block of sites, prefix-summed and then
// written, so the rulebook holds exactly one entry per pair, ordered by
// offset and then by input row.
//
//===----------------------------------------------------------------------===//

#include "Rulebook/BuildStatus.h"
#include "Rulebook/OutputBox.h"
#include "Rulebook/PairCounts.h"
#include "Rulebook/Rulebook.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

/// `k3x3x3`-style rendering of a list for symbol names.
static std::string joinDims(StringRef prefix, ArrayRef<int64_t> values) {
  return (prefix +
          llvm::join(llvm::map_range(
                         values, [](int64_t v) { return std::to_string(v); }),
                     "x"))
      .str();
}

static std::string getBuilderName(RulebookType type) {
  GeometryAttr g = type.getGeometry();
  GridAttr grid = type.getInputGrid();
  std::string name = "spconv_build_" + stringifyConvKind(g.getKind()).str();
  name += "_" + joinDims("k", g.getKernel());
  name += "_" + joinDims("s", g.getStride());
  name += "_" + joinDims("p", g.getPadding());
  name += "_" + joinDims("d", g.getDilation());
  if (g.getKind() == ConvKind::Transposed)
    name += "_" + joinDims("op", g.getOutputPadding());
  name += "_" + joinDims("g", grid.getShape());
  if (grid.hasStaticBatch())
    name += "_b" + std::to_string(grid.getBatch());
  return name;
}

/// The batch bound of the site keys of a build of `type`.
static int64_t buildBatchSize(RulebookType type) {
  return effectiveBatchSize(type.getInputGrid(),
                            {*checkedProduct(type.getInputGrid().getShape()),
                             *checkedProduct(type.getOutputGrid().getShape())});
}

namespace {
/// Emits the body of one builder function.
class RulebookBuilder {
public:
  RulebookBuilder(LoweringContext &ctx, RulebookType type)
      : ctx(ctx), type(type), geometry(type.getGeometry()),
        inShape(type.getInputGrid().getShape()),
        outShape(type.getOutputGrid().getShape()), rank(geometry.getRank()),
        volume(geometry.getKernelVolume()), batchSize(buildBatchSize(type)) {}

  /// (coords) -> ([out coords,] pair in, pair out, CSR offsets).
  func::FuncOp create(StringRef name);
  /// For subm: (coords) -> (neighbour table, status, site keys), the table
  /// buildNeighbourTable would make of the rulebook, without the pairs: no
  /// size to read back. The caller checks the status (checkAtReturn).
  func::FuncOp createNeighbourTable(StringRef name);

private:
  /// A private function `name` from the coordinates to `results`, its
  /// builder at the start of its body.
  func::FuncOp declare(OpBuilder &b, StringRef name, TypeRange results);

  /// What every builder does first: the site keys, checked against the
  /// grid, and the hash table of the input sites (`table`), whose build
  /// finds repeated sites; both record what they find in `status`.
  struct IndexedSites {
    Value n;         ///< index: the input sites
    Value keys;      ///< memref<?xi64>: their keys (linearizeSites)
    Value built;     ///< i1: the hash table was built
    Value sites;     ///< index: n, or 0 if it was not
    Value tableMask; ///< i64: the table's capacity - 1
  };
  IndexedSites indexSites(OpBuilder &b, Location loc, Value coords,
                          const BuildStatus &status);

  using Site = std::pair<Value, SmallVector<Value>>;
  using BlockRange =
      function_ref<std::pair<Value, Value>(OpBuilder &, Location, Value)>;
  using BlockBody = function_ref<void(OpBuilder &, Location, Value block,
                                      Value start, Value end)>;
  /// Parallel over `blocks` blocks of sites, a kernel named `role`:
  /// body(block, its first site, the end of its sites) (`blockRange`).
  void forEachBlock(OpBuilder &b, Location loc, Value blocks,
                    BlockRange blockRange, StringRef role, BlockBody body);

  /// The (i64) batch and spatial coordinates of input row `row`.
  std::pair<Value, SmallVector<Value>> loadSite(OpBuilder &b, Location loc,
                                                Value coords, Value row);
  /// For input site `site` and kernel offset `offset`: the key of the paired
  /// site (the neighbour for subm, the output of a transposed or inverse
  /// conv) or -1 if that site is outside the grid. (Regular convs enumerate
  /// their output boxes, OutputBox.h.)
  Value pairedKey(OpBuilder &b, Location loc, const Site &site, Value offset);
  Value pairedKey(OpBuilder &b, Location loc, const Site &site,
                  int64_t offset) {
    return pairedKey(b, loc, site, indexConst(b, loc, offset));
  }
  /// For subm: the table slot holding `key`, or -1.
  Value probe(OpBuilder &b, Location loc, Value key);
  /// Whether the (loaded) input site has a pair at `offset`, and for subm
  /// the table slot of the neighbour (its row is `values[slot]`), otherwise
  /// the output key.
  std::pair<Value, Value> findPair(OpBuilder &b, Location loc, const Site &site,
                                   Value offset);
  std::pair<Value, Value> findPair(OpBuilder &b, Location loc, const Site &site,
                                   int64_t offset) {
    return findPair(b, loc, site, indexConst(b, loc, offset));
  }

  /// The two passes of a large kernel (more offsets than the lowering
  /// unrolls): in each block of sites, a loop over the searched offsets
  /// around a loop over the sites, so the IR does not grow with the kernel.
  /// They count and write the same pairs, in the same slots, as the unrolled
  /// passes (which keep one counter per offset and visit each site once).
  using OffsetBody = function_ref<void(OpBuilder &, Location, Value block,
                                       Value start, Value end, Value offset)>;
  /// Parallel over blocks of sites: `perOffset` for each searched offset in
  /// order, then, for a symmetric subm kernel, `perBlock` (the centre).
  void forEachBlockAndOffset(OpBuilder &b, Location loc, Value blocks,
                             BlockRange blockRange, const SubmSearchPlan &plan,
                             StringRef role, OffsetBody perOffset,
                             BlockBody perBlock);
  void countPairsLooped(OpBuilder &b, Location loc, Value coords, Value blocks,
                        BlockRange blockRange, const SubmSearchPlan &plan,
                        PairCounts &counts);
  void writePairsLooped(OpBuilder &b, Location loc, Value coords, Value blocks,
                        BlockRange blockRange, const SubmSearchPlan &plan,
                        PairCounts &counts, Value pairIn, Value pairOut,
                        Value candidateKeys);

  /// The two passes of a regular conv: each site enumerates its output box
  /// (OutputBox), so both do work proportional to the pairs, not to the
  /// kernel volume. They count and write the same pairs, in the same slots,
  /// as the passes that test every offset.
  using BlockOffsetBody =
      function_ref<void(OpBuilder &, Location, Value block, Value offset)>;
  using BoxPairBody = function_ref<void(OpBuilder &, Location, Value block,
                                        Value row, Value offset, Value key)>;
  /// Parallel over blocks of sites: `perOffset` (if any) for each kernel
  /// offset of the block, then `perPair` for each pair of each of its sites,
  /// in site order, a site's pairs in offset order.
  void forEachPairInBoxes(OpBuilder &b, Location loc, Value coords,
                          Value blocks, BlockRange blockRange, StringRef role,
                          BlockOffsetBody perOffset, BoxPairBody perPair);
  void countPairsInBoxes(OpBuilder &b, Location loc, Value coords, Value blocks,
                         BlockRange blockRange, PairCounts &counts);
  void writePairsInBoxes(OpBuilder &b, Location loc, Value coords, Value blocks,
                         BlockRange blockRange, PairCounts &counts,
                         Value pairIn, Value candidateKeys);

  LoweringContext &ctx;
  RulebookType type;
  GeometryAttr geometry;
  ArrayRef<int64_t> inShape, outShape;
  unsigned rank;
  int64_t volume;
  int64_t batchSize;
  HashTableBuffers table;
  /// A strided builder's site keys: a site outside the grid is loaded with
  /// batch -1, which pairs with nothing, so its (unchecked) coordinates
  /// never make an output key.
  Value stridedSiteKeys;
};
} // namespace

std::pair<Value, SmallVector<Value>>
RulebookBuilder::loadSite(OpBuilder &b, Location loc, Value coords, Value row) {
  Type i64 = b.getI64Type();
  Value batch = loadAs(b, loc, coords, {row, indexConst(b, loc, 0)}, i64);
  if (stridedSiteKeys) {
    Value outside = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        memref::LoadOp::create(b, loc, stridedSiteKeys, ValueRange{row}),
        i64Const(b, loc, outsideSiteKey(inShape, batchSize)));
    batch =
        arith::SelectOp::create(b, loc, outside, i64Const(b, loc, -1), batch);
  }
  SmallVector<Value> spatial;
  for (unsigned d = 0; d < rank; ++d)
    spatial.push_back(
        loadAs(b, loc, coords, {row, indexConst(b, loc, d + 1)}, i64));
  return {batch, spatial};
}

Value RulebookBuilder::pairedKey(OpBuilder &b, Location loc, const Site &site,
                                 Value offset) {
  // Folds to constants when `offset` is one (unrolled offsets).
  SmallVector<Value> j = kernelIndices(b, loc, geometry.getKernel(), offset);
  ConvKind kind = geometry.getKind();
  ArrayRef<int64_t> bounds = kind == ConvKind::Subm ? inShape : outShape;
  Value valid = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  auto andValid = [&](Value condition) {
    valid = arith::AndIOp::create(b, loc, valid, condition);
  };
  auto cmp = [&](arith::CmpIPredicate predicate, Value lhs, int64_t rhs) {
    return arith::CmpIOp::create(b, loc, predicate, lhs, i64Const(b, loc, rhs))
        .getResult();
  };
  // j * dilation - padding, i64.
  auto shift = [&](unsigned d) {
    return b.createOrFold<arith::SubIOp>(
        loc,
        b.createOrFold<arith::MulIOp>(
            loc, j[d], i64Const(b, loc, geometry.getDilation()[d])),
        i64Const(b, loc, geometry.getPadding()[d]));
  };
  SmallVector<Value> paired;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t s = geometry.getStride()[d];
    Value x = site.second[d];
    Value o;
    switch (kind) {
    case ConvKind::Subm:
      // x - kernel/2 * d + j * d: the padding is kernel/2 * d.
      o = arith::AddIOp::create(b, loc, x, shift(d));
      break;
    case ConvKind::Regular:
      llvm_unreachable("regular builders enumerate output boxes instead");
    case ConvKind::Transposed:
    case ConvKind::Inverse: {
      // o = x * s - p + j * d.
      Value scaled = arith::MulIOp::create(b, loc, x, i64Const(b, loc, s));
      o = arith::AddIOp::create(b, loc, scaled, shift(d));
      break;
    }
    }
    andValid(cmp(arith::CmpIPredicate::sge, o, 0));
    andValid(cmp(arith::CmpIPredicate::slt, o, bounds[d]));
    paired.push_back(o);
  }
  Value key = linearKey(b, loc, site.first, paired, bounds);
  return arith::SelectOp::create(b, loc, valid, key, i64Const(b, loc, -1));
}

Value RulebookBuilder::probe(OpBuilder &b, Location loc, Value key) {
  return func::CallOp::create(b, loc, ctx.getHashFindSlotFunction(),
                              ValueRange{table.keys, key})
      .getResult(0);
}

std::pair<Value, Value> RulebookBuilder::findPair(OpBuilder &b, Location loc,
                                                  const Site &site,
                                                  Value offset) {
  Value key = pairedKey(b, loc, site, offset);
  if (geometry.getKind() == ConvKind::Subm) {
    Value slot = probe(b, loc, key);
    return {arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, slot,
                                  indexConst(b, loc, 0)),
            slot};
  }
  return {arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, key,
                                i64Const(b, loc, 0)),
          key};
}

func::FuncOp RulebookBuilder::declare(OpBuilder &b, StringRef name,
                                      TypeRange results) {
  MLIRContext *context = type.getContext();
  auto coordsType = MemRefType::get(
      {ShapedType::kDynamic, static_cast<int64_t>(rank) + 1}, b.getI32Type(),
      StridedLayoutAttr::get(context, ShapedType::kDynamic,
                             {ShapedType::kDynamic, ShapedType::kDynamic}));
  auto function =
      func::FuncOp::create(b, ctx.getModule().getLoc(), name,
                           b.getFunctionType({coordsType}, results));
  function.setPrivate();
  b.setInsertionPointToStart(function.addEntryBlock());
  return function;
}

RulebookBuilder::IndexedSites
RulebookBuilder::indexSites(OpBuilder &b, Location loc, Value coords,
                            const BuildStatus &status) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), index = b.getIndexType();
  IndexedSites indexed;
  indexed.n = memref::DimOp::create(b, loc, coords, 0);
  // The site keys, by a kernel; sites outside the grid are recorded in the
  // status.
  indexed.keys =
      linearizeSites(b, loc, coords, indexed.n, inShape, batchSize, status);
  // The input table: subm probes it inline for every neighbour; for every
  // kind, building it is what detects repeated sites.
  auto scalar = MemRefType::get({1}, i64);
  Value capacityBuffer = memref::AllocaOp::create(b, loc, scalar);
  Value nI64 = arith::IndexCastOp::create(b, loc, i64, indexed.n);
  callRuntime(ctx, b, loc, "spconv_rt_memref_hash_capacity",
              {nI64, castTo(b, loc, capacityBuffer,
                            MemRefType::get({ShapedType::kDynamic}, i64))});
  Value capacity = arith::IndexCastOp::create(
      b, loc, index,
      memref::LoadOp::create(b, loc, capacityBuffer,
                             ValueRange{indexConst(b, loc, 0)}));
  table.keys = alloc1d(
      b, bufferLoc(loc, "the hash table of a rulebook build"), i64, capacity);
  indexed.tableMask = arith::SubIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, i64, capacity),
      i64Const(b, loc, 1));
  table.values = alloc1d(
      b, bufferLoc(loc, "the hash table of a rulebook build"), i32, capacity);
  indexed.built =
      callRuntime(ctx, b, loc, "spconv_rt_memref_hash_build_deferred",
                  {indexed.keys, table.keys, table.values,
                   status.slot(b, loc, BuildStatus::RepeatRow)});
  indexed.sites = arith::SelectOp::create(b, loc, indexed.built, indexed.n,
                                          indexConst(b, loc, 0));
  return indexed;
}

func::FuncOp RulebookBuilder::createNeighbourTable(StringRef name) {
  assert(geometry.getKind() == ConvKind::Subm && "a subm builder");
  OpBuilder b = OpBuilder::atBlockEnd(ctx.getModule().getBody());
  // The builder's ops name it: a failing allocation says where it was.
  Location loc = bufferLoc(ctx.getModule().getLoc(), name);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto tableType = MemRefType::get({ShapedType::kDynamic, volume}, i32);
  auto statusType = MemRefType::get({BuildStatus::NumSlots}, i64);
  auto keysType = MemRefType::get({ShapedType::kDynamic}, i64);
  func::FuncOp function = declare(b, name, {tableType, statusType, keysType});
  Value coords = function.getArgument(0);
  BuildStatus status(b, loc);
  IndexedSites indexed = indexSites(b, loc, coords, status);
  Value tableOut =
      memref::AllocOp::create(b, bufferLoc(loc, "the neighbour table of a rulebook"),
                              tableType, ValueRange{indexed.n});

  // One thread per site writes its row: the neighbour's row at each offset
  // or -1, itself at the centre of a symmetric kernel. Without a hash table
  // (its build failed and said so) every row is -1.
  SubmSearchPlan plan(geometry, /*subm=*/true);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  auto writeRow = [&](OpBuilder &rb, Location rloc, Value row, bool search) {
    auto site = search ? loadSite(rb, rloc, coords, row) : Site();
    auto entry = [&](OpBuilder &eb, Location eloc, Value offset) -> Value {
      if (!search)
        return i32Const(eb, eloc, -1);
      Value slot = probe(eb, eloc, pairedKey(eb, eloc, site, offset));
      Value found = arith::CmpIOp::create(eb, eloc, arith::CmpIPredicate::sge,
                                          slot, indexConst(eb, eloc, 0));
      // The slot is read only where it was found.
      Value safe = arith::SelectOp::create(eb, eloc, found, slot,
                                           indexConst(eb, eloc, 0));
      Value neighbour =
          memref::LoadOp::create(eb, eloc, table.values, ValueRange{safe});
      return arith::SelectOp::create(eb, eloc, found, neighbour,
                                     i32Const(eb, eloc, -1));
    };
    Value self = arith::IndexCastOp::create(rb, rloc, i32, row);
    auto store = [&](OpBuilder &sb, Location sloc, Value value, Value offset) {
      memref::StoreOp::create(sb, sloc, value, tableOut,
                              ValueRange{row, offset});
    };
    if (ctx.unrollsOffsets(volume)) {
      for (int64_t offset = 0; offset < volume; ++offset) {
        Value at = indexConst(rb, rloc, offset);
        store(rb, rloc,
              search && plan.symmetric && offset == plan.centre
                  ? self
                  : entry(rb, rloc, at),
              at);
      }
      return;
    }
    scf::ForOp::create(
        rb, rloc, zero, indexConst(rb, rloc, volume), one, ValueRange{},
        [&](OpBuilder &fb, Location floc, Value offset, ValueRange) {
          Value value;
          if (search && plan.symmetric) {
            Value centre = arith::CmpIOp::create(
                fb, floc, arith::CmpIPredicate::eq, offset,
                indexConst(fb, floc, plan.centre));
            value =
                scf::IfOp::create(
                    fb, floc, centre,
                    [&](OpBuilder &tb, Location tloc) {
                      scf::YieldOp::create(tb, tloc, self);
                    },
                    [&](OpBuilder &eb, Location eloc) {
                      scf::YieldOp::create(eb, eloc, entry(eb, eloc, offset));
                    })
                    .getResult(0);
          } else {
            value = entry(fb, floc, offset);
          }
          store(fb, floc, value, offset);
          scf::YieldOp::create(fb, floc);
        });
  };
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero}, ValueRange{indexed.n},
                 ValueRange{one},
                 [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                   scf::IfOp::create(
                       pb, ploc, indexed.built,
                       [&](OpBuilder &tb, Location tloc) {
                         writeRow(tb, tloc, ivs[0], /*search=*/true);
                         scf::YieldOp::create(tb, tloc);
                       },
                       [&](OpBuilder &eb, Location eloc) {
                         writeRow(eb, eloc, ivs[0], /*search=*/false);
                         scf::YieldOp::create(eb, eloc);
                       });
                 }),
             "neighbour_table");
  func::ReturnOp::create(
      b, loc, ValueRange{tableOut, status.getBuffer(), indexed.keys});
  return function;
}

func::FuncOp RulebookBuilder::create(StringRef name) {
  OpBuilder b = OpBuilder::atBlockEnd(ctx.getModule().getBody());
  // The builder's ops name it: a failing allocation says where it was.
  Location loc = bufferLoc(ctx.getModule().getLoc(), name);
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), index = b.getIndexType();
  bool subm = geometry.getKind() == ConvKind::Subm;
  int64_t columns = rank + 1;

  auto outCoordsType = MemRefType::get({ShapedType::kDynamic, columns}, i32);
  auto pairsType = MemRefType::get({ShapedType::kDynamic}, i32);
  auto offsetsType = MemRefType::get({volume + 1}, index);
  SmallVector<Type> results;
  if (!subm)
    results.push_back(outCoordsType);
  results.append({pairsType, pairsType, offsetsType});
  func::FuncOp function = declare(b, name, results);
  Value coords = function.getArgument(0);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);

  BuildStatus status(b, loc);
  IndexedSites indexed = indexSites(b, loc, coords, status);
  Value keys = indexed.keys, sites = indexed.sites,
        tableMask = indexed.tableMask;
  if (!subm)
    stridedSiteKeys = keys;

  // Pass 1 counts the pairs of each (offset, block), pass 2 writes them.
  int64_t blockSize = ctx.getBlockSize();
  Value blockSizeValue = indexConst(b, loc, blockSize);
  Value blocks = arith::CeilDivUIOp::create(b, loc, sites, blockSizeValue);
  PairCounts counts(b, loc, volume, blocks);
  auto blockRange = [&](OpBuilder &nb, Location nloc, Value block) {
    Value start = arith::MulIOp::create(nb, nloc, block, blockSizeValue);
    Value end = arith::MinUIOp::create(
        nb, nloc, arith::AddIOp::create(nb, nloc, start, blockSizeValue),
        sites);
    return std::make_pair(start, end);
  };
  SubmSearchPlan plan(geometry, subm);
  ArrayRef<int64_t> searched = plan.searched;
  bool symmetric = plan.symmetric;
  bool unrolled = ctx.unrollsOffsets(volume);

  // Subm probes are the expensive part: the counting pass remembers, one
  // byte per (searched offset, site), which probes hit, so the writing pass
  // probes only those (about a quarter on LiDAR data) instead of all.
  Value hits;
  if (subm && unrolled)
    hits =
        alloc1d(b, bufferLoc(loc, "the probe hits of a subm build"),
                b.getI8Type(),
                arith::MulIOp::create(
                    b, loc, sites,
                    indexConst(b, loc, static_cast<int64_t>(searched.size()))));
  int64_t numSearched = searched.size();
  auto hitIndex = [&](OpBuilder &nb, Location nloc, size_t searchedIndex,
                      Value row) {
    return arith::AddIOp::create(
        nb, nloc,
        arith::MulIOp::create(nb, nloc, row, indexConst(nb, nloc, numSearched)),
        indexConst(nb, nloc, searchedIndex));
  };

  bool boxes = geometry.getKind() == ConvKind::Regular;
  if (boxes)
    countPairsInBoxes(b, loc, coords, blocks, blockRange, counts);
  else if (!unrolled)
    countPairsLooped(b, loc, coords, blocks, blockRange, plan, counts);
  else
    forEachBlock(
        b, loc, blocks, blockRange, "count_pairs",
        [&](OpBuilder &nb, Location nloc, Value block, Value start, Value end) {
          // Site by site (its coordinates loaded once), all searched
          // offsets unrolled, one counter per offset.
          SmallVector<Value> zeros(numSearched, i32Const(nb, nloc, 0));
          auto count = scf::ForOp::create(
              nb, nloc, start, end, one, zeros,
              [&](OpBuilder &fb, Location floc, Value row,
                  ValueRange counters) {
                auto site = loadSite(fb, floc, coords, row);
                // The probes of one site are independent: start fetching
                // all their home slots before the first search waits on one.
                if (subm && ctx.getMachine().prefetchProbes)
                  for (int64_t offset : searched) {
                    Value key = pairedKey(fb, floc, site, offset);
                    Value home = arith::IndexCastOp::create(
                        fb, floc, index,
                        hashHomeSlot(fb, floc,
                                     arith::MaxSIOp::create(
                                         fb, floc, key, i64Const(fb, floc, 0)),
                                     tableMask));
                    memref::PrefetchOp::create(fb, floc, table.keys,
                                               ValueRange{home},
                                               /*isWrite=*/false,
                                               /*localityHint=*/3,
                                               /*isDataCache=*/true);
                  }
                SmallVector<Value> next;
                for (auto [searchedIndex, offset] : llvm::enumerate(searched)) {
                  Value found = findPair(fb, floc, site, offset).first;
                  if (subm)
                    memref::StoreOp::create(
                        fb, floc,
                        arith::ExtUIOp::create(fb, floc, fb.getI8Type(), found),
                        hits,
                        ValueRange{hitIndex(fb, floc, searchedIndex, row)});
                  next.push_back(arith::AddIOp::create(
                      fb, floc, counters[searchedIndex],
                      arith::ExtUIOp::create(fb, floc, i32, found)));
                }
                scf::YieldOp::create(fb, floc, next);
              });
          for (auto [searchedIndex, offset] : llvm::enumerate(searched)) {
            Value counted = count.getResult(searchedIndex);
            counts.store(nb, nloc, counted, offset, block);
            if (symmetric)
              counts.store(nb, nloc, counted, plan.mirror(offset), block);
          }
          if (symmetric) {
            Value size = arith::IndexCastOp::create(
                nb, nloc, i32, arith::SubIOp::create(nb, nloc, end, start));
            counts.store(nb, nloc, size, plan.centre, block);
          }
        });

  Value scanned = counts.scan(ctx, b, loc, status);

  // The pair buffers' capacity. Exact: the pair total, read back with the
  // first error (which leaves the rulebook empty). Bounded (a strided build
  // where the context says so): the sites times the most pairs a site has,
  // known without a wait; the build's one read-back then comes after the
  // unique, and the pairs are the buffers' first `total` slots.
  bool bounded = !subm && ctx.boundsStridedPairs();
  Value valid, total, capacity, writeBlocks;
  if (bounded) {
    int64_t pairsPerSite = geometry.getKind() == ConvKind::Regular
                               ? OutputBox(geometry, outShape).maxPairsPerSite()
                               : volume;
    capacity =
        arith::MulIOp::create(b, loc, sites, indexConst(b, loc, pairsPerSite));
    writeBlocks = arith::SelectOp::create(b, loc, scanned, blocks, zero);
  } else {
    BuiltPairs pairs = readBackPairs(ctx, b, loc, status, scanned, coords, keys,
                                     inShape, batchSize);
    valid = pairs.valid;
    total = capacity = pairs.total;
    writeBlocks = arith::SelectOp::create(b, loc, valid, blocks, zero);
  }

  // Pass 2: write the pairs.
  Location pairsLoc = bufferLoc(loc, "the pairs of a rulebook");
  Value pairIn = alloc1d(b, pairsLoc, i32, capacity);
  Value pairOut = subm ? alloc1d(b, pairsLoc, i32, capacity) : Value();
  Value candidateKeys =
      subm ? Value()
           : alloc1d(b, bufferLoc(loc, "the output keys of a rulebook's pairs"),
                     i64, capacity);
  int64_t outKeyBits = siteKeyBits(outShape, batchSize);
  if (bounded) {
    // Slots past the total keep the largest key of the unique's width,
    // above every output key: one output more, dropped after the
    // read-back, when the pairs leave slots free.
    Value padding = i64Const(b, loc, (int64_t(1) << outKeyBits) - 1);
    markKernel(
        scf::ParallelOp::create(
            b, loc, ValueRange{zero}, ValueRange{capacity}, ValueRange{one},
            [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
              memref::StoreOp::create(pb, ploc, padding, candidateKeys, ivs);
            }),
        "pad_keys");
  }
  auto store = [&](OpBuilder &tb, Location tloc, Value value, Value buffer,
                   Value slot) {
    memref::StoreOp::create(tb, tloc, value, buffer, ValueRange{slot});
  };
  if (boxes)
    writePairsInBoxes(b, loc, coords, writeBlocks, blockRange, counts, pairIn,
                      candidateKeys);
  else if (!unrolled)
    writePairsLooped(b, loc, coords, writeBlocks, blockRange, plan, counts,
                     pairIn, pairOut, candidateKeys);
  else
    forEachBlock(
        b, loc, writeBlocks, blockRange, "write_pairs",
        [&](OpBuilder &nb, Location nloc, Value block, Value start, Value end) {
          SmallVector<Value> first, firstMirrored;
          for (int64_t offset : searched) {
            first.push_back(counts.firstSlot(nb, nloc, offset, block));
            if (symmetric)
              firstMirrored.push_back(
                  counts.firstSlot(nb, nloc, plan.mirror(offset), block));
          }
          Value firstCentre =
              symmetric ? counts.firstSlot(nb, nloc, plan.centre, block)
                        : Value();
          // `written[k]`: this block's pairs at searched offset k so far.
          SmallVector<Value> zeros(numSearched, indexConst(nb, nloc, 0));
          scf::ForOp::create(
              nb, nloc, start, end, one, zeros,
              [&](OpBuilder &fb, Location floc, Value row, ValueRange written) {
                auto site = loadSite(fb, floc, coords, row);
                Value rowI32 = arith::IndexCastOp::create(fb, floc, i32, row);
                SmallVector<Value> next;
                for (auto [k, offset] : llvm::enumerate(searched)) {
                  Value found, partner;
                  if (subm) {
                    Value hit = memref::LoadOp::create(
                        fb, floc, hits, ValueRange{hitIndex(fb, floc, k, row)});
                    found =
                        arith::TruncIOp::create(fb, floc, fb.getI1Type(), hit);
                  } else {
                    std::tie(found, partner) = findPair(fb, floc, site, offset);
                  }
                  next.push_back(writePairIfFound(
                      fb, floc, found, first[k], written[k],
                      [&](OpBuilder &tb, Location tloc, Value slot) {
                        // Subm probes again, only for the pairs that exist.
                        if (subm)
                          partner = memref::LoadOp::create(
                              tb, tloc, table.values,
                              ValueRange{
                                  findPair(tb, tloc, site, offset).second});
                        if (subm) {
                          Value mirrored =
                              symmetric
                                  ? arith::AddIOp::create(
                                        tb, tloc, firstMirrored[k], written[k])
                                  : Value();
                          storeSubmPairs(tb, tloc, pairIn, pairOut, slot,
                                         mirrored, partner, rowI32);
                        } else {
                          store(tb, tloc, rowI32, pairIn, slot);
                          store(tb, tloc, partner, candidateKeys, slot);
                        }
                      }));
                }
                // The centre: every site feeds itself.
                if (symmetric)
                  storeCentrePair(fb, floc, pairIn, pairOut, firstCentre, row,
                                  start, rowI32);
                scf::YieldOp::create(fb, floc, next);
              });
        });

  SmallVector<Value> returned;
  if (!subm) {
    // Output sites: the sorted unique candidate keys. The inverse map gives
    // every pair its output row directly. Their number is a size the host
    // needs: read back once more, or, bounded, for the first time.
    Location uniqueLoc =
        bufferLoc(loc, "the unique output keys of a rulebook build");
    Value unique = alloc1d(b, uniqueLoc, i64, capacity);
    Value first = alloc1d(b, uniqueLoc, i32, capacity);
    pairOut = alloc1d(b, pairsLoc, i32, capacity);
    Value uniqued = callRuntime(ctx, b, loc, "spconv_rt_memref_unique_deferred",
                                {candidateKeys, unique, first, pairOut,
                                 status.slot(b, loc, BuildStatus::UniqueCount),
                                 i64Const(b, loc, outKeyBits)});
    Value outputs;
    if (bounded) {
      BuiltPairs built = readBackPairs(
          ctx, b, loc, status, arith::AndIOp::create(b, loc, scanned, uniqued),
          coords, keys, inShape, batchSize, /*withUnique=*/true);
      valid = built.valid;
      total = built.total;
      Value padded = arith::AndIOp::create(
          b, loc, valid,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, total,
                                capacity));
      outputs = arith::SubIOp::create(
          b, loc, built.unique,
          arith::SelectOp::create(b, loc, padded, one, zero));
      auto firstSlots = [&](Value buffer) {
        return memref::ReinterpretCastOp::create(
            b, loc, pairsType, buffer, b.getIndexAttr(0),
            ArrayRef<OpFoldResult>{total},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      };
      pairIn = firstSlots(pairIn);
      pairOut = firstSlots(pairOut);
    } else {
      valid = arith::AndIOp::create(b, loc, valid, uniqued);
      outputs = arith::IndexCastOp::create(
          b, loc, index,
          status.readBack(b, loc, {BuildStatus::UniqueCount}).front());
      outputs = arith::SelectOp::create(b, loc, valid, outputs, zero);
    }
    Value outCoords =
        memref::AllocOp::create(b, bufferLoc(loc, "the output sites of a rulebook build"),
                                outCoordsType, ValueRange{outputs});
    delinearizeSites(b, loc, unique, outputs, outShape, outCoords);
    returned.push_back(outCoords);
  }

  // CSR offsets. If a step failed, the rulebook is empty.
  Value offsets = counts.buildOffsets(b, loc, valid, total);
  returned.append({pairIn, pairOut, offsets});
  func::ReturnOp::create(b, loc, returned);
  return function;
}

void RulebookBuilder::forEachBlockAndOffset(OpBuilder &b, Location loc,
                                            Value blocks, BlockRange blockRange,
                                            const SubmSearchPlan &plan,
                                            StringRef role,
                                            OffsetBody perOffset,
                                            BlockBody perBlock) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  // The searched offsets are 0, 1, ... (below the centre when symmetric).
  Value numSearched =
      indexConst(b, loc, static_cast<int64_t>(plan.searched.size()));
  forEachBlock(
      b, loc, blocks, blockRange, role,
      [&](OpBuilder &nb, Location nloc, Value block, Value start, Value end) {
        scf::ForOp::create(
            nb, nloc, zero, numSearched, one, ValueRange{},
            [&](OpBuilder &ob, Location oloc, Value offset, ValueRange) {
              perOffset(ob, oloc, block, start, end, offset);
              scf::YieldOp::create(ob, oloc);
            });
        if (plan.symmetric)
          perBlock(nb, nloc, block, start, end);
      });
}

void RulebookBuilder::forEachBlock(OpBuilder &b, Location loc, Value blocks,
                                   BlockRange blockRange, StringRef role,
                                   BlockBody body) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero}, ValueRange{blocks}, ValueRange{one},
                 [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
                   auto [start, end] = blockRange(nb, nloc, ivs[0]);
                   body(nb, nloc, ivs[0], start, end);
                 }),
             role);
}

void RulebookBuilder::countPairsLooped(OpBuilder &b, Location loc, Value coords,
                                       Value blocks, BlockRange blockRange,
                                       const SubmSearchPlan &plan,
                                       PairCounts &counts) {
  Type i32 = b.getI32Type();
  Value one = indexConst(b, loc, 1);
  auto countOffset = [&](OpBuilder &ob, Location oloc, Value block, Value start,
                         Value end, Value offset) {
    auto count = scf::ForOp::create(
        ob, oloc, start, end, one, ValueRange{i32Const(ob, oloc, 0)},
        [&](OpBuilder &fb, Location floc, Value row, ValueRange counted) {
          auto site = loadSite(fb, floc, coords, row);
          Value found = findPair(fb, floc, site, offset).first;
          scf::YieldOp::create(
              fb, floc,
              ValueRange{arith::AddIOp::create(
                  fb, floc, counted[0],
                  arith::ExtUIOp::create(fb, floc, i32, found))});
        });
    counts.store(ob, oloc, count.getResult(0), offset, block);
    if (plan.symmetric)
      counts.store(ob, oloc, count.getResult(0), plan.mirror(ob, oloc, offset),
                   block);
  };
  // The centre: one pair per site.
  auto countCentre = [&](OpBuilder &nb, Location nloc, Value block, Value start,
                         Value end) {
    Value size = arith::IndexCastOp::create(
        nb, nloc, i32, arith::SubIOp::create(nb, nloc, end, start));
    counts.store(nb, nloc, size, plan.centre, block);
  };
  forEachBlockAndOffset(b, loc, blocks, blockRange, plan, "count_pairs",
                        countOffset, countCentre);
}

void RulebookBuilder::writePairsLooped(OpBuilder &b, Location loc, Value coords,
                                       Value blocks, BlockRange blockRange,
                                       const SubmSearchPlan &plan,
                                       PairCounts &counts, Value pairIn,
                                       Value pairOut, Value candidateKeys) {
  Type i32 = b.getI32Type();
  bool subm = geometry.getKind() == ConvKind::Subm;
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  auto writeOffset = [&](OpBuilder &ob, Location oloc, Value block, Value start,
                         Value end, Value offset) {
    Value first = counts.firstSlot(ob, oloc, offset, block);
    Value firstMirrored =
        plan.symmetric
            ? counts.firstSlot(ob, oloc, plan.mirror(ob, oloc, offset), block)
            : Value();
    scf::ForOp::create(
        ob, oloc, start, end, one, ValueRange{zero},
        [&](OpBuilder &fb, Location floc, Value row, ValueRange written) {
          auto site = loadSite(fb, floc, coords, row);
          Value rowI32 = arith::IndexCastOp::create(fb, floc, i32, row);
          auto [found, partner] = findPair(fb, floc, site, offset);
          Value next = writePairIfFound(
              fb, floc, found, first, written[0],
              [&](OpBuilder &tb, Location tloc, Value slot) {
                if (!subm) {
                  memref::StoreOp::create(tb, tloc, rowI32, pairIn, slot);
                  memref::StoreOp::create(tb, tloc, partner, candidateKeys,
                                          slot);
                  return;
                }
                Value neighbour = memref::LoadOp::create(tb, tloc, table.values,
                                                         ValueRange{partner});
                Value mirrored = plan.symmetric
                                     ? arith::AddIOp::create(
                                           tb, tloc, firstMirrored, written[0])
                                     : Value();
                storeSubmPairs(tb, tloc, pairIn, pairOut, slot, mirrored,
                               neighbour, rowI32);
              });
          scf::YieldOp::create(fb, floc, next);
        });
  };
  // The centre: every site feeds itself.
  auto writeCentre = [&](OpBuilder &nb, Location nloc, Value block, Value start,
                         Value end) {
    Value firstCentre = counts.firstSlot(nb, nloc, plan.centre, block);
    scf::ForOp::create(
        nb, nloc, start, end, one, ValueRange{},
        [&](OpBuilder &fb, Location floc, Value row, ValueRange) {
          storeCentrePair(fb, floc, pairIn, pairOut, firstCentre, row, start,
                          arith::IndexCastOp::create(fb, floc, i32, row));
          scf::YieldOp::create(fb, floc);
        });
  };
  forEachBlockAndOffset(b, loc, blocks, blockRange, plan, "write_pairs",
                        writeOffset, writeCentre);
}

void RulebookBuilder::forEachPairInBoxes(OpBuilder &b, Location loc,
                                         Value coords, Value blocks,
                                         BlockRange blockRange, StringRef role,
                                         BlockOffsetBody perOffset,
                                         BoxPairBody perPair) {
  OutputBox box(geometry, outShape);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  forEachBlock(
      b, loc, blocks, blockRange, role,
      [&](OpBuilder &nb, Location nloc, Value block, Value start, Value end) {
        if (perOffset)
          scf::ForOp::create(
              nb, nloc, zero, indexConst(nb, nloc, volume), one, ValueRange{},
              [&](OpBuilder &fb, Location floc, Value offset, ValueRange) {
                perOffset(fb, floc, block, offset);
                scf::YieldOp::create(fb, floc);
              });
        scf::ForOp::create(
            nb, nloc, start, end, one, ValueRange{},
            [&](OpBuilder &fb, Location floc, Value row, ValueRange) {
              auto [batch, spatial] = loadSite(fb, floc, coords, row);
              box.forEachPair(
                  fb, floc, batch, spatial,
                  [&](OpBuilder &pb, Location ploc, Value offset, Value key) {
                    perPair(pb, ploc, block, row, offset, key);
                  });
              scf::YieldOp::create(fb, floc);
            });
      });
}

void RulebookBuilder::countPairsInBoxes(OpBuilder &b, Location loc,
                                        Value coords, Value blocks,
                                        BlockRange blockRange,
                                        PairCounts &counts) {
  forEachPairInBoxes(
      b, loc, coords, blocks, blockRange, "count_pairs",
      [&](OpBuilder &fb, Location floc, Value block, Value offset) {
        counts.store(fb, floc, i32Const(fb, floc, 0), offset, block);
      },
      [&](OpBuilder &pb, Location ploc, Value block, Value, Value offset,
          Value) { counts.increment(pb, ploc, offset, block); });
}

void RulebookBuilder::writePairsInBoxes(OpBuilder &b, Location loc,
                                        Value coords, Value blocks,
                                        BlockRange blockRange,
                                        PairCounts &counts, Value pairIn,
                                        Value candidateKeys) {
  Type i32 = b.getI32Type(), index = b.getIndexType();
  // A site reaches at most one output per offset, so with one site per
  // block (the GPU's threads) each pair goes to its (offset, block)'s first
  // slot. Larger blocks keep the next free slot of each (offset, block).
  bool oneSitePerBlock = ctx.getBlockSize() == 1;
  Value cursors =
      oneSitePerBlock
          ? Value()
          : alloc1d(b, loc, index,
                    arith::MulIOp::create(b, loc, blocks,
                                          indexConst(b, loc, volume)));
  auto startCursor = [&](OpBuilder &fb, Location floc, Value block,
                         Value offset) {
    memref::StoreOp::create(fb, floc, counts.firstSlot(fb, floc, offset, block),
                            cursors,
                            ValueRange{counts.index(fb, floc, offset, block)});
  };
  auto writePair = [&](OpBuilder &pb, Location ploc, Value block, Value row,
                       Value offset, Value key) {
    Value slot;
    if (cursors) {
      Value at = counts.index(pb, ploc, offset, block);
      slot = memref::LoadOp::create(pb, ploc, cursors, ValueRange{at});
      memref::StoreOp::create(
          pb, ploc,
          arith::AddIOp::create(pb, ploc, slot, indexConst(pb, ploc, 1)),
          cursors, ValueRange{at});
    } else {
      slot = counts.firstSlot(pb, ploc, offset, block);
    }
    memref::StoreOp::create(pb, ploc,
                            arith::IndexCastOp::create(pb, ploc, i32, row),
                            pairIn, ValueRange{slot});
    memref::StoreOp::create(pb, ploc, key, candidateKeys, ValueRange{slot});
  };
  forEachPairInBoxes(b, loc, coords, blocks, blockRange, "write_pairs",
                     cursors ? BlockOffsetBody(startCursor) : BlockOffsetBody(),
                     writePair);
}

Value lowering::callNeighbourTableBuilder(LoweringContext &ctx, OpBuilder &b,
                                          BuildRulebookOp op,
                                          Value coordsBuffer) {
  RulebookType type = op.getRulebook().getType();
  std::string name = getBuilderName(type) + "_table";
  func::FuncOp builder = ctx.lookupFunction(name);
  if (!builder)
    builder = RulebookBuilder(ctx, type).createNeighbourTable(name);

  Location loc = op.getLoc();
  Value argument =
      castTo(b, loc, coordsBuffer, builder.getFunctionType().getInput(0));
  auto call = func::CallOp::create(b, loc, builder, ValueRange{argument});
  checkAtReturn(ctx, b, op, BuildStatus(call.getResult(1)), argument,
                call.getResult(2), type.getInputGrid().getShape(),
                buildBatchSize(type));
  return call.getResult(0);
}

FailureOr<BuiltRulebook> lowering::lowerBuildRulebook(LoweringContext &ctx,
                                                      OpBuilder &b,
                                                      BuildRulebookOp op,
                                                      Value coordsBuffer) {
  RulebookType type = op.getRulebook().getType();
  bool subm = type.getGeometry().getKind() == ConvKind::Subm;
  // The sorted merge is built for unrolled offsets; larger kernels search
  // the hash table in an offset loop.
  bool sorted = subm && ctx.getSubmSearch() == SubmSearch::Sorted &&
                ctx.unrollsOffsets(type.getGeometry().getKernelVolume());
  std::string name = getBuilderName(type) + (sorted ? "_sorted" : "");
  func::FuncOp builder = ctx.lookupFunction(name);
  if (!builder)
    builder = sorted ? createSortedSubmBuilder(ctx, type, name)
                     : RulebookBuilder(ctx, type).create(name);

  Location loc = op.getLoc();
  Value argument =
      castTo(b, loc, coordsBuffer, builder.getFunctionType().getInput(0));
  auto call = func::CallOp::create(b, loc, builder, ValueRange{argument});
  BuiltRulebook built;
  RulebookBuffers &rulebook = built.rulebook;
  rulebook.numIn = memref::DimOp::create(b, loc, coordsBuffer, 0);
  ValueRange results = call.getResults();
  if (subm) {
    rulebook.numOut = rulebook.numIn;
  } else {
    built.outCoords = results.front();
    results = results.drop_front();
    rulebook.numOut = memref::DimOp::create(b, loc, built.outCoords, 0);
  }
  rulebook.pairIn = results[0];
  rulebook.pairOut = results[1];
  rulebook.offsets = results[2];
  return built;
}
