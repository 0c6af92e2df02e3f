// RUN: spconv-opt %s --spconv-to-cpu | FileCheck %s
// RUN: spconv-opt %s --spconv-to-cpu="outline-kernels=false" | FileCheck %s --check-prefix=INLINE
// RUN: spconv-opt %s --spconv-to-cpu="openmp=false" | FileCheck %s --check-prefix=SERIAL
// RUN: spconv-opt %s --spconv-to-cpu="subm-search=hash" | FileCheck %s --check-prefix=HASH

// The whole CPU pipeline ends in the LLVM dialect, with the parallel loops
// on OpenMP (or sequential) and the runtime called through its C interface.
// The two equal convs (lines 63 and 66) call one kernel, each with its line;
// the shared rulebook is built once, by the build's kernel, into which the
// builder and the hash probe are inlined: keys from a parallel loop, the
// runtime's sort, the count, the deferred scan, and the build's status read
// back by a plain copy (the same code the GPU runs, where that copy is the
// device-to-host read-back). Each parallel loop is in a function of its own
// (spconv-outline-omp-parallel), called in order.
// CHECK-NOT: spconv.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK-LABEL: llvm.func @net(
// CHECK-DAG: %[[L63:.*]] = llvm.mlir.constant(63 : i64) : i64
// CHECK-DAG: %[[L66:.*]] = llvm.mlir.constant(66 : i64) : i64
// CHECK: llvm.call @[[BUILD:spconv_kernel_build_rulebook_[0-9a-f]{16}]](%[[L63]],
// CHECK-NOT: llvm.call @spconv_kernel_build_rulebook
// CHECK: llvm.call @[[CONV:spconv_kernel_rulebook_conv_[0-9a-f]{16}]](%[[L63]],
// CHECK: llvm.call @[[CONV]](%[[L66]],
// CHECK-NOT: omp.
// CHECK: llvm.func @[[BUILD]](
// CHECK: llvm.call @[[BUILD]].omp_parallel.2(
// CHECK: llvm.call @spconv_rt_memref_sort_pairs_bits(
// CHECK-NOT: llvm.call @spconv_rt_memref_sort_pairs_bits(
// CHECK: llvm.call @[[BUILD]].omp_parallel.4(
// CHECK: llvm.call @spconv_rt_memref_exclusive_scan_i64_deferred(
// CHECK: "llvm.intr.memcpy"
// CHECK: llvm.call @spconv_rt_memref_report_build_error(
// CHECK-NOT: llvm.call @spconv_rt_memref_sort_pairs_bits(
// CHECK: llvm.func internal @[[BUILD]].omp_parallel.0(
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK: llvm.func @[[CONV]](
// CHECK-LABEL: llvm.func private @spconv_rt_memref_sort_pairs_bits(
// CHECK: llvm.call @_mlir_ciface_spconv_rt_memref_sort_pairs_bits(
// Inline, the same in the network's function.
// INLINE-NOT: spconv_kernel
// INLINE-LABEL: llvm.func @net(
// INLINE: llvm.call @net.omp_parallel.2(
// INLINE: llvm.call @spconv_rt_memref_sort_pairs_bits(
// INLINE-NOT: llvm.call @spconv_rt_memref_sort_pairs_bits(
// INLINE: llvm.call @net.omp_parallel.4(
// INLINE: llvm.call @spconv_rt_memref_exclusive_scan_i64_deferred(
// INLINE: "llvm.intr.memcpy"
// INLINE: llvm.call @spconv_rt_memref_report_build_error(
// INLINE-NOT: llvm.call @spconv_rt_memref_sort_pairs_bits(
// INLINE-LABEL: llvm.func internal @net.omp_parallel.0(
// SERIAL-NOT: omp.
// SERIAL: llvm.func @net(
// HASH-LABEL: llvm.func @spconv_kernel_build_rulebook_
// HASH: llvm.call @spconv_rt_memref_hash_build_deferred(
// HASH: llvm.call @[[HBUILD:spconv_kernel_build_rulebook_[0-9a-f]{16}]].omp_parallel.2(
// HASH: llvm.func internal @[[HBUILD]].omp_parallel.2(
// HASH: omp.wsloop
// HASH: llvm.intr.prefetch
func.func @net(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x16xf32>, %w: tensor<27x16x16xf32>)
    -> tensor<?x16xf32> {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x16xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>
  %b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %a#1, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x16xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>
  return %b#1 : tensor<?x16xf32>
}
