//===- RaceCheck.cpp - Instrumenting kernel memory accesses ---------------===//
//
// Part of the spconv-mlir project.
//
// With `race-check`, every load and store of a kernel through one of its
// memref arguments or workgroup buffers first calls the runtime's
// spconv_rt_emu_access with the buffer's number, the element's byte address
// and offset in the buffer, its size, whether it writes, and the linear ids
// of the block and thread. The runtime (runtime/lib/CPU/Emulator.cpp) keeps
// the last writer and recent readers of every element and reports two
// accesses of different threads, one a write, that no barrier orders.
// Atomics (memref.atomic_rmw, memref.generic_atomic_rmw) are not
// instrumented: they may race by design. An nvgpu.ldmatrix is each
// address-giving lane's read of its 16-byte row.
//
//===----------------------------------------------------------------------===//

#include "KernelPhases.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::spconv;
using namespace mlir::spconv::emulation;

func::FuncOp emulation::getEmulatorFunction(ModuleOp module, StringRef name,
                                            unsigned numArguments,
                                            bool returnsStatus) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  MLIRContext *context = module.getContext();
  OpBuilder b(context);
  b.setInsertionPointToStart(module.getBody());
  SmallVector<Type> inputs(numArguments, b.getI64Type());
  SmallVector<Type> results;
  if (returnsStatus)
    results.push_back(b.getI32Type());
  auto function = func::FuncOp::create(
      b, module.getLoc(), name, FunctionType::get(context, inputs, results));
  function.setPrivate();
  return function;
}

InFlightDiagnostic emulation::emitKernelError(Operation *op, StringRef kernel) {
  return op->emitError("spconv-gpu-kernels-to-cpu: kernel @") << kernel << ": ";
}

std::pair<Value, Value> emulation::stringArguments(OpBuilder &b, Location loc,
                                                   memref::GlobalOp global) {
  Value memref = memref::GetGlobalOp::create(b, loc, global.getType(),
                                             global.getSymName());
  Value pointer =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  return {arith::IndexCastOp::create(b, loc, b.getI64Type(), pointer),
          arith::ConstantIntOp::create(b, loc,
                                       global.getType().getNumElements(), 64)};
}

Value emulation::laneOf(OpBuilder &b, Location loc, Value thread) {
  return arith::RemUIOp::create(
      b, loc, thread, arith::ConstantIndexOp::create(b, loc, kWarpSize));
}

int64_t emulation::bufferNumber(Value memref, gpu::GPUFuncOp kernel) {
  unsigned shared =
      kernel.getNumArguments() + kernel.getNumWorkgroupAttributions();
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(memref)) {
      if (arg.getOwner() != &kernel.getBody().front() ||
          arg.getArgNumber() >= shared)
        return -1;
      return arg.getArgNumber();
    }
    Operation *def = memref.getDefiningOp();
    if (auto metadata = dyn_cast_or_null<memref::ExtractStridedMetadataOp>(def))
      memref = metadata.getSource();
    else if (auto view = dyn_cast_or_null<ViewLikeOpInterface>(def))
      memref = view.getViewSource();
    else
      return -1;
  }
}

int64_t emulation::byteSize(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getNumElements() * byteSize(vector.getElementType());
  if (type.isIndex())
    return 8;
  return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
}

Value emulation::toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

/// Linear id x + dx * (y + dy * z) of three gpu id ops over three sizes.
template <typename IdOp, typename SizeOp>
static Value linearId(OpBuilder &b, Location loc) {
  Value x = IdOp::create(b, loc, gpu::Dimension::x);
  Value y = IdOp::create(b, loc, gpu::Dimension::y);
  Value z = IdOp::create(b, loc, gpu::Dimension::z);
  Value dx = SizeOp::create(b, loc, gpu::Dimension::x);
  Value dy = SizeOp::create(b, loc, gpu::Dimension::y);
  Value yz =
      arith::AddIOp::create(b, loc, y, arith::MulIOp::create(b, loc, dy, z));
  return arith::AddIOp::create(b, loc, x,
                               arith::MulIOp::create(b, loc, dx, yz));
}

Value emulation::linearBlockId(OpBuilder &b, Location loc) {
  return toI64(b, loc, linearId<gpu::BlockIdOp, gpu::GridDimOp>(b, loc));
}

Value emulation::linearThreadId(OpBuilder &b, Location loc) {
  return toI64(b, loc, linearId<gpu::ThreadIdOp, gpu::BlockDimOp>(b, loc));
}

Value emulation::elementAddress(OpBuilder &b, Location loc, Value memref,
                                ValueRange indices, int64_t elementBytes) {
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value position = metadata.getOffset();
  for (auto [index, stride] : llvm::zip_equal(indices, metadata.getStrides()))
    position = arith::AddIOp::create(
        b, loc, position, arith::MulIOp::create(b, loc, index, stride));
  Value bytes = arith::ConstantIndexOp::create(b, loc, elementBytes);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  return arith::AddIOp::create(b, loc, base,
                               arith::MulIOp::create(b, loc, position, bytes));
}

/// What every access of a kernel reports alike, computed once at its
/// entry: the linear block and thread ids (i64) and the address of each
/// memref argument and workgroup buffer (null for other arguments).
struct AccessContext {
  Value block, thread;
  SmallVector<Value> bufferBases;
  func::FuncOp access;
};

/// Calls the runtime before one access of `count` elements of `elementBytes`
/// from memref[indices] (contiguous along the last dimension) of `buffer`.
static void instrument(OpBuilder &b, Location loc, Value memref,
                       ValueRange indices, int64_t elementBytes, int64_t count,
                       bool isWrite, int64_t buffer,
                       const AccessContext &context) {
  Value address = elementAddress(b, loc, memref, indices, elementBytes);
  Value offset =
      arith::SubIOp::create(b, loc, address, context.bufferBases[buffer]);
  auto i64 = [&](int64_t value) {
    return arith::ConstantIntOp::create(b, loc, value, 64).getResult();
  };
  func::CallOp::create(b, loc, context.access,
                       ValueRange{i64(buffer), toI64(b, loc, address),
                                  toI64(b, loc, offset), i64(elementBytes),
                                  i64(count), i64(isWrite ? 1 : 0),
                                  context.block, context.thread});
}

SmallVector<std::string> emulation::instrumentRaces(gpu::GPUFuncOp kernel,
                                                    ModuleOp module) {
  SmallVector<std::string> names;
  Block &entry = kernel.getBody().front();
  unsigned numArguments = kernel.getNumArguments();
  for (unsigned i = 0, e = numArguments + kernel.getNumWorkgroupAttributions();
       i < e; ++i) {
    std::string name;
    llvm::raw_string_ostream os(name);
    if (i < numArguments)
      os << "argument " << i;
    else
      os << "workgroup buffer " << i - numArguments;
    os << " (" << entry.getArgument(i).getType() << ")";
    names.push_back(name);
  }
  AccessContext context;
  context.access = getEmulatorFunction(module, "spconv_rt_emu_access", 8, true);
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = kernel.getLoc();
  context.block = linearBlockId(b, loc);
  context.thread = linearThreadId(b, loc);
  for (unsigned i = 0, e = names.size(); i < e; ++i) {
    Value buffer = entry.getArgument(i);
    context.bufferBases.push_back(
        isa<MemRefType>(buffer.getType())
            ? Value(memref::ExtractAlignedPointerAsIndexOp::create(b, loc,
                                                                   buffer))
            : Value());
  }
  SmallVector<Operation *> accesses;
  kernel.walk([&](Operation *op) {
    if (isa<memref::LoadOp, memref::StoreOp, vector::LoadOp, vector::StoreOp,
            nvgpu::LdMatrixOp>(op))
      accesses.push_back(op);
  });
  for (Operation *op : accesses) {
    Value memref;
    ValueRange indices;
    Type accessed;
    bool isWrite = false;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      memref = load.getMemRef();
      indices = load.getIndices();
      accessed = load.getType();
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      memref = store.getMemRef();
      indices = store.getIndices();
      accessed = store.getValueToStore().getType();
      isWrite = true;
    } else if (auto load = dyn_cast<vector::LoadOp>(op)) {
      memref = load.getBase();
      indices = load.getIndices();
      accessed = load.getVectorType();
    } else if (auto store = dyn_cast<vector::StoreOp>(op)) {
      memref = store.getBase();
      indices = store.getIndices();
      accessed = store.getVectorType();
      isWrite = true;
    } else {
      // A lane of an ldmatrix reads the 16-byte row whose address it gives.
      auto load = cast<nvgpu::LdMatrixOp>(op);
      memref = load.getSrcMemref();
      indices = load.getIndices();
      Type element = cast<MemRefType>(memref.getType()).getElementType();
      accessed = VectorType::get({16 / byteSize(element)}, element);
    }
    int64_t buffer = bufferNumber(memref, kernel);
    if (buffer < 0)
      continue;
    Type element = cast<MemRefType>(memref.getType()).getElementType();
    int64_t elementBytes = byteSize(element);
    int64_t count = byteSize(accessed) / elementBytes;
    OpBuilder b(op);
    Location loc = op->getLoc();
    // Lanes from 8 * numTiles on give no address.
    auto load = dyn_cast<nvgpu::LdMatrixOp>(op);
    if (load && load.getNumTiles() < 4) {
      Value lane = gpu::LaneIdOp::create(b, loc, IntegerAttr{});
      Value gives = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, lane,
          arith::ConstantIndexOp::create(b, loc, 8 * load.getNumTiles()));
      auto branch = scf::IfOp::create(b, loc, gives, /*withElseRegion=*/false);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
    }
    instrument(b, loc, memref, indices, elementBytes,
               std::max<int64_t>(1, count), isWrite, buffer, context);
  }
  return names;
}
