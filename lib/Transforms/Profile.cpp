//===- Profile.cpp - Bracket rulebook ops with run-time timers ------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/ShapeUtils.h"
#include "SpConv/IR/SpConvOps.h"
#include "SpConv/Transforms/Passes.h"
#include "SpConv/Transforms/RuntimeDeclarations.h"
#include "spconv-rt/CompilerContract.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVPROFILEPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

/// The runtime's bound on entry ids (CompilerContract.h).
static constexpr int64_t kMaxProfileEntries = SPCONV_RT_PROFILE_MAX_ENTRIES;

/// Declares `name(argument types) -> i32` (the runtime's status) once.
static func::FuncOp declare(ModuleOp module, StringRef name,
                            TypeRange arguments) {
  Builder b(module.getContext());
  return declareRuntimeFunction(
      module, name, b.getFunctionType(arguments, {b.getI32Type()}),
      /*cInterface=*/false);
}

/// "rulebook_conv <subm, kernel = [3, 3, 3]> 16->32 at file:12" and alike.
static std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().stripDialect();
  auto rulebookOf = [](Value value) {
    return cast<RulebookType>(value.getType());
  };
  auto channels = [&](Value value) {
    return cast<RankedTensorType>(value.getType()).getDimSize(1);
  };
  if (auto build = dyn_cast<BuildRulebookOp>(op)) {
    RulebookType type = rulebookOf(build.getRulebook());
    os << " " << type.getGeometry() << " on "
       << formatShape(type.getInputGrid().getShape());
  } else if (auto conv = dyn_cast<RulebookConvOp>(op)) {
    os << (conv.getInverse() ? " inverse " : " ")
       << rulebookOf(conv.getRulebook()).getGeometry() << " "
       << channels(conv.getFeatures()) << "->"
       << channels(conv.getOutFeatures());
    if (conv.getGroups() != 1)
      os << " groups " << conv.getGroups();
  } else if (auto grad = dyn_cast<RulebookWeightGradOp>(op)) {
    os << (grad.getInverse() ? " inverse " : " ")
       << rulebookOf(grad.getRulebook()).getGeometry() << " "
       << channels(grad.getFeatures()) << "x" << channels(grad.getOutGrad());
    if (grad.getGroups() != 1)
      os << " groups " << grad.getGroups();
  } else if (auto poolGrad = dyn_cast<RulebookPoolGradOp>(op)) {
    os << " " << stringifyPoolKind(poolGrad.getKind()) << " "
       << rulebookOf(poolGrad.getRulebook()).getGeometry();
  } else if (auto pool = dyn_cast<RulebookPoolOp>(op)) {
    os << " " << stringifyPoolKind(pool.getKind()) << " "
       << rulebookOf(pool.getRulebook()).getGeometry();
  } else if (auto matmul = dyn_cast<linalg::MatmulOp>(op)) {
    // M x K x N: a pointwise conv is "?x32x64", the weight gradient of one
    // (a reduction over the rows) "32x?x64".
    auto extent = [&](Value value, unsigned dim) {
      int64_t size = cast<ShapedType>(value.getType()).getDimSize(dim);
      if (ShapedType::isDynamic(size))
        os << "?";
      else
        os << size;
    };
    os << " ";
    extent(matmul.getInputs()[0], 0);
    os << "x";
    extent(matmul.getInputs()[0], 1);
    os << "x";
    extent(matmul.getInputs()[1], 1);
  }
  if (auto fileLoc = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << " at line " << fileLoc.getLine();
  else if (auto nameLoc = dyn_cast<NameLoc>(op->getLoc()))
    os << " (" << nameLoc.getName().getValue() << ")";
  return text;
}

namespace {
struct SpConvProfilePass
    : spconv::impl::SpConvProfilePassBase<SpConvProfilePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      // Matmuls on tensors are what canonicalization makes of pointwise
      // convs: they are layers too.
      if (isa<BuildRulebookOp, RulebookConvOp, RulebookPoolOp,
              RulebookPoolGradOp, RulebookWeightGradOp, GatherRowsOp,
              ScatterAddRowsOp>(op) ||
          (isa<linalg::MatmulOp>(op) && op->getNumResults() == 1))
        ops.push_back(op);
    });
    // The runtime keeps one entry per id; ids past its bound would only
    // fail at run time.
    int64_t limit = maxEntries;
    if (limit < 0 || limit > kMaxProfileEntries) {
      module.emitError() << "spconv-profile: max-entries must be in [0, "
                         << kMaxProfileEntries << "], got " << limit;
      return signalPassFailure();
    }
    if (static_cast<int64_t>(ops.size()) > limit) {
      ops[limit]->emitOpError()
          << "would be timed op #" << limit << ", past the limit of " << limit
          << " timed ops per module (spconv-profile max-entries; the "
             "runtime's profile holds "
          << kMaxProfileEntries << ")";
      return signalPassFailure();
    }
    OpBuilder b(module.getContext());
    Type i64 = b.getI64Type();
    func::FuncOp begin = declare(module, "spconv_rt_profile_begin", {i64});
    func::FuncOp end = declare(module, "spconv_rt_profile_end", {i64, i64});
    SmallVector<Attribute> labels;
    for (auto [id, op] : llvm::enumerate(ops)) {
      Location loc = op->getLoc();
      b.setInsertionPoint(op);
      Value idValue = arith::ConstantIntOp::create(b, loc, i64, id);
      func::CallOp::create(b, loc, begin, ValueRange{idValue});
      // The rows produced; reading them also keeps the end after the op.
      Value produced = isa<BuildRulebookOp>(op) ? op->getResult(1)
                                                : op->getResult(0);
      b.setInsertionPointAfter(op);
      Value rows = tensor::DimOp::create(b, loc, produced, 0);
      rows = arith::IndexCastOp::create(b, loc, i64, rows);
      func::CallOp::create(b, loc, end, ValueRange{idValue, rows});
      labels.push_back(b.getStringAttr(describe(op)));
    }
    module->setAttr(SpConvDialect::kProfileLabelsAttrName,
                    b.getArrayAttr(labels));
  }
};
} // namespace
