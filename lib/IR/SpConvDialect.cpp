//===- SpConvDialect.cpp - SpConv dialect ---------------------------------===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SpConv/IR/SpConvDialect.h"
#include "SpConv/IR/SpConvOps.h"

#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace mlir::spconv;

#include "SpConv/IR/SpConvOpsDialect.cpp.inc"

namespace {
/// Functions holding a spconv.null_buffer (guarded code, after
/// bufferization: the rulebook builders) inline as before; the
/// tensor-level ops keep the functions that hold them, as they always did.
struct SpConvInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *op, Region *, bool,
                       IRMapping &) const final {
    return isa<NullBufferOp>(op);
  }
};
} // namespace

void SpConvDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "SpConv/IR/SpConvOps.cpp.inc"
      >();
  addInterfaces<SpConvInlinerInterface>();
}
