// RUN: spconv-opt %s -spconv-gpu-runtime-calls -split-input-file | FileCheck %s

// Primitives with a CUDA twin are redirected to it (and the unused CPU
// declaration goes); the others (the hash capacity, host arithmetic on a
// host buffer) stay.
// CHECK-NOT: func.func private @spconv_rt_memref_hash_build(
// CHECK-NOT: func.func private @spconv_rt_memref_linearize_coords
// CHECK-DAG: func.func private @spconv_rt_memref_hash_capacity
// CHECK-DAG: func.func private @spconv_rt_cuda_memref_linearize_coords(memref<?x?xi32>, memref<?xi64>, i64, memref<?xi64>) -> i32 attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @spconv_rt_cuda_memref_hash_build(memref<?xi64>, memref<?xi64>, memref<?xi32>, memref<?xi64>) -> i32 attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @spconv_rt_cuda_memref_exclusive_scan_i32(memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32 attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @host
// CHECK: call @spconv_rt_cuda_memref_linearize_coords(
// CHECK: call @spconv_rt_memref_hash_capacity(
// CHECK: call @spconv_rt_cuda_memref_hash_build(
// CHECK: call @spconv_rt_cuda_memref_hash_lookup(
// CHECK: call @spconv_rt_cuda_memref_delinearize_keys(
// CHECK: call @spconv_rt_cuda_memref_exclusive_scan_i32(
func.func private @spconv_rt_memref_linearize_coords(memref<?x?xi32>, memref<?xi64>, i64, memref<?xi64>) -> i32 attributes {llvm.emit_c_interface}
func.func private @spconv_rt_memref_hash_capacity(i64, memref<?xi64>) -> i32 attributes {llvm.emit_c_interface}
func.func private @spconv_rt_memref_hash_build(memref<?xi64>, memref<?xi64>, memref<?xi32>, memref<?xi64>) -> i32 attributes {llvm.emit_c_interface}
func.func private @spconv_rt_memref_hash_lookup(memref<?xi64>, memref<?xi32>, memref<?xi64>, memref<?xi32>) -> i32 attributes {llvm.emit_c_interface}
func.func private @spconv_rt_memref_delinearize_keys(memref<?xi64>, memref<?xi64>, i64, memref<?x?xi32>) -> i32 attributes {llvm.emit_c_interface}
func.func private @spconv_rt_memref_exclusive_scan_i32(memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32 attributes {llvm.emit_c_interface}
func.func @host(%c: memref<?x?xi32>, %shape: memref<?xi64>, %keys: memref<?xi64>,
                %tk: memref<?xi64>, %tv: memref<?xi32>, %dup: memref<?xi64>,
                %counts: memref<?xi32>, %total: memref<?xi32>) {
  %b = arith.constant 1 : i64
  %0 = call @spconv_rt_memref_linearize_coords(%c, %shape, %b, %keys) : (memref<?x?xi32>, memref<?xi64>, i64, memref<?xi64>) -> i32
  %1 = call @spconv_rt_memref_hash_capacity(%b, %dup) : (i64, memref<?xi64>) -> i32
  %2 = call @spconv_rt_memref_hash_build(%keys, %tk, %tv, %dup) : (memref<?xi64>, memref<?xi64>, memref<?xi32>, memref<?xi64>) -> i32
  %3 = call @spconv_rt_memref_hash_lookup(%tk, %tv, %keys, %counts) : (memref<?xi64>, memref<?xi32>, memref<?xi64>, memref<?xi32>) -> i32
  %4 = call @spconv_rt_memref_delinearize_keys(%keys, %shape, %b, %c) : (memref<?xi64>, memref<?xi64>, i64, memref<?x?xi32>) -> i32
  %5 = call @spconv_rt_memref_exclusive_scan_i32(%counts, %counts, %total) : (memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32
  return
}

// -----

// The deferred forms of a rulebook build, and its error report, have twins
// too: on the GPU their results stay in device memory.
// CHECK-LABEL: func.func @deferred
// CHECK: call @spconv_rt_cuda_memref_hash_build_deferred(
// CHECK: call @spconv_rt_cuda_memref_exclusive_scan_i64_deferred(
// CHECK: call @spconv_rt_cuda_memref_unique_deferred(
// CHECK: call @spconv_rt_cuda_memref_report_build_error(
func.func private @spconv_rt_memref_hash_build_deferred(memref<?xi64>, memref<?xi64>, memref<?xi32>, memref<?xi64>) -> i32 attributes {llvm.emit_c_interface}
func.func private @spconv_rt_memref_exclusive_scan_i64_deferred(memref<?xi64>, memref<?xi64>, memref<?xi64>) -> i32 attributes {llvm.emit_c_interface}
func.func private @spconv_rt_memref_unique_deferred(memref<?xi64>, memref<?xi64>, memref<?xi32>, memref<?xi32>, memref<?xi64>, i64) -> i32 attributes {llvm.emit_c_interface}
func.func private @spconv_rt_memref_report_build_error(memref<?x?xi32>, memref<?xi64>, memref<?xi64>, i64, i64, i64, i64) -> i32 attributes {llvm.emit_c_interface}
func.func @deferred(%c: memref<?x?xi32>, %shape: memref<?xi64>, %keys: memref<?xi64>,
                    %tk: memref<?xi64>, %tv: memref<?xi32>, %status: memref<?xi64>,
                    %counts: memref<?xi64>, %first: memref<?xi32>) {
  %b = arith.constant 1 : i64
  %0 = call @spconv_rt_memref_hash_build_deferred(%keys, %tk, %tv, %status) : (memref<?xi64>, memref<?xi64>, memref<?xi32>, memref<?xi64>) -> i32
  %1 = call @spconv_rt_memref_exclusive_scan_i64_deferred(%counts, %counts, %status) : (memref<?xi64>, memref<?xi64>, memref<?xi64>) -> i32
  %2 = call @spconv_rt_memref_unique_deferred(%keys, %tk, %first, %first, %status, %b) : (memref<?xi64>, memref<?xi64>, memref<?xi32>, memref<?xi32>, memref<?xi64>, i64) -> i32
  %3 = call @spconv_rt_memref_report_build_error(%c, %keys, %shape, %b, %b, %b, %b) : (memref<?x?xi32>, memref<?xi64>, memref<?xi64>, i64, i64, i64, i64) -> i32
  return
}
