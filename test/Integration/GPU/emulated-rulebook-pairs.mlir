// spconv.rulebook_pairs and spconv.rulebook_from_pairs on the GPU targets
// (what spconv_mlir.torch's CUDA ops build on): emulated with the race
// detector on, the CPU test's rulebooks taken back from their pairs convolve
// as the rulebooks they came from, bit for bit; the pairs exported equal the
// CPU target's; each broken rule is reported as on the CPU. A 4-D 5^4 window
// has 626 offsets, more than the 4 KiB of an argument the host may read
// directly: the lowering reads them through its own copy.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../CPU/Inputs/make_npy.py %t/coords.npy int32 "[[0, 1, 2, 3], [0, 1, 2, 4], [0, 2, 2, 3], [0, 5, 5, 5], [0, 6, 5, 5], [1, 1, 2, 3]]"
// RUN: %python -c "import numpy as np; r = np.random.default_rng(1); np.save('%t/feats.npy', r.standard_normal((6, 3)).astype(np.float32)); np.save('%t/weight.npy', r.standard_normal((27, 3, 4)).astype(np.float32)); np.save('%t/weight8.npy', r.standard_normal((8, 3, 4)).astype(np.float32))"
// RUN: spconv-run %S/../CPU/rulebook-pairs.mlir --entry subm_both_ways --target gpu-emulator --gpu-race-check --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/subm
// RUN: spconv-npy-compare %t/subm/out0.npy %t/subm/out1.npy --rtol 0 --atol 0
// RUN: spconv-run %S/../CPU/rulebook-pairs.mlir --entry down_both_ways --target gpu-emulator --gpu-race-check --input %t/coords.npy --input %t/feats.npy --input %t/weight8.npy --output-dir %t/down
// RUN: spconv-npy-compare %t/down/out0.npy %t/down/out1.npy --rtol 0 --atol 0

// RUN: spconv-run %S/../CPU/rulebook-pairs.mlir --entry subm_pairs --input %t/coords.npy --output-dir %t/cpu-pairs
// RUN: spconv-run %S/../CPU/rulebook-pairs.mlir --entry subm_pairs --target gpu-emulator --gpu-race-check --input %t/coords.npy --output-dir %t/pairs
// RUN: spconv-npy-compare %t/pairs/out0.npy %t/cpu-pairs/out0.npy --rtol 0 --atol 0
// RUN: spconv-npy-compare %t/pairs/out1.npy %t/cpu-pairs/out1.npy --rtol 0 --atol 0
// RUN: spconv-npy-compare %t/pairs/out2.npy %t/cpu-pairs/out2.npy --rtol 0 --atol 0
// RUN: %python %S/../CPU/Inputs/break_pairs.py %t/pairs %t/broken
// RUN: spconv-run %S/../CPU/rulebook-pairs.mlir --entry subm_from_pairs --target gpu-emulator --gpu-race-check --input %t/pairs/out0.npy --input %t/pairs/out1.npy --input %t/pairs/out2.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/again
// RUN: spconv-npy-compare %t/again/out0.npy %t/subm/out0.npy --rtol 0 --atol 0
// RUN: not spconv-run %S/../CPU/rulebook-pairs.mlir --entry subm_from_pairs --target gpu-emulator --input %t/broken/in_row.npy --input %t/pairs/out1.npy --input %t/pairs/out2.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/bad 2>&1 | FileCheck %s --check-prefix=IN-ROW
// IN-ROW: spconv-run: error: @subm_from_pairs: index 6 at position 3 is outside [0, 6)
// RUN: not spconv-run %S/../CPU/rulebook-pairs.mlir --entry subm_from_pairs --target gpu-emulator --input %t/pairs/out0.npy --input %t/broken/out_row.npy --input %t/pairs/out2.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/bad 2>&1 | FileCheck %s --check-prefix=OUT-ROW
// OUT-ROW: spconv-run: error: @subm_from_pairs: index -1 at position 0 is outside [0, 6)
// RUN: not spconv-run %S/../CPU/rulebook-pairs.mlir --entry subm_from_pairs --target gpu-emulator --input %t/pairs/out0.npy --input %t/pairs/out1.npy --input %t/broken/first.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/bad 2>&1 | FileCheck %s --check-prefix=FIRST
// FIRST: spconv-run: error: @subm_from_pairs: spconv.rulebook_from_pairs at line {{[0-9]+}}: 1 is the first pair offset; it must be 0
// RUN: not spconv-run %S/../CPU/rulebook-pairs.mlir --entry subm_from_pairs --target gpu-emulator --input %t/pairs/out0.npy --input %t/pairs/out1.npy --input %t/broken/order.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/bad 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: spconv-run: error: @subm_from_pairs: spconv.rulebook_from_pairs at line {{[0-9]+}}: 0 is a pair offset below the one before it, 2
// RUN: not spconv-run %S/../CPU/rulebook-pairs.mlir --entry subm_from_pairs --target gpu-emulator --input %t/pairs/out0.npy --input %t/pairs/out1.npy --input %t/broken/many.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/bad 2>&1 | FileCheck %s --check-prefix=MANY
// MANY: spconv-run: error: @subm_from_pairs: spconv.rulebook_from_pairs at line {{[0-9]+}}: 100 pairs, but the shorter row tensor holds 14

// The 4-D window: its pairs exported on the emulator, taken back as
// arguments (device memory on a GPU), convolve as the direct build does.
// RUN: %python -c "import numpy as np; r = np.random.default_rng(2); k = r.choice(6 ** 4, 40, replace=False); c = np.stack(np.unravel_index(k, (6, 6, 6, 6)), 1); np.save('%t/c4.npy', np.concatenate([np.zeros((40, 1), int), c], 1).astype(np.int32)); np.save('%t/x4.npy', r.standard_normal((40, 2)).astype(np.float32)); np.save('%t/w4.npy', r.standard_normal((625, 2, 3)).astype(np.float32))"
// RUN: spconv-run %s --entry pairs4d --target gpu-emulator --gpu-race-check --input %t/c4.npy --input %t/x4.npy --input %t/w4.npy --output-dir %t/p4
// RUN: spconv-run %s --entry from_pairs4d --target gpu-emulator --gpu-race-check --input %t/p4/out1.npy --input %t/p4/out2.npy --input %t/p4/out3.npy --input %t/x4.npy --input %t/w4.npy --output-dir %t/a4
// RUN: spconv-npy-compare %t/a4/out0.npy %t/p4/out0.npy --rtol 0 --atol 0
// RUN: spconv-opt %s --spconv-to-cuda -mlir-print-ir-after=spconv-gpu-memory -o /dev/null 2>&1 | FileCheck %s

!subm4 = !spconv.rulebook<#spconv.geom<subm, kernel = [5, 5, 5, 5]>, #spconv.grid<[6, 6, 6, 6]>>

func.func @pairs4d(%c: tensor<?x5xi32, #spconv.grid<[6, 6, 6, 6]>>, %x: tensor<?x2xf32>, %w: tensor<625x2x3xf32>) -> (tensor<?x3xf32>, tensor<?xi32>, tensor<?xi32>, tensor<626xi64>) {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x5xi32, #spconv.grid<[6, 6, 6, 6]>> -> !subm4, tensor<?x5xi32, #spconv.grid<[6, 6, 6, 6]>>
  %y = spconv.rulebook_conv %rb, %x, %w : !subm4, tensor<?x2xf32>, tensor<625x2x3xf32> -> tensor<?x3xf32>
  %in, %out, %off = spconv.rulebook_pairs %rb : !subm4 -> tensor<?xi32>, tensor<?xi32>, tensor<626xi64>
  return %y, %in, %out, %off : tensor<?x3xf32>, tensor<?xi32>, tensor<?xi32>, tensor<626xi64>
}

// The offsets argument (5008 bytes) is only copied whole, never loaded
// from: spconv-gpu-memory would refuse a host load of it.
// CHECK-LABEL: func.func @from_pairs4d
// CHECK-SAME: %[[OFF:[^:]*]]: memref<626xi64>
// CHECK-NOT: memref.load %[[OFF]]
// CHECK: gpu.memcpy {{.*}}, %[[OFF]] : memref<626xi64>, memref<626xi64>
// CHECK-NOT: memref.load %[[OFF]]
// CHECK: return
// CHECK-NEXT: }
func.func @from_pairs4d(%in: tensor<?xi32>, %out: tensor<?xi32>, %off: tensor<626xi64>, %x: tensor<?x2xf32>, %w: tensor<625x2x3xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2xf32>
  %rb = spconv.rulebook_from_pairs %in, %out, %off, %n, %n : tensor<?xi32>, tensor<?xi32>, tensor<626xi64> -> !subm4
  %y = spconv.rulebook_conv %rb, %x, %w : !subm4, tensor<?x2xf32>, tensor<625x2x3xf32> -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
