// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s

// The default subm builder computes the site keys (a kernel), sorts them
// carrying their rows (keys below 2^35: batch 2^31 - 1 x 16, one past the
// last for sites outside the grid), finds repeated sites as equal
// neighbours (a kernel lowering the status's repeat row to the later row),
// then merges: one pointer per row of searched offsets (here the single
// row of the 1-D kernel, base -1), started by a binary search per block and
// advanced site by site. The neighbour at offset x - 1 is the key at the
// pointer; pairs are written as in the hash builder (mirrored offset,
// identity centre), after the status's one read-back.
// CHECK-LABEL: func.func @subm_1d
// CHECK: call @spconv_build_subm_k3_s1_p1_d1_g16_sorted(
// CHECK-LABEL: func.func private @spconv_build_subm_k3_s1_p1_d1_g16_sorted
// CHECK-SAME: -> (memref<?xi32>, memref<?xi32>, memref<4xindex>)
// CHECK: %[[STATUS:.*]] = memref.alloc() : memref<4xi64>
// CHECK: } {spconv.kernel = "linearize"}
// CHECK: arith.constant 35 : i64
// CHECK: call @spconv_rt_memref_sort_pairs_bits
// CHECK-NOT: call @spconv_rt_memref_hash_build
// CHECK: scf.parallel
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK: memref.atomic_rmw mins %{{.*}}, %[[STATUS]]
// CHECK: } {spconv.kernel = "find_repeats"}
// CHECK: scf.parallel
// CHECK: arith.constant -1 : i64
// CHECK: scf.while
// CHECK: scf.for
// CHECK: arith.remsi %{{.*}}, %{{.*}} : i64
// CHECK: scf.while
// CHECK-NOT: spconv_ht_find_slot
// CHECK: call @spconv_rt_memref_exclusive_scan_i64_deferred
// CHECK: memref.copy %[[STATUS]]
// CHECK: call @spconv_rt_memref_report_build_error
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: scf.if
// CHECK-COUNT-4: memref.store
// CHECK: } else {
// CHECK-COUNT-2: memref.store
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : memref<?xi32>, memref<?xi32>, memref<4xindex>
func.func @subm_1d(%c: tensor<?x2xi32, #spconv.grid<[16]>>) -> tensor<?x2xi32, #spconv.grid<[16]>> {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x2xi32, #spconv.grid<[16]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x2xi32, #spconv.grid<[16]>>
  return %oc : tensor<?x2xi32, #spconv.grid<[16]>>
}

// -----

// 3x3x3: the 13 offsets below the centre form 5 rows ((dz, dy) = (-1, -1),
// (-1, 0), (-1, 1), (0, -1), and (0, 0) with dx = -1 only), so 5 merge
// pointers, each started by a binary search. On the [4, 12, 11] grid the
// row bases (their smallest key deltas) are -132 - 11 - 1 = -144, -133,
// -122, -12 and -1.
// CHECK-LABEL: func.func private @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g4x12x11_sorted
// CHECK: scf.parallel
// CHECK: arith.constant -144 : i64
// CHECK: arith.constant -133 : i64
// CHECK: arith.constant -122 : i64
// CHECK: arith.constant -12 : i64
// CHECK: arith.constant -1 : i64
// CHECK: scf.for {{.*}} -> (index, index, index, index, index, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)
func.func @subm_3d(%c: tensor<?x4xi32, #spconv.grid<[4, 12, 11]>>) -> tensor<?x4xi32, #spconv.grid<[4, 12, 11]>> {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x4xi32, #spconv.grid<[4, 12, 11]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[4, 12, 11]>>, tensor<?x4xi32, #spconv.grid<[4, 12, 11]>>
  return %oc : tensor<?x4xi32, #spconv.grid<[4, 12, 11]>>
}
