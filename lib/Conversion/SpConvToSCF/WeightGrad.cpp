//===- WeightGrad.cpp - The weight gradient of a rulebook conv -----------===//
//
// Part of the spconv-mlir project.
//
// `weight_grad[j] = sum over the pairs (x -> o) of offset j of
// features[x]^T (x) out_grad[o]`, a reduction with one writer per element,
// summed in the rulebook's pair order: deterministic on every target, no
// atomics.
//  - CPU: one parallel loop over (offset, input channel); each iteration
//    owns a row `weight_grad[j, ci, :]` and adds each pair's product into
//    it, the inner loop over the output channels (vectorised by LLVM).
//  - GPU: one thread per element (offset, input channel, output channel),
//    its sum in a register: K x Cin x Cout threads, neighbouring threads
//    reading neighbouring channels of the same gradient row.
//
//===----------------------------------------------------------------------===//

#include "SpConvToSCF.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

/// The (source, destination) rows of `pair`: (input, output), swapped for
/// a rulebook read backwards.
static std::pair<Value, Value> pairRows(OpBuilder &b, Location loc,
                                        const RulebookBuffers &rulebook,
                                        bool inverse, Value pair) {
  Type index = b.getIndexType();
  Value src = loadAs(b, loc, rulebook.pairIn, pair, index);
  Value dst = loadAs(b, loc, rulebook.pairOut, pair, index);
  if (inverse)
    std::swap(src, dst);
  return {src, dst};
}

/// The GPU form: a thread per element, its sum in a register, rounded once
/// into `result`. Where `ok` is false the pair range is empty: zeros.
static void emitElementPerThread(OpBuilder &b, Location loc,
                                 const RulebookBuffers &rulebook, bool inverse,
                                 int64_t volume, Value ok, Value features,
                                 Value outGrad, Value channelsIn,
                                 Value channelsOut, Value result, Type accType,
                                 StringRef role) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Type elementType = cast<MemRefType>(result.getType()).getElementType();
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero, zero},
          ValueRange{indexConst(b, loc, volume), channelsIn, channelsOut},
          ValueRange{one, one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value offset = ivs[0], ci = ivs[1], co = ivs[2];
            Value begin =
                memref::LoadOp::create(pb, ploc, rulebook.offsets, offset);
            Value end = memref::LoadOp::create(
                pb, ploc, rulebook.offsets,
                ValueRange{arith::AddIOp::create(pb, ploc, offset, one)});
            end = arith::SelectOp::create(pb, ploc, ok, end, begin);
            Value start =
                arith::ConstantOp::create(pb, ploc, pb.getZeroAttr(accType));
            auto sum = scf::ForOp::create(
                pb, ploc, begin, end, one, ValueRange{start},
                [&](OpBuilder &fb, Location floc, Value pair,
                    ValueRange partial) {
                  auto [src, dst] = pairRows(fb, floc, rulebook, inverse, pair);
                  Value a = loadAs(fb, floc, features, ValueRange{src, ci},
                                   accType);
                  Value g = loadAs(fb, floc, outGrad, ValueRange{dst, co},
                                   accType);
                  Value next = arith::AddFOp::create(
                      fb, floc, partial[0],
                      arith::MulFOp::create(fb, floc, a, g));
                  scf::YieldOp::create(fb, floc, next);
                });
            memref::StoreOp::create(
                pb, ploc,
                convertScalar(pb, ploc, sum.getResult(0), elementType), result,
                ValueRange{offset, ci, co});
          }),
      role);
}

Value lowering::lowerRulebookWeightGrad(LoweringContext &ctx, OpBuilder &b,
                                        RulebookWeightGradOp op,
                                        const RulebookBuffers &rulebook,
                                        Value features, Value outGrad) {
  Location loc = op.getLoc();
  bool inverse = op.getInverse();
  auto resultType = cast<RankedTensorType>(op.getWeightGrad().getType());
  Type elementType = resultType.getElementType();
  Type accType = accumulatorType(elementType);
  int64_t volume = op.getRulebook().getType().getGeometry().getKernelVolume();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value channelsIn = memref::DimOp::create(b, loc, features, 1);
  Value channelsOut = memref::DimOp::create(b, loc, outGrad, 1);

  // Rows of the wrong count are reported and not read: the gradient is then
  // zero.
  Value featuresOk =
      checkFeatureRows(ctx, b, loc, features,
                       inverse ? rulebook.numOut : rulebook.numIn,
                       inverse ? 1 : 0);
  Value outGradOk =
      checkFeatureRows(ctx, b, loc, outGrad,
                       inverse ? rulebook.numIn : rulebook.numOut,
                       inverse ? 0 : 2);
  Value ok = arith::AndIOp::create(b, loc, featuresOk, outGradOk);

  SmallVector<Value> sizes;
  for (auto [d, extent] : llvm::enumerate(resultType.getShape()))
    if (ShapedType::isDynamic(extent))
      sizes.push_back(d == 1 ? channelsIn : channelsOut);
  auto bufferType = MemRefType::get(resultType.getShape(), elementType);
  Value result = memref::AllocOp::create(b, loc, bufferType, sizes);
  std::string role;
  llvm::raw_string_ostream(role) << "weight_grad_" << elementType;
  if (ctx.getTarget() == LoopTarget::GPU) {
    emitElementPerThread(b, loc, rulebook, inverse, volume, ok, features,
                         outGrad, channelsIn, channelsOut, result, accType,
                         role);
    return result;
  }
  // 16-bit floats sum in f32, in a buffer of their own, then round once.
  Value acc = result;
  if (accType != elementType)
    acc = memref::AllocOp::create(
        b, loc, MemRefType::get(resultType.getShape(), accType), sizes);
  markKernel(
      scf::ParallelOp::create(
          b, loc, ValueRange{zero, zero},
          ValueRange{indexConst(b, loc, volume), channelsIn},
          ValueRange{one, one},
          [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
            Value offset = ivs[0], ci = ivs[1];
            Value accZero =
                arith::ConstantOp::create(pb, ploc, pb.getZeroAttr(accType));
            scf::ForOp::create(
                pb, ploc, zero, channelsOut, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value co, ValueRange) {
                  memref::StoreOp::create(fb, floc, accZero, acc,
                                          ValueRange{offset, ci, co});
                  scf::YieldOp::create(fb, floc);
                });
            auto guard = scf::IfOp::create(pb, ploc, ok);
            OpBuilder tb(guard.thenBlock()->getTerminator());
            Value begin =
                memref::LoadOp::create(tb, ploc, rulebook.offsets, offset);
            Value end = memref::LoadOp::create(
                tb, ploc, rulebook.offsets,
                ValueRange{arith::AddIOp::create(tb, ploc, offset, one)});
            scf::ForOp::create(
                tb, ploc, begin, end, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value pair, ValueRange) {
                  auto [src, dst] = pairRows(fb, floc, rulebook, inverse, pair);
                  Value a = loadAs(fb, floc, features, ValueRange{src, ci},
                                   accType);
                  scf::ForOp::create(
                      fb, floc, zero, channelsOut, one, ValueRange{},
                      [&](OpBuilder &cb, Location cloc, Value co, ValueRange) {
                        SmallVector<Value, 3> at{offset, ci, co};
                        Value g = loadAs(cb, cloc, outGrad,
                                         ValueRange{dst, co}, accType);
                        Value sum = arith::AddFOp::create(
                            cb, cloc, memref::LoadOp::create(cb, cloc, acc, at),
                            arith::MulFOp::create(cb, cloc, a, g));
                        memref::StoreOp::create(cb, cloc, sum, acc, at);
                        scf::YieldOp::create(cb, cloc);
                      });
                  scf::YieldOp::create(fb, floc);
                });
            if (acc == result)
              return;
            scf::ForOp::create(
                pb, ploc, zero, channelsOut, one, ValueRange{},
                [&](OpBuilder &fb, Location floc, Value co, ValueRange) {
                  SmallVector<Value, 3> at{offset, ci, co};
                  memref::StoreOp::create(
                      fb, floc, loadAs(fb, floc, acc, at, elementType), result,
                      at);
                  scf::YieldOp::create(fb, floc);
                });
          }),
      role);
  return result;
}
