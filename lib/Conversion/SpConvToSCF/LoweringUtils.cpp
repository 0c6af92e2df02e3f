//===- LoweringUtils.cpp - Shared helpers of the SpConv lowering ----------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "SpConv/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::lowering;

SmallVector<Type> RulebookBuffers::getTypes(RulebookType type) {
  MLIRContext *context = type.getContext();
  auto index = IndexType::get(context);
  auto pairs =
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 32));
  auto offsets =
      MemRefType::get({type.getGeometry().getKernelVolume() + 1}, index);
  return {index, index, pairs, pairs, offsets};
}

RulebookBuffers RulebookBuffers::fromValues(ValueRange values) {
  assert(values.size() == 5 && "a rulebook is five values");
  return {values[0], values[1], values[2], values[3], values[4]};
}

SmallVector<Type> HashTableBuffers::getTypes(MLIRContext *context) {
  return {
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 64)),
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 32))};
}

HashTableBuffers HashTableBuffers::fromValues(ValueRange values) {
  assert(values.size() == 2 && "a hash table is two values");
  return {values[0], values[1]};
}

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
  if (func::FuncOp existing = lookupFunction(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto function = func::FuncOp::create(b, module.getLoc(), name,
                                       b.getFunctionType(arguments, results));
  function.setPrivate();
  function->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return function;
}

Value lowering::hashHomeSlot(OpBuilder &b, Location loc, Value key,
                             Value mask) {
  // HashTableLayout.h: home = splitmix64(key) & (capacity - 1); the search
  // then probes linearly and stops at the key or at an empty (-1) slot.
  auto shr = [&](Value v, int64_t bits) {
    return arith::ShRUIOp::create(b, loc, v, i64Const(b, loc, bits))
        .getResult();
  };
  auto mix = [&](Value z, int64_t shift, int64_t multiplier) {
    Value x = arith::XOrIOp::create(b, loc, z, shr(z, shift));
    return arith::MulIOp::create(b, loc, x, i64Const(b, loc, multiplier))
        .getResult();
  };
  Value z = mix(key, 30, static_cast<int64_t>(0xbf58476d1ce4e5b9ULL));
  z = mix(z, 27, static_cast<int64_t>(0x94d049bb133111ebULL));
  z = arith::XOrIOp::create(b, loc, z, shr(z, 31));
  return arith::AndIOp::create(b, loc, z, mask);
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
                                            stored, i64Const(nb, nloc, -1));
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

scf::ParallelOp lowering::markKernel(scf::ParallelOp loop, StringRef role) {
  loop->setAttr(kKernelRoleAttrName, StringAttr::get(loop.getContext(), role));
  return loop;
}

Value lowering::indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value lowering::i64Const(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
}

Value lowering::i32Const(OpBuilder &b, Location loc, int32_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

SmallVector<Value> lowering::kernelIndices(OpBuilder &b, Location loc,
                                           ArrayRef<int64_t> kernel,
                                           Value offset) {
  Value rest = b.createOrFold<arith::IndexCastOp>(loc, b.getI64Type(), offset);
  SmallVector<Value> j(kernel.size());
  for (int d = kernel.size() - 1; d >= 0; --d) {
    Value extent = i64Const(b, loc, kernel[d]);
    j[d] = b.createOrFold<arith::RemSIOp>(loc, rest, extent);
    rest = b.createOrFold<arith::DivSIOp>(loc, rest, extent);
  }
  return j;
}

MemRefType lowering::getAnyLayoutMemRefType(RankedTensorType type) {
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, strides);
  return MemRefType::get(type.getShape(), type.getElementType(), layout);
}

Value lowering::toBuffer(OpBuilder &b, Location loc, Value tensor,
                         bool contiguous) {
  auto type = cast<RankedTensorType>(tensor.getType());
  MemRefType bufferType =
      contiguous ? MemRefType::get(type.getShape(), type.getElementType())
                 : getAnyLayoutMemRefType(type);
  return bufferization::ToBufferOp::create(b, loc, bufferType, tensor,
                                           /*read_only=*/true);
}

Value lowering::toTensor(OpBuilder &b, Location loc, Value buffer,
                         Type tensorType) {
  return bufferization::ToTensorOp::create(b, loc, tensorType, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

Value lowering::castTo(OpBuilder &b, Location loc, Value buffer, Type type) {
  if (buffer.getType() == type)
    return buffer;
  return memref::CastOp::create(b, loc, type, buffer);
}

Location lowering::bufferLoc(Location loc, StringRef what) {
  return NameLoc::get(StringAttr::get(loc.getContext(), what), loc);
}

Value lowering::alloc1d(OpBuilder &b, Location loc, Type elementType,
                        Value size) {
  auto type = MemRefType::get({ShapedType::kDynamic}, elementType);
  return memref::AllocOp::create(b, loc, type, ValueRange{size});
}

Value lowering::prefix(OpBuilder &b, Location loc, Value buffer, Value size) {
  auto type = cast<MemRefType>(buffer.getType());
  Value view = memref::SubViewOp::create(
      b, loc, buffer, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{size}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return castTo(b, loc, view,
                MemRefType::get({ShapedType::kDynamic}, type.getElementType()));
}

Value lowering::i64Array(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  auto type =
      MemRefType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
  Value array = memref::AllocaOp::create(b, loc, type);
  for (auto [i, value] : llvm::enumerate(values))
    memref::StoreOp::create(b, loc, i64Const(b, loc, value), array,
                            ValueRange{indexConst(b, loc, i)});
  return castTo(b, loc, array,
                MemRefType::get({ShapedType::kDynamic}, b.getI64Type()));
}

Value lowering::callRuntime(LoweringContext &ctx, OpBuilder &b, Location loc,
                            StringRef name, ValueRange arguments) {
  func::FuncOp function = ctx.getRuntimeFunction(name, TypeRange(arguments),
                                                 TypeRange{b.getI32Type()});
  Value status = func::CallOp::create(b, loc, function, arguments).getResult(0);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, status,
                               i32Const(b, loc, 0));
}

Value lowering::findFirst(
    OpBuilder &b, Location loc, Value begin, Value end,
    function_ref<Value(OpBuilder &, Location, Value)> holds) {
  Value none = indexConst(b, loc, -1);
  auto loop = scf::ForOp::create(
      b, loc, begin, end, indexConst(b, loc, 1), ValueRange{none},
      [&](OpBuilder &fb, Location floc, Value position, ValueRange found) {
        Value unseen =
            arith::CmpIOp::create(fb, floc, arith::CmpIPredicate::slt, found[0],
                                  indexConst(fb, floc, 0));
        Value take =
            arith::AndIOp::create(fb, floc, unseen, holds(fb, floc, position));
        scf::YieldOp::create(fb, floc,
                             ValueRange{arith::SelectOp::create(
                                 fb, floc, take, position, found[0])});
      });
  return loop.getResult(0);
}

/// Records an error through the runtime report `name`, whose arguments are
/// all i64 (its status is not needed: the report is the failure).
static void reportError(LoweringContext &ctx, OpBuilder &b, Location loc,
                        StringRef name, ArrayRef<Value> scalars) {
  SmallVector<Value> arguments;
  for (Value scalar : scalars)
    arguments.push_back(convertScalar(b, loc, scalar, b.getI64Type()));
  callRuntime(ctx, b, loc, name, arguments);
}

void lowering::reportBadIndex(LoweringContext &ctx, OpBuilder &b, Location loc,
                              Value position, Value value, Value bound) {
  reportError(ctx, b, loc, "spconv_rt_report_bad_index",
              {position, value, bound});
}

Value lowering::addOffset(OpBuilder &b, Location loc, Value first,
                          Value index) {
  return first ? arith::AddIOp::create(b, loc, first, index).getResult()
               : index;
}

Value lowering::groupFirstInput(OpBuilder &b, Location loc, Value co,
                                int64_t groups, Value channelsIn,
                                Value groupChannelsOut) {
  if (groups == 1)
    return Value();
  return arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, co, groupChannelsOut), channelsIn);
}

void lowering::forEachGroup(
    OpBuilder &b, Location loc, int64_t groups, Value channelsIn,
    Value channelsOut,
    function_ref<void(OpBuilder &, Location, Value, Value)> body) {
  scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, groups),
      indexConst(b, loc, 1), ValueRange{},
      [&](OpBuilder &gb, Location gloc, Value group, ValueRange) {
        Value firstIn = arith::MulIOp::create(gb, gloc, group, channelsIn);
        Value firstOut = arith::MulIOp::create(gb, gloc, group, channelsOut);
        body(gb, gloc, firstIn, firstOut);
        scf::YieldOp::create(gb, gloc);
      });
}

Value lowering::inRange(OpBuilder &b, Location loc, Value index, Value bound) {
  Value lower = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, index,
                                      indexConst(b, loc, 0));
  Value upper =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, bound);
  return arith::AndIOp::create(b, loc, lower, upper);
}

/// A kernel over `[0, count)` running `body(position)`.
static void forEachOnDevice(
    OpBuilder &b, Location loc, Value count, StringRef role,
    function_ref<void(OpBuilder &, Location, Value)> body) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero}, ValueRange{count}, ValueRange{one},
                 [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                   body(pb, ploc, ivs[0]);
                 }),
             role);
}

/// reportFirstBad on the GPU: the search's state lives in a two-word buffer
/// of device memory, [first bad position (INT64_MAX: none), its index].
static void reportFirstBadOnDevice(
    LoweringContext &ctx, OpBuilder &b, Location loc, Value count,
    Value bound, function_ref<Value(OpBuilder &, Location, Value)> isBad,
    function_ref<Value(OpBuilder &, Location, Value)> indexAt) {
  Type i64 = b.getI64Type();
  auto stateType = MemRefType::get({2}, i64);
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  Value state = memref::AllocOp::create(
      b, bufferLoc(loc, "the search for a bad index"), stateType);
  // Two threads, not one: a single-iteration loop would fold to host code.
  forEachOnDevice(b, loc, indexConst(b, loc, 2), "bad_index_init",
                  [&](OpBuilder &pb, Location ploc, Value slot) {
                    Value isFirst = arith::CmpIOp::create(
                        pb, ploc, arith::CmpIPredicate::eq, slot,
                        indexConst(pb, ploc, 0));
                    memref::StoreOp::create(
                        pb, ploc,
                        arith::SelectOp::create(pb, ploc, isFirst,
                                                i64Const(pb, ploc, kNone),
                                                i64Const(pb, ploc, 0)),
                        state, ValueRange{slot});
                  });
  forEachOnDevice(
      b, loc, count, "find_bad_index",
      [&](OpBuilder &pb, Location ploc, Value i) {
        scf::IfOp::create(pb, ploc, isBad(pb, ploc, i),
                          [&](OpBuilder &tb, Location tloc) {
                            memref::AtomicRMWOp::create(
                                tb, tloc, arith::AtomicRMWKind::mins,
                                arith::IndexCastOp::create(tb, tloc, i64, i),
                                state, ValueRange{indexConst(tb, tloc, 0)});
                            scf::YieldOp::create(tb, tloc);
                          });
      });
  // Host memory: only the copies and the loads below touch it.
  Value host = memref::AllocOp::create(b, loc, stateType);
  memref::CopyOp::create(b, loc, state, host);
  Value first = memref::LoadOp::create(b, loc, host,
                                       ValueRange{indexConst(b, loc, 0)});
  Value found = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, first,
                                      i64Const(b, loc, kNone));
  scf::IfOp::create(b, loc, found, [&](OpBuilder &tb, Location tloc) {
    Value position =
        arith::IndexCastOp::create(tb, tloc, tb.getIndexType(), first);
    forEachOnDevice(tb, tloc, count, "fetch_bad_index",
                    [&](OpBuilder &pb, Location ploc, Value i) {
                      Value isFirst = arith::CmpIOp::create(
                          pb, ploc, arith::CmpIPredicate::eq, i, position);
                      scf::IfOp::create(
                          pb, ploc, isFirst, [&](OpBuilder &ib, Location iloc) {
                            memref::StoreOp::create(
                                ib, iloc,
                                arith::IndexCastOp::create(
                                    ib, iloc, i64, indexAt(ib, iloc, i)),
                                state, ValueRange{indexConst(ib, iloc, 1)});
                            scf::YieldOp::create(ib, iloc);
                          });
                    });
    memref::CopyOp::create(tb, tloc, state, host);
    Value index = memref::LoadOp::create(tb, tloc, host,
                                         ValueRange{indexConst(tb, tloc, 1)});
    reportBadIndex(ctx, tb, tloc, position, index, bound);
    scf::YieldOp::create(tb, tloc);
  });
}

void lowering::reportFirstBad(
    LoweringContext &ctx, OpBuilder &b, Location loc, Value count, Value bound,
    function_ref<Value(OpBuilder &, Location, Value)> isBad,
    function_ref<Value(OpBuilder &, Location, Value)> indexAt) {
  if (ctx.getTarget() == LoopTarget::GPU)
    return reportFirstBadOnDevice(ctx, b, loc, count, bound, isBad, indexAt);
  Value zero = indexConst(b, loc, 0);
  Value first = findFirst(b, loc, zero, count, isBad);
  Value found =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, first, zero);
  scf::IfOp::create(b, loc, found, [&](OpBuilder &tb, Location tloc) {
    reportBadIndex(ctx, tb, tloc, first, indexAt(tb, tloc, first), bound);
    scf::YieldOp::create(tb, tloc);
  });
}

void lowering::reportFirstBadIndex(
    LoweringContext &ctx, OpBuilder &b, Location loc, Value count, Value bound,
    function_ref<Value(OpBuilder &, Location, Value)> indexAt) {
  reportFirstBad(
      ctx, b, loc, count, bound,
      [&](OpBuilder &fb, Location floc, Value i) -> Value {
        Value index = indexAt(fb, floc, i);
        Value below = arith::CmpIOp::create(
            fb, floc, arith::CmpIPredicate::slt, index, indexConst(fb, floc, -1));
        Value above = arith::CmpIOp::create(
            fb, floc, arith::CmpIPredicate::sge, index, bound);
        return arith::OrIOp::create(fb, floc, below, above);
      },
      indexAt);
}

Value lowering::checkFeatureRows(LoweringContext &ctx, OpBuilder &b,
                                 Location loc, Value features, Value expected,
                                 int64_t what) {
  Value rows = memref::DimOp::create(b, loc, features, 0);
  Value ok =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rows, expected);
  scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location tloc) { scf::YieldOp::create(tb, tloc); },
      [&](OpBuilder &eb, Location eloc) {
        reportError(ctx, eb, eloc, "spconv_rt_report_row_mismatch",
                    {rows, expected, i64Const(eb, eloc, what)});
        scf::YieldOp::create(eb, eloc);
      });
  return ok;
}

int64_t lowering::sourceLine(Location loc) {
  int64_t line = 0;
  loc->walk([&](Location inner) {
    if (auto fileLoc = dyn_cast<FileLineColLoc>(inner)) {
      line = fileLoc.getLine();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return line;
}

Value lowering::checkSize(LoweringContext &ctx, OpBuilder &b, Location loc,
                          Value actual, Value expected, SizeCheck what) {
  Value ok =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, actual, expected);
  scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location tloc) { scf::YieldOp::create(tb, tloc); },
      [&](OpBuilder &eb, Location eloc) {
        reportError(ctx, eb, eloc, "spconv_rt_report_size_mismatch",
                    {i64Const(eb, eloc, static_cast<int64_t>(what)), actual,
                     expected, i64Const(eb, eloc, sourceLine(loc))});
        scf::YieldOp::create(eb, eloc);
      });
  return ok;
}

Value lowering::checkSizeIf(LoweringContext &ctx, OpBuilder &b, Location loc,
                            Value precondition, Value actual, Value expected,
                            SizeCheck what) {
  if (!precondition)
    return checkSize(ctx, b, loc, actual, expected, what);
  return scf::IfOp::create(
             b, loc, precondition,
             [&](OpBuilder &tb, Location tloc) {
               scf::YieldOp::create(tb, tloc,
                                    ValueRange{checkSize(ctx, tb, tloc, actual,
                                                         expected, what)});
             },
             [&](OpBuilder &eb, Location eloc) {
               scf::YieldOp::create(eb, eloc, ValueRange{precondition});
             })
      .getResult(0);
}

Value lowering::checkStaticSize(LoweringContext &ctx, OpBuilder &b,
                                Location loc, int64_t staticActual,
                                Value actual, int64_t expected,
                                SizeCheck what) {
  if (ShapedType::isDynamic(expected) || !ShapedType::isDynamic(staticActual))
    return Value();
  return checkSize(ctx, b, loc, actual, indexConst(b, loc, expected), what);
}

Value lowering::allOf(OpBuilder &b, Location loc, ArrayRef<Value> conditions) {
  Value all;
  for (Value condition : conditions) {
    if (!condition)
      continue;
    all = all ? arith::AndIOp::create(b, loc, all, condition).getResult()
              : condition;
  }
  return all;
}

void lowering::fillZeros(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    lbs.push_back(indexConst(b, loc, 0));
    ubs.push_back(memref::DimOp::create(b, loc, buffer, d));
    steps.push_back(indexConst(b, loc, 1));
  }
  // Sequential: an error path, which must not become a GPU kernel.
  scf::buildLoopNest(b, loc, lbs, ubs, steps,
                     [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
                       memref::StoreOp::create(nb, nloc, zero, buffer, ivs);
                     });
}

Value lowering::castToChecked(LoweringContext &ctx, OpBuilder &b, Location loc,
                              Value buffer, MemRefType type, SizeCheck what) {
  auto bufferType = cast<MemRefType>(buffer.getType());
  SmallVector<Value> checks;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!type.isDynamicDim(d) && bufferType.isDynamicDim(d))
      checks.push_back(checkSize(ctx, b, loc,
                                 memref::DimOp::create(b, loc, buffer, d),
                                 indexConst(b, loc, type.getDimSize(d)), what));
  Value ok = allOf(b, loc, checks);
  if (!ok)
    return castTo(b, loc, buffer, type);
  return scf::IfOp::create(
             b, loc, ok,
             [&](OpBuilder &tb, Location tloc) {
               scf::YieldOp::create(tb, tloc, castTo(tb, tloc, buffer, type));
             },
             [&](OpBuilder &eb, Location eloc) {
               SmallVector<Value> dynamicSizes;
               for (int64_t d = 0; d < type.getRank(); ++d)
                 if (type.isDynamicDim(d))
                   dynamicSizes.push_back(
                       memref::DimOp::create(eb, eloc, buffer, d));
               Value zeros =
                   memref::AllocOp::create(eb, eloc, type, dynamicSizes);
               fillZeros(eb, eloc, zeros);
               scf::YieldOp::create(eb, eloc, zeros);
             })
      .getResult(0);
}

void lowering::ifElseZero(OpBuilder &b, Location loc, Value ok,
                          ValueRange zeroed,
                          function_ref<void(OpBuilder &, Location)> body) {
  if (!ok) {
    body(b, loc);
    return;
  }
  scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location tloc) {
        body(tb, tloc);
        scf::YieldOp::create(tb, tloc);
      },
      [&](OpBuilder &eb, Location eloc) {
        for (Value buffer : zeroed)
          fillZeros(eb, eloc, buffer);
        scf::YieldOp::create(eb, eloc);
      });
}

Value lowering::staticPrefix(OpBuilder &b, Location loc, Value buffer,
                             int64_t size) {
  auto type = cast<MemRefType>(buffer.getType());
  Value view = memref::SubViewOp::create(
      b, loc, buffer, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(size)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return castTo(b, loc, view, MemRefType::get({size}, type.getElementType()));
}

Value lowering::loadOrZero(OpBuilder &b, Location loc, Value inside,
                           Value buffer, ValueRange indices) {
  Type elementType = cast<MemRefType>(buffer.getType()).getElementType();
  auto value = scf::IfOp::create(
      b, loc, inside,
      [&](OpBuilder &tb, Location tloc) {
        scf::YieldOp::create(
            tb, tloc,
            ValueRange{memref::LoadOp::create(tb, tloc, buffer, indices)});
      },
      [&](OpBuilder &eb, Location eloc) {
        scf::YieldOp::create(eb, eloc,
                             ValueRange{arith::ConstantOp::create(
                                 eb, eloc, eb.getZeroAttr(elementType))});
      });
  return value.getResult(0);
}

Value lowering::linearKey(OpBuilder &b, Location loc, Value batch,
                          ArrayRef<Value> spatial, ArrayRef<int64_t> shape) {
  Value key = batch;
  for (auto [coordinate, extent] : llvm::zip_equal(spatial, shape)) {
    key = arith::MulIOp::create(b, loc, key, i64Const(b, loc, extent));
    key = arith::AddIOp::create(b, loc, key, coordinate);
  }
  return key;
}

int64_t lowering::effectiveBatchSize(GridAttr grid, ArrayRef<int64_t> volumes) {
  if (grid.hasStaticBatch())
    return grid.getBatch();
  int64_t largest = 1;
  for (int64_t volume : volumes)
    largest = std::max(largest, volume);
  // Batch indices are int32 coordinates, so the batch is at most 2^31 - 1.
  return std::min<int64_t>(std::numeric_limits<int64_t>::max() / largest,
                           std::numeric_limits<int32_t>::max());
}

Value lowering::convertScalar(OpBuilder &b, Location loc, Value value,
                              Type type) {
  Type from = value.getType();
  if (from == type)
    return value;
  if (isa<FloatType>(from) && isa<FloatType>(type)) {
    if (from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, type, value);
    return arith::TruncFOp::create(b, loc, type, value);
  }
  if (isa<IndexType>(from) || isa<IndexType>(type))
    return arith::IndexCastOp::create(b, loc, type, value);
  if (from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, type, value);
  return arith::TruncIOp::create(b, loc, type, value);
}

Value lowering::loadAs(OpBuilder &b, Location loc, Value memref,
                       ValueRange indices, Type type) {
  return convertScalar(b, loc, memref::LoadOp::create(b, loc, memref, indices),
                       type);
}

Type lowering::accumulatorType(Type elementType) {
  if (elementType.getIntOrFloatBitWidth() < 32)
    return Float32Type::get(elementType.getContext());
  return elementType;
}

std::pair<Value, Value> lowering::pairRows(OpBuilder &b, Location loc,
                                           const RulebookBuffers &rulebook,
                                           bool inverse, Value pair) {
  Type index = b.getIndexType();
  Value in = loadAs(b, loc, rulebook.pairIn, pair, index);
  Value out = loadAs(b, loc, rulebook.pairOut, pair, index);
  if (inverse)
    std::swap(in, out);
  return {in, out};
}

void lowering::forEachOffset(
    OpBuilder &b, Location loc, const RulebookBuffers &rulebook,
    int64_t volume,
    function_ref<void(OpBuilder &, Location, Value, Value, Value)> body) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  scf::ForOp::create(
      b, loc, zero, indexConst(b, loc, volume), one, ValueRange{},
      [&](OpBuilder &ob, Location oloc, Value offset, ValueRange) {
        Value begin =
            memref::LoadOp::create(ob, oloc, rulebook.offsets, offset);
        Value end = memref::LoadOp::create(
            ob, oloc, rulebook.offsets,
            ValueRange{arith::AddIOp::create(ob, oloc, offset, one)});
        body(ob, oloc, offset, begin, end);
        scf::YieldOp::create(ob, oloc);
      });
}

void lowering::fillRows(
    OpBuilder &b, Location loc, Value buffer, Value rows, Value channels,
    function_ref<Value(OpBuilder &, Location, Value, Value)> init,
    StringRef role) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  markKernel(scf::ParallelOp::create(
                 b, loc, ValueRange{zero, zero}, ValueRange{rows, channels},
                 ValueRange{one, one},
                 [&](OpBuilder &pb, Location ploc, ValueRange ivs) {
                   memref::StoreOp::create(
                       pb, ploc, init(pb, ploc, ivs[0], ivs[1]), buffer, ivs);
                 }),
             role);
}

Value lowering::allocRows(
    OpBuilder &b, Location loc, Value rows, Value channels, Type type,
    function_ref<Value(OpBuilder &, Location, Value, Value)> init,
    StringRef role) {
  auto bufferType =
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, type);
  Value buffer =
      memref::AllocOp::create(b, loc, bufferType, ValueRange{rows, channels});
  fillRows(b, loc, buffer, rows, channels, init, role);
  return buffer;
}
