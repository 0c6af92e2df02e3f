//===- BuildRulebook.cpp - Geometry-specialised rulebook builders ---------===//
//
// Part of the spconv-mlir project.
//
// Each distinct (geometry, grid) gets one private builder function whose
// geometry is folded into constants and whose kernel-offset loops are
// unrolled. The pairs are counted per block of sites, prefix-summed and then
// written, so the rulebook holds exactly one entry per pair, ordered by
// offset and then by input row (BuilderSkeleton.h). This file: the hash
// search, the neighbour-table builder the GPU's tiled convs read, and the
// lowering of spconv.build_rulebook to a call of the builder.
//
//===----------------------------------------------------------------------===//

#include "Rulebook/BuildStatus.h"
#include "Rulebook/BuilderSkeleton.h"
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

namespace {
/// The hash search: the input sites in the runtime's hash table, probed
/// inline for each subm neighbour; the paired output key computed for each
/// transposed or inverse pair; the output box enumerated for each regular
/// site (BuilderSkeleton.h's strategy).
class HashSearch : public PairSearch {
public:
  HashSearch(LoweringContext &ctx, RulebookType type)
      : ctx(ctx), type(type), geometry(type.getGeometry()),
        inShape(type.getInputGrid().getShape()),
        outShape(type.getOutputGrid().getShape()), rank(geometry.getRank()),
        volume(geometry.getKernelVolume()), batchSize(buildBatchSize(type)) {}

  /// (coords) -> ([out coords,] pair in, pair out, CSR offsets).
  func::FuncOp create(StringRef name) {
    return emitRulebookBuilder(ctx, type, name, *this);
  }
  /// For subm: (coords) -> (neighbour table, status, site keys), the table
  /// buildNeighbourTable would make of the rulebook, without the pairs: no
  /// size to read back. The caller checks the status (checkAtReturn).
  func::FuncOp createNeighbourTable(StringRef name);

  IndexedSites indexSites(OpBuilder &b, Location loc, Value coords,
                          const BuildStatus &status) override;
  void countPairs(OpBuilder &b, Location loc, Value coords,
                  const SiteBlocks &blocks, PairCounts &counts) override;
  void writePairs(OpBuilder &b, Location loc, Value coords,
                  const SiteBlocks &blocks, Value writeBlocks,
                  PairCounts &counts, const PairBuffers &pairs) override;

private:
  /// What every build of this search does first: the site keys, checked
  /// against the grid, and the hash table of the input sites (`table`),
  /// whose build finds repeated sites; both record what they find in
  /// `status`.
  struct TableSites {
    IndexedSites indexed;
    Value built;     ///< i1: the hash table was built
    Value tableMask; ///< i64: the table's capacity - 1
  };
  TableSites buildTable(OpBuilder &b, Location loc, Value coords,
                        const BuildStatus &status);

  using Site = std::pair<Value, SmallVector<Value>>;
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
                             BlockRangeFn blockRange,
                             const SubmSearchPlan &plan, StringRef role,
                             OffsetBody perOffset, BlockBodyFn perBlock);
  void countPairsLooped(OpBuilder &b, Location loc, Value coords, Value blocks,
                        BlockRangeFn blockRange, const SubmSearchPlan &plan,
                        PairCounts &counts);
  void writePairsLooped(OpBuilder &b, Location loc, Value coords, Value blocks,
                        BlockRangeFn blockRange, const SubmSearchPlan &plan,
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
                          Value blocks, BlockRangeFn blockRange, StringRef role,
                          BlockOffsetBody perOffset, BoxPairBody perPair);
  void countPairsInBoxes(OpBuilder &b, Location loc, Value coords, Value blocks,
                         BlockRangeFn blockRange, PairCounts &counts);
  void writePairsInBoxes(OpBuilder &b, Location loc, Value coords, Value blocks,
                         BlockRangeFn blockRange, PairCounts &counts,
                         Value pairIn, Value candidateKeys);

  LoweringContext &ctx;
  RulebookType type;
  GeometryAttr geometry;
  ArrayRef<int64_t> inShape, outShape;
  unsigned rank;
  int64_t volume;
  int64_t batchSize;
  HashTableBuffers table;
  Value tableMask;
  /// For subm with unrolled offsets: one byte per (searched offset, site),
  /// whether its probe hit in pass 1, so pass 2 probes only the hits.
  Value hits;
  int64_t hitsPerSite = 0;
  /// A strided builder's site keys: a site outside the grid is loaded with
  /// batch -1, which pairs with nothing, so its (unchecked) coordinates
  /// never make an output key.
  Value stridedSiteKeys;
};
} // namespace

std::pair<Value, SmallVector<Value>>
HashSearch::loadSite(OpBuilder &b, Location loc, Value coords, Value row) {
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

Value HashSearch::pairedKey(OpBuilder &b, Location loc, const Site &site,
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

Value HashSearch::probe(OpBuilder &b, Location loc, Value key) {
  return func::CallOp::create(b, loc, ctx.getHashFindSlotFunction(),
                              ValueRange{table.keys, key})
      .getResult(0);
}

std::pair<Value, Value> HashSearch::findPair(OpBuilder &b, Location loc,
                                             const Site &site, Value offset) {
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

HashSearch::TableSites HashSearch::buildTable(OpBuilder &b, Location loc,
                                              Value coords,
                                              const BuildStatus &status) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), index = b.getIndexType();
  TableSites result;
  IndexedSites &indexed = result.indexed;
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
  result.tableMask = arith::SubIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, i64, capacity),
      i64Const(b, loc, 1));
  table.values = alloc1d(
      b, bufferLoc(loc, "the hash table of a rulebook build"), i32, capacity);
  result.built =
      callRuntime(ctx, b, loc, "spconv_rt_memref_hash_build_deferred",
                  {indexed.keys, table.keys, table.values,
                   status.slot(b, loc, BuildStatus::RepeatRow)});
  indexed.sites = arith::SelectOp::create(b, loc, result.built, indexed.n,
                                          indexConst(b, loc, 0));
  return result;
}

IndexedSites HashSearch::indexSites(OpBuilder &b, Location loc, Value coords,
                                    const BuildStatus &status) {
  TableSites sites = buildTable(b, loc, coords, status);
  tableMask = sites.tableMask;
  if (geometry.getKind() != ConvKind::Subm)
    stridedSiteKeys = sites.indexed.keys;
  return sites.indexed;
}

func::FuncOp HashSearch::createNeighbourTable(StringRef name) {
  assert(geometry.getKind() == ConvKind::Subm && "a subm builder");
  OpBuilder b = OpBuilder::atBlockEnd(ctx.getModule().getBody());
  // The builder's ops name it: a failing allocation says where it was.
  Location loc = bufferLoc(ctx.getModule().getLoc(), name);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto tableType = MemRefType::get({ShapedType::kDynamic, volume}, i32);
  auto statusType = MemRefType::get({BuildStatus::NumSlots}, i64);
  auto keysType = MemRefType::get({ShapedType::kDynamic}, i64);
  func::FuncOp function =
      declareBuilder(ctx, b, type, name, {tableType, statusType, keysType});
  Value coords = function.getArgument(0);
  BuildStatus status(b, loc);
  TableSites sites = buildTable(b, loc, coords, status);
  const IndexedSites &indexed = sites.indexed;
  Value tableOut = memref::AllocOp::create(
      b, bufferLoc(loc, "the neighbour table of a rulebook"), tableType,
      ValueRange{indexed.n});

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
                       pb, ploc, sites.built,
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

void HashSearch::countPairs(OpBuilder &b, Location loc, Value coords,
                            const SiteBlocks &blocks, PairCounts &counts) {
  Type i32 = b.getI32Type(), index = b.getIndexType();
  bool subm = geometry.getKind() == ConvKind::Subm;
  auto blockRange = [&](OpBuilder &nb, Location nloc, Value block) {
    return blocks.range(nb, nloc, block);
  };
  SubmSearchPlan plan(geometry, subm);
  ArrayRef<int64_t> searched = plan.searched;
  bool unrolled = ctx.unrollsOffsets(volume);

  // Subm probes are the expensive part: the counting pass remembers, one
  // byte per (searched offset, site), which probes hit, so the writing pass
  // probes only those (about a quarter on LiDAR data) instead of all.
  int64_t numSearched = searched.size();
  hitsPerSite = numSearched;
  if (subm && unrolled)
    hits = alloc1d(b, bufferLoc(loc, "the probe hits of a subm build"),
                   b.getI8Type(),
                   arith::MulIOp::create(b, loc, blocks.sites,
                                         indexConst(b, loc, numSearched)));

  if (geometry.getKind() == ConvKind::Regular)
    return countPairsInBoxes(b, loc, coords, blocks.blocks, blockRange, counts);
  if (!unrolled)
    return countPairsLooped(b, loc, coords, blocks.blocks, blockRange, plan,
                            counts);
  Value one = indexConst(b, loc, 1);
  forEachBlock(
      b, loc, blocks.blocks, blockRange, "count_pairs",
      [&](OpBuilder &nb, Location nloc, Value block, Value start, Value end) {
        // Site by site (its coordinates loaded once), all searched
        // offsets unrolled, one counter per offset.
        SmallVector<Value> zeros(numSearched, i32Const(nb, nloc, 0));
        auto count = scf::ForOp::create(
            nb, nloc, start, end, one, zeros,
            [&](OpBuilder &fb, Location floc, Value row, ValueRange counters) {
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
              for (auto [k, offset] : llvm::enumerate(searched)) {
                Value found = findPair(fb, floc, site, offset).first;
                if (subm)
                  memref::StoreOp::create(
                      fb, floc,
                      arith::ExtUIOp::create(fb, floc, fb.getI8Type(), found),
                      hits,
                      ValueRange{searchedEntry(fb, floc, row, hitsPerSite, k)});
                next.push_back(arith::AddIOp::create(
                    fb, floc, counters[k],
                    arith::ExtUIOp::create(fb, floc, i32, found)));
              }
              scf::YieldOp::create(fb, floc, next);
            });
        storeSearchedCounts(nb, nloc, counts, plan, count.getResults(), block,
                            start, end);
      });
}

void HashSearch::writePairs(OpBuilder &b, Location loc, Value coords,
                            const SiteBlocks &blocks, Value writeBlocks,
                            PairCounts &counts, const PairBuffers &pairs) {
  Type i32 = b.getI32Type();
  bool subm = geometry.getKind() == ConvKind::Subm;
  auto blockRange = [&](OpBuilder &nb, Location nloc, Value block) {
    return blocks.range(nb, nloc, block);
  };
  if (geometry.getKind() == ConvKind::Regular)
    return writePairsInBoxes(b, loc, coords, writeBlocks, blockRange, counts,
                             pairs.pairIn, pairs.candidateKeys);
  SubmSearchPlan plan(geometry, subm);
  if (!ctx.unrollsOffsets(volume))
    return writePairsLooped(b, loc, coords, writeBlocks, blockRange, plan,
                            counts, pairs.pairIn, pairs.pairOut,
                            pairs.candidateKeys);
  forEachBlock(
      b, loc, writeBlocks, blockRange, "write_pairs",
      [&](OpBuilder &nb, Location nloc, Value block, Value start, Value end) {
        // Per site: its coordinates and row, then per searched offset
        // whether it has a pair (a subm probe's hit from pass 1; a strided
        // pair's output key).
        Site site;
        Value row, rowI32;
        SmallVector<Value> keys(plan.searched.size());
        writeBlockBySite(
            nb, nloc, counts, plan, block, start, end, pairs,
            [&](OpBuilder &fb, Location floc, Value q) {
              row = q;
              site = loadSite(fb, floc, coords, row);
              rowI32 = arith::IndexCastOp::create(fb, floc, i32, row);
              return rowI32;
            },
            [&](OpBuilder &fb, Location floc, int64_t k) -> Value {
              if (!subm) {
                Value found;
                std::tie(found, keys[k]) =
                    findPair(fb, floc, site, plan.searched[k]);
                return found;
              }
              Value hit = memref::LoadOp::create(
                  fb, floc, hits,
                  ValueRange{searchedEntry(fb, floc, row, hitsPerSite, k)});
              return arith::TruncIOp::create(fb, floc, fb.getI1Type(), hit);
            },
            [&](OpBuilder &tb, Location tloc, int64_t k, Value slot,
                Value mirrored) {
              if (!subm) {
                memref::StoreOp::create(tb, tloc, rowI32, pairs.pairIn,
                                        ValueRange{slot});
                memref::StoreOp::create(tb, tloc, keys[k], pairs.candidateKeys,
                                        ValueRange{slot});
                return;
              }
              // Subm probes again, only for the pairs that exist.
              Value neighbour = memref::LoadOp::create(
                  tb, tloc, table.values,
                  ValueRange{
                      findPair(tb, tloc, site, plan.searched[k]).second});
              storeSubmPairs(tb, tloc, pairs.pairIn, pairs.pairOut, slot,
                             mirrored, neighbour, rowI32);
            });
      });
}

void HashSearch::forEachBlockAndOffset(OpBuilder &b, Location loc, Value blocks,
                                       BlockRangeFn blockRange,
                                       const SubmSearchPlan &plan,
                                       StringRef role, OffsetBody perOffset,
                                       BlockBodyFn perBlock) {
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

void HashSearch::countPairsLooped(OpBuilder &b, Location loc, Value coords,
                                  Value blocks, BlockRangeFn blockRange,
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

void HashSearch::writePairsLooped(OpBuilder &b, Location loc, Value coords,
                                  Value blocks, BlockRangeFn blockRange,
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

void HashSearch::forEachPairInBoxes(OpBuilder &b, Location loc, Value coords,
                                    Value blocks, BlockRangeFn blockRange,
                                    StringRef role, BlockOffsetBody perOffset,
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

void HashSearch::countPairsInBoxes(OpBuilder &b, Location loc, Value coords,
                                   Value blocks, BlockRangeFn blockRange,
                                   PairCounts &counts) {
  forEachPairInBoxes(
      b, loc, coords, blocks, blockRange, "count_pairs",
      [&](OpBuilder &fb, Location floc, Value block, Value offset) {
        counts.store(fb, floc, i32Const(fb, floc, 0), offset, block);
      },
      [&](OpBuilder &pb, Location ploc, Value block, Value, Value offset,
          Value) { counts.increment(pb, ploc, offset, block); });
}

void HashSearch::writePairsInBoxes(OpBuilder &b, Location loc, Value coords,
                                   Value blocks, BlockRangeFn blockRange,
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
    builder = HashSearch(ctx, type).createNeighbourTable(name);

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
                     : HashSearch(ctx, type).create(name);

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
