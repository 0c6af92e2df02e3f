// A rulebook handed out as tensors of pairs (spconv.rulebook_pairs) and
// taken back (spconv.rulebook_from_pairs) convolves as the rulebook it came
// from, bit for bit, for a subm and a strided conv; pairs that are not
// valid are reported and nothing reads outside a buffer.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_npy.py %t/coords.npy int32 "[[0, 1, 2, 3], [0, 1, 2, 4], [0, 2, 2, 3], [0, 5, 5, 5], [0, 6, 5, 5], [1, 1, 2, 3]]"
// RUN: %python -c "import numpy as np; r = np.random.default_rng(1); np.save('%t/feats.npy', r.standard_normal((6, 3)).astype(np.float32)); np.save('%t/weight.npy', r.standard_normal((27, 3, 4)).astype(np.float32)); np.save('%t/weight8.npy', r.standard_normal((8, 3, 4)).astype(np.float32))"

// RUN: spconv-run %s --entry subm_both_ways --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/subm
// RUN: spconv-npy-compare %t/subm/out0.npy %t/subm/out1.npy --rtol 0 --atol 0
// RUN: spconv-run %s --entry down_both_ways --input %t/coords.npy --input %t/feats.npy --input %t/weight8.npy --output-dir %t/down
// RUN: spconv-npy-compare %t/down/out0.npy %t/down/out1.npy --rtol 0 --atol 0

// The exported pairs, then each broken in one way.
// RUN: spconv-run %s --entry subm_pairs --input %t/coords.npy --output-dir %t/pairs
// RUN: %python %S/Inputs/break_pairs.py %t/pairs %t/broken
// RUN: spconv-run %s --entry subm_from_pairs --input %t/pairs/out0.npy --input %t/pairs/out1.npy --input %t/pairs/out2.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/again
// RUN: spconv-npy-compare %t/again/out0.npy %t/subm/out0.npy --rtol 0 --atol 0
// RUN: not spconv-run %s --entry subm_from_pairs --input %t/broken/in_row.npy --input %t/pairs/out1.npy --input %t/pairs/out2.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/bad 2>&1 | FileCheck %s --check-prefix=IN-ROW
// IN-ROW: spconv-run: error: @subm_from_pairs: index 6 at position 3 is outside [0, 6)
// RUN: not spconv-run %s --entry subm_from_pairs --input %t/pairs/out0.npy --input %t/broken/out_row.npy --input %t/pairs/out2.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/bad 2>&1 | FileCheck %s --check-prefix=OUT-ROW
// OUT-ROW: spconv-run: error: @subm_from_pairs: index -1 at position 0 is outside [0, 6)
// RUN: not spconv-run %s --entry subm_from_pairs --input %t/pairs/out0.npy --input %t/pairs/out1.npy --input %t/broken/first.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/bad 2>&1 | FileCheck %s --check-prefix=FIRST
// FIRST: spconv-run: error: @subm_from_pairs: spconv.rulebook_from_pairs at line {{[0-9]+}}: 1 is the first pair offset; it must be 0
// RUN: not spconv-run %s --entry subm_from_pairs --input %t/pairs/out0.npy --input %t/pairs/out1.npy --input %t/broken/order.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/bad 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: spconv-run: error: @subm_from_pairs: spconv.rulebook_from_pairs at line {{[0-9]+}}: 0 is a pair offset below the one before it, 2
// RUN: not spconv-run %s --entry subm_from_pairs --input %t/pairs/out0.npy --input %t/pairs/out1.npy --input %t/broken/many.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/bad 2>&1 | FileCheck %s --check-prefix=MANY
// MANY: spconv-run: error: @subm_from_pairs: spconv.rulebook_from_pairs at line {{[0-9]+}}: 100 pairs, but the shorter row tensor holds

!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
!down = !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>

func.func @subm_both_ways(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %x: tensor<?x3xf32>, %w: tensor<27x3x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>> -> !subm, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  %direct = spconv.rulebook_conv %rb, %x, %w : !subm, tensor<?x3xf32>, tensor<27x3x4xf32> -> tensor<?x4xf32>
  %in, %out, %off = spconv.rulebook_pairs %rb : !subm -> tensor<?xi32>, tensor<?xi32>, tensor<28xi64>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %again = spconv.rulebook_from_pairs %in, %out, %off, %n, %n : tensor<?xi32>, tensor<?xi32>, tensor<28xi64> -> !subm
  %y = spconv.rulebook_conv %again, %x, %w : !subm, tensor<?x3xf32>, tensor<27x3x4xf32> -> tensor<?x4xf32>
  return %direct, %y : tensor<?x4xf32>, tensor<?x4xf32>
}

func.func @down_both_ways(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %x: tensor<?x3xf32>, %w: tensor<8x3x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>> -> !down, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>
  %direct = spconv.rulebook_conv %rb, %x, %w : !down, tensor<?x3xf32>, tensor<8x3x4xf32> -> tensor<?x4xf32>
  %in, %out, %off = spconv.rulebook_pairs %rb : !down -> tensor<?xi32>, tensor<?xi32>, tensor<9xi64>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %m = tensor.dim %oc, %c0 : tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>
  %again = spconv.rulebook_from_pairs %in, %out, %off, %n, %m : tensor<?xi32>, tensor<?xi32>, tensor<9xi64> -> !down
  %y = spconv.rulebook_conv %again, %x, %w : !down, tensor<?x3xf32>, tensor<8x3x4xf32> -> tensor<?x4xf32>
  return %direct, %y : tensor<?x4xf32>, tensor<?x4xf32>
}

func.func @subm_pairs(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>) -> (tensor<?xi32>, tensor<?xi32>, tensor<28xi64>) {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>> -> !subm, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  %in, %out, %off = spconv.rulebook_pairs %rb : !subm -> tensor<?xi32>, tensor<?xi32>, tensor<28xi64>
  return %in, %out, %off : tensor<?xi32>, tensor<?xi32>, tensor<28xi64>
}

func.func @subm_from_pairs(%in: tensor<?xi32>, %out: tensor<?xi32>, %off: tensor<28xi64>, %x: tensor<?x3xf32>, %w: tensor<27x3x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %rb = spconv.rulebook_from_pairs %in, %out, %off, %n, %n : tensor<?xi32>, tensor<?xi32>, tensor<28xi64> -> !subm
  %y = spconv.rulebook_conv %rb, %x, %w : !subm, tensor<?x3xf32>, tensor<27x3x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
