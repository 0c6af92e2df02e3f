// RUN: spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf -split-input-file -verify-diagnostics
// RUN: not spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf="block-size=0" 2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: convert-spconv-to-scf: block-size must be positive, got 0
// RUN: not spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf="chunk-bytes=0" 2>&1 | FileCheck %s --check-prefix=CHUNK
// CHUNK: convert-spconv-to-scf: chunk-bytes must be positive, got 0
// RUN: not spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf="target=tpu" 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: for the --target option: Cannot find option named 'tpu'!
// RUN: not spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf="target=gpu" 2>&1 | FileCheck %s --check-prefix=GPU-SORTED
// GPU-SORTED: convert-spconv-to-scf: target=gpu needs subm-search=hash
// RUN: not spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf="gpu-conv=winograd" 2>&1 | FileCheck %s --check-prefix=GPU-CONV
// GPU-CONV: for the --gpu-conv option: Cannot find option named 'winograd'!
// RUN: not spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf="gpu-matmul=int8" 2>&1 | FileCheck %s --check-prefix=GPU-MATMUL
// GPU-MATMUL: for the --gpu-matmul option: Cannot find option named 'int8'!
// RUN: not spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf="subm-search=bsearch" 2>&1 | FileCheck %s --check-prefix=SEARCH
// SEARCH: for the --subm-search option: Cannot find option named 'bsearch'!
// RUN: not spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf="vector-bits=384" 2>&1 | FileCheck %s --check-prefix=BITS
// BITS: convert-spconv-to-scf: vector-bits must be 128, 256 or 512, got 384
// RUN: not spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf="vector-registers=2" 2>&1 | FileCheck %s --check-prefix=REGISTERS
// REGISTERS: convert-spconv-to-scf: vector-registers must be at least 4, got 2
// RUN: not spconv-opt %s -allow-unregistered-dialect -convert-spconv-to-scf="fma-latency=0" 2>&1 | FileCheck %s --check-prefix=FMA
// FMA: convert-spconv-to-scf: fma-pipes and fma-latency must be at least 1, got 2 and 0

func.func @undecomposed(%c: tensor<?x2xi32, #spconv.grid<[8]>>, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'spconv.conv' op must be decomposed first (run spconv-decompose)}}
  %oc, %of = spconv.conv <subm, kernel = [3]> %c, %f, %w
      : tensor<?x2xi32, #spconv.grid<[8]>>, tensor<?x4xf32>, tensor<3x4x4xf32> -> tensor<?x2xi32, #spconv.grid<[8]>>, tensor<?x4xf32>
  return %of : tensor<?x4xf32>
}

// -----

// Rulebooks flow through scf, cf, func and arith.select (see
// rulebook-values.mlir); an op that knows nothing of their buffers is named.
func.func @foreign_user(%c: tensor<?x2xi32, #spconv.grid<[8]>>) {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x2xi32, #spconv.grid<[8]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[8]>>, tensor<?x2xi32, #spconv.grid<[8]>>
  // expected-error @+1 {{'foreign.consume' op takes or yields a rulebook or hash table, which the lowering turns into buffers; such values may only pass through scf and cf control flow, func calls and returns and arith.select}}
  "foreign.consume"(%rb) : (!spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[8]>>) -> ()
  return
}

// -----

func.func @foreign_table_producer() -> tensor<?xi32> {
  // expected-error @+1 {{'foreign.table' op takes or yields a rulebook or hash table}}
  %t = "foreign.table"() : () -> !spconv.hash_table
  %q = arith.constant dense<[1, 2]> : tensor<2xi64>
  %r = spconv.hash_lookup %t, %q : !spconv.hash_table, tensor<2xi64> -> tensor<?xi32>
  return %r : tensor<?xi32>
}
