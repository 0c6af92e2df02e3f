//===- SortedSubm.cpp - Subm rulebooks by merging sorted keys -------------===//
//
// Part of the spconv-mlir project.
//
// The neighbour of a site at kernel offset j has the key key + delta_j, a
// constant per offset (the grid strides fold it). Once the site keys are
// sorted, the neighbours of consecutive sites are found by advancing one
// pointer per offset through the same sorted array: a merge that streams
// memory, instead of one hash probe per (site, offset). Out-of-grid
// neighbours, whose keys could alias another site, are ruled out from the
// site's coordinates, decoded from its key.
//
//===----------------------------------------------------------------------===//

#include "Rulebook/BuilderSkeleton.h"
#include "Rulebook/Rulebook.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/LoweringContext.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

namespace {
/// One searched kernel offset: its row-major index, the key delta of its
/// neighbour and the per-dimension shift of the neighbour's coordinates.
struct SearchedOffset {
  int64_t offset;
  int64_t delta;
  SmallVector<int64_t> shift;
};

/// Searched offsets that differ only in the last (contiguous) dimension:
/// their neighbours' keys lie in `[key + base, key + base + span]`, so one
/// merge pointer serves them all.
struct SearchedRow {
  int64_t base;
  SmallVector<size_t> members;
};
} // namespace

/// First position in `sorted[0, size)` whose key is >= `target`.
static Value lowerBound(OpBuilder &b, Location loc, Value sorted, Value size,
                        Value target) {
  Type index = b.getIndexType();
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{index, index}, ValueRange{indexConst(b, loc, 0), size},
      [&](OpBuilder &nb, Location nloc, ValueRange range) {
        Value more = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ult,
                                           range[0], range[1]);
        scf::ConditionOp::create(nb, nloc, more, range);
      },
      [&](OpBuilder &nb, Location nloc, ValueRange range) {
        Value middle = arith::AddIOp::create(
            nb, nloc, range[0],
            arith::ShRUIOp::create(
                nb, nloc, arith::SubIOp::create(nb, nloc, range[1], range[0]),
                indexConst(nb, nloc, 1)));
        Value key = memref::LoadOp::create(nb, nloc, sorted, middle);
        Value below = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt,
                                            key, target);
        Value low = arith::SelectOp::create(
            nb, nloc, below,
            arith::AddIOp::create(nb, nloc, middle, indexConst(nb, nloc, 1)),
            range[0]);
        Value high = arith::SelectOp::create(nb, nloc, below, range[1], middle);
        scf::YieldOp::create(nb, nloc, ValueRange{low, high});
      });
  return loop.getResult(0);
}

/// The key at `p` of `sorted[0, size)`, clamped so that it never reads
/// past the end; callers check `p < size` themselves.
static Value keyAt(OpBuilder &b, Location loc, Value sorted, Value size,
                   Value p) {
  Value last = arith::SubIOp::create(b, loc, size, indexConst(b, loc, 1));
  return memref::LoadOp::create(
      b, loc, sorted, ValueRange{arith::MinUIOp::create(b, loc, p, last)});
}

/// Advances `position` past the keys below `target` in `sorted[0, size)`.
static Value advance(OpBuilder &b, Location loc, Value sorted, Value size,
                     Value position, Value target) {
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{b.getIndexType()}, ValueRange{position},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value inside = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::ult, args[0], size);
        Value below = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::slt,
            keyAt(nb, nloc, sorted, size, args[0]), target);
        scf::ConditionOp::create(
            nb, nloc, arith::AndIOp::create(nb, nloc, inside, below), args);
      },
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        scf::YieldOp::create(nb, nloc,
                             ValueRange{arith::AddIOp::create(
                                 nb, nloc, args[0], indexConst(nb, nloc, 1))});
      });
  return loop.getResult(0);
}

namespace {
/// The sorted merge (BuilderSkeleton.h's strategy), for subm kernels whose
/// offsets the lowering unrolls.
class SortedMergeSearch : public PairSearch {
public:
  SortedMergeSearch(LoweringContext &ctx, RulebookType type);

  IndexedSites indexSites(OpBuilder &b, Location loc, Value coords,
                          const BuildStatus &status) override;
  void countPairs(OpBuilder &b, Location loc, Value coords,
                  const SiteBlocks &blocks, PairCounts &counts) override;
  void writePairs(OpBuilder &b, Location loc, Value coords,
                  const SiteBlocks &blocks, Value writeBlocks,
                  PairCounts &counts, const PairBuffers &pairs) override;

private:
  using VisitFn = function_ref<SmallVector<Value>(OpBuilder &, Location, Value,
                                                  ArrayRef<Value>,
                                                  ArrayRef<Value>, ValueRange)>;
  /// Runs `visit(q, found, positions, state)` for every sorted site q in
  /// [start, end): found[k] says whether searched offset k has a neighbour,
  /// at sorted position positions[k]. One merge pointer per row of
  /// offsets, started by a binary search; `state` is threaded through the
  /// site loop, whose results follow the pointers'.
  scf::ForOp mergeBlock(OpBuilder &b, Location loc, Value start, Value end,
                        ValueRange init, VisitFn visit);

  LoweringContext &ctx;
  GeometryAttr geometry;
  ArrayRef<int64_t> shape;
  unsigned rank;
  int64_t batchSize;
  /// Keys over the grid padded by the kernel's reach on each side, where
  /// they fit int64 (they do unless the grid and a dynamic batch are
  /// huge): a neighbour's key is then the site's plus a constant that never
  /// wraps into another row, so no neighbour needs a bounds check. Otherwise
  /// the keys are the grid's and each neighbour is checked against the
  /// site's coordinates, decoded from its key.
  bool paddedKeys;
  SmallVector<int64_t> below, padded;
  ArrayRef<int64_t> keyShape;
  /// The offsets to search, with their key deltas and coordinate shifts,
  /// and the rows of them that share a merge pointer.
  SubmSearchPlan plan;
  SmallVector<SearchedOffset> searched;
  SmallVector<SearchedRow> searchedRows;
  /// The site keys, sorted, with their input rows (indexSites); the sites
  /// (0 if the sort failed); each site's neighbour rows (pass 1).
  Value sorted, rows, sites, neighbours;
};
} // namespace

SortedMergeSearch::SortedMergeSearch(LoweringContext &ctx, RulebookType type)
    : ctx(ctx), geometry(type.getGeometry()),
      shape(type.getInputGrid().getShape()), rank(geometry.getRank()),
      batchSize(buildBatchSize(type)), below(rank), padded(rank),
      plan(geometry, /*subm=*/true) {
  for (unsigned d = 0; d < rank; ++d) {
    int64_t padding = geometry.getPadding()[d];
    int64_t reach = (geometry.getKernel()[d] - 1) * geometry.getDilation()[d];
    below[d] = std::max<int64_t>(padding, 0);
    padded[d] = shape[d] + below[d] + std::max<int64_t>(reach - padding, 0);
  }
  SmallVector<int64_t> paddedVolume(padded);
  paddedVolume.push_back(batchSize);
  paddedKeys = succeeded(checkedProduct(paddedVolume));
  keyShape = paddedKeys ? ArrayRef(padded) : shape;

  SmallVector<int64_t> strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * keyShape[d + 1];
  for (int64_t offset : plan.searched) {
    SearchedOffset s{offset, 0, SmallVector<int64_t>(rank)};
    for (int d = rank - 1, rest = offset; d >= 0; --d) {
      int64_t j = rest % geometry.getKernel()[d];
      rest /= geometry.getKernel()[d];
      s.shift[d] = j * geometry.getDilation()[d] - geometry.getPadding()[d];
      s.delta += s.shift[d] * strides[d];
    }
    searched.push_back(s);
  }
  for (auto [k, s] : llvm::enumerate(searched)) {
    auto sameRow = [&](const SearchedRow &row) {
      return ArrayRef(searched[row.members.front()].shift).drop_back() ==
             ArrayRef(s.shift).drop_back();
    };
    auto *row = llvm::find_if(searchedRows, sameRow);
    if (row == searchedRows.end()) {
      searchedRows.push_back({s.delta, {}});
      row = std::prev(searchedRows.end());
    }
    row->base = std::min(row->base, s.delta);
    row->members.push_back(k);
  }
}

IndexedSites SortedMergeSearch::indexSites(OpBuilder &b, Location loc,
                                           Value coords,
                                           const BuildStatus &status) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  IndexedSites indexed;
  Value n = indexed.n = memref::DimOp::create(b, loc, coords, 0);

  // Keys, by a kernel (sites outside the grid recorded in the status and
  // keyed past the last valid key); then sorted, carrying their rows.
  Value keys = indexed.keys =
      linearizeSites(b, loc, coords, n, shape, batchSize, status);
  Location sortedLoc = bufferLoc(loc, "the sorted site keys of a subm build");
  sorted = alloc1d(b, sortedLoc, i64, n);
  rows = alloc1d(b, sortedLoc, i32, n);
  int64_t gridKeys = batchSize * *checkedProduct(shape);
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero}, ValueRange{n}, ValueRange{one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value key = memref::LoadOp::create(pb, ploc, keys, ivs);
            if (paddedKeys) {
              // The grid key's coordinates, moved into the padded grid; a
              // site outside the grid stays past every valid key.
              SmallVector<Value> x(rank);
              Value rest = key;
              for (int d = rank - 1; d >= 0; --d) {
                Value extent = i64Const(pb, ploc, shape[d]);
                x[d] = arith::AddIOp::create(
                    pb, ploc, arith::RemUIOp::create(pb, ploc, rest, extent),
                    i64Const(pb, ploc, below[d]));
                rest = arith::DivUIOp::create(pb, ploc, rest, extent);
              }
              Value inside =
                  arith::CmpIOp::create(pb, ploc, arith::CmpIPredicate::slt,
                                        key, i64Const(pb, ploc, gridKeys));
              key = arith::SelectOp::create(
                  pb, ploc, inside, linearKey(pb, ploc, rest, x, padded),
                  i64Const(pb, ploc, batchSize * *checkedProduct(padded)));
            }
            memref::StoreOp::create(pb, ploc, key, sorted, ivs);
            memref::StoreOp::create(
                pb, ploc, arith::IndexCastOp::create(pb, ploc, i32, ivs[0]),
                rows, ivs);
          }),
      "load_keys");
  Value sortedOk = callRuntime(
      ctx, b, loc, "spconv_rt_memref_sort_pairs_bits",
      {sorted, rows, i64Const(b, loc, siteKeyBits(keyShape, batchSize))});
  sites = indexed.sites = arith::SelectOp::create(b, loc, sortedOk, n, zero);

  // Repeated sites are neighbours once sorted (stable, so in row order):
  // the later row of each equal pair repeats an earlier site; the status
  // keeps the smallest.
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{one},
          ValueRange{arith::MaxUIOp::create(b, loc, sites, one)},
          ValueRange{one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value p = ivs[0];
            Value before = arith::SubIOp::create(pb, ploc, p, one);
            Value repeats = arith::CmpIOp::create(
                pb, ploc, arith::CmpIPredicate::eq,
                memref::LoadOp::create(pb, ploc, sorted, ValueRange{before}),
                memref::LoadOp::create(pb, ploc, sorted, ValueRange{p}));
            scf::IfOp::create(
                pb, ploc, repeats, [&](OpBuilder &tb, Location tloc) {
                  Value later = arith::ExtSIOp::create(
                      tb, tloc, i64,
                      memref::LoadOp::create(tb, tloc, rows, ValueRange{p}));
                  status.lowerTo(tb, tloc, BuildStatus::RepeatRow, later);
                  scf::YieldOp::create(tb, tloc);
                });
          }),
      "find_repeats");
  return indexed;
}

scf::ForOp SortedMergeSearch::mergeBlock(OpBuilder &b, Location loc,
                                         Value start, Value end,
                                         ValueRange init, VisitFn visit) {
  int64_t numSearched = searched.size();
  int64_t numRows = searchedRows.size();
  Value one = indexConst(b, loc, 1);
  Value firstKey = memref::LoadOp::create(b, loc, sorted, start);
  SmallVector<Value> iterArgs;
  for (const SearchedRow &row : searchedRows)
    iterArgs.push_back(lowerBound(
        b, loc, sorted, sites,
        arith::AddIOp::create(b, loc, firstKey, i64Const(b, loc, row.base))));
  iterArgs.append(init.begin(), init.end());
  return scf::ForOp::create(
      b, loc, start, end, one, iterArgs,
      [&](OpBuilder &fb, Location floc, Value q, ValueRange iter) {
        Value key = memref::LoadOp::create(fb, floc, sorted, q);
        // Unpadded keys: the site's coordinates, decoded from its key.
        SmallVector<Value> x(rank);
        Value rest = key;
        for (int d = rank - 1; d >= 0 && !paddedKeys; --d) {
          Value extent = i64Const(fb, floc, shape[d]);
          x[d] = arith::RemSIOp::create(fb, floc, rest, extent);
          rest = arith::DivSIOp::create(fb, floc, rest, extent);
        }
        SmallVector<Value> pointers, found(numSearched), positions(numSearched);
        for (auto [r, row] : llvm::enumerate(searchedRows)) {
          Value p = advance(fb, floc, sorted, sites, iter[r],
                            arith::AddIOp::create(
                                fb, floc, key, i64Const(fb, floc, row.base)));
          pointers.push_back(p);
          for (size_t k : row.members) {
            const SearchedOffset &s = searched[k];
            Value valid =
                arith::ConstantOp::create(fb, floc, fb.getBoolAttr(true));
            for (unsigned d = 0; d < rank && !paddedKeys; ++d) {
              if (s.shift[d] == 0)
                continue;
              Value moved = arith::AddIOp::create(
                  fb, floc, x[d], i64Const(fb, floc, s.shift[d]));
              Value inside = arith::AndIOp::create(
                  fb, floc,
                  arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::sge,
                                        moved, i64Const(fb, floc, 0)),
                  arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::slt,
                                        moved, i64Const(fb, floc, shape[d])));
              valid = arith::AndIOp::create(fb, floc, valid, inside);
            }
            // Keys in [key + base, target) take at most span
            // positions before the neighbour.
            Value target = arith::AddIOp::create(fb, floc, key,
                                                 i64Const(fb, floc, s.delta));
            Value hit =
                arith::ConstantOp::create(fb, floc, fb.getBoolAttr(false));
            Value at = p;
            for (int64_t i = 0, span = s.delta - row.base; i <= span; ++i) {
              Value candidate =
                  arith::AddIOp::create(fb, floc, p, indexConst(fb, floc, i));
              Value match = arith::AndIOp::create(
                  fb, floc,
                  arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::ult,
                                        candidate, sites),
                  arith::CmpIOp::create(
                      fb, floc, arith::CmpIPredicate::eq,
                      keyAt(fb, floc, sorted, sites, candidate), target));
              at = arith::SelectOp::create(fb, floc, match, candidate, at);
              hit = arith::OrIOp::create(fb, floc, hit, match);
            }
            found[k] = arith::AndIOp::create(fb, floc, valid, hit);
            positions[k] = at;
          }
        }
        SmallVector<Value> next(pointers);
        SmallVector<Value> state =
            visit(fb, floc, q, found, positions, iter.drop_front(numRows));
        next.append(state);
        scf::YieldOp::create(fb, floc, next);
      });
}

void SortedMergeSearch::countPairs(OpBuilder &b, Location loc, Value coords,
                                   const SiteBlocks &blocks,
                                   PairCounts &counts) {
  Type i32 = b.getI32Type();
  int64_t numSearched = searched.size();
  int64_t numRows = searchedRows.size();
  Value one = indexConst(b, loc, 1);
  // The merge is most of a build, so it runs once: each site's neighbour
  // row at every searched offset (-1 for none) goes to a transient buffer,
  // `numSearched` i32 per site, which the writing pass streams through.
  neighbours = alloc1d(
      b, loc, i32,
      arith::MulIOp::create(b, loc, sites, indexConst(b, loc, numSearched)));
  forEachBlock(
      b, loc, blocks.blocks,
      [&](OpBuilder &nb, Location nloc, Value block) {
        return blocks.range(nb, nloc, block);
      },
      "count_pairs",
      [&](OpBuilder &nb, Location nloc, Value block, Value start, Value end) {
        SmallVector<Value> zeros(numSearched, i32Const(nb, nloc, 0));
        Value last = arith::SubIOp::create(nb, nloc, sites, one);
        auto loop = mergeBlock(
            nb, nloc, start, end, zeros,
            [&](OpBuilder &fb, Location floc, Value q, ArrayRef<Value> found,
                ArrayRef<Value> positions, ValueRange counters) {
              SmallVector<Value> next;
              for (int64_t k = 0; k < numSearched; ++k) {
                // A position past the end is never a hit: clamp the
                // load, select -1.
                Value row =
                    memref::LoadOp::create(fb, floc, rows,
                                           ValueRange{arith::MinUIOp::create(
                                               fb, floc, positions[k], last)});
                memref::StoreOp::create(
                    fb, floc,
                    arith::SelectOp::create(fb, floc, found[k], row,
                                            i32Const(fb, floc, -1)),
                    neighbours,
                    ValueRange{searchedEntry(fb, floc, q, searched.size(), k)});
                next.push_back(arith::AddIOp::create(
                    fb, floc, counters[k],
                    arith::ExtUIOp::create(fb, floc, i32, found[k])));
              }
              return next;
            });
        storeSearchedCounts(nb, nloc, counts, plan,
                            loop.getResults().drop_front(numRows), block, start,
                            end);
      });
}

void SortedMergeSearch::writePairs(OpBuilder &b, Location loc, Value coords,
                                   const SiteBlocks &blocks, Value writeBlocks,
                                   PairCounts &counts,
                                   const PairBuffers &pairs) {
  forEachBlock(
      b, loc, writeBlocks,
      [&](OpBuilder &nb, Location nloc, Value block) {
        return blocks.range(nb, nloc, block);
      },
      "write_pairs",
      [&](OpBuilder &nb, Location nloc, Value block, Value start, Value end) {
        // Per sorted site: its row, then the neighbours the merge found.
        Value q, row, neighbour;
        writeBlockBySite(
            nb, nloc, counts, plan, block, start, end, pairs,
            [&](OpBuilder &fb, Location floc, Value site) {
              q = site;
              row = memref::LoadOp::create(fb, floc, rows, q);
              return row;
            },
            [&](OpBuilder &fb, Location floc, int64_t k) -> Value {
              neighbour = memref::LoadOp::create(
                  fb, floc, neighbours,
                  ValueRange{searchedEntry(fb, floc, q, searched.size(), k)});
              return arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::sge,
                                           neighbour, i32Const(fb, floc, 0));
            },
            [&](OpBuilder &tb, Location tloc, int64_t, Value slot,
                Value mirrored) {
              storeSubmPairs(tb, tloc, pairs.pairIn, pairs.pairOut, slot,
                             mirrored, neighbour, row);
            });
      });
}

func::FuncOp lowering::createSortedSubmBuilder(LoweringContext &ctx,
                                               RulebookType type,
                                               StringRef name) {
  SortedMergeSearch search(ctx, type);
  return emitRulebookBuilder(ctx, type, name, search);
}
