// RUN: spconv-opt %s -pass-pipeline="builtin.module(func.func(spconv-gpu-strided-copies))" -split-input-file | FileCheck %s

// A concatenation's copies into strided views of its result become parallel
// loops over the rows and channels, tagged for a kernel; the copy of whole
// buffers stays a copy (spconv-gpu-memory makes it a gpu.memcpy).
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: memref<?x64xf32>, %[[B:.*]]: memref<?x32xf32>, %[[OUT:.*]]: memref<?x96xf32>, %[[WHOLE:.*]]: memref<?x96xf32>)
// CHECK: %[[LEFT:.*]] = memref.subview %[[OUT]][0, 0]
// CHECK: %[[RIGHT:.*]] = memref.subview %[[OUT]][0, 64]
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c64) step
// CHECK:   %[[X:.*]] = memref.load %[[A]][%{{.*}}, %{{.*}}] : memref<?x64xf32>
// CHECK:   memref.store %[[X]], %[[LEFT]][%{{.*}}, %{{.*}}] : memref<?x64xf32, strided<[96, 1]>>
// CHECK: } {spconv.kernel = "strided_copy"}
// CHECK: scf.parallel
// CHECK:   memref.load %[[B]]
// CHECK:   memref.store %{{.*}}, %[[RIGHT]]
// CHECK: } {spconv.kernel = "strided_copy"}
// CHECK-NOT: scf.parallel
// CHECK: memref.copy %[[OUT]], %[[WHOLE]] : memref<?x96xf32> to memref<?x96xf32>
// CHECK-NOT: memref.copy
func.func @concat(%a: memref<?x64xf32>, %b: memref<?x32xf32>,
                  %out: memref<?x96xf32>, %whole: memref<?x96xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?x64xf32>
  %left = memref.subview %out[0, 0] [%n, 64] [1, 1]
      : memref<?x96xf32> to memref<?x64xf32, strided<[96, 1]>>
  %right = memref.subview %out[0, 64] [%n, 32] [1, 1]
      : memref<?x96xf32> to memref<?x32xf32, strided<[96, 1], offset: 64>>
  memref.copy %a, %left : memref<?x64xf32> to memref<?x64xf32, strided<[96, 1]>>
  memref.copy %b, %right : memref<?x32xf32> to memref<?x32xf32, strided<[96, 1], offset: 64>>
  memref.copy %out, %whole : memref<?x96xf32> to memref<?x96xf32>
  return
}

// -----

// A strided source counts too; a 0-d view has no loop to tag: its copy is
// one load and store.
// CHECK-LABEL: func.func @source_and_scalar
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c4)
// CHECK:   memref.load %{{.*}}[%{{.*}}] : memref<4xf32, strided<[2]>>
// CHECK: } {spconv.kernel = "strided_copy"}
// CHECK: %[[V:.*]] = memref.load %{{.*}}[] : memref<f32, strided<[], offset: 3>>
// CHECK: memref.store %[[V]], %{{.*}}[] : memref<f32>
// CHECK-NOT: spconv.kernel
// CHECK-NOT: memref.copy
func.func @source_and_scalar(%a: memref<8xf32>, %b: memref<4xf32>,
                             %s: memref<f32>) {
  %even = memref.subview %a[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  memref.copy %even, %b : memref<4xf32, strided<[2]>> to memref<4xf32>
  %one = memref.subview %a[3] [1] [1] : memref<8xf32> to memref<f32, strided<[], offset: 3>>
  memref.copy %one, %s : memref<f32, strided<[], offset: 3>> to memref<f32>
  return
}
