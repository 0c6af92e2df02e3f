// An index operand outside its range is a run-time error naming the first
// bad position, the same on the CPU and on the GPU target, where the search
// runs in kernels because the indices are device memory (the emulator runs
// those kernels, under the race detector too). -1 means "no row" where the
// op allows it; segment ids do not.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_npy.py %t/f.npy float32 "zeros:3x2"
// RUN: %python %S/Inputs/make_npy.py %t/g.npy float32 "zeros:6x2"
// RUN: %python %S/Inputs/make_npy.py %t/rows.npy int32 "[0, -1, 9, 2, 7, 1]"
// RUN: %python %S/Inputs/make_npy.py %t/good.npy int32 "[0, -1, 2, 2, 1, 1]"
// RUN: %python %S/Inputs/make_npy.py %t/d.npy float32 "zeros:1x2x6"
// RUN: %python %S/Inputs/make_npy.py %t/seg.npy int32 "[[0, 3, 5, 1, -1, 2]]"
// RUN: for t in cpu gpu-emulator "gpu-emulator --gpu-race-check"; do \
// RUN:   not spconv-run %s --entry gather --target $t --input %t/f.npy --input %t/rows.npy --output-dir %t/o 2>&1; \
// RUN:   not spconv-run %s --entry scatter --target $t --input %t/g.npy --input %t/rows.npy --input %t/f.npy --output-dir %t/o 2>&1; \
// RUN:   not spconv-run %s --entry segmax --target $t --input %t/d.npy --input %t/seg.npy --output-dir %t/o 2>&1; \
// RUN:   spconv-run %s --entry gather --target $t --input %t/f.npy --input %t/good.npy --output-dir %t/o && echo "good: ok"; \
// RUN: done | FileCheck %s
// CHECK: {{^}}spconv-run: error: @gather: index 9 at position 2 is outside [0, 3)
// CHECK-NEXT: {{^}}spconv-run: error: @scatter: index 9 at position 2 is outside [0, 3)
// CHECK-NEXT: {{^}}spconv-run: error: @segmax: index 5 at position 2 is outside [0, 4)
// CHECK-NEXT: good: ok
// CHECK-NEXT: {{^}}spconv-run: error: @gather: index 9 at position 2 is outside [0, 3)
// CHECK-NEXT: {{^}}spconv-run: error: @scatter: index 9 at position 2 is outside [0, 3)
// CHECK-NEXT: {{^}}spconv-run: error: @segmax: index 5 at position 2 is outside [0, 4)
// CHECK-NEXT: good: ok
// CHECK-NEXT: {{^}}spconv-run: error: @gather: index 9 at position 2 is outside [0, 3)
// CHECK-NEXT: {{^}}spconv-run: error: @scatter: index 9 at position 2 is outside [0, 3)
// CHECK-NEXT: {{^}}spconv-run: error: @segmax: index 5 at position 2 is outside [0, 4)
// CHECK-NEXT: good: ok
// The CUDA target compiles them: no host code reads the indices, which
// its callers pass in device memory (spconv-gpu-memory would refuse).
// RUN: spconv-compile %s --target cuda --gpu-format isa -o %t/bad.o

func.func @gather(%f: tensor<?x2xf32>, %rows: tensor<?xi32>) -> tensor<?x2xf32> {
  %0 = spconv.gather_rows %f, %rows : tensor<?x2xf32>, tensor<?xi32> -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

func.func @scatter(%g: tensor<?x2xf32>, %rows: tensor<?xi32>, %z: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %0 = spconv.scatter_add_rows %g, %rows into %z : tensor<?x2xf32>, tensor<?xi32> into tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

func.func @segmax(%d: tensor<1x2x6xf32>, %i: tensor<1x6xi32>) -> (tensor<1x2x4xf32>, tensor<1x2x4xi32>) {
  %v, %p = spconv.segment_max %d, %i : tensor<1x2x6xf32>, tensor<1x6xi32> -> tensor<1x2x4xf32>, tensor<1x2x4xi32>
  return %v, %p : tensor<1x2x4xf32>, tensor<1x2x4xi32>
}
