// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash" -split-input-file | FileCheck %s --check-prefix=GPU

// Keys, sort/unique and the hash table are runtime calls on contiguous
// buffers (C interface); the table lives in two buffers the lookup reads.
// CHECK-LABEL: func.func @primitives
// CHECK: %[[KEYS:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK: call @spconv_rt_memref_linearize_coords(%{{.*}}, %{{.*}}, %{{.*}}, %[[KEYS]])
// CHECK: call @spconv_rt_memref_unique
// CHECK: memref.subview
// CHECK: call @spconv_rt_memref_hash_capacity
// CHECK: %[[TK:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK: %[[TV:.*]] = memref.alloc(%{{.*}}) : memref<?xi32>
// CHECK: call @spconv_rt_memref_hash_build(%{{.*}}, %[[TK]], %[[TV]], %{{.*}})
// CHECK: call @spconv_rt_memref_hash_lookup(%[[TK]], %[[TV]], %{{.*}}, %{{.*}})
// CHECK: call @spconv_rt_memref_delinearize_keys
// CHECK-LABEL: func.func private @spconv_rt_memref_linearize_coords
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @primitives(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %q: tensor<?xi64>)
    -> (tensor<?xi64>, tensor<?xi32>, tensor<?xi32>, tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>) {
  %keys = spconv.linearize %c : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>> -> tensor<?xi64>
  %u, %first, %inv = spconv.sort_unique %keys : tensor<?xi64> -> tensor<?xi64>, tensor<?xi32>, tensor<?xi32>
  %t = spconv.hash_build %keys : tensor<?xi64> -> !spconv.hash_table
  %rows = spconv.hash_lookup %t, %q : !spconv.hash_table, tensor<?xi64> -> tensor<?xi32>
  %back = spconv.delinearize %u : tensor<?xi64> -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
  return %u, %inv, %rows, %back : tensor<?xi64>, tensor<?xi32>, tensor<?xi32>, tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
}

// -----

// gather_rows checks its indices first (the first bad one is reported),
// then copies rows in parallel, reading zeros for -1.
// CHECK-LABEL: func.func @gather
// CHECK: %[[BAD:.*]] = scf.for
// CHECK: scf.if
// CHECK: call @spconv_rt_report_bad_index
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: memref.load
// CHECK: } else {
// CHECK: arith.constant 0.000000e+00 : f32
// On the GPU the indices are device memory, which the host cannot scan: a
// kernel lowers a device word to the first bad position (an atomic
// minimum), the host reads it back, and only if there is one another
// kernel fetches its index for the report.
// GPU-LABEL: func.func @gather
// GPU-NOT: scf.for
// GPU: %[[STATE:.*]] = memref.alloc() : memref<2xi64>
// GPU: scf.parallel
// GPU: } {spconv.kernel = "bad_index_init"}
// GPU: scf.parallel
// GPU: memref.atomic_rmw mins %{{.*}}, %[[STATE]][%{{.*}}]
// GPU: } {spconv.kernel = "find_bad_index"}
// GPU: %[[HOST:.*]] = memref.alloc() : memref<2xi64>
// GPU: memref.copy %[[STATE]], %[[HOST]]
// GPU: %[[FIRST:.*]] = memref.load %[[HOST]]
// GPU: scf.if
// GPU: } {spconv.kernel = "fetch_bad_index"}
// GPU: memref.copy %[[STATE]], %[[HOST]]
// GPU: call @spconv_rt_report_bad_index
// GPU: scf.parallel
func.func @gather(%f: tensor<?x8xf32>, %rows: tensor<?xi32>) -> tensor<?x8xf32> {
  %0 = spconv.gather_rows %f, %rows : tensor<?x8xf32>, tensor<?xi32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Unfold, fold and segment max are gathers: parallel over their results.
// CHECK-LABEL: func.func @dense
// CHECK: memref.alloc() : memref<2x36x64xf32>
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) =
// CHECK: memref.alloc() : memref<2x4x8x8xf32>
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) =
// CHECK: call @spconv_rt_report_bad_index
// CHECK: memref.alloc() : memref<2x64x16xf32>
// CHECK: memref.alloc() : memref<2x64x16xi32>
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf ogt
func.func @dense(%x: tensor<2x4x8x8xf32>, %d: tensor<2x64x100xf32>, %i: tensor<2x100xi32>)
    -> (tensor<2x4x8x8xf32>, tensor<2x64x16xf32>, tensor<2x64x16xi32>) {
  %cols = spconv.unfold <regular, kernel = [3, 3], padding = [1, 1]> %x : tensor<2x4x8x8xf32> -> tensor<2x36x64xf32>
  %back = spconv.fold <regular, kernel = [3, 3], padding = [1, 1]> %cols : tensor<2x36x64xf32> -> tensor<2x4x8x8xf32>
  %m, %a = spconv.segment_max %d, %i : tensor<2x64x100xf32>, tensor<2x100xi32> -> tensor<2x64x16xf32>, tensor<2x64x16xi32>
  return %back, %m, %a : tensor<2x4x8x8xf32>, tensor<2x64x16xf32>, tensor<2x64x16xi32>
}

// -----

// The gradients of gather_rows and segment_max copy their destination, then
// add: one thread per channel (per batch and channel) walks the indices in
// order, so repeated indices need no atomics; bad indices are reported.
// CHECK-LABEL: func.func @gradients
// CHECK: %[[ROWS:.*]] = memref.alloc(%{{.*}}) : memref<?x8xf32>
// CHECK: } {spconv.kernel = "copy_rows"}
// CHECK: call @spconv_rt_report_size_mismatch
// CHECK: scf.if
// CHECK: call @spconv_rt_report_bad_index
// CHECK: scf.parallel (%[[C:[^)]*]]) =
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: scf.if
// CHECK: %[[OLD:.*]] = memref.load %[[ROWS]][%{{.*}}, %[[C]]]
// CHECK: %[[NEW:.*]] = memref.load %{{.*}}[%[[I]], %[[C]]]
// CHECK: arith.addf %[[OLD]], %[[NEW]]
// CHECK: } {spconv.kernel = "scatter_add_rows"}
// CHECK: %[[POINTS:.*]] = memref.alloc() : memref<2x64x100xf32>
// CHECK: } {spconv.kernel = "copy_points"}
// CHECK: call @spconv_rt_report_bad_index
// CHECK: scf.parallel (%[[B:[^,]*]], %[[CH:[^)]*]]) =
// CHECK: scf.for %[[M:[^ ]*]] =
// CHECK: %[[P:.*]] = arith.index_cast
// CHECK: scf.if
// CHECK: memref.load %[[POINTS]][%[[B]], %[[CH]], %[[P]]]
// CHECK: memref.load %{{.*}}[%[[B]], %[[CH]], %[[M]]]
// CHECK: } {spconv.kernel = "segment_max_grad"}
func.func @gradients(%g: tensor<5x8xf32>, %rows: tensor<?xi32>, %z: tensor<?x8xf32>,
                     %gv: tensor<2x64x16xf32>, %pos: tensor<2x64x16xi32>, %zd: tensor<2x64x100xf32>)
    -> (tensor<?x8xf32>, tensor<2x64x100xf32>) {
  %0 = spconv.scatter_add_rows %g, %rows into %z : tensor<5x8xf32>, tensor<?xi32> into tensor<?x8xf32>
  %1 = spconv.segment_max_grad %gv, %pos into %zd
      : tensor<2x64x16xf32>, tensor<2x64x16xi32> into tensor<2x64x100xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<2x64x100xf32>
}
