// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s

// The default subm builder computes the site keys (a kernel), moves them
// into the grid padded by the kernel's reach (16 + 2 = 18 cells; a site
// outside the grid keys one past the last, (2^31 - 1) x 18), so that a
// neighbour's key is the site's plus a constant that never wraps into
// another row, and sorts them carrying their rows (keys below 2^36). It
// finds repeated sites as equal neighbours (a kernel lowering the status's
// repeat row to the later row), then merges once: one pointer per row of
// searched offsets (here the single row of the 1-D kernel, base -1),
// started by a binary search per block and advanced site by site, with no
// bounds check. The neighbour at offset x - 1 is the key at the pointer;
// its row, or -1, goes to a transient buffer (one i32 per site and searched
// offset) as the pairs are counted. After the status's one read-back, the
// writing pass streams that buffer (no second merge) and writes the pairs
// as the hash builder does (mirrored offset, identity centre).
// CHECK-LABEL: func.func @subm_1d
// CHECK: call @spconv_build_subm_k3_s1_p1_d1_g16_sorted(
// CHECK-LABEL: func.func private @spconv_build_subm_k3_s1_p1_d1_g16_sorted
// CHECK-SAME: -> (memref<?xi32>, memref<?xi32>, memref<4xindex>)
// CHECK: %[[STATUS:.*]] = memref.alloc() : memref<4xi64>
// CHECK: } {spconv.kernel = "linearize"}
// CHECK: arith.remui %{{.*}}, %c16_i64
// CHECK: arith.constant 38654705646 : i64
// CHECK: } {spconv.kernel = "load_keys"}
// CHECK: arith.constant 36 : i64
// CHECK: call @spconv_rt_memref_sort_pairs_bits
// CHECK-NOT: call @spconv_rt_memref_hash_build
// CHECK: scf.parallel
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK: memref.atomic_rmw mins %{{.*}}, %[[STATUS]]
// CHECK: } {spconv.kernel = "find_repeats"}
// CHECK: %[[NEIGHBOURS:.*]] = memref.alloc(%{{.*}}) : memref<?xi32>
// CHECK: scf.parallel
// CHECK: arith.constant -1 : i64
// CHECK: scf.while
// CHECK: scf.for
// CHECK-NOT: arith.remsi
// CHECK: scf.while
// CHECK: %[[ROW:.*]] = memref.load %{{.*}} : memref<?xi32>
// CHECK: %[[NEIGHBOUR:.*]] = arith.select %{{.*}}, %[[ROW]], %c-1_i32 : i32
// CHECK: memref.store %[[NEIGHBOUR]], %[[NEIGHBOURS]]
// CHECK: } {spconv.kernel = "count_pairs"}
// CHECK-NOT: spconv_ht_find_slot
// CHECK: call @spconv_rt_memref_exclusive_scan_i64_deferred
// CHECK: memref.copy %[[STATUS]]
// CHECK: call @spconv_rt_memref_report_build_error
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK-NOT: scf.while
// CHECK: %[[FOUND_ROW:.*]] = memref.load %[[NEIGHBOURS]]
// CHECK: %[[FOUND:.*]] = arith.cmpi sge, %[[FOUND_ROW]]
// CHECK: scf.if %[[FOUND]]
// CHECK-COUNT-4: memref.store
// CHECK: } else {
// CHECK-COUNT-2: memref.store
// CHECK: } {spconv.kernel = "write_pairs"}
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
// pointers, each started by a binary search. On the [4, 12, 11] grid,
// padded to [6, 14, 13], the row bases (their smallest key deltas) are
// -182 - 13 - 1 = -196, -183, -170, -14 and -1.
// CHECK-LABEL: func.func private @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g4x12x11_sorted
// CHECK: scf.parallel
// CHECK: arith.constant -196 : i64
// CHECK: arith.constant -183 : i64
// CHECK: arith.constant -170 : i64
// CHECK: arith.constant -14 : i64
// CHECK: arith.constant -1 : i64
// CHECK: scf.for {{.*}} -> (index, index, index, index, index, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)
func.func @subm_3d(%c: tensor<?x4xi32, #spconv.grid<[4, 12, 11]>>) -> tensor<?x4xi32, #spconv.grid<[4, 12, 11]>> {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x4xi32, #spconv.grid<[4, 12, 11]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[4, 12, 11]>>, tensor<?x4xi32, #spconv.grid<[4, 12, 11]>>
  return %oc : tensor<?x4xi32, #spconv.grid<[4, 12, 11]>>
}

// -----

// A grid whose padded keys would overflow int64 (the dynamic batch's bound,
// 2, times the padded volume 2147483649^2): the keys stay the grid's (63
// bits), and each neighbour is checked against the site's coordinates,
// decoded from its key.
// CHECK-LABEL: func.func private @spconv_build_subm_k3x3_s1x1_p1x1_d1x1_g2147483647x2147483647_sorted
// CHECK-NOT: arith.remui
// CHECK: } {spconv.kernel = "load_keys"}
// CHECK: arith.constant 63 : i64
// CHECK: call @spconv_rt_memref_sort_pairs_bits
// CHECK: scf.for
// CHECK: arith.remsi %{{.*}}, %c2147483647_i64
// CHECK: arith.cmpi slt, %{{.*}}, %c2147483647_i64
// CHECK: } {spconv.kernel = "count_pairs"}
func.func @subm_unpadded(%c: tensor<?x3xi32, #spconv.grid<[2147483647, 2147483647]>>) -> tensor<?x3xi32, #spconv.grid<[2147483647, 2147483647]>> {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x3xi32, #spconv.grid<[2147483647, 2147483647]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[2147483647, 2147483647]>>, tensor<?x3xi32, #spconv.grid<[2147483647, 2147483647]>>
  return %oc : tensor<?x3xi32, #spconv.grid<[2147483647, 2147483647]>>
}
