//===- BufferRoot.h - The buffer a memref value views ---------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_PARALLELLOOPSTOGPU_BUFFERROOT_H
#define SPCONV_LIB_CONVERSION_PARALLELLOOPSTOGPU_BUFFERROOT_H

#include "SpConv/IR/SpConvOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::spconv {

Value bufferRoot(Value value);

/// The buffer an scf.if result is, if all its branches yield one buffer or
/// a placeholder (spconv-guard-allocations: the buffer if the code ran, a
/// spconv.null_buffer if it was skipped), else null.
inline Value guardedBufferRoot(scf::IfOp ifOp, unsigned index) {
  Value root;
  for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
    if (region->empty())
      return Value();
    Value yielded =
        bufferRoot(region->front().getTerminator()->getOperand(index));
    if (isa_and_nonnull<NullBufferOp>(yielded.getDefiningOp()))
      continue;
    if (root && root != yielded)
      return Value();
    root = yielded;
  }
  return root;
}

/// The buffer that `value` views, through casts, views and the scf.if
/// results of guarded code: where its memory was allocated (or a block
/// argument).
inline Value bufferRoot(Value value) {
  while (true) {
    if (auto result = dyn_cast<OpResult>(value))
      if (auto ifOp = dyn_cast<scf::IfOp>(result.getOwner())) {
        Value root = guardedBufferRoot(ifOp, result.getResultNumber());
        if (!root)
          return value;
        value = root;
        continue;
      }
    Operation *op = value.getDefiningOp();
    if (!op)
      return value;
    if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
      value = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(op)) {
      value = cast.getSource();
      continue;
    }
    return value;
  }
}

/// Whether `value` views memory only the host can reach: a host function's
/// `memref.alloc` (what spconv-gpu-memory left on the host), stack or
/// global memory.
inline bool isHostMemory(Value value) {
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp,
                         memref::GetGlobalOp>(
      bufferRoot(value).getDefiningOp());
}

} // namespace mlir::spconv

#endif // SPCONV_LIB_CONVERSION_PARALLELLOOPSTOGPU_BUFFERROOT_H
