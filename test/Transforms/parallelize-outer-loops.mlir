// RUN: spconv-opt %s -split-input-file -spconv-parallelize-outer-loops | FileCheck %s

// An element-wise nest: its outermost loop runs on threads, the inner one
// stays a loop (LLVM vectorizes it).
// CHECK-LABEL: func.func @elementwise
// CHECK: affine.parallel (%{{.*}}) = (0) to (symbol(%{{.*}}))
// CHECK-NEXT: affine.for %{{.*}} = 0 to 32
// CHECK-NOT: affine.parallel
func.func @elementwise(%x: memref<?x32xf32>, %y: memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x32xf32>
  affine.for %i = 0 to %n {
    affine.for %j = 0 to 32 {
      %v = affine.load %x[%i, %j] : memref<?x32xf32>
      %r = arith.maximumf %v, %v : f32
      affine.store %r, %y[%i, %j] : memref<?x32xf32>
    }
  }
  return
}

// -----

// A column sum, rows outermost: the row loop carries the sums, and the
// channel loop under it stays sequential too (upstream's affine-parallelize
// would fork the threads once per row for it).
// CHECK-LABEL: func.func @column_sum
// CHECK-NOT: affine.parallel
// CHECK: affine.for %{{.*}} = 0 to %{{.*}} {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 32 {
// CHECK-NOT: affine.parallel
func.func @column_sum(%dy: memref<?x32xf32>, %sum: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %dy, %c0 : memref<?x32xf32>
  affine.for %i = 0 to %n {
    affine.for %j = 0 to 32 {
      %v = affine.load %dy[%i, %j] : memref<?x32xf32>
      %s = affine.load %sum[%j] : memref<32xf32>
      %a = arith.addf %v, %s : f32
      affine.store %a, %sum[%j] : memref<32xf32>
    }
  }
  return
}

// -----

// A nest inside another loop (the lowering's own scf.for) is not the
// outermost loop of anything: it stays sequential.
// CHECK-LABEL: func.func @inside_scf_for
// CHECK-NOT: affine.parallel
func.func @inside_scf_for(%x: memref<4x32xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.for %k = %c0 to %n step %c1 {
    affine.for %i = 0 to 4 {
      affine.store %one, %x[%i, 0] : memref<4x32xf32>
    }
  }
  return
}
