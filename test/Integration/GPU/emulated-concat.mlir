// A concatenation on the GPU targets: its parts are copied into column
// ranges of the result by strided_copy kernels (spconv-gpu-strided-copies).
// Emulated at the kernels' block size and on a shrunk grid, race detector
// on, the result matches the CPU target's bit for bit (copies and a ReLU,
// no rounding).
func.func @concat(%a: tensor<?x5xf32>, %b: tensor<?x3xf32>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x5xf32>
  %init = tensor.empty(%n) : tensor<?x5xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x5xf32>) outs(%init : tensor<?x5xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.maximumf %x, %zero : f32
      linalg.yield %y : f32
  } -> tensor<?x5xf32>
  %cat = tensor.concat dim(1) %relu, %b : (tensor<?x5xf32>, tensor<?x3xf32>) -> tensor<?x8xf32>
  return %cat : tensor<?x8xf32>
}

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(3); np.save('%t/a.npy', r.standard_normal((300, 5)).astype(np.float32)); np.save('%t/b.npy', r.standard_normal((300, 3)).astype(np.float32))"
// RUN: spconv-run %s --entry concat --input %t/a.npy --input %t/b.npy --output-dir %t/cpu
// RUN: spconv-run %s --entry concat --target gpu-emulator --gpu-race-check --input %t/a.npy --input %t/b.npy --output-dir %t/emu
// RUN: spconv-npy-compare %t/emu/out0.npy %t/cpu/out0.npy --rtol 0 --atol 0
// RUN: spconv-run %s --entry concat --target gpu-emulator --gpu-race-check --gpu-block-size 32 --gpu-max-blocks 2 --input %t/a.npy --input %t/b.npy --output-dir %t/shrunk
// RUN: spconv-npy-compare %t/shrunk/out0.npy %t/cpu/out0.npy --rtol 0 --atol 0
// The copies are kernels of the emulated module.
// RUN: spconv-opt %s --spconv-to-gpu-emulator -mlir-print-ir-after=spconv-parallel-loops-to-gpu -o /dev/null 2>&1 | FileCheck %s
// CHECK: gpu.func @spconv_strided_copy(
// CHECK: gpu.func @spconv_strided_copy_1(
