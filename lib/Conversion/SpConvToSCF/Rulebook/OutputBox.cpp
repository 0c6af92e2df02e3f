//===- OutputBox.cpp - The outputs an input site reaches, per dimension ---===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Rulebook/OutputBox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

/// The inverse of `value` modulo `modulus` (coprime, modulus >= 1).
static int64_t inverseModulo(int64_t value, int64_t modulus) {
  for (int64_t candidate = 0; candidate < modulus; ++candidate)
    if ((value % modulus) * candidate % modulus == 1 % modulus)
      return candidate;
  llvm_unreachable("the value and the modulus are coprime");
}

OutputBox::OutputBox(GeometryAttr geometry, ArrayRef<int64_t> outShape) {
  assert(geometry.getKind() == ConvKind::Regular &&
         "output boxes are those of a regular conv");
  for (unsigned d = 0; d < geometry.getRank(); ++d) {
    Dimension dim;
    dim.kernel = geometry.getKernel()[d];
    dim.stride = geometry.getStride()[d];
    dim.padding = geometry.getPadding()[d];
    dim.dilation = geometry.getDilation()[d];
    dim.extent = outShape[d];
    dim.divisor = std::gcd(dim.dilation, dim.stride);
    dim.period = dim.stride / dim.divisor;
    dim.inverse = inverseModulo(dim.dilation / dim.divisor, dim.period);
    dims.push_back(dim);
  }
}

int64_t OutputBox::maxPairsPerSite() const {
  int64_t pairs = 1;
  for (const Dimension &dim : dims)
    pairs *= llvm::divideCeil(dim.kernel, dim.period);
  return pairs;
}

void OutputBox::forEachPair(OpBuilder &b, Location loc, Value batch,
                            ArrayRef<Value> spatial, PairBody body) const {
  // Every dimension's bounds first, so the loops hold only the pairs' work.
  SmallVector<Progression> progressions;
  for (unsigned d = 0; d < dims.size(); ++d)
    progressions.push_back(progression(b, loc, d, spatial[d]));
  // A negative batch has no pairs (its keys would be negative).
  Value batchValid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                           batch, i64Const(b, loc, 0));
  progressions[0].end = arith::SelectOp::create(
      b, loc, batchValid, progressions[0].end, indexConst(b, loc, 0));
  enumerate(b, loc, 0, progressions, indexConst(b, loc, 0), batch, body);
}

OutputBox::Progression OutputBox::progression(OpBuilder &b, Location loc,
                                              unsigned d, Value x) const {
  const Dimension &dim = dims[d];
  auto c = [&](int64_t value) { return i64Const(b, loc, value); };
  auto add = [&](Value lhs, Value rhs) {
    return b.createOrFold<arith::AddIOp>(loc, lhs, rhs);
  };
  // Offset j reaches t = x + p - j * dil, the output t / s if s divides t
  // and 0 <= t / s < extent: j in [lo, hi] below, and j * dil == x + p
  // (mod s).
  Value shifted = add(x, c(dim.padding));
  Value hi = arith::MinSIOp::create(
      b, loc, c(dim.kernel - 1),
      b.createOrFold<arith::FloorDivSIOp>(loc, shifted, c(dim.dilation)));
  Value lo = arith::MaxSIOp::create(
      b, loc, c(0),
      b.createOrFold<arith::CeilDivSIOp>(
          loc, add(shifted, c(-dim.stride * (dim.extent - 1))),
          c(dim.dilation)));
  // With g = gcd(dil, s): g must divide x + p, and then the offsets that
  // pair are j == (x + p) / g * (dil / g)^-1 (mod s / g). (A negative x + p
  // has hi < 0: no offsets, whatever the residue.)
  Value first = lo;
  if (dim.period > 1) {
    Value quotient =
        b.createOrFold<arith::DivSIOp>(loc, shifted, c(dim.divisor));
    Value residue = b.createOrFold<arith::RemSIOp>(
        loc, b.createOrFold<arith::MulIOp>(loc, quotient, c(dim.inverse)),
        c(dim.period));
    Value skip = arith::RemSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, residue, lo), c(dim.period));
    Value negative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, skip, c(0));
    skip = arith::SelectOp::create(b, loc, negative, add(skip, c(dim.period)),
                                   skip);
    first = add(lo, skip);
  }
  Value end = add(hi, c(1));
  if (dim.divisor > 1) {
    Value divides = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemSIOp::create(b, loc, shifted, c(dim.divisor)), c(0));
    end = arith::SelectOp::create(b, loc, divides, end, c(0));
  }
  Type index = b.getIndexType();
  return {arith::IndexCastOp::create(b, loc, index, first),
          arith::IndexCastOp::create(b, loc, index, end), shifted};
}

void OutputBox::enumerate(OpBuilder &b, Location loc, unsigned d,
                          ArrayRef<Progression> progressions, Value offset,
                          Value key, PairBody body) const {
  if (d == dims.size()) {
    body(b, loc, offset, key);
    return;
  }
  const Dimension &dim = dims[d];
  const Progression &range = progressions[d];
  scf::ForOp::create(
      b, loc, range.first, range.end, indexConst(b, loc, dim.period),
      ValueRange{}, [&](OpBuilder &lb, Location lloc, Value j, ValueRange) {
        auto c = [&](int64_t value) { return i64Const(lb, lloc, value); };
        // t = x + p - j * dil >= 0 here, and s divides it.
        Value t = arith::SubIOp::create(
            lb, lloc, range.shifted,
            lb.createOrFold<arith::MulIOp>(
                lloc, arith::IndexCastOp::create(lb, lloc, lb.getI64Type(), j),
                c(dim.dilation)));
        Value o = lb.createOrFold<arith::DivUIOp>(lloc, t, c(dim.stride));
        Value nextOffset = lb.createOrFold<arith::AddIOp>(
            lloc,
            lb.createOrFold<arith::MulIOp>(lloc, offset,
                                           indexConst(lb, lloc, dim.kernel)),
            j);
        Value nextKey = arith::AddIOp::create(
            lb, lloc, arith::MulIOp::create(lb, lloc, key, c(dim.extent)), o);
        enumerate(lb, lloc, d + 1, progressions, nextOffset, nextKey, body);
        scf::YieldOp::create(lb, lloc);
      });
}
