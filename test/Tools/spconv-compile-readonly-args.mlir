// RUN: spconv-compile %s -o - --emit llvm --opt-level 0 | FileCheck %s

// The header promises that entry arguments are only read: an update of an
// argument tensor goes to a copy, never into the caller's buffer (which
// bufferization would otherwise reuse, then clone for the result).
// CHECK-LABEL: define internal {{.*}} @overwrite.body(
// CHECK: call ptr @_mlir_memref_to_llvm_alloc(
// CHECK: call void @llvm.memcpy
// CHECK: store float 7.000000e+00
// CHECK-LABEL: define void @overwrite(
func.func @overwrite(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 7.0 : f32
  %i = arith.constant 1 : index
  %y = tensor.insert %c into %x[%i] : tensor<4xf32>
  return %y : tensor<4xf32>
}
