// RUN: spconv-opt %s -spconv-gpu-kernels-to-cpu | FileCheck %s

// Every lane holds a whole tile as a row-major vector: a load reads each
// element at first + r * ld + c (c * ld + r with transpose) through a flat
// view of the buffer; compute multiplies in f32 in k order and rounds to
// C's type, each lane only the elements lane, lane + 32, ... (the others
// keep C's), which are those a store writes;
// iteration arguments of tile type become vectors.
// CHECK-LABEL: func.func private @tile
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<f16> to memref<?xf16>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<256xf16>)
// CHECK:   memref.load %[[FLAT]]
// CHECK:   vector.insert
// CHECK: scf.for {{.*}} -> (vector<256xf16>)
// CHECK: %[[C:.*]] = scf.for {{.*}} -> (vector<256xf16>)
// CHECK: %[[CLANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: scf.for %{{.*}} = %[[CLANE]] to %{{.*}} step %c32{{.*}} iter_args(%{{.*}} = %[[C]]) -> (vector<256xf16>)
// CHECK:   scf.for {{.*}} -> (f32)
// CHECK:     arith.extf %{{.*}} : f16 to f32
// CHECK:     arith.mulf %{{.*}} : f32
// CHECK:     arith.addf %{{.*}} : f32
// CHECK:   arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: scf.for %[[E:.*]] = %[[LANE]] to %{{.*}} step %c32
// CHECK:   vector.extract %{{.*}}[%[[E]]] : f16 from vector<256xf16>
// CHECK:   memref.store
// CHECK-NOT: gpu.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tile(%a: memref<16x16xf16>, %c: memref<16x16xf16>) kernel {
      %c0 = arith.constant 0 : index
      %ta = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "AOp">
      %tb = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 16 : index, transpose} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "BOp">
      %tc = gpu.subgroup_mma_load_matrix %c[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "COp">
      %d = gpu.subgroup_mma_compute %ta, %tb, %tc {b_transpose} : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf16, "COp">
      gpu.subgroup_mma_store_matrix %d, %c[%c0, %c0] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xf16, "COp">, memref<16x16xf16>
      gpu.return
    }
    gpu.func @tf32(%a: memref<16x8xf32>, %b: memref<8x16xf32>, %c: memref<16x16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %ta = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 8 : index} : memref<16x8xf32> -> !gpu.mma_matrix<16x8xf32, "AOp">
      %tb = gpu.subgroup_mma_load_matrix %b[%c0, %c0] {leadDimension = 16 : index} : memref<8x16xf32> -> !gpu.mma_matrix<8x16xf32, "BOp">
      %tc = gpu.subgroup_mma_load_matrix %c[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf32> -> !gpu.mma_matrix<16x16xf32, "COp">
      %d = gpu.subgroup_mma_compute %ta, %tb, %tc : !gpu.mma_matrix<16x8xf32, "AOp">, !gpu.mma_matrix<8x16xf32, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
      gpu.subgroup_mma_store_matrix %d, %c[%c0, %c0] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<16x16xf32>
      gpu.return
    }
  }
}

// tf32 fragments (f32 A and B) enter the product with their 13 low mantissa
// bits cleared, as the tensor cores read them; the f32 accumulator is used
// as it is.
// CHECK-LABEL: func.func private @tf32
// CHECK: scf.for {{.*}} -> (f32)
// CHECK:   %[[A:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:   %[[AT:.*]] = arith.andi %[[A]], %c-8192_i32
// CHECK:   arith.bitcast %[[AT]] : i32 to f32
// CHECK:   %[[B:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:   arith.andi %[[B]], %c-8192_i32
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK-NOT: arith.truncf
// CHECK: return
