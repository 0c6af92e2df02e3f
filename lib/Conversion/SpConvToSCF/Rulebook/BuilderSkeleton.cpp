//===- BuilderSkeleton.cpp - What every rulebook builder does -------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Rulebook/BuilderSkeleton.h"
#include "Rulebook/OutputBox.h"
#include "Utils/Builders.h"
#include "Utils/Checks.h"
#include "Utils/RulebookAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

int64_t lowering::buildBatchSize(RulebookType type) {
  return effectiveBatchSize(type.getInputGrid(),
                            {*checkedProduct(type.getInputGrid().getShape()),
                             *checkedProduct(type.getOutputGrid().getShape())});
}

std::pair<Value, Value> SiteBlocks::range(OpBuilder &b, Location loc,
                                          Value block) const {
  Value start = arith::MulIOp::create(b, loc, block, blockSize);
  Value end = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, start, blockSize), sites);
  return {start, end};
}

void lowering::forEachBlock(OpBuilder &b, Location loc, Value blocks,
                            BlockRangeFn blockRange, StringRef role,
                            BlockBodyFn body) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero}, ValueRange{blocks}, ValueRange{one},
                 [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
                   auto [start, end] = blockRange(nb, nloc, ivs[0]);
                   body(nb, nloc, ivs[0], start, end);
                 }),
             role);
}

func::FuncOp lowering::declareBuilder(LoweringContext &ctx, OpBuilder &b,
                                      RulebookType type, StringRef name,
                                      TypeRange results) {
  MLIRContext *context = type.getContext();
  int64_t columns = type.getGeometry().getRank() + 1;
  auto coordsType = MemRefType::get(
      {ShapedType::kDynamic, columns}, b.getI32Type(),
      StridedLayoutAttr::get(context, ShapedType::kDynamic,
                             {ShapedType::kDynamic, ShapedType::kDynamic}));
  auto function =
      func::FuncOp::create(b, ctx.getModule().getLoc(), name,
                           b.getFunctionType({coordsType}, results));
  function.setPrivate();
  b.setInsertionPointToStart(function.addEntryBlock());
  return function;
}

func::FuncOp lowering::emitRulebookBuilder(LoweringContext &ctx,
                                           RulebookType type, StringRef name,
                                           PairSearch &search) {
  OpBuilder b = OpBuilder::atBlockEnd(ctx.getModule().getBody());
  // The builder's ops name it: a failing allocation says where it was.
  Location loc = bufferLoc(ctx.getModule().getLoc(), name);
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), index = b.getIndexType();
  GeometryAttr geometry = type.getGeometry();
  ArrayRef<int64_t> inShape = type.getInputGrid().getShape();
  ArrayRef<int64_t> outShape = type.getOutputGrid().getShape();
  int64_t volume = geometry.getKernelVolume();
  int64_t batchSize = buildBatchSize(type);
  bool subm = geometry.getKind() == ConvKind::Subm;
  int64_t columns = geometry.getRank() + 1;

  auto outCoordsType = MemRefType::get({ShapedType::kDynamic, columns}, i32);
  auto pairsType = MemRefType::get({ShapedType::kDynamic}, i32);
  auto offsetsType = MemRefType::get({volume + 1}, index);
  SmallVector<Type> results;
  if (!subm)
    results.push_back(outCoordsType);
  results.append({pairsType, pairsType, offsetsType});
  func::FuncOp function = declareBuilder(ctx, b, type, name, results);
  Value coords = function.getArgument(0);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);

  BuildStatus status(b, loc);
  IndexedSites indexed = search.indexSites(b, loc, coords, status);

  // Pass 1 counts the pairs of each (offset, block), pass 2 writes them.
  SiteBlocks blocks;
  blocks.sites = indexed.sites;
  blocks.blockSize = indexConst(b, loc, ctx.getBlockSize());
  blocks.blocks =
      arith::CeilDivUIOp::create(b, loc, blocks.sites, blocks.blockSize);
  PairCounts counts(b, loc, volume, blocks.blocks);
  search.countPairs(b, loc, coords, blocks, counts);
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
    capacity = arith::MulIOp::create(b, loc, blocks.sites,
                                     indexConst(b, loc, pairsPerSite));
    writeBlocks = arith::SelectOp::create(b, loc, scanned, blocks.blocks, zero);
  } else {
    BuiltPairs built = readBackPairs(ctx, b, loc, status, scanned, coords,
                                     indexed.keys, inShape, batchSize);
    valid = built.valid;
    total = capacity = built.total;
    writeBlocks = arith::SelectOp::create(b, loc, valid, blocks.blocks, zero);
  }

  // Pass 2: write the pairs.
  Location pairsLoc = bufferLoc(loc, "the pairs of a rulebook");
  PairBuffers pairs;
  pairs.pairIn = alloc1d(b, pairsLoc, i32, capacity);
  if (subm)
    pairs.pairOut = alloc1d(b, pairsLoc, i32, capacity);
  else
    pairs.candidateKeys =
        alloc1d(b, bufferLoc(loc, "the output keys of a rulebook's pairs"), i64,
                capacity);
  int64_t outKeyBits = siteKeyBits(outShape, batchSize);
  if (bounded) {
    // Slots past the total keep the largest key of the unique's width,
    // above every output key: one output more, dropped after the
    // read-back, when the pairs leave slots free.
    Value padding = i64Const(b, loc, (int64_t(1) << outKeyBits) - 1);
    markKernel(scf::ParallelOp::create(
                   b, loc, ValueRange{zero}, ValueRange{capacity},
                   ValueRange{one},
                   [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                     memref::StoreOp::create(pb, ploc, padding,
                                             pairs.candidateKeys, ivs);
                   }),
               "pad_keys");
  }
  search.writePairs(b, loc, coords, blocks, writeBlocks, counts, pairs);

  SmallVector<Value> returned;
  Value pairIn = pairs.pairIn, pairOut = pairs.pairOut;
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
                                {pairs.candidateKeys, unique, first, pairOut,
                                 status.slot(b, loc, BuildStatus::UniqueCount),
                                 i64Const(b, loc, outKeyBits)});
    Value outputs;
    if (bounded) {
      BuiltPairs built = readBackPairs(
          ctx, b, loc, status, arith::AndIOp::create(b, loc, scanned, uniqued),
          coords, indexed.keys, inShape, batchSize, /*withUnique=*/true);
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
    Value outCoords = memref::AllocOp::create(
        b, bufferLoc(loc, "the output sites of a rulebook build"),
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

Value lowering::searchedEntry(OpBuilder &b, Location loc, Value site,
                              int64_t searched, int64_t k) {
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, site, indexConst(b, loc, searched)),
      indexConst(b, loc, k));
}

void lowering::storeSearchedCounts(OpBuilder &b, Location loc,
                                   PairCounts &counts,
                                   const SubmSearchPlan &plan,
                                   ValueRange counted, Value block, Value start,
                                   Value end) {
  for (auto [offset, count] : llvm::zip_equal(plan.searched, counted)) {
    counts.store(b, loc, count, offset, block);
    if (plan.symmetric)
      counts.store(b, loc, count, plan.mirror(offset), block);
  }
  if (plan.symmetric) {
    Value size = arith::IndexCastOp::create(
        b, loc, b.getI32Type(), arith::SubIOp::create(b, loc, end, start));
    counts.store(b, loc, size, plan.centre, block);
  }
}

void lowering::writeBlockBySite(
    OpBuilder &b, Location loc, PairCounts &counts, const SubmSearchPlan &plan,
    Value block, Value start, Value end, const PairBuffers &pairs,
    function_ref<Value(OpBuilder &, Location, Value)> visitSite,
    function_ref<Value(OpBuilder &, Location, int64_t)> found,
    function_ref<void(OpBuilder &, Location, int64_t, Value, Value)> write) {
  bool symmetric = plan.symmetric;
  SmallVector<Value> first, firstMirrored;
  for (int64_t offset : plan.searched) {
    first.push_back(counts.firstSlot(b, loc, offset, block));
    if (symmetric)
      firstMirrored.push_back(
          counts.firstSlot(b, loc, plan.mirror(offset), block));
  }
  Value firstCentre =
      symmetric ? counts.firstSlot(b, loc, plan.centre, block) : Value();
  // `written[k]`: this block's pairs at searched offset k so far.
  SmallVector<Value> zeros(plan.searched.size(), indexConst(b, loc, 0));
  scf::ForOp::create(
      b, loc, start, end, indexConst(b, loc, 1), zeros,
      [&](OpBuilder &fb, Location floc, Value q, ValueRange written) {
        Value row = visitSite(fb, floc, q);
        SmallVector<Value> next;
        for (int64_t k = 0, e = plan.searched.size(); k < e; ++k)
          next.push_back(writePairIfFound(
              fb, floc, found(fb, floc, k), first[k], written[k],
              [&](OpBuilder &tb, Location tloc, Value slot) {
                Value mirrored =
                    symmetric ? arith::AddIOp::create(
                                    tb, tloc, firstMirrored[k], written[k])
                              : Value();
                write(tb, tloc, k, slot, mirrored);
              }));
        // The centre: every site feeds itself.
        if (symmetric)
          storeCentrePair(fb, floc, pairs.pairIn, pairs.pairOut, firstCentre, q,
                          start, row);
        scf::YieldOp::create(fb, floc, next);
      });
}
