// RUN: spconv-opt %s -spconv-guard-allocations -split-input-file -verify-diagnostics | FileCheck %s

// Each allocation starts a segment under an scf.if on the runtime's flag.
// Right after the allocation the flag is read again: if it failed, the
// failure is reported (what the buffer was for, from its name location,
// and the source line) and the rest of the segment yields placeholders.
// Later segments find the flag set and yield placeholders too, so the
// function returns a null buffer.
// CHECK-LABEL: memref.global "private" constant @__spconv_buffer_name : memref<16xi8> = dense<
// CHECK-LABEL: func.func @two
// CHECK: %[[FLAG:.*]] = call @spconv_rt_alloc_failed() : () -> i32
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[FLAG]], %c0_i32
// CHECK: %[[FIRST:.*]]:2 = scf.if %[[OK]] -> (memref<?xf32>, index) {
// CHECK:   %[[A:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:   call @spconv_rt_alloc_failed()
// CHECK:   %[[REST:.*]] = scf.if %{{.*}} -> (index) {
// CHECK:     memref.store
// CHECK:     scf.yield %{{.*}} : index
// CHECK:   } else {
// CHECK:     %[[NAME:.*]] = memref.get_global @__spconv_buffer_name : memref<16xi8>
// CHECK:     %[[TEXT:.*]] = memref.cast %[[NAME]] : memref<16xi8> to memref<?xi8>
// CHECK:     %[[LINE:.*]] = arith.constant 7 : i64
// CHECK:     call @spconv_rt_memref_report_alloc_failure(%[[TEXT]], %[[LINE]])
// CHECK:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:     scf.yield %[[ZERO]] : index
// CHECK:   }
// CHECK:   scf.yield %[[A]], %[[REST]] : memref<?xf32>, index
// CHECK: } else {
// CHECK:   %[[NONE:.*]] = spconv.null_buffer : memref<?xf32>
// CHECK:   scf.yield %[[NONE]], %{{.*}} : memref<?xf32>, index
// CHECK: }
// CHECK: %[[SECOND:.*]] = scf.if %{{.*}} -> (memref<?xf32>) {
// CHECK:   memref.alloc(%[[FIRST]]#1)
// CHECK:   memref.copy %[[FIRST]]#0
// CHECK: } else {
// CHECK:   spconv.null_buffer : memref<?xf32>
// CHECK: }
// CHECK: return %[[SECOND]]
// CHECK: func.func private @spconv_rt_alloc_failed() -> i32
// CHECK: func.func private @spconv_rt_memref_report_alloc_failure(memref<?xi8>, i64) -> i32 attributes {llvm.emit_c_interface}
func.func @two(%n: index, %x: f32) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %a = memref.alloc(%n) : memref<?xf32> loc("the first buffer"("guard.mlir":7:3))
  memref.store %x, %a[%c0] : memref<?xf32>
  %m = arith.addi %n, %n : index
  %b = memref.alloc(%m) : memref<?xf32>
  memref.copy %a, %b : memref<?xf32> to memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  return %b : memref<?xf32>
}

// -----

// A loop that allocates skips the rest of its iterations once the flag is
// set: its body yields the iteration's arguments instead of running.
// CHECK-LABEL: func.func @loop
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK:   call @spconv_rt_alloc_failed()
// CHECK:   %[[STEP:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:     scf.if %{{.*}} -> (f32) {
// CHECK:       memref.alloc
// CHECK:   } else {
// CHECK:     scf.yield %[[ACC]] : f32
// CHECK:   }
// CHECK:   scf.yield %[[STEP]] : f32
func.func @loop(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (f32) {
    %t = memref.alloc() : memref<1xf32>
    memref.store %acc, %t[%c0] : memref<1xf32>
    %v = memref.load %t[%c0] : memref<1xf32>
    memref.dealloc %t : memref<1xf32>
    %s = arith.addf %v, %acc : f32
    scf.yield %s : f32
  }
  return %r : f32
}

// -----

// A worker thread's allocation failure is not the calling thread's.
func.func @parallel(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'scf.parallel' op spconv-guard-allocations: allocates inside a parallel region}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.alloc() : memref<4xf32>
    memref.dealloc %t : memref<4xf32>
    scf.reduce
  }
  return
}
