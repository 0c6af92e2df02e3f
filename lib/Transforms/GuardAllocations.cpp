//===- GuardAllocations.cpp - No code runs after a failed allocation ------===//
//
// Part of the spconv-mlir project.
//
// The runtime's allocator returns null when memory runs out, records an
// out-of-memory error and sets a per-thread flag. Each block is split at
// the ops that may allocate into segments, each under an scf.if on the
// flag, so that after a failure nothing writes through the null pointer:
// the failed allocation is reported (what it was for, the source line) and
// every later segment yields placeholders. Segments are siblings, not
// nested: a network's function has a hundred allocations.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SourceLines.h"
#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/IR/SpConvOps.h"
#include "SpConv/Transforms/Passes.h"
#include "SpConv/Transforms/RuntimeDeclarations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::spconv {
#define GEN_PASS_DEF_SPCONVGUARDALLOCATIONSPASS
#include "SpConv/Transforms/Passes.h.inc"
} // namespace mlir::spconv

using namespace mlir;
using namespace mlir::spconv;

namespace {

constexpr llvm::StringLiteral kAllocFailed = "spconv_rt_alloc_failed";
constexpr llvm::StringLiteral kReport = "spconv_rt_memref_report_alloc_failure";

/// `block` without the scf.yield the scf.if builder puts into the blocks
/// of an if without results. (isa<>, not the terminator trait: a trait's
/// TypeID can differ between shared libraries, an op's cannot.)
Block *emptied(Block *block) {
  if (!block->empty() && isa<scf::YieldOp>(block->back()))
    block->back().erase();
  return block;
}

class Guard {
public:
  explicit Guard(ModuleOp module) : module(module), symbols(module) {}

  LogicalResult guardFunction(func::FuncOp function) {
    return guardBlock(function.getBody().front());
  }

  /// The after-deallocation mode: the copy into each allocation the guard
  /// has not seen runs only if it was allocated.
  LogicalResult guardLateAllocations(func::FuncOp function);

private:
  /// Whether `op` may allocate: an allocation, a call of one of the
  /// module's functions, or an op whose regions hold one of those.
  bool allocates(Operation *op);
  LogicalResult guardBlock(Block &block);
  LogicalResult guardRegions(Operation *op);
  LogicalResult guardSegment(ArrayRef<Operation *> segment);
  /// An scf.for that allocates runs no more iterations' work once the flag
  /// is set: its body goes under one scf.if, then is split as any block.
  LogicalResult guardLoopBody(scf::ForOp loop);

  /// i1: no allocation has failed on this thread.
  Value noFailure(OpBuilder &b, Location loc);
  /// A value of `type` for code that did not run, or null (and an error).
  Value placeholder(OpBuilder &b, Location loc, Type type, Operation *owner);
  /// Reports the failure of `alloc`: what it was for, its source line.
  void report(OpBuilder &b, memref::AllocOp alloc);
  /// `memref<?xi8>` holding `text`, a constant global of the module.
  Value text(OpBuilder &b, Location loc, StringRef text);

  ModuleOp module;
  SymbolTable symbols;
  DenseMap<Operation *, bool> allocating;
  DenseMap<Operation *, bool> calleeAllocates;
  llvm::StringMap<memref::GlobalOp> texts;
};

bool Guard::allocates(Operation *op) {
  auto found = allocating.find(op);
  if (found != allocating.end())
    return found->second;
  bool result = false;
  if (isa<memref::AllocOp>(op)) {
    result = true;
  } else if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (callee && callee.isExternal() && takesSourceLine(callee)) {
      // A kernel compiled on its own (KernelModules.h) allocates its
      // results.
      result = true;
    } else if (callee && !callee.isExternal()) {
      // Its body decides (a recursive call is taken not to allocate until
      // the body says otherwise).
      if (calleeAllocates.try_emplace(callee, false).second) {
        bool any = false;
        callee.walk([&](Operation *inner) {
          if (inner != callee.getOperation() && allocates(inner)) {
            any = true;
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
        calleeAllocates[callee] = any;
      }
      result = calleeAllocates[callee];
    }
  } else {
    op->walk([&](Operation *inner) {
      if (inner == op)
        return WalkResult::advance();
      if (allocates(inner)) {
        result = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
  }
  allocating[op] = result;
  return result;
}

Value Guard::noFailure(OpBuilder &b, Location loc) {
  func::FuncOp flag = declareRuntimeFunction(
      module, kAllocFailed, b.getFunctionType({}, {b.getI32Type()}),
      /*cInterface=*/false);
  Value failed = func::CallOp::create(b, loc, flag, ValueRange{}).getResult(0);
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, failed,
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0)));
}

Value Guard::placeholder(OpBuilder &b, Location loc, Type type,
                         Operation *owner) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return NullBufferOp::create(b, loc, memref).getBuffer();
  if (isa<IntegerType, IndexType, FloatType, VectorType>(type))
    if (TypedAttr zero = b.getZeroAttr(type))
      return arith::ConstantOp::create(b, loc, zero);
  owner->emitOpError("spconv-guard-allocations: no placeholder for a "
                     "result of type ")
      << type << " that code after an allocation computes";
  return Value();
}

Value Guard::text(OpBuilder &b, Location loc, StringRef value) {
  memref::GlobalOp &global = texts[value];
  auto type = MemRefType::get({static_cast<int64_t>(value.size())},
                              b.getI8Type());
  if (!global) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    SmallVector<int8_t> bytes(value.begin(), value.end());
    global = memref::GlobalOp::create(
        mb, loc, "__spconv_buffer_name", mb.getStringAttr("private"), type,
        DenseElementsAttr::get(
            RankedTensorType::get(type.getShape(), b.getI8Type()),
            ArrayRef<int8_t>(bytes)),
        /*constant=*/true, /*alignment=*/IntegerAttr());
    symbols.insert(global); // Renamed if the name is taken.
  }
  Value read = memref::GetGlobalOp::create(b, loc, type, global.getSymName());
  return memref::CastOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()), read);
}

void Guard::report(OpBuilder &b, memref::AllocOp alloc) {
  Location loc = alloc.getLoc();
  std::string what;
  llvm::raw_string_ostream os(what);
  // What the buffer is for: its name location (the lowering names the
  // buffers it makes), else its type,
  // and where: the enclosing name location (a rulebook builder names its
  // ops), else a private function's name.
  SmallVector<StringAttr> names;
  loc->walk([&](Location inner) {
    if (auto nameLoc = dyn_cast<NameLoc>(inner))
      names.push_back(nameLoc.getName());
    return WalkResult::advance();
  });
  if (!names.empty())
    os << names.front().getValue();
  else
    os << "a buffer of " << alloc.getType();
  auto function = alloc->getParentOfType<func::FuncOp>();
  if (names.size() > 1)
    os << " in " << names[1].getValue();
  else if (function && function.isPrivate() && !sourceLineArgument(function))
    os << " in " << function.getSymName();
  MemRefType describedType =
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
  func::FuncOp reportFn = declareRuntimeFunction(
      module, kReport,
      b.getFunctionType({describedType, b.getI64Type()}, {b.getI32Type()}),
      /*cInterface=*/true);
  Value described = text(b, loc, what);
  // A kernel reports its caller's line (its argument), except for what
  // an inlined builder allocated, which has no line.
  Value line = loc == module.getLoc() ? Value() : sourceLineArgument(function);
  if (!line)
    line = arith::ConstantOp::create(
        b, loc, b.getI64IntegerAttr(sourceLine(loc, module.getLoc())));
  func::CallOp::create(b, loc, reportFn, ValueRange{described, line});
}

LogicalResult Guard::guardRegions(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (isa<scf::ParallelOp, scf::ForallOp>(op) || name.contains("parallel") ||
      name == "gpu.launch")
    return op->emitOpError(
        "spconv-guard-allocations: allocates inside a parallel region, "
        "whose worker threads' allocation failures the calling thread "
        "cannot see");
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return guardLoopBody(loop);
  if (isa<scf::IfOp, scf::ExecuteRegionOp, scf::IndexSwitchOp>(op)) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (failed(guardBlock(block)))
          return failure();
    return success();
  }
  return op->emitOpError("spconv-guard-allocations: cannot guard the "
                         "allocations inside this op's regions");
}

LogicalResult Guard::guardLoopBody(scf::ForOp loop) {
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  OpBuilder b = OpBuilder::atBlockBegin(body);
  Location loc = loop.getLoc();
  auto skip = scf::IfOp::create(b, loc, loop.getResultTypes(),
                                noFailure(b, loc), /*withElseRegion=*/true);
  Block *run = emptied(skip.thenBlock());
  emptied(skip.elseBlock());
  // The iteration's work, then what it yields.
  while (skip->getNextNode() != yield)
    skip->getNextNode()->moveBefore(run, run->end());
  OpBuilder tb = OpBuilder::atBlockEnd(run);
  scf::YieldOp::create(tb, loc, yield.getOperands());
  OpBuilder eb = OpBuilder::atBlockEnd(skip.elseBlock());
  scf::YieldOp::create(eb, loc, loop.getRegionIterArgs());
  yield->setOperands(skip.getResults());
  return guardBlock(*run);
}

LogicalResult Guard::guardSegment(ArrayRef<Operation *> segment) {
  Operation *head = segment.front();
  Location loc = head->getLoc();
  Block *block = head->getBlock();
  llvm::SmallPtrSet<Operation *, 16> members(segment.begin(), segment.end());
  auto inSegment = [&](Operation *user) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    return ancestor && members.contains(ancestor);
  };
  // The values later code uses, the head's and the rest's apart.
  SmallVector<Value> headOut, restOut;
  for (Operation *op : segment)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !inSegment(user); }))
        (op == head ? headOut : restOut).push_back(result);
  auto typesOf = [](ArrayRef<Value> values) {
    SmallVector<Type> types;
    for (Value value : values)
      types.push_back(value.getType());
    return types;
  };
  // Appends a placeholder for each of `values` to `fills`.
  auto fill = [&](OpBuilder &fb, ArrayRef<Value> values,
                  SmallVectorImpl<Value> &fills) {
    for (Value value : values) {
      Value placeholderValue =
          placeholder(fb, loc, value.getType(), value.getDefiningOp());
      if (!placeholderValue)
        return false;
      fills.push_back(placeholderValue);
    }
    return true;
  };

  // if (no failure so far) { head; if (no failure) { rest } else {
  //   report the head's failure } } else { placeholders }
  OpBuilder b(head);
  SmallVector<Type> types = typesOf(headOut);
  llvm::append_range(types, typesOf(restOut));
  SmallVector<Type> restTypes = typesOf(restOut);
  Value proceed = noFailure(b, loc);
  auto outer = scf::IfOp::create(b, loc, types, proceed,
                                 /*withElseRegion=*/true);
  Block *run = emptied(outer.thenBlock());
  for (Operation *op : segment)
    op->moveBefore(run, run->end());
  OpBuilder ib(run, std::next(head->getIterator()));
  Value allocated = noFailure(ib, loc);
  auto inner = scf::IfOp::create(ib, loc, restTypes, allocated,
                                 /*withElseRegion=*/true);
  Block *rest = emptied(inner.thenBlock());
  while (Operation *next = inner->getNextNode())
    next->moveBefore(rest, rest->end());
  OpBuilder rb = OpBuilder::atBlockEnd(rest);
  scf::YieldOp::create(rb, loc, restOut);
  OpBuilder fb = OpBuilder::atBlockEnd(emptied(inner.elseBlock()));
  if (auto alloc = dyn_cast<memref::AllocOp>(head))
    report(fb, alloc);
  SmallVector<Value> restFills;
  if (!fill(fb, restOut, restFills))
    return failure();
  scf::YieldOp::create(fb, loc, restFills);

  SmallVector<Value> yielded(headOut.begin(), headOut.end());
  llvm::append_range(yielded, inner.getResults());
  OpBuilder yb = OpBuilder::atBlockEnd(run);
  scf::YieldOp::create(yb, loc, yielded);
  OpBuilder eb = OpBuilder::atBlockEnd(emptied(outer.elseBlock()));
  SmallVector<Value> fills;
  if (!fill(eb, headOut, fills) || !fill(eb, restOut, fills))
    return failure();
  scf::YieldOp::create(eb, loc, fills);

  // Later code reads the segment's results through the ifs.
  for (auto [index, value] : llvm::enumerate(restOut)) {
    Value innerResult = inner.getResult(index);
    value.replaceUsesWithIf(innerResult, [&](OpOperand &use) {
      return !inner->isAncestor(use.getOwner());
    });
    innerResult.replaceUsesWithIf(
        outer.getResult(headOut.size() + index),
        [&](OpOperand &use) { return !outer->isAncestor(use.getOwner()); });
  }
  for (auto [index, value] : llvm::enumerate(headOut))
    value.replaceUsesWithIf(outer.getResult(index), [&](OpOperand &use) {
      return !outer->isAncestor(use.getOwner());
    });
  return success();
}

LogicalResult Guard::guardBlock(Block &block) {
  // Constants first: left in a segment, one that later code uses would
  // reach it as an scf.if result, which nothing folds (a kernel would take
  // it as an argument).
  for (Operation &op : llvm::make_early_inc_range(block))
    if (isa<arith::ConstantOp>(op))
      op.moveBefore(&block, block.begin());
  // Nested blocks first: their segments are built before this block's
  // segments move the ops that hold them.
  SmallVector<Operation *> heads;
  for (Operation &op : block.without_terminator()) {
    if (!allocates(&op))
      continue;
    if (op.getNumRegions() != 0 && failed(guardRegions(&op)))
      return failure();
    if (heads.empty() || heads.back() != &op)
      heads.push_back(&op);
    // A call (a kernel's) ends its segment: its results reach later code
    // as results of the segment's scf.if, in the function's block, where
    // the loops that read them may take their sizes as affine symbols.
    // (An allocation's sizes are the operands it was given.)
    Operation *next = op.getNextNode();
    if (isa<func::CallOp>(op) && next != block.getTerminator())
      heads.push_back(next);
  }
  // Segment i runs from head i to the op before head i + 1.
  SmallVector<SmallVector<Operation *>> segments;
  for (auto [index, head] : llvm::enumerate(heads)) {
    Operation *end = index + 1 < heads.size() ? heads[index + 1]
                                               : block.getTerminator();
    SmallVector<Operation *> &segment = segments.emplace_back();
    for (Operation *op = head; op != end; op = op->getNextNode())
      segment.push_back(op);
  }
  for (ArrayRef<Operation *> segment : segments)
    if (failed(guardSegment(segment)))
      return failure();
  return success();
}

/// Whether `alloc` is guarded: the flag is read right after it (the guard
/// reads it there; canonicalization may have rebuilt the allocation, so no
/// attribute would survive).
static bool isGuarded(memref::AllocOp alloc) {
  auto call = dyn_cast_or_null<func::CallOp>(alloc->getNextNode());
  return call && call.getCallee() == kAllocFailed;
}

/// The free of `alloc` in its own block, if it is a small, fixed-size
/// buffer (the deallocation pipeline's bookkeeping arrays), or null.
static memref::DeallocOp smallBufferFree(memref::AllocOp alloc) {
  constexpr int64_t kMaxStackBytes = 4096;
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !type.getElementType().isIntOrIndexOrFloat())
    return {};
  int64_t bits = type.getElementType().isIndex()
                     ? 64
                     : type.getElementType().getIntOrFloatBitWidth();
  if (type.getNumElements() * ((bits + 7) / 8) > kMaxStackBytes)
    return {};
  for (Operation *user : alloc->getUsers())
    if (auto free = dyn_cast<memref::DeallocOp>(user);
        free && free->getBlock() == alloc->getBlock() &&
        alloc->isBeforeInBlock(free))
      return free;
  return {};
}

/// Moves the small buffers that their own block frees (the deallocation
/// pipeline's bookkeeping arrays) to the stack of the function, where an
/// allocation cannot fail: at its entry, so that one inside a loop takes
/// its stack once, not once per iteration (its life is within one).
static void moveSmallBuffersToStack(func::FuncOp function) {
  SmallVector<std::pair<memref::AllocOp, memref::DeallocOp>> small;
  function.walk([&](memref::AllocOp alloc) {
    if (!isGuarded(alloc))
      if (memref::DeallocOp free = smallBufferFree(alloc))
        small.push_back({alloc, free});
  });
  OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
  for (auto [alloc, free] : small) {
    auto onStack =
        memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType());
    free.erase();
    alloc.replaceAllUsesWith(onStack.getResult());
    alloc.erase();
  }
}

LogicalResult Guard::guardLateAllocations(func::FuncOp function) {
  moveSmallBuffersToStack(function);
  SmallVector<memref::AllocOp> late;
  function.walk([&](memref::AllocOp alloc) {
    if (!isGuarded(alloc))
      late.push_back(alloc);
  });
  for (memref::AllocOp alloc : late) {
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers())) {
      if (auto copy = dyn_cast<memref::CopyOp>(user);
          copy && copy.getTarget() == alloc.getResult()) {
        OpBuilder b(copy);
        auto guard = scf::IfOp::create(b, copy.getLoc(),
                                       noFailure(b, copy.getLoc()),
                                       /*withElseRegion=*/false);
        copy->moveBefore(guard.thenBlock()->getTerminator());
        continue;
      }
      if (isa<memref::DeallocOp, func::ReturnOp, scf::YieldOp,
              ViewLikeOpInterface, memref::CastOp,
              memref::ExtractStridedMetadataOp,
              memref::ExtractAlignedPointerAsIndexOp>(user))
        continue;
      return user->emitOpError("spconv-guard-allocations: uses an "
                               "allocation that no guard covers (")
             << alloc->getName() << " at " << alloc.getLoc() << ")";
    }
  }
  return success();
}

struct SpConvGuardAllocationsPass
    : spconv::impl::SpConvGuardAllocationsPassBase<SpConvGuardAllocationsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Guard guard(module);
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      if (function.isExternal())
        continue;
      if (!function.getBody().hasOneBlock()) {
        function.emitOpError("spconv-guard-allocations: expected one block "
                             "(structured control flow)");
        return signalPassFailure();
      }
      if (failed(afterDeallocation ? guard.guardLateAllocations(function)
                                   : guard.guardFunction(function)))
        return signalPassFailure();
    }
  }
};

} // namespace
