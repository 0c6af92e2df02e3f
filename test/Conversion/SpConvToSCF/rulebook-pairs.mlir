// spconv.rulebook_pairs: the rulebook's buffers as tensors, the offsets
// widened to i64; spconv.rulebook_from_pairs: the pairs checked on the host,
// then the rulebook's five values. On the GPU target the host reads the
// offsets through one copy and kernels check the rows on the device.
// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash" -split-input-file | FileCheck %s --check-prefix=GPU

!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// CHECK-LABEL: func.func @pairs
// CHECK: %[[OFF:.*]] = memref.alloc() : memref<28xi64>
// CHECK: scf.for
// CHECK: arith.index_cast {{.*}} : index to i64
// CHECK: memref.store {{.*}}, %[[OFF]]
// CHECK: memref.subview
// CHECK: bufferization.to_tensor {{.*}} : memref<?xi32> to tensor<?xi32>
// CHECK: bufferization.to_tensor {{.*}} : memref<?xi32> to tensor<?xi32>
// CHECK: bufferization.to_tensor %[[OFF]] {{.*}} : memref<28xi64> to tensor<28xi64>
// GPU-LABEL: func.func @pairs
// GPU: bufferization.to_tensor
func.func @pairs(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>) -> (tensor<?xi32>, tensor<?xi32>, tensor<28xi64>) {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>> -> !subm, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  %in, %out, %off = spconv.rulebook_pairs %rb : !subm -> tensor<?xi32>, tensor<?xi32>, tensor<28xi64>
  return %in, %out, %off : tensor<?xi32>, tensor<?xi32>, tensor<28xi64>
}

// -----

!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// The offsets' first value, then their order (a scan that reports the
// first drop), then their total against the row tensors; then every row
// against its side's sites; a rulebook that failed a check has no pairs.
// CHECK-LABEL: func.func @from_pairs
// CHECK-SAME: (%[[IN:.*]]: tensor<?xi32>, %[[OUT:.*]]: tensor<?xi32>, %[[OFFT:.*]]: tensor<28xi64>
// CHECK-DAG: %[[INB:.*]] = bufferization.to_buffer %[[IN]]
// CHECK-DAG: %[[OUTB:.*]] = bufferization.to_buffer %[[OUT]]
// CHECK-DAG: %[[OFF:.*]] = bufferization.to_buffer %[[OFFT]]
// CHECK: memref.load %[[OFF]]
// CHECK: func.call @spconv_rt_report_size_mismatch(%c23_i64
// CHECK: scf.for
// CHECK: arith.cmpi slt, {{.*}} : i64
// CHECK: func.call @spconv_rt_report_size_mismatch(%c24_i64
// CHECK: arith.minsi
// CHECK: func.call @spconv_rt_report_size_mismatch(%c25_i64
// CHECK: scf.for
// CHECK: memref.load %[[INB]]
// CHECK: func.call @spconv_rt_report_bad_index
// CHECK: scf.for
// CHECK: memref.load %[[OUTB]]
// CHECK: func.call @spconv_rt_report_bad_index
// CHECK: %[[KEPT:.*]] = memref.alloc() : memref<28xindex>
// CHECK: arith.select
// CHECK: memref.store {{.*}}, %[[KEPT]]
// The conv reads the checked offsets.
// CHECK: memref.load %[[KEPT]]
// GPU-LABEL: func.func @from_pairs
// GPU-DAG: %[[INB:.*]] = bufferization.to_buffer %arg0
// GPU-DAG: %[[OFF:.*]] = bufferization.to_buffer %arg2
// GPU: %[[HOST:.*]] = memref.alloc() : memref<28xi64>
// GPU: memref.copy %[[OFF]], %[[HOST]]
// GPU-NOT: memref.load %[[OFF]]
// GPU: memref.load %[[HOST]]
// GPU: func.call @spconv_rt_report_size_mismatch(%c23_i64
// GPU-NOT: memref.load %[[OFF]]
// GPU: func.call @spconv_rt_report_size_mismatch(%c25_i64
// The rows are checked by a kernel: the first bad position is an atomic
// minimum, not a host scan.
// GPU: scf.parallel
// GPU: memref.load %[[INB]]
// GPU: memref.atomic_rmw mins
// GPU: } {spconv.kernel = "find_bad_index"}
// GPU: memref.load %[[HOST]]
func.func @from_pairs(%in: tensor<?xi32>, %out: tensor<?xi32>, %off: tensor<28xi64>, %x: tensor<?x3xf32>, %w: tensor<27x3x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %rb = spconv.rulebook_from_pairs %in, %out, %off, %n, %n : tensor<?xi32>, tensor<?xi32>, tensor<28xi64> -> !subm
  %y = spconv.rulebook_conv %rb, %x, %w : !subm, tensor<?x3xf32>, tensor<27x3x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
