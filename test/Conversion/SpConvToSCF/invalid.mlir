// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file -verify-diagnostics
// RUN: not spconv-opt %s -convert-spconv-to-scf="block-size=0" 2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: convert-spconv-to-scf: block-size must be positive, got 0
// RUN: not spconv-opt %s -convert-spconv-to-scf="chunk-bytes=0" 2>&1 | FileCheck %s --check-prefix=CHUNK
// CHUNK: convert-spconv-to-scf: chunk-bytes must be positive, got 0
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=tpu" 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: convert-spconv-to-scf: target must be cpu or gpu, got 'tpu'
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu" 2>&1 | FileCheck %s --check-prefix=GPU-SORTED
// GPU-SORTED: convert-spconv-to-scf: target=gpu needs subm-search=hash
// RUN: not spconv-opt %s -convert-spconv-to-scf="subm-search=bsearch" 2>&1 | FileCheck %s --check-prefix=SEARCH
// SEARCH: convert-spconv-to-scf: subm-search must be sorted or hash, got 'bsearch'

func.func @undecomposed(%c: tensor<?x2xi32, #spconv.grid<[8]>>, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'spconv.conv' op must be decomposed first (run spconv-decompose)}}
  %oc, %of = spconv.conv <subm, kernel = [3]> %c, %f, %w
      : tensor<?x2xi32, #spconv.grid<[8]>>, tensor<?x4xf32>, tensor<3x4x4xf32> -> tensor<?x2xi32, #spconv.grid<[8]>>, tensor<?x4xf32>
  return %of : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{rulebooks and hash tables cannot be passed across function boundaries; build them where they are used}}
func.func @takes_rulebook(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[8]>>, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>) -> tensor<?x4xf32> {
  %y = spconv.rulebook_conv %rb, %f, %w : !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[8]>>, tensor<?x4xf32>, tensor<3x4x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{rulebooks and hash tables cannot be passed across function boundaries; build them where they are used}}
func.func private @returns_table(tensor<?xi64>) -> !spconv.hash_table
