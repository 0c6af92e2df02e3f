// RUN: spconv-opt %s -canonicalize -split-input-file | FileCheck %s
// RUN: spconv-opt %s -cse -split-input-file | FileCheck %s --check-prefix=CSE

// A subm conv's output sites are its input sites: later layers read the input
// coordinates directly.
// CHECK-LABEL: func @subm_forwards_coordinates
// CHECK-SAME: (%[[C:.*]]: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
// CHECK: %{{.*}}, %[[F:.*]] = spconv.conv <subm, kernel = [3, 3, 3]>
// CHECK: return %[[C]], %[[F]]
func.func @subm_forwards_coordinates(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>,
                                     %w: tensor<27x4x4xf32>)
    -> (tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>) {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  return %oc, %of : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func @subm_rulebook_forwards_coordinates
// CHECK-SAME: (%[[C:.*]]: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
// CHECK: return %[[C]]
func.func @subm_rulebook_forwards_coordinates(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>)
    -> (tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>) {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  return %oc, %rb : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
}

// -----

// Regular convs sort their outputs by key: their coordinates are new values.
// CHECK-LABEL: func @regular_keeps_coordinates
// CHECK: %{{.*}}, %[[OC:.*]] = spconv.build_rulebook
// CHECK: return %[[OC]]
func.func @regular_keeps_coordinates(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>)
    -> (tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>) {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
      -> !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>
  return %oc, %rb : tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>
}

// -----

// A 1x1x1 subm conv is a matmul with the single weight slice.
// CHECK-LABEL: func @pointwise_subm_is_matmul
// CHECK-SAME: (%[[C:.*]]: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %[[F:.*]]: tensor<?x16xf32>, %[[W:.*]]: tensor<1x16x32xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[W2:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0, 1], [2]] : tensor<1x16x32xf32> into tensor<16x32xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[F]], %[[C0]]
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x32xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<?x32xf32>)
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[F]], %[[W2]] : tensor<?x16xf32>, tensor<16x32xf32>) outs(%[[INIT]] : tensor<?x32xf32>)
// CHECK-NOT: spconv.conv
// CHECK: return %[[C]], %[[MM]]
func.func @pointwise_subm_is_matmul(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf32>,
                                    %w: tensor<1x16x32xf32>)
    -> (tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x32xf32>) {
  %oc, %of = spconv.conv <subm, kernel = [1, 1, 1]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>, tensor<1x16x32xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x32xf32>
  return %oc, %of : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x32xf32>
}

// -----

// With a bias, the accumulator starts from the broadcast bias.
// CHECK-LABEL: func @pointwise_subm_with_bias
// CHECK-SAME: %[[F:[^:]*]]: tensor<7x16xf16>, %[[W:.*]]: tensor<1x16x8xf16>, %[[B:.*]]: tensor<8xf16>
// CHECK: %[[W2:.*]] = tensor.collapse_shape %[[W]]
// CHECK: %[[E:.*]] = tensor.empty() : tensor<7x8xf16>
// CHECK: %[[INIT:.*]] = linalg.broadcast ins(%[[B]] : tensor<8xf16>) outs(%[[E]] : tensor<7x8xf16>) dimensions = [0]
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[F]], %[[W2]] : tensor<7x16xf16>, tensor<16x8xf16>) outs(%[[INIT]] : tensor<7x8xf16>)
// CHECK: return %[[MM]]
func.func @pointwise_subm_with_bias(%c: tensor<7x3xi32, #spconv.grid<[8, 8]>>, %f: tensor<7x16xf16>,
                                    %w: tensor<1x16x8xf16>, %b: tensor<8xf16>) -> tensor<7x8xf16> {
  %oc, %of = spconv.conv <subm, kernel = [1, 1]> %c, %f, %w bias %b
      : tensor<7x3xi32, #spconv.grid<[8, 8]>>, tensor<7x16xf16>, tensor<1x16x8xf16>, tensor<8xf16>
      -> tensor<7x3xi32, #spconv.grid<[8, 8]>>, tensor<7x8xf16>
  return %of : tensor<7x8xf16>
}

// -----

// Neither a larger subm kernel nor a pointwise regular conv (whose outputs
// are re-sorted) is a plain matmul.
// CHECK-LABEL: func @not_pointwise_subm
// CHECK-NOT: linalg.matmul
// CHECK: spconv.conv <subm, kernel = [3, 1, 1]>
// CHECK: spconv.conv <regular, kernel = [1, 1, 1]>
// CHECK-NOT: linalg.matmul
func.func @not_pointwise_subm(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>,
                              %w3: tensor<3x4x4xf32>, %w1: tensor<1x4x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0:2 = spconv.conv <subm, kernel = [3, 1, 1]> %c, %f, %w3
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<3x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  %1:2 = spconv.conv <regular, kernel = [1, 1, 1]> %c, %f, %w1
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<1x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  return %0#1, %1#1 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Rulebook builds are pure: the same coordinates with the same geometry are
// one rulebook, another geometry is another.
// CSE-LABEL: func @rulebooks_are_shared
// CSE: %[[RB:.*]], %{{.*}} = spconv.build_rulebook %{{.*}} {{.*}}<subm, kernel = [3, 3, 3]>
// CSE: %[[OTHER:.*]], %{{.*}} = spconv.build_rulebook %{{.*}} {{.*}}<subm, kernel = [3, 3, 3], dilation = [2, 2, 2]>
// CSE-NOT: spconv.build_rulebook
// CSE: spconv.rulebook_conv %[[RB]]
// CSE: spconv.rulebook_conv %[[RB]]
// CSE: spconv.rulebook_conv %[[OTHER]]
func.func @rulebooks_are_shared(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>,
                                %w: tensor<27x4x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %rb0, %c0 = spconv.build_rulebook %c
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  %rb1, %c1 = spconv.build_rulebook %c
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  %rb2, %c2 = spconv.build_rulebook %c
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3], dilation = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  %y0 = spconv.rulebook_conv %rb0, %f, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32> -> tensor<?x4xf32>
  %y1 = spconv.rulebook_conv %rb1, %y0, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32> -> tensor<?x4xf32>
  %y2 = spconv.rulebook_conv %rb2, %y1, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3], dilation = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32> -> tensor<?x4xf32>
  return %y0, %y1, %y2 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}
