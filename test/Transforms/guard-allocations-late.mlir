// RUN: spconv-opt %s -spconv-guard-allocations="after-deallocation" -split-input-file -verify-diagnostics | FileCheck %s

// After deallocation: the copy into a clone runs only if the clone was
// allocated, and the small arrays the deallocation pipeline frees in their
// own block move to the function's stack, where allocation cannot fail.
// CHECK-LABEL: func.func @late
// CHECK: %[[ARRAY:.*]] = memref.alloca() : memref<2xindex>
// CHECK: %[[CLONE:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: scf.if
// CHECK-NEXT: memref.copy %{{.*}}, %[[CLONE]]
// CHECK: memref.store %{{.*}}, %[[ARRAY]]
// CHECK-NOT: memref.dealloc %[[ARRAY]]
// CHECK: return %[[CLONE]]
func.func @late(%a: memref<?xf32>, %n: index, %p: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %b = memref.alloc(%n) : memref<?xf32>
  memref.copy %a, %b : memref<?xf32> to memref<?xf32>
  %array = memref.alloc() : memref<2xindex>
  memref.store %p, %array[%c0] : memref<2xindex>
  memref.dealloc %array : memref<2xindex>
  return %b : memref<?xf32>
}

// -----

// An allocation made after the guard that is read in place has no guard.
func.func @unguarded(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %b = memref.alloc(%n) : memref<?xf32>
  // expected-error @+1 {{'memref.load' op spconv-guard-allocations: uses an allocation that no guard covers}}
  %v = memref.load %b[%c0] : memref<?xf32>
  memref.dealloc %b : memref<?xf32>
  return %v : f32
}

