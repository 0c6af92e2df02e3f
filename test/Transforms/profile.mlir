// RUN: spconv-opt %s -spconv-decompose -spconv-share-rulebooks -spconv-profile -split-input-file | FileCheck %s

// Every rulebook op is bracketed by begin(id) / end(id, rows); a shared
// rulebook is built (and timed) once. The labels name op, geometry,
// channels and source line.
// CHECK: module attributes {spconv.profile_labels = ["build_rulebook #spconv.geom<subm, kernel = [3, 3, 3]> on [8, 8, 8] at line 28", "rulebook_conv #spconv.geom<subm, kernel = [3, 3, 3]> 4->4 at line 28", "rulebook_conv #spconv.geom<subm, kernel = [3, 3, 3]> 4->4 at line 31"]}
// CHECK-LABEL: func.func @net
// CHECK: %[[ID0:.*]] = arith.constant 0 : i64
// CHECK: %{{.*}} = call @spconv_rt_profile_begin(%[[ID0]]) : (i64) -> i32
// CHECK: %{{.*}}, %[[OC:.*]] = spconv.build_rulebook
// CHECK: %[[N0:.*]] = tensor.dim %[[OC]]
// CHECK: %[[R0:.*]] = arith.index_cast %[[N0]] : index to i64
// CHECK: %{{.*}} = call @spconv_rt_profile_end(%[[ID0]], %[[R0]]) : (i64, i64) -> i32
// CHECK: %[[ID1:.*]] = arith.constant 1 : i64
// CHECK: call @spconv_rt_profile_begin(%[[ID1]])
// CHECK: %[[Y:.*]] = spconv.rulebook_conv
// CHECK: tensor.dim %[[Y]]
// CHECK: call @spconv_rt_profile_end(%[[ID1]],
// CHECK: arith.constant 2 : i64
// CHECK: call @spconv_rt_profile_begin
// CHECK: spconv.rulebook_conv
// CHECK: call @spconv_rt_profile_end
// CHECK-NOT: spconv_rt_profile_begin
// CHECK: func.func private @spconv_rt_profile_begin(i64) -> i32
// CHECK: func.func private @spconv_rt_profile_end(i64, i64) -> i32
func.func @net(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>, %w: tensor<27x4x4xf32>)
    -> tensor<?x4xf32> {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  %b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %a#1, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  return %b#1 : tensor<?x4xf32>
}

// -----

// A matmul's label is M x K x N, `?` where dynamic: a pointwise conv, and
// its weight gradient (a reduction over the rows).
// CHECK: module attributes {spconv.profile_labels = ["matmul ?x4x8 at line {{[0-9]+}}", "matmul 4x?x8 at line {{[0-9]+}}"]}
func.func @matmuls(%x: tensor<?x4xf32>, %w: tensor<4x8xf32>, %xt: tensor<4x?xf32>,
                   %dy: tensor<?x8xf32>, %y0: tensor<?x8xf32>, %dw0: tensor<4x8xf32>)
    -> (tensor<?x8xf32>, tensor<4x8xf32>) {
  %y = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x8xf32>)
      outs(%y0 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %dw = linalg.matmul ins(%xt, %dy : tensor<4x?xf32>, tensor<?x8xf32>)
      outs(%dw0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %dw : tensor<?x8xf32>, tensor<4x8xf32>
}
