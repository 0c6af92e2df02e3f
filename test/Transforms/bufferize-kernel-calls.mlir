// RUN: spconv-opt %s -spconv-bufferize-kernel-calls -split-input-file | FileCheck %s
// After it, One-Shot Bufferize needs no copy for a kernel's result written
// in place, nor for an operand read by a kernel and written after it.
// RUN: spconv-opt %s -spconv-bufferize-kernel-calls -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file | FileCheck %s --check-prefix=BUF

// A kernel declaration (it takes a source line): its calls take buffers
// (read only) and their results come back as restricted, writable tensors;
// its signature is the one the kernel compiled on its own has (tensors
// become identity-layout memrefs, their encoding dropped); scalars stay.
// CHECK-LABEL: func.func @calls
// CHECK-SAME: (%[[C:.*]]: tensor<?x3xi32, #spconv.grid<[8, 8]>>, %[[F:.*]]: tensor<?x4xf32>, %[[N:.*]]: index)
// CHECK: %[[L:.*]] = arith.constant 7 : i64
// CHECK: %[[MC:.*]] = bufferization.to_buffer %[[C]] read_only : tensor<?x3xi32, #spconv.grid<[8, 8]>> to memref<?x3xi32>
// CHECK: %[[MF:.*]] = bufferization.to_buffer %[[F]] read_only : tensor<?x4xf32> to memref<?x4xf32>
// CHECK: %[[R:.*]]:2 = call @spconv_kernel_k(%[[L]], %[[MC]], %[[MF]], %[[N]]) {no_inline} : (i64, memref<?x3xi32>, memref<?x4xf32>, index) -> (memref<?x4xf32>, index)
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[R]]#0 restrict writable : memref<?x4xf32> to tensor<?x4xf32>
// CHECK: return %[[T]], %[[R]]#1
// CHECK: func.func private @spconv_kernel_k(i64 {spconv.source_line}, memref<?x3xi32>, memref<?x4xf32>, index) -> (memref<?x4xf32>, index)

// BUF-LABEL: func.func @calls
// BUF-NOT: memref.copy
// BUF: call @spconv_kernel_k
func.func @calls(%c: tensor<?x3xi32, #spconv.grid<[8, 8]>>, %f: tensor<?x4xf32>, %n: index) -> (tensor<?x4xf32>, index) {
  %line = arith.constant 7 : i64
  %y, %m = call @spconv_kernel_k(%line, %c, %f, %n) {no_inline} : (i64, tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>, index) -> (tensor<?x4xf32>, index)
  return %y, %m : tensor<?x4xf32>, index
}
func.func private @spconv_kernel_k(i64 {spconv.source_line}, tensor<?x3xi32, #spconv.grid<[8, 8]>> {bufferization.access = "read"}, tensor<?x4xf32> {bufferization.access = "read"}, index) -> (tensor<?x4xf32>, index)

// -----

// A result written in place after the call, and an operand written after
// the kernel read it: no copy of either (the result is the caller's own
// buffer; the operand's last reader ran before the write).
// BUF-LABEL: func.func @in_place
// BUF-NOT: memref.copy
// BUF-NOT: memref.alloc
// BUF: call @spconv_kernel_k
// BUF-NOT: memref.copy
// BUF-NOT: memref.alloc
// BUF: return
func.func @in_place(%f: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %line = arith.constant 3 : i64
  %one = arith.constant 1.0 : f32
  %y = call @spconv_kernel_k(%line, %f) {no_inline} : (i64, tensor<?x4xf32>) -> tensor<?x4xf32>
  %y2 = linalg.fill ins(%one : f32) outs(%y : tensor<?x4xf32>) -> tensor<?x4xf32>
  %f2 = linalg.fill ins(%one : f32) outs(%f : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y2, %f2 : tensor<?x4xf32>, tensor<?x4xf32>
}
func.func private @spconv_kernel_k(i64 {spconv.source_line}, tensor<?x4xf32> {bufferization.access = "read"}) -> tensor<?x4xf32>

// -----

// A kernel with its body (not compiled on its own), and a declaration that
// is no kernel (no source line): left to One-Shot Bufferize.
// CHECK-LABEL: func.func @others
// CHECK-NOT: bufferization.to_buffer
// CHECK: call @spconv_kernel_defined(%{{.*}}, %{{.*}}) {no_inline} : (i64, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: call @external(%{{.*}}) : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: func.func private @spconv_kernel_defined(%{{.*}}: i64 {spconv.source_line}, %{{.*}}: tensor<?x4xf32> {bufferization.access = "read"}) -> tensor<?x4xf32>
// CHECK: func.func private @external(tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @others(%f: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %line = arith.constant 3 : i64
  %y = call @spconv_kernel_defined(%line, %f) {no_inline} : (i64, tensor<?x4xf32>) -> tensor<?x4xf32>
  %z = call @external(%y) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %z : tensor<?x4xf32>
}
func.func private @spconv_kernel_defined(%line: i64 {spconv.source_line}, %f: tensor<?x4xf32> {bufferization.access = "read"}) -> tensor<?x4xf32> {
  return %f : tensor<?x4xf32>
}
func.func private @external(tensor<?x4xf32>) -> tensor<?x4xf32>
