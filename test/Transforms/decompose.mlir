// RUN: spconv-opt %s -spconv-decompose -split-input-file | FileCheck %s

// CHECK-LABEL: func @conv
// CHECK-SAME: (%[[C:.*]]: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %[[F:.*]]: tensor<?x16xf32>, %[[W:.*]]: tensor<27x16x32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK: %[[RB:.*]], %[[OC:.*]] = spconv.build_rulebook %[[C]] : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>> -> !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>, tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>
// CHECK: %[[OF:.*]] = spconv.rulebook_conv %[[RB]], %[[F]], %[[W]] bias %[[B]] : {{.*}} -> tensor<?x32xf32>
// CHECK-NOT: spconv.conv
// CHECK: return %[[OC]], %[[OF]]
func.func @conv(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x16xf32>,
                %w: tensor<27x16x32xf32>, %b: tensor<32xf32>)
    -> (tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x32xf32>) {
  %oc, %of = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %c, %f, %w bias %b
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x32xf32>, tensor<32xf32>
      -> tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x32xf32>
  return %oc, %of : tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x32xf32>
}

// -----

// CHECK-LABEL: func @subm_and_transposed
// CHECK: %[[RB:.*]], %{{.*}} = spconv.build_rulebook %{{.*}} : {{.*}} -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[16, 16], batch = 2>>
// CHECK: %[[Y:.*]] = spconv.rulebook_conv %[[RB]]
// CHECK: %[[RT:.*]], %[[OT:.*]] = spconv.build_rulebook %{{.*}} : {{.*}} -> !spconv.rulebook<#spconv.geom<transposed, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[16, 16], batch = 2>>, tensor<?x3xi32, #spconv.grid<[32, 32], batch = 2>>
// CHECK: spconv.rulebook_conv %[[RT]], %[[Y]]
func.func @subm_and_transposed(%c: tensor<?x3xi32, #spconv.grid<[16, 16], batch = 2>>, %f: tensor<?x8xf16>,
                               %w: tensor<9x8x8xf16>, %wt: tensor<4x8x4xf16>) -> tensor<?x4xf16> {
  %s:2 = spconv.conv <subm, kernel = [3, 3]> %c, %f, %w
      : tensor<?x3xi32, #spconv.grid<[16, 16], batch = 2>>, tensor<?x8xf16>, tensor<9x8x8xf16>
      -> tensor<?x3xi32, #spconv.grid<[16, 16], batch = 2>>, tensor<?x8xf16>
  %t:2 = spconv.conv <transposed, kernel = [2, 2], stride = [2, 2]> %s#0, %s#1, %wt
      : tensor<?x3xi32, #spconv.grid<[16, 16], batch = 2>>, tensor<?x8xf16>, tensor<4x8x4xf16>
      -> tensor<?x3xi32, #spconv.grid<[32, 32], batch = 2>>, tensor<?x4xf16>
  return %t#1 : tensor<?x4xf16>
}

// -----

// CHECK-LABEL: func @pool
// CHECK: %[[RB:.*]], %[[OC:.*]] = spconv.build_rulebook %{{.*}} : {{.*}} -> !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>
// CHECK: %[[P:.*]] = spconv.rulebook_pool max %[[RB]], %{{.*}}
// CHECK: return %[[OC]], %[[P]]
func.func @pool(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>)
    -> (tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>) {
  %0:2 = spconv.pool max <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %f
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32> -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>
  return %0#0, %0#1 : tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>
}

// -----

// The encoder/decoder case: the inverse conv reads the rulebook of the
// forward conv whose output sites carry its features; nothing is rebuilt.
// CHECK-LABEL: func @inverse_reuses_forward
// CHECK: %[[RB:.*]], %{{.*}} = spconv.build_rulebook
// CHECK-NOT: spconv.build_rulebook
// CHECK-NOT: spconv.gather_rows
// CHECK: %[[DOWN:.*]] = spconv.rulebook_conv %[[RB]]
// CHECK: %[[UP:.*]] = spconv.rulebook_conv inverse %[[RB]], %[[DOWN]], %{{.*}} bias %{{.*}} : {{.*}} -> tensor<?x4xf32>
// CHECK: return %[[UP]]
func.func @inverse_reuses_forward(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>,
                                  %w: tensor<8x4x16xf32>, %wi: tensor<8x16x4xf32>, %bi: tensor<4xf32>)
    -> tensor<?x4xf32> {
  %d:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<8x4x16xf32>
      -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x16xf32>
  %u = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %d#0, %d#1, %wi bias %bi
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>,
        tensor<?x16xf32>, tensor<8x16x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  return %u : tensor<?x4xf32>
}

// -----

// Source sites from elsewhere may be in any order: the features are first
// gathered onto the forward rulebook's output sites.
// CHECK-LABEL: func @inverse_realigns
// CHECK-SAME: (%[[FINE:.*]]: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %[[COARSE:.*]]: tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, %[[F:.*]]: tensor<?x16xf32>
// CHECK: %[[RB:.*]], %[[OC:.*]] = spconv.build_rulebook %[[FINE]] : {{.*}} -> !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>
// CHECK: %[[SK:.*]] = spconv.linearize %[[COARSE]]
// CHECK: %[[T:.*]] = spconv.hash_build %[[SK]]
// CHECK: %[[OK:.*]] = spconv.linearize %[[OC]]
// CHECK: %[[ROWS:.*]] = spconv.hash_lookup %[[T]], %[[OK]]
// CHECK: %[[AL:.*]] = spconv.gather_rows %[[F]], %[[ROWS]] : tensor<?x16xf32>, tensor<?xi32> -> tensor<?x16xf32>
// CHECK: spconv.rulebook_conv inverse %[[RB]], %[[AL]]
func.func @inverse_realigns(%fine: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %coarse: tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>,
                            %f: tensor<?x16xf32>, %wi: tensor<8x16x4xf32>) -> tensor<?x4xf32> {
  %u = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %fine, %coarse, %f, %wi
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>,
        tensor<?x16xf32>, tensor<8x16x4xf32> -> tensor<?x4xf32>
  return %u : tensor<?x4xf32>
}
