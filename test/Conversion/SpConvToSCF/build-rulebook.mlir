// The hash-probing builders (subm-search=hash); sorted-subm.mlir has the
// default subm builder.
// RUN: spconv-opt %s -convert-spconv-to-scf="subm-search=hash" -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash" -split-input-file | FileCheck %s --check-prefix=GPU
// RUN: spconv-opt %s -convert-spconv-to-scf="subm-search=hash block-size=64" -split-input-file | FileCheck %s --check-prefix=BLOCK
// RUN: spconv-opt %s -convert-spconv-to-scf="subm-search=hash block-size=1" -split-input-file | FileCheck %s --check-prefix=ONE

// A subm build becomes a call of a builder specialised for its geometry;
// the result coordinates are the input's.
// CHECK-LABEL: func.func @subm_1d
// CHECK-SAME: (%[[C:.*]]: tensor<?x2xi32>
// CHECK: %[[BUF:.*]] = bufferization.to_buffer %[[C]] read_only : tensor<?x2xi32> to memref<?x2xi32, strided<[?, ?], offset: ?>>
// CHECK: %{{.*}}:3 = call @spconv_build_subm_k3_s1_p1_d1_g16(%[[BUF]]) : (memref<?x2xi32, strided<[?, ?], offset: ?>>) -> (memref<?xi32>, memref<?xi32>, memref<4xindex>)
// CHECK-NOT: #spconv.grid
// CHECK: return %[[C]]

// The builder: the site keys from a kernel (a site outside the grid gets
// the key one past the last, batch 2^31 - 1 x 16, and lowers the status's
// bad row), build the table (a repeat lowers the status's repeat row),
// then count and write the pairs, site by site. The kernel is odd, so only
// the offset below the centre is searched (neighbour x - 1, grid extent 16
// folded in); its home slot is prefetched before the search. Its pairs are
// also written reversed to the mirrored offset, and the centre maps every
// site to itself. The status is read back once, after the scan, with the
// pair total; an error is reported from it and leaves the rulebook empty.
// CHECK-LABEL: func.func private @spconv_build_subm_k3_s1_p1_d1_g16
// CHECK: %[[STATUS:.*]] = memref.alloc() : memref<4xi64>
// CHECK: scf.parallel
// CHECK: } {spconv.kernel = "init_status"}
// CHECK: scf.parallel
// CHECK: arith.constant 34359738352 : i64
// CHECK: scf.if
// CHECK: memref.atomic_rmw mins %{{.*}}, %[[STATUS]][%{{.*}}] : (i64, memref<4xi64>) -> i64
// CHECK: } {spconv.kernel = "linearize"}
// CHECK: call @spconv_rt_memref_hash_capacity
// CHECK: memref.subview %[[STATUS]][1] [1] [1]
// CHECK: call @spconv_rt_memref_hash_build_deferred
// CHECK: arith.constant 256 : index
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i32)
// CHECK: arith.constant -1 : i64
// CHECK: arith.constant 16 : i64
// CHECK: memref.prefetch %{{.*}}, read, locality<3>, data : memref<?xi64>
// CHECK: call @spconv_ht_find_slot
// CHECK-NOT: call @spconv_ht_find_slot
// CHECK: memref.store %{{.*}} : memref<?xi8>
// CHECK: scf.reduce
// CHECK: memref.subview %[[STATUS]][2] [1] [1]
// CHECK: call @spconv_rt_memref_exclusive_scan_i64_deferred
// CHECK: %[[HOST:.*]] = memref.alloc() : memref<4xi64>
// CHECK-NEXT: memref.copy %[[STATUS]], %[[HOST]]
// CHECK-COUNT-3: memref.load %[[HOST]]
// CHECK: scf.if
// CHECK: call @spconv_rt_memref_report_build_error
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} -> (index)
// CHECK: memref.load %{{.*}} : memref<?xi8>
// CHECK: scf.if
// CHECK: arith.constant -1 : i64
// CHECK: %[[SLOT:.*]] = func.call @spconv_ht_find_slot
// CHECK: memref.load %{{.*}}[%[[SLOT]]] : memref<?xi32>
// CHECK-COUNT-4: memref.store
// CHECK: } else {
// CHECK-COUNT-2: memref.store
// CHECK-NOT: call @spconv_ht_find_slot
// CHECK: } {spconv.kernel = "write_pairs"}
// CHECK: scf.parallel
// CHECK: } {spconv.kernel = "offsets"}
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : memref<?xi32>, memref<?xi32>, memref<4xindex>

// The inline probe of the runtime's table (HashTableLayout.h): splitmix64,
// masked, linear probing over the key array that stops at the key or an
// empty (-1) slot and returns the slot; values are read by the caller,
// for hits only.
// CHECK-LABEL: func.func private @spconv_ht_find_slot
// CHECK-SAME: (%[[KEYS:.*]]: memref<?xi64>, %[[KEY:.*]]: i64) -> index
// CHECK: arith.constant -4658895280553007687 : i64
// CHECK: arith.constant -7723592293110705685 : i64
// CHECK: scf.while
// CHECK: memref.load %[[KEYS]]
// CHECK: arith.cmpi eq, %{{.*}}, %[[KEY]] : i64
// CHECK: scf.condition

// BLOCK-LABEL: func.func private @spconv_build_subm_k3_s1_p1_d1_g16
// BLOCK: arith.constant 64 : index
func.func @subm_1d(%c: tensor<?x2xi32, #spconv.grid<[16]>>) -> tensor<?x2xi32, #spconv.grid<[16]>> {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x2xi32, #spconv.grid<[16]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x2xi32, #spconv.grid<[16]>>
  return %oc : tensor<?x2xi32, #spconv.grid<[16]>>
}

// -----

// One builder per distinct geometry: the two identical builds (in two
// functions) share one; another dilation gets its own.
// CHECK-LABEL: func.func @first
// CHECK: call @spconv_build_subm_k3x3_s1x1_p1x1_d1x1_g8x8_b2(
// CHECK-LABEL: func.func @second
// CHECK: call @spconv_build_subm_k3x3_s1x1_p1x1_d1x1_g8x8_b2(
// CHECK: call @spconv_build_subm_k3x3_s1x1_p2x2_d2x2_g8x8_b2(
// CHECK-COUNT-1: func.func private @spconv_build_subm_k3x3_s1x1_p1x1_d1x1_g8x8_b2(
// CHECK-COUNT-1: func.func private @spconv_build_subm_k3x3_s1x1_p2x2_d2x2_g8x8_b2(
// CHECK-NOT: func.func private @spconv_build
func.func @first(%c: tensor<?x3xi32, #spconv.grid<[8, 8], batch = 2>>) -> tensor<?x3xi32, #spconv.grid<[8, 8], batch = 2>> {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x3xi32, #spconv.grid<[8, 8], batch = 2>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8], batch = 2>>, tensor<?x3xi32, #spconv.grid<[8, 8], batch = 2>>
  return %oc : tensor<?x3xi32, #spconv.grid<[8, 8], batch = 2>>
}
func.func @second(%c: tensor<?x3xi32, #spconv.grid<[8, 8], batch = 2>>, %f: tensor<?x4xf32>, %w: tensor<9x4x4xf32>) -> tensor<?x4xf32> {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x3xi32, #spconv.grid<[8, 8], batch = 2>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8], batch = 2>>, tensor<?x3xi32, #spconv.grid<[8, 8], batch = 2>>
  %rd, %od = spconv.build_rulebook %c
      : tensor<?x3xi32, #spconv.grid<[8, 8], batch = 2>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3], dilation = [2, 2]>, #spconv.grid<[8, 8], batch = 2>>, tensor<?x3xi32, #spconv.grid<[8, 8], batch = 2>>
  %y = spconv.rulebook_conv %rb, %f, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8], batch = 2>>, tensor<?x4xf32>, tensor<9x4x4xf32> -> tensor<?x4xf32>
  %z = spconv.rulebook_conv %rd, %y, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3], dilation = [2, 2]>, #spconv.grid<[8, 8], batch = 2>>, tensor<?x4xf32>, tensor<9x4x4xf32> -> tensor<?x4xf32>
  return %z : tensor<?x4xf32>
}

// -----

// Regular: each input enumerates its output box instead of testing every
// offset. Per dimension the offsets that pair are j == (x + p) (mod s) with
// (x + p - j) / s in the grid: j from lo (x + p - 6 >= ... clamped at 0) to
// min(1, x + p), step s = 2, so the count and write passes loop over the
// pairs only, counting in (and writing from) memory per (offset, block).
// Then the runtime uniques the candidate keys (keys below 2^33: batch
// 2^31 - 1 x 4 output sites): the sorted output sites, read back (the
// build's second size), and each pair's output row from the inverse map; a
// kernel writes the output coordinates.
// CHECK-LABEL: func.func @regular
// CHECK: %[[R:.*]]:4 = call @spconv_build_regular_k2_s2_p0_d1_g9(
// CHECK: bufferization.to_tensor %[[R]]#0 restrict writable : memref<?x2xi32> to tensor<?x2xi32>
// CHECK-LABEL: func.func private @spconv_build_regular_k2_s2_p0_d1_g9
// CHECK-SAME: -> (memref<?x2xi32>, memref<?xi32>, memref<?xi32>, memref<3xindex>)
// CHECK: call @spconv_rt_memref_hash_build_deferred
// CHECK: %[[COUNTS:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[COUNTS]]
// A site outside the grid (its key one past the last valid one: 9 sites
// x a batch bound of 2^31 - 1) is loaded with batch -1, which pairs with
// nothing.
// CHECK: %[[RAW_BATCH:.*]] = arith.extsi
// CHECK: %[[OUTSIDE:.*]] = arith.cmpi eq, %{{.*}}, %c19327352823_i64 : i64
// CHECK: %[[BATCH:.*]] = arith.select %[[OUTSIDE]], %c-1_i64, %[[RAW_BATCH]]
// CHECK: %[[X:.*]] = arith.extsi
// CHECK: %[[HI:.*]] = arith.minsi %{{.*}}, %[[X]] : i64
// CHECK: %[[LO:.*]] = arith.maxsi
// CHECK: %[[RESIDUE:.*]] = arith.remsi %[[X]], %{{.*}} : i64
// CHECK: %[[SKIP:.*]] = arith.remsi
// CHECK: %[[FIRST:.*]] = arith.addi %[[LO]], %{{.*}} : i64
// CHECK: %[[END:.*]] = arith.addi %[[HI]], %{{.*}} : i64
// CHECK: %[[FIRST_INDEX:.*]] = arith.index_cast %[[FIRST]] : i64 to index
// CHECK: %[[END_INDEX:.*]] = arith.index_cast %[[END]] : i64 to index
// CHECK: %[[BATCH_OK:.*]] = arith.cmpi sge, %[[BATCH]]
// CHECK: %[[LAST:.*]] = arith.select %[[BATCH_OK]], %[[END_INDEX]]
// CHECK: scf.for %[[J:.*]] = %[[FIRST_INDEX]] to %[[LAST]] step %c2
// CHECK: %[[COUNT:.*]] = memref.load %[[COUNTS]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[COUNT]]
// CHECK: memref.store %[[NEXT]], %[[COUNTS]]
// CHECK: } {spconv.kernel = "count_pairs"}
// CHECK-NOT: call @spconv_ht_find_slot
// CHECK: call @spconv_rt_memref_exclusive_scan_i64_deferred
// CHECK: memref.copy
// CHECK: %[[CURSORS:.*]] = memref.alloc(%{{.*}}) : memref<?xindex>
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2
// CHECK: %[[O:.*]] = arith.divui
// CHECK: %[[KEY:.*]] = arith.addi %{{.*}}, %[[O]] : i64
// CHECK: %[[SLOT:.*]] = memref.load %[[CURSORS]]
// CHECK: memref.store %{{.*}}, %[[CURSORS]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[SLOT]]] : memref<?xi32>
// CHECK: memref.store %[[KEY]], %{{.*}}[%[[SLOT]]] : memref<?xi64>
// CHECK: } {spconv.kernel = "write_pairs"}
// CHECK: arith.constant 33 : i64
// CHECK: call @spconv_rt_memref_unique_deferred
// CHECK: memref.copy
// CHECK: scf.parallel
// CHECK: arith.remui %{{.*}}, %{{.*}} : i64
// CHECK: arith.divui
// CHECK: } {spconv.kernel = "delinearize"}
// With one site per block (the GPU's threads), a site's pair at an offset
// is its (offset, block)'s only one: it goes to the first slot, no cursors.
// ONE-LABEL: func.func private @spconv_build_regular_k2_s2_p0_d1_g9
// ONE: call @spconv_rt_memref_exclusive_scan_i64_deferred
// ONE-NOT: memref<?xindex>
// ONE: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2
// ONE: %[[FIRST:.*]] = memref.load %{{.*}} : memref<?xi64>
// ONE: %[[SLOT:.*]] = arith.index_cast %[[FIRST]] : i64 to index
// ONE: memref.store %{{.*}}, %{{.*}}[%[[SLOT]]] : memref<?xi32>
// ONE: memref.store %{{.*}}, %{{.*}}[%[[SLOT]]] : memref<?xi64>
// ONE: } {spconv.kernel = "write_pairs"}
// For the GPU (target=gpu) the build reads its status back once, after the
// unique: the pairs go to buffers of sites x 1 slots (a kernel of 2 at
// stride 2 reaches one output per site), whose free slots keep the largest
// key of the unique's 33 bits; the read-back brings the errors, the pair
// total and the unique count, less the padding's key where slots were
// left free; the pairs are the buffers' first `total` slots.
// GPU-LABEL: func.func private @spconv_build_regular_k2_s2_p0_d1_g9
// GPU: call @spconv_rt_memref_exclusive_scan_i64_deferred
// GPU-NOT: memref.copy
// GPU: %[[CAPACITY:.*]] = arith.muli %{{.*}}, %c1{{.*}} : index
// GPU: %[[PAIR_IN:.*]] = memref.alloc(%[[CAPACITY]]) : memref<?xi32>
// GPU: %[[KEYS:.*]] = memref.alloc(%[[CAPACITY]]) : memref<?xi64>
// GPU: scf.parallel
// GPU: memref.store %c8589934591_i64, %[[KEYS]]
// GPU: } {spconv.kernel = "pad_keys"}
// GPU-NOT: memref.copy
// GPU: } {spconv.kernel = "write_pairs"}
// GPU-NOT: memref.copy
// GPU: memref.alloc(%[[CAPACITY]]) : memref<?xi64>
// GPU: memref.alloc(%[[CAPACITY]]) : memref<?xi32>
// GPU: %[[PAIR_OUT:.*]] = memref.alloc(%[[CAPACITY]]) : memref<?xi32>
// GPU: call @spconv_rt_memref_unique_deferred(%[[KEYS]], %{{.*}}, %{{.*}}, %[[PAIR_OUT]], %{{.*}}, %c33_i64)
// GPU: memref.copy
// GPU: %[[TOTAL_I64:.*]] = memref.load %{{.*}}[%c2{{.*}}] : memref<4xi64>
// GPU: %[[UNIQUE_I64:.*]] = memref.load %{{.*}}[%c3{{.*}}] : memref<4xi64>
// GPU: call @spconv_rt_memref_report_build_error
// GPU: %[[TOTAL:.*]] = arith.select %[[VALID:.*]], %{{.*}}, %c0
// GPU: %[[UNIQUE:.*]] = arith.select %[[VALID]], %{{.*}}, %c0
// GPU: %[[FREE:.*]] = arith.cmpi ult, %[[TOTAL]], %[[CAPACITY]] : index
// GPU: %[[PADDED:.*]] = arith.andi %[[VALID]], %[[FREE]] : i1
// GPU: %[[PADDING:.*]] = arith.select %[[PADDED]], %c1, %c0 : index
// GPU: %[[OUTPUTS:.*]] = arith.subi %[[UNIQUE]], %[[PADDING]] : index
// GPU: memref.reinterpret_cast %[[PAIR_IN]] to offset: [0], sizes: [%[[TOTAL]]], strides: [1]
// GPU: memref.reinterpret_cast %[[PAIR_OUT]] to offset: [0], sizes: [%[[TOTAL]]], strides: [1]
// GPU: memref.alloc(%[[OUTPUTS]]) : memref<?x2xi32>
// GPU-NOT: memref.copy
// GPU: return
func.func @regular(%c: tensor<?x2xi32, #spconv.grid<[9]>>) -> tensor<?x2xi32, #spconv.grid<[4]>> {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x2xi32, #spconv.grid<[9]>>
      -> !spconv.rulebook<#spconv.geom<regular, kernel = [2], stride = [2]>, #spconv.grid<[9]>>, tensor<?x2xi32, #spconv.grid<[4]>>
  return %oc : tensor<?x2xi32, #spconv.grid<[4]>>
}

// -----

// Transposed: o = x * s - p + j * d, bounded by the output grid.
// CHECK-LABEL: func.func private @spconv_build_transposed_k3_s2_p1_d1_op1_g5
// CHECK-SAME: -> (memref<?x2xi32>, memref<?xi32>, memref<?xi32>, memref<4xindex>)
// CHECK: arith.constant 2 : i64
// CHECK: arith.muli
// CHECK: arith.constant -1 : i64
// CHECK: arith.constant 10 : i64
// CHECK: call @spconv_rt_memref_unique_deferred
func.func @transposed(%c: tensor<?x2xi32, #spconv.grid<[5]>>) -> tensor<?x2xi32, #spconv.grid<[10]>> {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x2xi32, #spconv.grid<[5]>>
      -> !spconv.rulebook<#spconv.geom<transposed, kernel = [3], stride = [2], padding = [1], output_padding = [1]>, #spconv.grid<[5]>>, tensor<?x2xi32, #spconv.grid<[10]>>
  return %oc : tensor<?x2xi32, #spconv.grid<[10]>>
}
