// RUN: spconv-opt %s -split-input-file -spconv-gpu-parallel-dims-first | FileCheck %s

// A sum over rows (a bias gradient) reduces over the outer dimension: its
// iterators are permuted so that the channels come first, and the
// parallel loops that follow become one kernel, not one per row.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @column_sum
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}} : memref<?x24xf32>) outs(%{{.*}} : memref<24xf32>)
// CHECK: arith.addf
func.func @column_sum(%x: memref<?x24xf32>, %acc: memref<24xf32>) {
  linalg.reduce ins(%x : memref<?x24xf32>) outs(%acc : memref<24xf32>) dimensions = [0]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Reductions between parallel dimensions move inward, each group keeping
// its order; ops whose parallel dimensions lead (a matmul, a row sum) stay
// as they are, named ops too.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @mixed
// CHECK: linalg.generic {indexing_maps = [#[[$A]], #[[$B]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: linalg.matmul
// CHECK: linalg.reduce
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @mixed(%x: memref<4x5x6xf32>, %y: memref<5x6xf32>, %a: memref<3x4xf32>,
                 %b: memref<4x5xf32>, %c: memref<3x5xf32>, %r: memref<3xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%x : memref<4x5x6xf32>) outs(%y : memref<5x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
  }
  linalg.matmul ins(%a, %b : memref<3x4xf32>, memref<4x5xf32>) outs(%c : memref<3x5xf32>)
  linalg.reduce ins(%a : memref<3x4xf32>) outs(%r : memref<3xf32>) dimensions = [1]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  return
}
