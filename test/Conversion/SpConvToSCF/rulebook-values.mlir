// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s

// A rulebook is five values (input and output site counts, the pair arrays
// and the per-offset CSR offsets) and a hash table two (keys and rows); the
// upstream structural conversions carry them through control flow and
// function boundaries.

!coords = tensor<?x2xi32, #spconv.grid<[8]>>
!rb = !spconv.rulebook<#spconv.geom<regular, kernel = [3], stride = [2]>, #spconv.grid<[8]>>

// CHECK-LABEL: func.func @select(
// CHECK-SAME:      %[[P:[a-z0-9]+]]: i1
// CHECK:         %[[A:.*]]:4 = call @spconv_build_regular_k3_s2_p0_d1_g8(
// CHECK:         %[[B:.*]]:4 = call @spconv_build_regular_k3_s2_p0_d1_g8(
// CHECK:         arith.select %[[P]], %{{.*}}, %{{.*}} : index
// CHECK:         arith.select %[[P]], %{{.*}}, %{{.*}} : index
// CHECK:         %[[IN:.*]] = arith.select %[[P]], %[[A]]#1, %[[B]]#1 : memref<?xi32>
// CHECK:         %[[OUT:.*]] = arith.select %[[P]], %[[A]]#2, %[[B]]#2 : memref<?xi32>
// CHECK:         %[[OFF:.*]] = arith.select %[[P]], %[[A]]#3, %[[B]]#3 : memref<4xindex>
// CHECK:         memref.load %[[OFF]]
// CHECK-NOT:     spconv.rulebook_conv
func.func @select(%c: !coords, %d: !coords, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>, %p: i1) -> tensor<?x4xf32> {
  %a, %oa = spconv.build_rulebook %c : !coords -> !rb, tensor<?x2xi32, #spconv.grid<[3]>>
  %b, %ob = spconv.build_rulebook %d : !coords -> !rb, tensor<?x2xi32, #spconv.grid<[3]>>
  %rb = arith.select %p, %a, %b : !rb
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<3x4x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

!coords = tensor<?x2xi32, #spconv.grid<[8]>>
!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[8]>>

// CHECK-LABEL: func.func @if_yield(
// CHECK:         %[[RB:.*]]:5 = scf.if %{{.*}} -> (index, index, memref<?xi32>, memref<?xi32>, memref<4xindex>) {
// CHECK:           %[[A:.*]]:3 = func.call @spconv_build_subm_k3_s1_p1_d1_g8_sorted(
// CHECK:           scf.yield %{{.*}}, %{{.*}}, %[[A]]#0, %[[A]]#1, %[[A]]#2
// CHECK:         } else {
// CHECK:           scf.yield
// CHECK:         }
// CHECK:         memref.load %[[RB]]#4
func.func @if_yield(%c: !coords, %d: !coords, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>, %p: i1) -> tensor<?x4xf32> {
  %rb = scf.if %p -> !rb {
    %a, %oa = spconv.build_rulebook %c : !coords -> !rb, !coords
    scf.yield %a : !rb
  } else {
    %b, %ob = spconv.build_rulebook %d : !coords -> !rb, !coords
    scf.yield %b : !rb
  }
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<3x4x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

!coords = tensor<?x2xi32, #spconv.grid<[8]>>
!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[8]>>

// CHECK-LABEL: func.func @for_carried(
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (index, index, memref<?xi32>, memref<?xi32>, memref<4xindex>)
func.func @for_carried(%c: !coords, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>, %n: index) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %first, %o = spconv.build_rulebook %c : !coords -> !rb, !coords
  %rb = scf.for %i = %c0 to %n step %c1 iter_args(%carried = %first) -> !rb {
    %next, %on = spconv.build_rulebook %c : !coords -> !rb, !coords
    scf.yield %next : !rb
  }
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<3x4x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

!coords = tensor<?x2xi32, #spconv.grid<[8]>>
!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[8]>>

// CHECK-LABEL: func.func private @make(
// CHECK-SAME:      -> (index, index, memref<?xi32>, memref<?xi32>, memref<4xindex>)
// CHECK:         return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : index, index, memref<?xi32>, memref<?xi32>, memref<4xindex>
func.func private @make(%c: !coords) -> !rb {
  %rb, %o = spconv.build_rulebook %c : !coords -> !rb, !coords
  return %rb : !rb
}

// CHECK-LABEL: func.func private @apply(
// CHECK-SAME:      %[[NIN:[a-z0-9]+]]: index, %[[NOUT:[a-z0-9]+]]: index, %{{[a-z0-9]+}}: memref<?xi32>, %{{[a-z0-9]+}}: memref<?xi32>, %{{[a-z0-9]+}}: memref<4xindex>, %{{[a-z0-9]+}}: tensor<?x4xf32>
// The feature rows are checked against the rulebook's input site count.
// CHECK:         arith.cmpi {{.*}}%[[NIN]]
func.func private @apply(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>) -> tensor<?x4xf32> {
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<3x4x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @through_calls(
// CHECK:         %[[RB:.*]]:5 = call @make(%{{.*}}) : (tensor<?x2xi32>) -> (index, index, memref<?xi32>, memref<?xi32>, memref<4xindex>)
// CHECK:         call @apply(%[[RB]]#0, %[[RB]]#1, %[[RB]]#2, %[[RB]]#3, %[[RB]]#4, %{{.*}}, %{{.*}})
func.func @through_calls(%c: !coords, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>) -> tensor<?x4xf32> {
  %rb = func.call @make(%c) : (!coords) -> !rb
  %y = func.call @apply(%rb, %f, %w) : (!rb, tensor<?x4xf32>, tensor<3x4x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[8]>>

// Unstructured control flow.
// CHECK-LABEL: func.func @branches(
// CHECK:         cf.cond_br %{{.*}}, ^bb1(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : index, index, memref<?xi32>, memref<?xi32>, memref<4xindex>)
// CHECK:       ^bb1(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<4xindex>):
func.func @branches(%a: !rb, %b: !rb, %p: i1, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>) -> tensor<?x4xf32> {
  cf.cond_br %p, ^bb1(%a : !rb), ^bb1(%b : !rb)
^bb1(%rb: !rb):
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<3x4x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func private @table(
// CHECK-SAME:      -> (memref<?xi64>, memref<?xi32>)
func.func private @table(%k: tensor<?xi64>) -> !spconv.hash_table {
  %t = spconv.hash_build %k : tensor<?xi64> -> !spconv.hash_table
  return %t : !spconv.hash_table
}

// CHECK-LABEL: func.func @lookup(
// CHECK:         %[[T:.*]]:2 = call @table(
// CHECK:         call @spconv_rt_memref_hash_lookup(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
func.func @lookup(%k: tensor<?xi64>) -> tensor<?xi32> {
  %t = func.call @table(%k) : (tensor<?xi64>) -> !spconv.hash_table
  %r = spconv.hash_lookup %t, %k : !spconv.hash_table, tensor<?xi64> -> tensor<?xi32>
  return %r : tensor<?xi32>
}
