// The kernels as spconv-to-cuda outlines them (printed after
// spconv-parallel-loops-to-gpu), and the end of the pipeline: one
// gpu.binary holding PTX for the requested chip.
// RUN: spconv-opt %s --spconv-to-cuda="format=isa" -mlir-print-ir-after=spconv-parallel-loops-to-gpu -o %t.mlir 2>&1 | FileCheck %s
// RUN: FileCheck %s --input-file=%t.mlir --check-prefix=BINARY
// RUN: spconv-opt %s --spconv-to-cuda="format=isa max-unrolled-offsets=125" -mlir-print-ir-after=spconv-parallel-loops-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNROLLED
// RUN: spconv-opt %s --spconv-to-cuda="format=isa chip=sm_90 features=+ptx80" | FileCheck %s --check-prefix=SM90
// RUN: spconv-opt %s --spconv-to-cuda="format=isa" -mlir-print-ir-after=spconv-gpu-stream-order -o /dev/null 2>&1 | FileCheck %s --check-prefix=STREAM

// The host code on one stream. The fine subm build makes the neighbour
// table of its two layers itself, all they read of it: keys, hash table
// and table on the device, the runtime's CUDA primitives in stream order,
// no size for the host, so no wait. The tile schedule (sorted on the
// stream) follows; the two layers run back to back, their features and
// tables in device memory. The strided build waits once, for the read-back
// of its status after the unique (bad and repeated sites, the pair total,
// the number of output sites); an error report, only on the error path,
// copies what it names itself. At the end the statuses of the two subm
// builds are copied back one after the other and waited for once.
// STREAM-LABEL: func.func @net
// STREAM: %[[T0:.*]] = gpu.wait async
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table_init_status
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table_linearize
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: call @spconv_rt_cuda_memref_hash_build_deferred
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table_neighbour_table
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: call @spconv_rt_cuda_memref_sort_pairs_bits
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_conv_f32_4x4
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM-NOT: host_shared
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_conv_f32_4x4
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// The strided build: its pairs in buffers sized by the most pairs a site
// has (here one), their free slots padded with the largest key, one
// read-back, then a kernel writes the output coordinates.
// STREAM: _count_pairs
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: call @spconv_rt_cuda_memref_exclusive_scan_i64_deferred
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: _pad_keys
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: _write_pairs
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: call @spconv_rt_cuda_memref_unique_deferred
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: %[[READ:.*]] = gpu.memcpy async [%{{.*}}] %{{.*}}, %{{.*}} : memref<4xi64>, memref<4xi64>
// STREAM-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[READ]])
// STREAM: scf.if
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: func.call @spconv_rt_cuda_memref_report_build_error
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: _delinearize
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_conv_f32_4x8
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: _g8x8x8_table_neighbour_table
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_conv_f32_8x8
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: %[[FIRST:.*]] = gpu.memcpy async [%{{.*}}] %{{.*}}, %{{.*}} : memref<4xi64>, memref<4xi64>
// STREAM-NEXT: %[[SECOND:.*]] = gpu.memcpy async [%[[FIRST]]] %{{.*}}, %{{.*}} : memref<4xi64>, memref<4xi64>
// STREAM-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[SECOND]])
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: func.call @spconv_rt_cuda_memref_report_build_error
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: func.call @spconv_rt_cuda_memref_report_build_error
// The status checks ran inside the allocation guards' segments, whose
// other arm (code skipped after a failed allocation) leaves work in
// flight: the return waits once more, on an idle stream.
// STREAM-NOT: spconv_rt_cuda_stream_synchronize
// STREAM: call @spconv_rt_cuda_stream_synchronize
// STREAM-NEXT: return

// Two subm layers on one grid share a rulebook; a strided layer and a subm
// layer on the coarse grid have builders of their own. Each subm builder
// makes the neighbour table its layers read; the strided layer's table
// comes from its rulebook's pairs. Each layer launches its tiled conv
// kernel once (no loop over offsets on the host); the two 4 -> 4 layers
// share one kernel.
// CHECK-LABEL: func.func @net
// CHECK: call @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table(
// CHECK-NOT: scf.for
// CHECK-NOT: @spconv_neighbour_table
// CHECK: gpu.launch_func @spconv_kernels::@spconv_conv_f32_4x4 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c64,
// CHECK-NOT: scf.for
// CHECK: gpu.launch_func @spconv_kernels::@spconv_conv_f32_4x4 blocks
// CHECK: call @spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16(
// CHECK: gpu.launch_func @spconv_kernels::@spconv_neighbour_table_init blocks
// CHECK: gpu.launch_func @spconv_kernels::@spconv_neighbour_table blocks
// CHECK: gpu.launch_func @spconv_kernels::@spconv_conv_f32_4x8 blocks
// CHECK: call @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g8x8x8_table(
// CHECK: gpu.launch_func @spconv_kernels::@spconv_conv_f32_8x8 blocks
// CHECK-NOT: call @spconv_build_

// The builders launch their kernels: a subm one its table, a strided one
// count, pad, write.
// CHECK-LABEL: func.func private @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table
// CHECK: gpu.launch_func @spconv_kernels::@spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table_neighbour_table
// CHECK-LABEL: func.func private @spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16
// CHECK: gpu.launch_func @spconv_kernels::@spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16_count_pairs
// CHECK: gpu.launch_func @spconv_kernels::@spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16_pad_keys
// CHECK: gpu.launch_func @spconv_kernels::@spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16_write_pairs

// The kernel module, its kernels named after their geometries. In the
// subm table kernel the 27 offsets are a loop (the GPU's default
// max-unrolled-offsets=0: one inline probe, few registers), the centre the
// site itself, and the grid extent is a constant; with
// max-unrolled-offsets=125 they are unrolled (26 inline probes, no loop
// over offsets).
// The tiled conv kernels come last, each with its workgroup tiles.
// CHECK-LABEL: gpu.module @spconv_kernels
// CHECK: gpu.func @spconv_neighbour_table_init(
// CHECK: gpu.func @spconv_neighbour_table(
// CHECK: gpu.func @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table_neighbour_table(
// CHECK: arith.constant 16 : i64
// CHECK: gpu.thread_id x
// CHECK: scf.for %{{.*}} = %c0 to %c27 step %c1
// CHECK: arith.cmpi eq, %{{.*}}, %c13 : index
// CHECK: call @spconv_ht_find_slot
// CHECK-NOT: call @spconv_ht_find_slot
// CHECK: gpu.return
// UNROLLED: gpu.func @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table_neighbour_table(
// UNROLLED: gpu.thread_id x
// UNROLLED-COUNT-26: call @spconv_ht_find_slot
// UNROLLED-NOT: scf.for
// UNROLLED-NOT: call @spconv_ht_find_slot
// UNROLLED: gpu.return
// CHECK: gpu.func @spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16_count_pairs(
// CHECK: gpu.func @spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16_pad_keys(
// CHECK: gpu.func @spconv_build_regular_k2x2x2_s2x2x2_p0x0x0_d1x1x1_g16x16x16_write_pairs(
// CHECK: gpu.func @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g8x8x8_table_neighbour_table(
// CHECK: gpu.func @spconv_conv_f32_4x4({{.*}}) workgroup({{.*}}#gpu.address_space<workgroup>>{{.*}}) kernel attributes {spconv.tile = {cols = 4 : i64, {{.*}}threads = 64 : i64}}
// CHECK: gpu.barrier
// CHECK: gpu.func @spconv_conv_f32_4x8(
// CHECK: gpu.func @spconv_conv_f32_8x8(
// CHECK-NOT: gpu.func
// CHECK: func.func private @spconv_ht_find_slot

// In LLVM: one stream for the whole function (the runtime's thread
// stream), device memory allocated on it, every launch on it (the stream
// crosses the guards of spconv-guard-allocations and the conv's row check
// as a block argument, so the launches name it by another value).
// BINARY: llvm.func @net
// BINARY: %[[S:.*]] = llvm.call @mgpuStreamCreate()
// BINARY-NOT: mgpuStreamCreate
// BINARY: llvm.call @mgpuMemAlloc(%{{.*}}, %{{[0-9]+}}, %{{.*}})
// The runtime's CUDA primitives run on that stream too: the hash build
// needs no wait before it.
// BINARY-NOT: spconv_rt_cuda_stream_synchronize
// BINARY: llvm.call @spconv_rt_cuda_memref_hash_build_deferred(
// BINARY: gpu.launch_func <%{{[0-9]+}} : !llvm.ptr> @spconv_kernels::@spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table_neighbour_table
// BINARY-NOT: mgpuStreamCreate
// BINARY-NOT: spconv_rt_cuda_stream_synchronize
// BINARY: gpu.launch_func <%{{[0-9]+}} : !llvm.ptr> @spconv_kernels::@spconv_conv_f32_4x4
// The strided build's read-back is a copy on that stream, then a wait.
// BINARY: llvm.call @mgpuMemcpy(%{{.*}}, %{{.*}}, %{{.*}}, %[[S2:[0-9]+]])
// BINARY-NEXT: llvm.call @spconv_rt_cuda_stream_synchronize(%[[S2]])
// BINARY-NOT: mgpuStreamCreate
// BINARY-NOT: mgpuStreamSynchronize
// BINARY: llvm.return
// BINARY: gpu.binary @spconv_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// BINARY-SAME: .target sm_80
// BINARY-SAME: .entry spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table_neighbour_table
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
