//===- FuseEpilogues.cpp - Element-wise consumers into conv epilogues -----===//
//
// Part of the spconv-mlir project.
//
// A conv's result read by one element-wise linalg op is a pass over memory
// that the conv can do as it finishes its rows: the op's body moves into the
// conv's epilogue, its other inputs become epilogue operands.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/IR/SpConvOps.h"
#include "SpConv/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVFUSEEPILOGUESPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {
/// How an input of the element-wise op is indexed.
enum class InputKind { Conv, Rows, Channels };

/// An element-wise linalg op that can become the epilogue of `conv`.
struct Candidate {
  RulebookConvOp conv;
  SmallVector<InputKind> inputs;
};
} // namespace

/// Whether the body can be applied element by element to vectors: epilogue
/// ops only, and values from outside only if constants define them (they
/// are copied in).
static bool isEpilogueBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto usable = [&](Value value) {
    if (value.getParentBlock() == body)
      return true;
    Operation *def = value.getDefiningOp();
    return def && def->hasTrait<OpTrait::ConstantLike>() &&
           RulebookConvOp::isEpilogueOp(def);
  };
  for (Operation &inner : body->without_terminator())
    if (!RulebookConvOp::isEpilogueOp(&inner) ||
        !llvm::all_of(inner.getOperands(), usable))
      return false;
  // The yielded value may be a constant from outside too.
  return llvm::all_of(body->getTerminator()->getOperands(), usable);
}

/// Element types an epilogue operand can have: whole bytes, so that a
/// vector load reads consecutive elements (i1 tensors are stored a byte
/// per element, `vector<Nxi1>` loads bits).
static bool isEpilogueElementType(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.isSignless() &&
           llvm::is_contained({8u, 16u, 32u, 64u}, integer.getWidth());
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64();
}

/// Where the fused conv goes: in `op`'s place, where all its operands are
/// defined; in the conv's where something reads the conv's extents before
/// `op` (an init's `tensor.empty`), if the new operands are defined there.
static Operation *insertionPoint(linalg::LinalgOp op, RulebookConvOp conv,
                                 ArrayRef<Value> newOperands,
                                 DominanceInfo &dominance) {
  bool extentsReadBefore = llvm::any_of(conv->getUsers(), [&](Operation *user) {
    return user != op && !dominance.properlyDominates(op, user);
  });
  if (!extentsReadBefore)
    return op;
  for (Value operand : newOperands)
    if (!dominance.properlyDominates(operand, conv))
      return nullptr;
  return conv;
}

static std::optional<Candidate> matchCandidate(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumParallelLoops() != 2 ||
      op.getNumLoops() != 2 || op->getNumResults() != 1 || !op.getBlock())
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isIdentity() ||
      op.payloadUsesValueFromOperand(init) || !isEpilogueBody(op))
    return std::nullopt;
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType)
    return std::nullopt;
  MLIRContext *context = op->getContext();
  AffineMap channels = AffineMap::get(2, 0, getAffineDimExpr(1, context));

  Candidate candidate;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    auto conv = input->get().getDefiningOp<RulebookConvOp>();
    // The conv must be read by this op only, and only element for element
    // (its extents may be read too: the fused conv has the same).
    bool convInput = conv && map.isIdentity() &&
                     input->get().getType() == resultType &&
                     conv->getBlock() == op->getBlock() &&
                     llvm::all_of(conv->getUsers(), [&](Operation *user) {
                       return user == op || isa<tensor::DimOp>(user);
                     });
    if (convInput && (!candidate.conv || candidate.conv == conv)) {
      candidate.conv = conv;
      candidate.inputs.push_back(InputKind::Conv);
    } else if (map.isIdentity()) {
      candidate.inputs.push_back(InputKind::Rows);
    } else if (map == channels) {
      candidate.inputs.push_back(InputKind::Channels);
    } else {
      return std::nullopt;
    }
  }
  if (!candidate.conv)
    return std::nullopt;
  // Other inputs become epilogue operands: neither the conv itself (it is
  // replaced) nor of a type an epilogue cannot read.
  for (auto [input, kind] :
       llvm::zip_equal(op.getDpsInputOperands(), candidate.inputs)) {
    if (kind == InputKind::Conv)
      continue;
    Type type = getElementTypeOrSelf(input->get().getType());
    if (input->get().getDefiningOp() == candidate.conv ||
        !isa<RankedTensorType>(input->get().getType()) ||
        !isEpilogueElementType(type))
      return std::nullopt;
  }
  return candidate;
}

/// Builds the conv with `op`'s body appended to its epilogue, in `op`'s
/// place, and replaces both.
static LogicalResult fuse(RewriterBase &rewriter, linalg::LinalgOp op,
                          const Candidate &candidate,
                          DominanceInfo &dominance) {
  RulebookConvOp conv = candidate.conv;
  // The conv's location: profiles and errors name the conv's line.
  Location loc = conv.getLoc();
  Type element = getElementTypeOrSelf(conv.getOutFeatures().getType());

  SmallVector<Value> newOperands;
  for (auto [input, kind] :
       llvm::zip_equal(op.getDpsInputOperands(), candidate.inputs))
    if (kind != InputKind::Conv)
      newOperands.push_back(input->get());
  Operation *place = insertionPoint(op, conv, newOperands, dominance);
  if (!place)
    return failure();
  SmallVector<Value> operands(conv.getEpilogueOperands());
  llvm::append_range(operands, newOperands);

  rewriter.setInsertionPoint(place);
  auto fused = RulebookConvOp::create(
      rewriter, loc, conv.getOutFeatures().getType(), conv.getRulebook(),
      conv.getFeatures(), conv.getWeight(), conv.getBias(), operands,
      conv.getInverse(), conv.getGroups());
  fused->setDiscardableAttrs(conv->getDiscardableAttrDictionary());

  // The new block: the element, the old epilogue's operands, the new ones.
  Block *block = rewriter.createBlock(&fused.getEpilogue());
  block->addArgument(element, loc);
  for (Value operand : operands)
    block->addArgument(getElementTypeOrSelf(operand.getType()), loc);
  rewriter.setInsertionPointToStart(block);

  IRMapping mapping;
  Value value = block->getArgument(0);
  if (Block *old = conv.getEpilogueBlock()) {
    mapping.map(old->getArguments(),
                block->getArguments().take_front(old->getNumArguments()));
    for (Operation &inner : old->without_terminator())
      rewriter.clone(inner, mapping);
    value = mapping.lookup(old->getTerminator()->getOperand(0));
  }
  Block *body = op.getBlock();
  unsigned next = 1 + conv.getEpilogueOperands().size();
  for (auto [arg, kind] : llvm::zip(body->getArguments(), candidate.inputs))
    mapping.map(arg,
                kind == InputKind::Conv ? value : block->getArgument(next++));
  // Constants from outside the body are copied in (the op is isolated).
  auto cloneConstantsOf = [&](Operation &inner) {
    for (Value operand : inner.getOperands())
      if (operand.getParentBlock() != body && !mapping.contains(operand))
        rewriter.clone(*operand.getDefiningOp(), mapping);
  };
  for (Operation &inner : body->without_terminator()) {
    cloneConstantsOf(inner);
    rewriter.clone(inner, mapping);
  }
  Operation *terminator = body->getTerminator();
  cloneConstantsOf(*terminator);
  YieldOp::create(rewriter, loc, mapping.lookup(terminator->getOperand(0)));

  rewriter.replaceOp(op, fused.getOutFeatures());
  rewriter.replaceOp(conv, fused.getOutFeatures());
  return success();
}

namespace {
struct SpConvFuseEpiloguesPass
    : spconv::impl::SpConvFuseEpiloguesPassBase<SpConvFuseEpiloguesPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    auto &dominance = getAnalysis<DominanceInfo>();
    // Program order: a fused conv is seen again by its next consumer.
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    // Statistics count nothing in builds without them: a flag of its own
    // says whether the IR changed.
    bool changed = false;
    for (linalg::LinalgOp op : ops) {
      std::optional<Candidate> candidate = matchCandidate(op);
      if (candidate && succeeded(fuse(rewriter, op, *candidate, dominance))) {
        ++numFused;
        changed = true;
      }
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};
} // namespace
