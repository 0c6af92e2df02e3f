// The tiled GPU convs write consecutive channels of an output row per store
// where the result's rows allow it (GemmEpilogue.cpp), and read the bias
// and a fused epilogue's operands as many at a time: each one access where
// all of them start aligned to the chunk's size, else as LLVM splits the
// access. Here each conv writes straight into the middle of a
// concatenation whose first part is not a whole chunk wide, so its chunks
// are unaligned and the kernels take the second branch (every other test
// takes the first). Emulated at the kernels' block size and on a shrunk
// grid, race detector on, against spconv-ref's conv between the same parts
// (plus the f16 conv's residual, its features).
!c = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
func.func @f16(%c: !c, %x: tensor<?x16xf16>, %w: tensor<27x16x16xf16>, %b: tensor<16xf16>,
               %l: tensor<?x2xf16>, %r: tensor<?x6xf16>) -> tensor<?x24xf16> {
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w bias %b
      : !c, tensor<?x16xf16>, tensor<27x16x16xf16>, tensor<16xf16> -> !c, tensor<?x16xf16>
  // A residual add, fused into the conv's epilogue: read a chunk at a time.
  %s = arith.addf %y, %x : tensor<?x16xf16>
  %cat = tensor.concat dim(1) %l, %s, %r : (tensor<?x2xf16>, tensor<?x16xf16>, tensor<?x6xf16>) -> tensor<?x24xf16>
  return %cat : tensor<?x24xf16>
}
func.func @f32(%c: !c, %x: tensor<?x16xf32>, %w: tensor<27x16x16xf32>, %b: tensor<16xf32>,
               %l: tensor<?x1xf32>, %r: tensor<?x3xf32>) -> tensor<?x20xf32> {
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w bias %b
      : !c, tensor<?x16xf32>, tensor<27x16x16xf32>, tensor<16xf32> -> !c, tensor<?x16xf32>
  %cat = tensor.concat dim(1) %l, %y, %r : (tensor<?x1xf32>, tensor<?x16xf32>, tensor<?x3xf32>) -> tensor<?x20xf32>
  return %cat : tensor<?x20xf32>
}

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(5); k = r.choice(512, 150, replace=False); \
// RUN:   np.save('%t/c.npy', np.stack([0 * k, k // 64, k // 8 % 8, k % 8], 1).astype(np.int32)); \
// RUN:   x, w, b, l, rr = r.standard_normal((150, 16)), r.standard_normal((27, 16, 16)), r.standard_normal(16), r.standard_normal((150, 2)), r.standard_normal((150, 6)); \
// RUN:   [np.save('%t/' + n + t + '.npy', a.astype(t)) for t in ('float16', 'float32') for n, a in (('x', x), ('w', w), ('b', b), ('l', l[:, :2] if t == 'float16' else l[:, :1]), ('r', rr if t == 'float16' else rr[:, :3]))]"
// RUN: for t in float16 float32; do \
// RUN:   spconv-ref conv --kind subm --kernel 3,3,3 --grid 8,8,8 --coords %t/c.npy --features %t/x$t.npy --weight %t/w$t.npy --bias %t/b$t.npy --out-dir %t/ref-$t || exit 1; \
// RUN:   %python -c "import numpy as np; d = '%t/'; t = '$t'; y = np.load(d + 'ref-' + t + '/out1.npy'); y = y + np.load(d + 'x' + t + '.npy') if t == 'float16' else y; np.save(d + 'cat' + t + '.npy', np.concatenate([np.load(d + 'l' + t + '.npy'), y, np.load(d + 'r' + t + '.npy')], 1))" || exit 1; done
// RUN: spconv-run %s --entry f16 --target gpu-emulator --gpu-race-check --input %t/c.npy --input %t/xfloat16.npy --input %t/wfloat16.npy --input %t/bfloat16.npy --input %t/lfloat16.npy --input %t/rfloat16.npy --output-dir %t/f16
// RUN: spconv-npy-compare %t/f16/out0.npy %t/catfloat16.npy --rtol 2e-2 --atol 2e-2
// RUN: spconv-run %s --entry f16 --target gpu-emulator --gpu-race-check --gpu-block-size 32 --gpu-max-blocks 2 --input %t/c.npy --input %t/xfloat16.npy --input %t/wfloat16.npy --input %t/bfloat16.npy --input %t/lfloat16.npy --input %t/rfloat16.npy --output-dir %t/f16-shrunk
// RUN: spconv-npy-compare %t/f16-shrunk/out0.npy %t/catfloat16.npy --rtol 2e-2 --atol 2e-2
// RUN: spconv-run %s --entry f32 --target gpu-emulator --gpu-race-check --input %t/c.npy --input %t/xfloat32.npy --input %t/wfloat32.npy --input %t/bfloat32.npy --input %t/lfloat32.npy --input %t/rfloat32.npy --output-dir %t/f32
// RUN: spconv-npy-compare %t/f32/out0.npy %t/catfloat32.npy --rtol 1e-4 --atol 1e-4

// The convs write into the concatenation, 4 halves (rows of 24) and 4
// floats (rows of 20) per store, in both branches.
// RUN: spconv-opt %s --spconv-to-gpu-emulator -mlir-print-ir-after=spconv-parallel-loops-to-gpu -o /dev/null 2>&1 | FileCheck %s
// CHECK-LABEL: gpu.func @spconv_conv_f16_16x16(
// CHECK: vector.load {{.*}} {alignment = 8 : i64} : memref<?x16xf16>, vector<4xf16>
// CHECK: vector.load {{.*}} : memref<?x16xf16>, vector<4xf16>
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<?x16xf16, strided<[24, 1], offset: 2>>, vector<4xf16>
// CHECK: vector.store {{.*}} : memref<?x16xf16, strided<[24, 1], offset: 2>>, vector<4xf16>
// CHECK-LABEL: gpu.func @spconv_conv_f32_16x16(
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<?x16xf32, strided<[20, 1], offset: 1>>, vector<4xf32>
// CHECK: vector.store {{.*}} : memref<?x16xf32, strided<[20, 1], offset: 1>>, vector<4xf32>
