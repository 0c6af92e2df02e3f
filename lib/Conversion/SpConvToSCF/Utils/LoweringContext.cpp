//===- LoweringContext.cpp - State shared by the op lowerings -------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "Utils/LoweringContext.h"

#include "SpConv/Transforms/RuntimeDeclarations.h"
#include "Utils/Builders.h"
#include "Utils/RulebookAccess.h"
#include "spconv-rt/HashTableLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

ArrayRef<Value> LoweringContext::lookupDerived(Value rulebook, unsigned key,
                                               Operation *user) const {
  auto found = derived.find({rulebook, key});
  if (found == derived.end())
    return {};
  Operation *anchor = found->second.anchor;
  Operation *ancestor = anchor->getBlock()->findAncestorOpInBlock(*user);
  if (!ancestor || ancestor == anchor || !anchor->isBeforeInBlock(ancestor))
    return {};
  return found->second.values;
}

func::FuncOp LoweringContext::lookupFunction(StringRef name) {
  return module.lookupSymbol<func::FuncOp>(name);
}

func::FuncOp LoweringContext::getRuntimeFunction(StringRef name,
                                                 TypeRange arguments,
                                                 TypeRange results) {
  return declareRuntimeFunction(
      module, name, FunctionType::get(module.getContext(), arguments, results),
      /*cInterface=*/true);
}

func::FuncOp LoweringContext::getHashFindSlotFunction() {
  constexpr StringLiteral name = "spconv_ht_find_slot";
  if (func::FuncOp existing = lookupFunction(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  Type i64 = b.getI64Type(), index = b.getIndexType();
  auto keysType = MemRefType::get({ShapedType::kDynamic}, i64);
  auto function = func::FuncOp::create(
      b, loc, name, b.getFunctionType({keysType, i64}, {index}));
  function.setPrivate();
  Block *entry = function.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value keys = entry->getArgument(0), key = entry->getArgument(1);

  Value capacity = arith::IndexCastOp::create(
      b, loc, i64, memref::DimOp::create(b, loc, keys, 0));
  Value mask = arith::SubIOp::create(b, loc, capacity, i64Const(b, loc, 1));
  Value home = hashHomeSlot(b, loc, key, mask);

  // while (probes < capacity): stop at the key or at an empty slot.
  Value notFound = indexConst(b, loc, -1);
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{i64, i64, index},
      ValueRange{home, i64Const(b, loc, 0), notFound},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value slot = arith::IndexCastOp::create(nb, nloc, index, args[0]);
        Value stored = memref::LoadOp::create(nb, nloc, keys, slot);
        Value hit = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                                          stored, key);
        Value empty = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                                            stored, i64Const(nb, nloc, SPCONV_HT_EMPTY_KEY));
        Value exhausted = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::sge, args[1], capacity);
        Value stop = arith::OrIOp::create(
            nb, nloc, arith::OrIOp::create(nb, nloc, hit, empty), exhausted);
        Value result = arith::SelectOp::create(nb, nloc, hit, slot, notFound);
        Value proceed = arith::XOrIOp::create(
            nb, nloc, stop,
            arith::ConstantOp::create(nb, nloc, nb.getBoolAttr(true)));
        scf::ConditionOp::create(nb, nloc, proceed,
                                 ValueRange{args[0], args[1], result});
      },
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value next = arith::AndIOp::create(
            nb, nloc,
            arith::AddIOp::create(nb, nloc, args[0], i64Const(nb, nloc, 1)),
            mask);
        Value probes =
            arith::AddIOp::create(nb, nloc, args[1], i64Const(nb, nloc, 1));
        scf::YieldOp::create(nb, nloc, ValueRange{next, probes, args[2]});
      });
  // Negative keys are never stored.
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, key,
                                         i64Const(b, loc, 0));
  Value result =
      arith::SelectOp::create(b, loc, negative, notFound, loop.getResult(2));
  func::ReturnOp::create(b, loc, result);
  return function;
}
