//===- GenerateBackward.cpp - Reverse-mode differentiation of a function --===//
//
// Part of the spconv-mlir project.
//
// For `func.func @f attributes {spconv.backward = @g}` this pass defines
// `@g(args of f..., one cotangent per float tensor result of f) -> (results
// of f..., one gradient per float tensor argument of f)`: f's body, then the
// adjoint of every op in reverse order (a vector-Jacobian product). The
// adjoint rules reuse the forward ops' operands, so a conv's gradients read
// the rulebook the forward pass built (no second build) and CSE merges the
// forward part of @g with @f's where both are called. A @g declared without
// f's results returns the gradients only, and f's ops they do not read are
// left out (a conv's output, for one).
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/IR/SpConvOps.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGENERATEBACKWARDPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

/// The attribute that names the function to generate.
static constexpr StringLiteral kBackwardAttr = SpConvDialect::kBackwardAttrName;

static bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

namespace {
/// The adjoints of one function's values, and the rules that propagate
/// them from an op's results to its operands.
class Adjoints {
public:
  Adjoints(OpBuilder &b) : b(b) {}

  /// The adjoint of `value`, or null while nothing depends on it.
  Value get(Value value) const { return adjoints.lookup(value); }

  /// Adds `adjoint` to the adjoint of `value`.
  void add(Location loc, Value value, Value adjoint) {
    Value &slot = adjoints[value];
    if (!slot) {
      slot = adjoint;
      return;
    }
    Value init = emptyLike(loc, slot);
    slot = linalg::AddOp::create(b, loc, ValueRange{slot, adjoint},
                                 ValueRange{init})
               .getResult(0);
  }

  /// Propagates the adjoints of `op`'s results to its operands.
  LogicalResult propagate(Operation *op);

  /// A tensor of zeros with the type (and run-time sizes) of `like`.
  Value zerosLike(Location loc, Value like) {
    Type element = cast<RankedTensorType>(like.getType()).getElementType();
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
    return linalg::FillOp::create(b, loc, zero, emptyLike(loc, like))
        .getResult(0);
  }

private:
  Value emptyLike(Location loc, Value like) {
    auto type = cast<RankedTensorType>(like.getType());
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(b, loc, like, d));
    return tensor::EmptyOp::create(b, loc, type, sizes);
  }

  OpFoldResult extent(Location loc, Value tensor, int64_t d) {
    auto type = cast<RankedTensorType>(tensor.getType());
    if (!type.isDynamicDim(d))
      return b.getIndexAttr(type.getDimSize(d));
    return tensor::DimOp::create(b, loc, tensor, d).getResult();
  }

  Value transposeGroupedWeight(Location loc, Value weight, int64_t groups);
  LogicalResult propagate(RulebookConvOp op);
  LogicalResult propagate(RulebookPoolOp op);
  LogicalResult propagate(GatherRowsOp op);
  LogicalResult propagate(SegmentMaxOp op);
  LogicalResult propagate(UnfoldOp op);
  LogicalResult propagate(FoldOp op);
  LogicalResult propagate(tensor::ConcatOp op);
  LogicalResult propagate(tensor::CastOp op);
  LogicalResult propagate(tensor::CollapseShapeOp op);
  LogicalResult propagate(tensor::ExpandShapeOp op);
  LogicalResult propagate(linalg::GenericOp op);
  LogicalResult propagate(linalg::MatmulOp op);
  Value transposed(Location loc, Value matrix);

  OpBuilder &b;
  DenseMap<Value, Value> adjoints;
};
} // namespace

/// The data gradient's weight of a grouped conv: each group's `Cin/g x
/// Cout/g` block transposed, `K x Cout/g x Cin` (`[0, 2, 1]` without groups).
Value Adjoints::transposeGroupedWeight(Location loc, Value weight,
                                       int64_t groups) {
  auto type = cast<RankedTensorType>(weight.getType());
  Type element = type.getElementType();
  OpFoldResult volume = extent(loc, weight, 0), in = extent(loc, weight, 1);
  // Cout / g, static where Cout is.
  OpFoldResult groupOut;
  if (!type.isDynamicDim(2)) {
    groupOut = b.getIndexAttr(type.getDimSize(2) / groups);
  } else {
    groupOut = arith::DivUIOp::create(
                   b, loc, tensor::DimOp::create(b, loc, weight, 2),
                   arith::ConstantIndexOp::create(b, loc, groups))
                   .getResult();
  }
  auto staticOf = [](OpFoldResult size) {
    std::optional<int64_t> value = getConstantIntValue(size);
    return value ? *value : ShapedType::kDynamic;
  };
  SmallVector<int64_t> expandedShape = {staticOf(volume), staticOf(in), groups,
                                        staticOf(groupOut)};
  auto expandedType = RankedTensorType::get(expandedShape, element);
  SmallVector<ReassociationIndices> reassociation = {{0}, {1}, {2, 3}};
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, expandedType, weight, reassociation,
      SmallVector<OpFoldResult>{volume, in, b.getIndexAttr(groups), groupOut});
  SmallVector<OpFoldResult> transposedSizes = {volume, groupOut,
                                               b.getIndexAttr(groups), in};
  Value init = tensor::EmptyOp::create(b, loc, transposedSizes, element);
  Value transposed =
      linalg::TransposeOp::create(b, loc, expanded, init,
                                  ArrayRef<int64_t>{0, 3, 2, 1})
          .getResult()[0];
  return tensor::CollapseShapeOp::create(b, loc, transposed, reassociation);
}

LogicalResult Adjoints::propagate(RulebookConvOp op) {
  Value dy = get(op.getOutFeatures());
  if (!dy)
    return success();
  if (op.getEpilogueBlock())
    return op.emitOpError("with an epilogue cannot be differentiated: "
                          "spconv-generate-backward runs before "
                          "spconv-fuse-epilogues");
  Location loc = op.getLoc();
  Value rulebook = op.getRulebook(), x = op.getFeatures(), w = op.getWeight();
  int64_t groups = op.getGroups();
  // dL/dx: the same rulebook read the other way, the weight transposed.
  Value wt = transposeGroupedWeight(loc, w, groups);
  Value dx = RulebookConvOp::create(b, loc, x.getType(), rulebook, dy, wt,
                                    /*bias=*/Value(),
                                    /*epilogue_operands=*/ValueRange(),
                                    !op.getInverse(), groups);
  add(loc, x, dx);
  add(loc, w,
      RulebookWeightGradOp::create(b, loc, w.getType(), rulebook, x, dy,
                                   op.getInverse(), groups));
  if (Value bias = op.getBias()) {
    // dL/db: the column sum of dL/dy, into a vector as wide as its rows
    // (the bias type may have that extent dynamic: cast to it after).
    auto dyType = cast<RankedTensorType>(dy.getType());
    auto sumType = RankedTensorType::get({dyType.getDimSize(1)},
                                         dyType.getElementType());
    SmallVector<Value> sizes;
    if (sumType.isDynamicDim(0))
      sizes.push_back(tensor::DimOp::create(b, loc, dy, 1));
    Value zero =
        arith::ConstantOp::create(b, loc, b.getZeroAttr(dyType.getElementType()));
    Value empty = tensor::EmptyOp::create(b, loc, sumType, sizes);
    Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
    Value sum =
        linalg::ReduceOp::create(
            b, loc, ValueRange{dy}, ValueRange{init},
            ArrayRef<int64_t>{0},
            [](OpBuilder &rb, Location rloc, ValueRange args) {
              linalg::YieldOp::create(
                  rb, rloc,
                  ValueRange{arith::AddFOp::create(rb, rloc, args[0], args[1])});
            })
            .getResult(0);
    if (sum.getType() != bias.getType())
      sum = tensor::CastOp::create(b, loc, bias.getType(), sum);
    add(loc, bias, sum);
  }
  return success();
}

LogicalResult Adjoints::propagate(RulebookPoolOp op) {
  if (Value dy = get(op.getOutFeatures()))
    add(op.getLoc(), op.getFeatures(),
        RulebookPoolGradOp::create(b, op.getLoc(), op.getKind(),
                                   op.getRulebook(), op.getFeatures(), dy));
  return success();
}

LogicalResult Adjoints::propagate(GatherRowsOp op) {
  if (Value dy = get(op.getResult())) {
    Location loc = op.getLoc();
    add(loc, op.getFeatures(),
        ScatterAddRowsOp::create(b, loc, op.getFeatures().getType(), dy,
                                 op.getRows(),
                                 zerosLike(loc, op.getFeatures())));
  }
  return success();
}

LogicalResult Adjoints::propagate(SegmentMaxOp op) {
  if (Value dy = get(op.getValues())) {
    Location loc = op.getLoc();
    add(loc, op.getData(),
        SegmentMaxGradOp::create(b, loc, op.getData().getType(), dy,
                                 op.getPositions(),
                                 zerosLike(loc, op.getData())));
  }
  return success();
}

// Unfold and fold are each other's adjoints (col2im sums what im2col
// copies).
LogicalResult Adjoints::propagate(UnfoldOp op) {
  Value dy = get(op.getOutput());
  if (!dy)
    return success();
  auto type = cast<RankedTensorType>(op.getInput().getType());
  if (!type.hasStaticShape())
    return op.emitOpError("can only be differentiated with a static input "
                          "shape (its gradient is a spconv.fold, whose result "
                          "shape is static), got ")
           << type;
  add(op.getLoc(), op.getInput(),
      FoldOp::create(b, op.getLoc(), type, op.getGeometry(), dy));
  return success();
}

LogicalResult Adjoints::propagate(FoldOp op) {
  if (Value dy = get(op.getOutput()))
    add(op.getLoc(), op.getInput(),
        UnfoldOp::create(b, op.getLoc(), op.getInput().getType(),
                         op.getGeometry(), dy));
  return success();
}

LogicalResult Adjoints::propagate(tensor::ConcatOp op) {
  Value dy = get(op.getResult());
  if (!dy)
    return success();
  Location loc = op.getLoc();
  int64_t dim = op.getDim();
  int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
  OpFoldResult offset = b.getIndexAttr(0);
  for (Value input : op.getInputs()) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
        strides(rank, b.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(extent(loc, input, d));
    offsets[dim] = offset;
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, cast<RankedTensorType>(input.getType()), dy, offsets, sizes,
        strides);
    if (isFloatTensor(input.getType()))
      add(loc, input, slice);
    // The next operand starts where this one ends.
    std::optional<int64_t> start = getConstantIntValue(offset);
    std::optional<int64_t> size = getConstantIntValue(sizes[dim]);
    if (start && size) {
      offset = b.getIndexAttr(*start + *size);
    } else {
      offset = arith::AddIOp::create(
                   b, loc, getValueOrCreateConstantIndexOp(b, loc, offset),
                   getValueOrCreateConstantIndexOp(b, loc, sizes[dim]))
                   .getResult();
    }
  }
  return success();
}

LogicalResult Adjoints::propagate(tensor::CastOp op) {
  if (Value dy = get(op.getResult()))
    add(op.getLoc(), op.getSource(),
        tensor::CastOp::create(b, op.getLoc(), op.getSource().getType(), dy));
  return success();
}

LogicalResult Adjoints::propagate(tensor::CollapseShapeOp op) {
  Value dy = get(op.getResult());
  if (!dy)
    return success();
  Location loc = op.getLoc();
  Value src = op.getSrc();
  SmallVector<OpFoldResult> shape;
  for (int64_t d = 0; d < op.getSrcType().getRank(); ++d)
    shape.push_back(extent(loc, src, d));
  add(loc, src,
      tensor::ExpandShapeOp::create(b, loc, op.getSrcType(), dy,
                                    op.getReassociationIndices(), shape));
  return success();
}

LogicalResult Adjoints::propagate(tensor::ExpandShapeOp op) {
  if (Value dy = get(op.getResult()))
    add(op.getLoc(), op.getSrc(),
        tensor::CollapseShapeOp::create(b, op.getLoc(), op.getSrcType(), dy,
                                        op.getReassociationIndices()));
  return success();
}

/// `matrix^T` (rank 2).
Value Adjoints::transposed(Location loc, Value matrix) {
  auto type = cast<RankedTensorType>(matrix.getType());
  SmallVector<OpFoldResult> sizes = {extent(loc, matrix, 1),
                                     extent(loc, matrix, 0)};
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(b, loc, matrix, init,
                                     ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

/// C = init + A B: dA = dC B^T, dB = A^T dC, dinit = dC, as matmuls (which
/// the CPU pipeline vectorizes like the forward pointwise convs), not the
/// generic rule's loops.
LogicalResult Adjoints::propagate(linalg::MatmulOp op) {
  Value dc = get(op->getResult(0));
  if (!dc)
    return success();
  Location loc = op.getLoc();
  Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1];
  Value init = op.getDpsInits()[0];
  if (isFloatTensor(a.getType()))
    add(loc, a,
        linalg::MatmulOp::create(b, loc, TypeRange{a.getType()},
                                 ValueRange{dc, transposed(loc, bm)},
                                 ValueRange{zerosLike(loc, a)})
            .getResult(0));
  if (isFloatTensor(bm.getType()))
    add(loc, bm,
        linalg::MatmulOp::create(b, loc, TypeRange{bm.getType()},
                                 ValueRange{transposed(loc, a), dc},
                                 ValueRange{zerosLike(loc, bm)})
            .getResult(0));
  add(loc, init, dc);
  return success();
}

//===----------------------------------------------------------------------===//
// linalg.generic: the scalar body differentiated in forward mode
//===----------------------------------------------------------------------===//

/// Whether `value` (in a linalg body) depends on `arg`.
static bool dependsOn(Value value, Value arg) {
  SmallVector<Value> work = {value};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == arg)
      return true;
    if (!seen.insert(v).second)
      continue;
    if (Operation *def = v.getDefiningOp())
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// The tangent of `op`'s result given its operands' tangents (null: zero),
/// built with `b` after `op`; failure for an op with no rule whose operands
/// have a tangent.
static FailureOr<Value> tangentOf(OpBuilder &b, Operation *op,
                                  const DenseMap<Value, Value> &tangents) {
  auto t = [&](unsigned i) { return tangents.lookup(op->getOperand(i)); };
  bool any = llvm::any_of(op->getOperands(),
                          [&](Value v) { return tangents.lookup(v); });
  if (!any || op->getNumResults() != 1 ||
      !isa<FloatType>(op->getResult(0).getType()))
    return Value();
  Location loc = op->getLoc();
  Value x = op->getNumOperands() > 0 ? op->getOperand(0) : Value();
  Value y = op->getNumOperands() > 1 ? op->getOperand(1) : Value();
  Value r = op->getResult(0);
  auto mul = [&](Value a, Value c) -> Value {
    if (!a || !c)
      return Value();
    return arith::MulFOp::create(b, loc, a, c);
  };
  auto plus = [&](Value a, Value c) -> Value {
    if (!a)
      return c;
    if (!c)
      return a;
    return arith::AddFOp::create(b, loc, a, c);
  };
  auto neg = [&](Value a) -> Value {
    return a ? arith::NegFOp::create(b, loc, a).getResult() : Value();
  };
  // max / min: the tangent of the operand chosen; on a tie the second, so
  // that max(x, 0) passes nothing back at 0, as PyTorch's ReLU.
  auto choose = [&](arith::CmpFPredicate predicate, Value tx,
                    Value ty) -> Value {
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(r.getType()));
    Value first = arith::CmpFOp::create(b, loc, predicate, x, y);
    return arith::SelectOp::create(b, loc, first, tx ? tx : zero,
                                   ty ? ty : zero);
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](arith::AddFOp) { return plus(t(0), t(1)); })
      .Case([&](arith::SubFOp) { return plus(t(0), neg(t(1))); })
      .Case([&](arith::MulFOp) { return plus(mul(t(0), y), mul(x, t(1))); })
      .Case([&](arith::DivFOp) -> Value {
        // (tx - r * ty) / y
        Value numerator = plus(t(0), neg(mul(r, t(1))));
        return arith::DivFOp::create(b, loc, numerator, y);
      })
      .Case([&](arith::NegFOp) { return neg(t(0)); })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](auto) {
        return choose(arith::CmpFPredicate::OGT, t(0), t(1));
      })
      .Case<arith::MinimumFOp, arith::MinNumFOp>([&](auto) {
        return choose(arith::CmpFPredicate::OLT, t(0), t(1));
      })
      .Case([&](arith::SelectOp select) -> Value {
        Value zero =
            arith::ConstantOp::create(b, loc, b.getZeroAttr(r.getType()));
        Value tx = t(1), ty = t(2);
        return arith::SelectOp::create(b, loc, select.getCondition(),
                                       tx ? tx : zero, ty ? ty : zero);
      })
      .Case([&](arith::ExtFOp) {
        return arith::ExtFOp::create(b, loc, r.getType(), t(0)).getResult();
      })
      .Case([&](arith::TruncFOp) {
        return arith::TruncFOp::create(b, loc, r.getType(), t(0)).getResult();
      })
      .Case([&](math::ExpOp) { return mul(r, t(0)); })
      .Case([&](math::LogOp) -> Value {
        return arith::DivFOp::create(b, loc, t(0), x);
      })
      .Case([&](math::SqrtOp) -> Value {
        Value two = arith::ConstantOp::create(b, loc,
                                              b.getFloatAttr(r.getType(), 2.0));
        return arith::DivFOp::create(b, loc, t(0),
                                     arith::MulFOp::create(b, loc, two, r));
      })
      .Case([&](math::TanhOp) -> Value {
        // (1 - r^2) tx
        Value one = arith::ConstantOp::create(b, loc,
                                              b.getFloatAttr(r.getType(), 1.0));
        Value slope = arith::SubFOp::create(b, loc, one, mul(r, r));
        return mul(slope, t(0));
      })
      .Default([&](Operation *) -> FailureOr<Value> {
        op->emitOpError("in a linalg body has no derivative rule "
                        "(spconv-generate-backward)");
        return failure();
      });
}

/// An element of type `from` as type `to` (floats of two widths).
static Value castFloat(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

/// dL/dinput for every float tensor input of a generic with one result:
/// d[map_i(i)] += dy[map_out(i)] * d body / d input_i, a generic over the
/// same iteration space whose dimensions outside map_i reduce. A body that
/// reads its output must sum into it (`out + h(inputs)`): `out` then passes
/// dy back unchanged and h is differentiated.
LogicalResult Adjoints::propagate(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumResults() != 1)
    return op.emitOpError("with several results cannot be differentiated "
                          "(spconv-generate-backward)");
  Value dy = get(op->getResult(0));
  if (!dy)
    return success();
  Location loc = op.getLoc();
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value yielded = yield.getOperand(0);
  unsigned numInputs = op.getNumDpsInputs();
  BlockArgument outArg = body.getArgument(numInputs);
  if (!outArg.use_empty()) {
    auto sum = yielded.getDefiningOp<arith::AddFOp>();
    bool additive = sum && outArg.hasOneUse() &&
                    (sum.getLhs() == outArg || sum.getRhs() == outArg);
    if (!additive)
      return op.emitOpError("reads its output other than as a sum "
                            "(out + f(inputs)) and cannot be differentiated "
                            "(spconv-generate-backward)");
    // out + h: dL/dout is dL/dresult.
    add(loc, op.getDpsInitOperand(0)->get(), dy);
  }
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value primal = input->get();
    BlockArgument arg = body.getArgument(input->getOperandNumber());
    if (!isFloatTensor(primal.getType()) || !dependsOn(yielded, arg))
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return op.emitOpError("reads an input through the indexing map ")
             << AffineMapAttr::get(map)
             << ", not a projected permutation: no derivative rule "
             << "(spconv-generate-backward)";
    SmallVector<utils::IteratorType> iterators(
        op.getNumLoops(), utils::IteratorType::reduction);
    for (AffineExpr result : map.getResults())
      iterators[cast<AffineDimExpr>(result).getPosition()] =
          utils::IteratorType::parallel;
    SmallVector<Value> inputs(op.getDpsInputs());
    inputs.push_back(dy);
    SmallVector<AffineMap> maps;
    for (OpOperand *operand : op.getDpsInputOperands())
      maps.push_back(op.getMatchingIndexingMap(operand));
    maps.push_back(outMap);
    maps.push_back(map);
    Type element = cast<RankedTensorType>(primal.getType()).getElementType();
    LogicalResult status = success();
    auto adjoint = linalg::GenericOp::create(
        b, loc, TypeRange{primal.getType()}, inputs,
        ValueRange{zerosLike(loc, primal)}, maps, iterators,
        [&](OpBuilder &gb, Location gloc, ValueRange args) {
          IRMapping mapping;
          DenseMap<Value, Value> tangents;
          for (unsigned i = 0; i < numInputs; ++i)
            mapping.map(body.getArgument(i), args[i]);
          // The output is only summed into: its value does not matter here.
          mapping.map(outArg, arith::ConstantOp::create(
                                  gb, gloc, gb.getZeroAttr(outArg.getType())));
          tangents[args[input->getOperandNumber()]] =
              arith::ConstantOp::create(gb, gloc, gb.getFloatAttr(element, 1.0));
          for (Operation &inner : body.without_terminator()) {
            Operation *clone = gb.clone(inner, mapping);
            FailureOr<Value> tangent = tangentOf(gb, clone, tangents);
            if (failed(tangent)) {
              status = failure();
              break;
            }
            if (*tangent)
              tangents[clone->getResult(0)] = *tangent;
          }
          Value acc = args.back();
          Value tangent =
              succeeded(status) ? tangents.lookup(mapping.lookup(yielded))
                                : Value();
          if (!tangent) {
            linalg::YieldOp::create(gb, gloc, ValueRange{acc});
            return;
          }
          Value product = arith::MulFOp::create(
              gb, gloc, tangent,
              castFloat(gb, gloc, args[numInputs], tangent.getType()));
          Value sum = arith::AddFOp::create(
              gb, gloc, acc, castFloat(gb, gloc, product, element));
          linalg::YieldOp::create(gb, gloc, ValueRange{sum});
        });
    if (failed(status))
      return failure();
    add(loc, primal, adjoint.getResult(0));
  }
  return success();
}

LogicalResult Adjoints::propagate(Operation *op) {
  // Ops without float tensor operands (rulebook builds, keys, shapes,
  // constants, empty tensors) pass nothing back.
  if (llvm::none_of(op->getOperandTypes(), isFloatTensor))
    return success();
  if (llvm::none_of(op->getResults(), [&](Value r) { return get(r); }))
    return success();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<RulebookConvOp, RulebookPoolOp, GatherRowsOp, SegmentMaxOp,
            UnfoldOp, FoldOp, tensor::ConcatOp, tensor::CastOp,
            tensor::CollapseShapeOp, tensor::ExpandShapeOp, linalg::GenericOp,
            linalg::MatmulOp>(
          [&](auto typed) { return propagate(typed); })
      .Case<ConvOp, InverseConvOp, PoolOp>([&](Operation *high) {
        return high->emitOpError(
            "is differentiated at the rulebook level: run spconv-decompose "
            "before spconv-generate-backward");
      })
      .Default([&](Operation *other) {
        return other->emitOpError(
            "has no gradient rule (spconv-generate-backward)");
      });
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// The backward function's type for `forward`'s.
static FunctionType backwardType(FunctionType forward) {
  SmallVector<Type> inputs(forward.getInputs()), results(forward.getResults());
  for (Type type : forward.getResults())
    if (isFloatTensor(type))
      inputs.push_back(type);
  for (Type type : forward.getInputs())
    if (isFloatTensor(type))
      results.push_back(type);
  return FunctionType::get(forward.getContext(), inputs, results);
}

/// Defines the backward function of `forward` (see the file comment).
static LogicalResult generateBackward(func::FuncOp forward,
                                      FlatSymbolRefAttr name) {
  ModuleOp module = forward->getParentOfType<ModuleOp>();
  if (forward.isExternal())
    return forward.emitOpError("is a declaration: there is nothing to "
                               "differentiate");
  if (!forward.getBody().hasOneBlock())
    return forward.emitOpError("has control flow between blocks, which "
                               "spconv-generate-backward does not "
                               "differentiate");
  FunctionType type = backwardType(forward.getFunctionType());
  // A declaration without the forward results asks for the gradients only:
  // then nothing the gradients do not read is computed.
  unsigned numForwardResults = forward.getNumResults();
  FunctionType gradientsOnlyType =
      FunctionType::get(forward.getContext(), type.getInputs(),
                        type.getResults().drop_front(numForwardResults));
  bool returnsForwardResults = true;
  auto backward = module.lookupSymbol<func::FuncOp>(name.getAttr());
  if (backward) {
    if (!backward.isExternal())
      return forward.emitOpError("names ")
             << name << " as its backward function, which already has a body";
    returnsForwardResults = backward.getFunctionType() != gradientsOnlyType;
    if (returnsForwardResults && backward.getFunctionType() != type)
      return backward.emitOpError("is declared with type ")
             << backward.getFunctionType() << ", but the backward function of "
             << forward.getSymName() << " has type " << type << " (or "
             << gradientsOnlyType << ", the gradients only)";
  } else if (module.lookupSymbol(name.getAttr())) {
    return forward.emitOpError("names ")
           << name << " as its backward function, but that symbol is not a "
           << "function";
  } else {
    OpBuilder mb(module.getBodyRegion());
    mb.setInsertionPointAfter(forward);
    backward = func::FuncOp::create(mb, forward.getLoc(), name.getValue(), type);
    backward.setVisibility(forward.getVisibility());
  }
  Block *entry = backward.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(entry);

  // The forward ops, then named linalg ops as generics (one rule for all),
  // but plain matmuls, whose adjoints are matmuls.
  IRMapping mapping;
  unsigned numArgs = forward.getNumArguments();
  for (unsigned i = 0; i < numArgs; ++i)
    mapping.map(forward.getArgument(i), entry->getArgument(i));
  for (Operation &op : forward.getBody().front())
    b.clone(op, mapping);
  auto ret = cast<func::ReturnOp>(entry->getTerminator());
  IRRewriter rewriter(forward.getContext());
  SmallVector<linalg::LinalgOp> named;
  backward.walk([&](linalg::LinalgOp op) {
    auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
    bool plainMatmul = matmul && !matmul.hasUserDefinedMaps() &&
                       llvm::all_of(op->getOperandTypes(), isFloatTensor);
    if (!isa<linalg::GenericOp>(op) && !plainMatmul)
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::generalizeNamedOp(rewriter, op)))
      return op.emitOpError("cannot be generalized for "
                            "spconv-generate-backward");
  }
  for (Operation &op : entry->without_terminator())
    if (op.getNumRegions() && !isa<linalg::LinalgOp>(op) &&
        !isa<RulebookConvOp>(op))
      return op.emitOpError("has regions (control flow), which "
                            "spconv-generate-backward does not "
                            "differentiate");

  // Seed with the cotangents, then walk back.
  b.setInsertionPoint(ret);
  Adjoints adjoints(b);
  unsigned next = numArgs;
  for (Value result : ret.getOperands())
    if (isFloatTensor(result.getType()))
      adjoints.add(ret.getLoc(), result, entry->getArgument(next++));
  SmallVector<Operation *> ops;
  for (Operation &op : entry->without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (failed(adjoints.propagate(op)))
      return failure();

  SmallVector<Value> results;
  if (returnsForwardResults)
    llvm::append_range(results, ret.getOperands());
  for (unsigned i = 0; i < numArgs; ++i) {
    Value arg = entry->getArgument(i);
    if (!isFloatTensor(arg.getType()))
      continue;
    Value gradient = adjoints.get(arg);
    results.push_back(gradient ? gradient : adjoints.zerosLike(ret.getLoc(), arg));
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  // Users before producers, so that a dead chain goes whole.
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  return success();
}

namespace {
struct SpConvGenerateBackwardPass
    : spconv::impl::SpConvGenerateBackwardPassBase<SpConvGenerateBackwardPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<func::FuncOp, FlatSymbolRefAttr>> work;
    bool bad = false;
    getOperation().walk([&](func::FuncOp func) {
      Attribute attr = func->getAttr(kBackwardAttr);
      if (!attr)
        return;
      auto name = dyn_cast<FlatSymbolRefAttr>(attr);
      if (!name) {
        func.emitOpError() << kBackwardAttr
                           << " must name the function to generate, as a "
                              "symbol reference (@name), got "
                           << attr;
        bad = true;
        return;
      }
      work.push_back({func, name});
    });
    if (bad)
      return signalPassFailure();
    for (auto [func, name] : work) {
      if (failed(generateBackward(func, name)))
        return signalPassFailure();
      ++numGenerated;
    }
  }
};
} // namespace
