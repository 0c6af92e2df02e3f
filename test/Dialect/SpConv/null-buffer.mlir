// RUN: spconv-opt %s -split-input-file -verify-diagnostics | spconv-opt | FileCheck %s

// The placeholder buffer of code skipped after a failed allocation prints
// and parses back.
// CHECK-LABEL: func.func @roundtrip
// CHECK: spconv.null_buffer : memref<?x27xi32>
// CHECK: spconv.null_buffer : memref<4x?xf32, strided<[?, 1], offset: ?>>
func.func @roundtrip() -> (memref<?x27xi32>, memref<4x?xf32, strided<[?, 1], offset: ?>>) {
  %a = spconv.null_buffer : memref<?x27xi32>
  %b = spconv.null_buffer : memref<4x?xf32, strided<[?, 1], offset: ?>>
  return %a, %b : memref<?x27xi32>, memref<4x?xf32, strided<[?, 1], offset: ?>>
}

// -----

func.func @not_strided() -> memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>> {
  // expected-error @+1 {{'spconv.null_buffer' op needs a strided layout, got 'memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>'}}
  %a = spconv.null_buffer : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>
  return %a : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>
}
