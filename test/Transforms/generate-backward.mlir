// RUN: spconv-opt %s -spconv-generate-backward -split-input-file | FileCheck %s

!g = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
#rows = affine_map<(d0, d1) -> (d0, d1)>

// A conv with bias and a ReLU: the backward function takes the forward
// arguments and a cotangent for the features result (none for the
// coordinates), and returns the results and one gradient per float tensor
// argument. The ReLU passes dy where its input is above 0; the conv reads
// its forward rulebook backwards with the weight transposed, the weight
// gradient is rulebook_weight_grad over the same rulebook, the bias
// gradient a column sum.
// CHECK-LABEL: func.func @layer(
// CHECK-LABEL: func.func @layer_backward(
// CHECK-SAME: %[[C:[^:]*]]: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %[[X:[^:]*]]: tensor<?x4xf32>, %[[W:[^:]*]]: tensor<27x4x8xf32>, %[[B:[^:]*]]: tensor<8xf32>, %[[DY:[^:]*]]: tensor<?x8xf32>)
// CHECK-SAME: -> (tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>, tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32>)
// CHECK: %[[RB:.*]], %{{.*}} = spconv.build_rulebook %[[C]]
// CHECK: %[[Y:.*]] = spconv.rulebook_conv %[[RB]], %[[X]], %[[W]] bias %[[B]]
// CHECK: %[[RELU:.*]] = linalg.generic
// CHECK: %[[DR:.*]] = linalg.generic {{.*}} ins(%[[Y]], %[[DY]] : tensor<?x8xf32>, tensor<?x8xf32>)
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: %[[WT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<27x8x1x4xf32> into tensor<27x8x4xf32>
// CHECK: %[[DX:.*]] = spconv.rulebook_conv inverse %[[RB]], %[[DR]], %[[WT]] : {{.*}} -> tensor<?x4xf32>
// CHECK: %[[DW:.*]] = spconv.rulebook_weight_grad %[[RB]], %[[X]], %[[DR]] : {{.*}} -> tensor<27x4x8xf32>
// CHECK: %[[DB:.*]] = linalg.reduce ins(%[[DR]] : tensor<?x8xf32>) outs(%{{.*}} : tensor<8xf32>) dimensions = [0]
// CHECK: return %[[C]], %[[RELU]], %[[DX]], %[[DW]], %[[DB]]
func.func @layer(%c: !g, %x: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %b: tensor<8xf32>)
    -> (!g, tensor<?x8xf32>) attributes {spconv.backward = @layer_backward} {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %y = spconv.rulebook_conv %rb, %x, %w bias %b
      : !subm, tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?x8xf32>
  %init = tensor.empty(%n) : tensor<?x8xf32>
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<?x8xf32>) outs(%init : tensor<?x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  return %c, %r : !g, tensor<?x8xf32>
}

// -----

// A grouped inverse conv, a concat, a matmul and a scalar loss: the loss (a
// sum) passes each element twice its value times the cotangent; the matmul's
// operands get matmuls with the other operand transposed; the concat passes
// each operand its slice; the inverse conv's data gradient reads the
// rulebook forwards with each group's block transposed, its weight gradient
// reads it backwards. A declared backward function is defined in place.
// CHECK-LABEL: func.func private @net_backward(
// CHECK-SAME: %{{.*}}: tensor<f32>) -> (tensor<f32>, tensor<?x8xf32>, tensor<8x4x4xf32>, tensor<?x4xf32>, tensor<8x3xf32>)
// CHECK: spconv.rulebook_conv inverse groups 2
// CHECK: %[[CAT:.*]] = tensor.concat
// CHECK: linalg.matmul ins(%[[CAT]], %[[M:[^ ]*]] : tensor<?x8xf32>, tensor<8x3xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK: %[[DLOGITS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK: %[[DL:.*]] = tensor.expand_shape %[[DLOGITS]]
// CHECK: %[[MT:.*]] = linalg.transpose ins(%[[M]] : tensor<8x3xf32>) outs(%{{.*}} : tensor<3x8xf32>) permutation = [1, 0]
// CHECK: %[[DCAT:.*]] = linalg.matmul ins(%[[DL]], %[[MT]] : tensor<?x3xf32>, tensor<3x8xf32>)
// CHECK: %[[CATT:.*]] = linalg.transpose ins(%[[CAT]] : tensor<?x8xf32>) outs(%{{.*}} : tensor<8x?xf32>) permutation = [1, 0]
// CHECK: linalg.matmul ins(%[[CATT]], %[[DL]] : tensor<8x?xf32>, tensor<?x3xf32>) outs(%{{.*}} : tensor<8x3xf32>)
// CHECK: tensor.extract_slice %[[DCAT]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK: tensor.extract_slice %[[DCAT]][0, 4] [%{{.*}}, 4] [1, 1]
// CHECK: tensor.collapse_shape %{{.*}} : tensor<8x2x2x4xf32> into tensor<8x2x8xf32>
// CHECK: spconv.rulebook_conv groups 2 %{{.*}} -> tensor<?x8xf32>
// CHECK: spconv.rulebook_weight_grad inverse groups 2
// CHECK: return
!f = tensor<?x4xi32, #spconv.grid<[8, 6, 4]>>
!c = tensor<?x4xi32, #spconv.grid<[4, 3, 2]>>
!pool = !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 6, 4]>>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#all = affine_map<(d0) -> (d0)>
#none = affine_map<(d0) -> ()>
func.func private @net_backward(!f, tensor<?x8xf32>, tensor<8x4x4xf32>, tensor<?x4xf32>, tensor<8x3xf32>, tensor<f32>)
    -> (tensor<f32>, tensor<?x8xf32>, tensor<8x4x4xf32>, tensor<?x4xf32>, tensor<8x3xf32>)
func.func @net(%fine: !f, %y: tensor<?x8xf32>, %w: tensor<8x4x4xf32>, %skip: tensor<?x4xf32>,
               %m: tensor<8x3xf32>) -> tensor<f32> attributes {spconv.backward = @net_backward} {
  %rb, %coarse = spconv.build_rulebook %fine : !f -> !pool, !c
  %up = spconv.rulebook_conv inverse groups 2 %rb, %y, %w
      : !pool, tensor<?x8xf32>, tensor<8x4x4xf32> -> tensor<?x4xf32>
  %cat = tensor.concat dim(1) %up, %skip : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %cat, %c0 : tensor<?x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %logits = linalg.matmul ins(%cat, %m : tensor<?x8xf32>, tensor<8x3xf32>) outs(%z : tensor<?x3xf32>) -> tensor<?x3xf32>
  %flat = tensor.collapse_shape %logits [[0, 1]] : tensor<?x3xf32> into tensor<?xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction"]}
      ins(%flat : tensor<?xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A bias whose extent is dynamic: its gradient is the column sum into the
// static width of the output's adjoint, cast to the bias type (found by
// the fuzzer: a reduction into tensor<?xf32> does not verify).
// CHECK-LABEL: func.func @dynamic_bias_backward(
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%{{.*}} : tensor<?x8xf32>) outs(%{{.*}} : tensor<8xf32>) dimensions = [0]
// CHECK: %[[DB:.*]] = tensor.cast %[[SUM]] : tensor<8xf32> to tensor<?xf32>
// CHECK: return {{.*}}, %[[DB]] :
!g = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @dynamic_bias(%c: !g, %x: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %b: tensor<?xf32>)
    -> tensor<?x8xf32> attributes {spconv.backward = @dynamic_bias_backward} {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %y = spconv.rulebook_conv %rb, %x, %w bias %b
      : !subm, tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<?xf32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Declared without the forward results, the backward function returns the
// gradients only and does not compute the conv's output, which they do not
// read; the rulebook, which they do, stays.
// CHECK-LABEL: func.func private @grads_only(
// CHECK-SAME: -> (tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32>)
// CHECK: %[[RB:.*]], %{{.*}} = spconv.build_rulebook
// CHECK-NOT: spconv.rulebook_conv %[[RB]]
// CHECK: %[[DX:.*]] = spconv.rulebook_conv inverse %[[RB]]
// CHECK: %[[DW:.*]] = spconv.rulebook_weight_grad %[[RB]]
// CHECK: %[[DB:.*]] = linalg.reduce
// CHECK: return %[[DX]], %[[DW]], %[[DB]] : tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32>
!g = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @conv(%c: !g, %x: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %b: tensor<8xf32>)
    -> tensor<?x8xf32> attributes {spconv.backward = @grads_only} {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %y = spconv.rulebook_conv %rb, %x, %w bias %b
      : !subm, tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
func.func private @grads_only(!g, tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32>, tensor<?x8xf32>)
    -> (tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32>)
