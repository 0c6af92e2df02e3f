// The kernels as spconv-to-cuda outlines them (printed after
// spconv-parallel-loops-to-gpu), and the end of the pipeline: one
// gpu.binary holding PTX for the requested chip.
// RUN: spconv-opt %s --spconv-to-cuda="format=isa" -mlir-print-ir-after=spconv-parallel-loops-to-gpu -o %t.mlir 2>&1 | FileCheck %s
// RUN: FileCheck %s --input-file=%t.mlir --check-prefix=BINARY
// RUN: spconv-opt %s --spconv-to-cuda="format=isa max-unrolled-offsets=125" -mlir-print-ir-after=spconv-parallel-loops-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNROLLED
// RUN: spconv-opt %s --spconv-to-cuda="format=isa chip=sm_90 features=+ptx80" | FileCheck %s --check-prefix=SM90
// RUN: spconv-opt %s --spconv-to-cuda="format=isa" -mlir-print-ir-after=spconv-gpu-stream-order -o /dev/null 2>&1 | FileCheck %s --check-prefix=STREAM

// The host code on one stream: a builder (inlined) computes its keys, table,
// counts and scan on the device, the runtime's CUDA primitives in stream
// order, and waits once, for the read-back of its status (bad and repeated
// sites, the pair total, a size the host needs); an error report, only on
// the error path, copies what it names itself. The conv's table and tile
// schedule (sorted on the stream) are built once for the two layers sharing
// the fine rulebook, which run back to back, their features and tables in
// device memory, with no wait between them. A strided builder reads back a
// second size, its number of output sites.
// STREAM-LABEL: func.func @net
// STREAM: %[[T0:.*]] = gpu.wait async
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_init_status
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_linearize
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: call @spconv_rt_cuda_memref_hash_build_deferred
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: call @spconv_rt_cuda_memref_exclusive_scan_i64_deferred
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: %[[READ:.*]] = gpu.memcpy async [%{{.*}}] %{{.*}}, %{{.*}} : memref<4xi64>, memref<4xi64>
// STREAM-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[READ]])
// STREAM: scf.if
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: func.call @spconv_rt_cuda_memref_report_build_error
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: _write_pairs
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: _offsets
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.alloc async [%{{.*}}] (%{{.*}}) : memref<?x4xf32>
// STREAM: gpu.alloc async [%{{.*}}] (%{{.*}}) : memref<?x27xi32>
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: call @spconv_rt_cuda_memref_sort_pairs_bits
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_conv_f32_4x4
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM-NOT: host_shared
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_conv_f32_4x4
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// The strided builder: two read-backs, the pair total and the output sites,
// whose coordinates a kernel writes.
// STREAM: _linearize
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.memcpy async
// STREAM-NEXT: call @spconv_rt_cuda_stream_synchronize
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: call @spconv_rt_cuda_memref_unique_deferred
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.memcpy async
// STREAM-NEXT: call @spconv_rt_cuda_stream_synchronize
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: _delinearize
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_conv_f32_4x8
// The coarse subm builder waits once; then nothing until the return.
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.memcpy async
// STREAM-NEXT: call @spconv_rt_cuda_stream_synchronize
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_conv_f32_8x8
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: call @spconv_rt_cuda_stream_synchronize
// STREAM-NEXT: return

// Two subm layers on one grid share a rulebook; a strided layer and a subm
// layer on the coarse grid have builders of their own. Each layer fills its
// neighbour table and launches its tiled conv kernel once (no loop over
// offsets on the host); the two 4 -> 4 layers share one kernel.
// CHECK-LABEL: func.func @net
// CHECK: call @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16(
// CHECK-NOT: scf.for
// CHECK: gpu.launch_func @spconv_kernels::@spconv_neighbour_table_init blocks
// CHECK: gpu.launch_func @spconv_kernels::@spconv_neighbour_table blocks
// CHECK: gpu.launch_func @spconv_kernels::@spconv_conv_f32_4x4 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c64,
// CHECK-NOT: scf.for
// CHECK: gpu.launch_func @spconv_kernels::@spconv_conv_f32_4x4 blocks
// CHECK: call @spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16(
// CHECK: gpu.launch_func @spconv_kernels::@spconv_conv_f32_4x8 blocks
// CHECK: call @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g8x8x8(
// CHECK: gpu.launch_func @spconv_kernels::@spconv_conv_f32_8x8 blocks
// CHECK-NOT: call @spconv_build_

// The builders launch their kernels: count, then write the pairs.
// CHECK-LABEL: func.func private @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16
// CHECK: gpu.launch_func @spconv_kernels::@spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_count_pairs
// CHECK: gpu.launch_func @spconv_kernels::@spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_write_pairs

// The kernel module: three geometries, two kernels each, named after them.
// In the subm count kernel the 13 offsets below the centre are a loop (the
// GPU's default max-unrolled-offsets=0: offsets from a table, one inline
// probe, few registers) and the grid extent is a constant; with
// max-unrolled-offsets=125 they are unrolled (13 inline probes, no loop
// over offsets).
// The tiled conv kernels come last, each with its workgroup tiles.
// CHECK-LABEL: gpu.module @spconv_kernels
// CHECK: gpu.func @spconv_neighbour_table_init(
// CHECK: gpu.func @spconv_neighbour_table(
// CHECK: gpu.func @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_count_pairs(
// CHECK: arith.constant 16 : i64
// CHECK: gpu.thread_id x
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %c0 to %c13 step %c1
// CHECK: call @spconv_ht_find_slot
// CHECK-NOT: call @spconv_ht_find_slot
// CHECK: gpu.return
// UNROLLED: gpu.func @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_count_pairs(
// UNROLLED: gpu.thread_id x
// UNROLLED: scf.for
// UNROLLED: scf.for
// UNROLLED-COUNT-13: call @spconv_ht_find_slot
// UNROLLED-NOT: scf.for
// UNROLLED-NOT: call @spconv_ht_find_slot
// UNROLLED: gpu.return
// CHECK: gpu.func @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_write_pairs(
// CHECK: gpu.func @spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16_count_pairs(
// CHECK: gpu.func @spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16_write_pairs(
// CHECK: gpu.func @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g8x8x8_count_pairs(
// CHECK: gpu.func @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g8x8x8_write_pairs(
// CHECK: gpu.func @spconv_conv_f32_4x4({{.*}}) workgroup({{.*}}#gpu.address_space<workgroup>>{{.*}}) kernel attributes {spconv.tile = {cols = 4 : i64, {{.*}}threads = 64 : i64}}
// CHECK: gpu.barrier
// CHECK: gpu.func @spconv_conv_f32_4x8(
// CHECK: gpu.func @spconv_conv_f32_8x8(
// CHECK-NOT: gpu.func
// CHECK: func.func private @spconv_ht_find_slot

// In LLVM: one stream for the whole function (the runtime's thread
// stream), device memory allocated on it, every launch on it.
// BINARY: llvm.func @net
// BINARY: %[[S:.*]] = llvm.call @mgpuStreamCreate()
// BINARY-NOT: mgpuStreamCreate
// BINARY: llvm.call @mgpuMemAlloc(%{{.*}}, %[[S]], %{{.*}})
// The runtime's CUDA primitives run on that stream too: the hash build
// needs no wait before it.
// BINARY-NOT: spconv_rt_cuda_stream_synchronize
// BINARY: llvm.call @spconv_rt_cuda_memref_hash_build_deferred(
// BINARY: gpu.launch_func <%[[S]] : !llvm.ptr> @spconv_kernels::@spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_count_pairs
// The build's read-back is a copy on that stream, then the one wait.
// BINARY: llvm.call @mgpuMemcpy(%{{.*}}, %{{.*}}, %{{.*}}, %[[S]])
// BINARY-NEXT: llvm.call @spconv_rt_cuda_stream_synchronize(%[[S]])
// BINARY-NOT: mgpuStreamCreate
// BINARY: gpu.launch_func <%[[S]] : !llvm.ptr> @spconv_kernels::@spconv_conv_f32_4x4
// BINARY-NOT: mgpuStreamCreate
// BINARY-NOT: mgpuStreamSynchronize
// BINARY: llvm.return
// BINARY: gpu.binary @spconv_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// BINARY-SAME: .target sm_80
// BINARY-SAME: .entry spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_count_pairs
// The kernel module's data layout keeps 64-bit keys whole (one ld.global.b64,
// not two b32 loads):
// BINARY-SAME: ld.global.b64
// SM90: chip = "sm_90"
// SM90-SAME: .target sm_90

func.func @net(%c: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>, %f: tensor<?x4xf32>,
               %w1: tensor<27x4x4xf32>, %w2: tensor<27x4x4xf32>,
               %wd: tensor<8x4x8xf32>, %w3: tensor<27x8x8xf32>)
    -> (tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>) {
  %c1, %f1 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w1
      : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>, tensor<?x4xf32>
  %c2, %f2 = spconv.conv <subm, kernel = [3, 3, 3]> %c1, %f1, %w2
      : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>, tensor<?x4xf32>
  %c3, %f3 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c2, %f2, %wd
      : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>, tensor<?x4xf32>, tensor<8x4x8xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>
  %c4, %f4 = spconv.conv <subm, kernel = [3, 3, 3]> %c3, %f3, %w3
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>, tensor<27x8x8xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>
  return %c4, %f4 : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>
}
