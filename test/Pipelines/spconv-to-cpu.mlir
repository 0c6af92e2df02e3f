// RUN: spconv-opt %s --spconv-to-cpu | FileCheck %s
// RUN: spconv-opt %s --spconv-to-cpu="openmp=false" | FileCheck %s --check-prefix=SERIAL
// RUN: spconv-opt %s --spconv-to-cpu="subm-search=hash" | FileCheck %s --check-prefix=HASH

// The whole CPU pipeline ends in the LLVM dialect, with the parallel loops
// on OpenMP (or sequential) and the runtime called through its C interface.
// The builder and the hash probe are inlined; the shared rulebook is built
// once: keys from a parallel loop, the runtime's sort, the count, the
// deferred scan, and the build's status read back by a plain copy (the
// same code the GPU runs, where that copy is the device-to-host read-back).
// Each parallel loop is in a function of its own
// (spconv-outline-omp-parallel), called in order.
// CHECK-NOT: spconv.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK-LABEL: llvm.func @net(
// CHECK-NOT: omp.
// CHECK: llvm.call @net.omp_parallel.2(
// CHECK: llvm.call @spconv_rt_memref_sort_pairs_bits(
// CHECK-NOT: llvm.call @spconv_rt_memref_sort_pairs_bits(
// CHECK: llvm.call @net.omp_parallel.4(
// CHECK: llvm.call @spconv_rt_memref_exclusive_scan_i64_deferred(
// CHECK: "llvm.intr.memcpy"
// CHECK: llvm.call @spconv_rt_memref_report_build_error(
// CHECK-NOT: llvm.call @spconv_rt_memref_sort_pairs_bits(
// CHECK-LABEL: llvm.func internal @net.omp_parallel.0(
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK-LABEL: llvm.func private @spconv_rt_memref_sort_pairs_bits(
// CHECK: llvm.call @_mlir_ciface_spconv_rt_memref_sort_pairs_bits(
// SERIAL-NOT: omp.
// SERIAL: llvm.func @net(
// HASH-LABEL: llvm.func @net(
// HASH: llvm.call @spconv_rt_memref_hash_build_deferred(
// HASH: llvm.call @net.omp_parallel.2(
// HASH-LABEL: llvm.func internal @net.omp_parallel.2(
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
