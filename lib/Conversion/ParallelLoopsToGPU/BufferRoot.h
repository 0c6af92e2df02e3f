//===- BufferRoot.h - The buffer a memref value views ---------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_LIB_CONVERSION_PARALLELLOOPSTOGPU_BUFFERROOT_H
#define SPCONV_LIB_CONVERSION_PARALLELLOOPSTOGPU_BUFFERROOT_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::spconv {

/// The buffer that `value` views, through casts and views: where its memory
/// was allocated (or a block argument).
inline Value bufferRoot(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
      value = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(op)) {
      value = cast.getSource();
      continue;
    }
    break;
  }
  return value;
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
