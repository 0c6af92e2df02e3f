// Two equal layers on lines 5 and 6 share one kernel (spconv-outline-kernels);
// a run-time error names the line of the layer that failed, not the kernel's.
!in = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
func.func @twice(%c1: !in, %f1: tensor<?x4xf32>, %c2: !in, %f2: tensor<?x4xf32>, %w: tensor<27x4x4xf32>) -> (tensor<5x4xf32>, tensor<5x4xf32>) {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c1, %f1, %w : !in, tensor<?x4xf32>, tensor<27x4x4xf32> -> !in, tensor<5x4xf32>
  %b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c2, %f2, %w : !in, tensor<?x4xf32>, tensor<27x4x4xf32> -> !in, tensor<5x4xf32>
  return %a#1, %b#1 : tensor<5x4xf32>, tensor<5x4xf32>
}

// One builder and one conv kernel; inline, two of each.
// RUN: spconv-opt %s --spconv-to-cpu | FileCheck %s --check-prefix=SHARED
// SHARED-COUNT-1: llvm.func @spconv_kernel_build_rulebook_
// SHARED-COUNT-1: llvm.func @spconv_kernel_rulebook_conv_
// SHARED-NOT: llvm.func @spconv_kernel_
// RUN: spconv-opt %s --spconv-to-cpu="outline-kernels=false" | FileCheck %s --check-prefix=INLINE
// INLINE-NOT: spconv_kernel_

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_npy.py %t/c5.npy int32 "[[0, 0, 0, 0], [0, 0, 0, 1], [0, 2, 2, 2], [0, 5, 5, 5], [0, 7, 7, 7]]"
// RUN: %python %S/Inputs/make_npy.py %t/c8.npy int32 "[[0, 0, 0, 0], [0, 0, 0, 1], [0, 2, 2, 2], [0, 5, 5, 5], [0, 7, 7, 7], [0, 3, 3, 3], [0, 1, 1, 1], [0, 6, 6, 6]]"
// RUN: %python -c "import numpy as np; np.save('%t/f5.npy', np.arange(20, dtype=np.float32).reshape(5, 4)); np.save('%t/f8.npy', np.arange(32, dtype=np.float32).reshape(8, 4)); np.save('%t/w.npy', np.arange(432, dtype=np.float32).reshape(27, 4, 4) / 100)"

// Both layers right: the shared kernel computes each as the reference does.
// RUN: spconv-run %s --entry twice --input %t/c5.npy --input %t/f5.npy --input %t/c5.npy --input %t/f5.npy --input %t/w.npy --output-dir %t/ok
// RUN: spconv-ref conv --kind subm --kernel 3,3,3 --grid 8,8,8 --coords %t/c5.npy --features %t/f5.npy --weight %t/w.npy --out-dir %t/ref
// RUN: spconv-npy-compare %t/ok/out0.npy %t/ref/out1.npy
// RUN: spconv-npy-compare %t/ok/out1.npy %t/ref/out1.npy

// The second layer (line 6) fails, then the first (line 5).
// RUN: not spconv-run %s --entry twice --input %t/c5.npy --input %t/f5.npy --input %t/c8.npy --input %t/f8.npy --input %t/w.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=SECOND
// SECOND: spconv-run: error: @twice: spconv.rulebook_conv at line 6: 8 output rows, but its result has the static number of rows 5
// RUN: not spconv-run %s --entry twice --input %t/c8.npy --input %t/f8.npy --input %t/c5.npy --input %t/f5.npy --input %t/w.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=FIRST
// FIRST: spconv-run: error: @twice: spconv.rulebook_conv at line 5: 8 output rows, but its result has the static number of rows 5
