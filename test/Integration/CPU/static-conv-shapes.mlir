// Static row counts in the results of convs and pools (the functions come
// first so that the source lines the errors name stay put).
!in = tensor<?x3xi32, #spconv.grid<[8, 8]>>
func.func @down8(%c: !in, %f: tensor<?x4xf32>, %w: tensor<9x4x2xf32>) -> (tensor<8x3xi32, #spconv.grid<[4, 4]>>, tensor<8x2xf32>) {
  %oc, %y = spconv.conv <regular, kernel = [3, 3], stride = [2, 2], padding = [1, 1]> %c, %f, %w : !in, tensor<?x4xf32>, tensor<9x4x2xf32> -> tensor<8x3xi32, #spconv.grid<[4, 4]>>, tensor<8x2xf32>
  return %oc, %y : tensor<8x3xi32, #spconv.grid<[4, 4]>>, tensor<8x2xf32>
}
func.func @down5_sites(%c: !in, %f: tensor<?x4xf32>, %w: tensor<9x4x2xf32>) -> tensor<5x3xi32, #spconv.grid<[4, 4]>> {
  %oc, %y = spconv.conv <regular, kernel = [3, 3], stride = [2, 2], padding = [1, 1]> %c, %f, %w : !in, tensor<?x4xf32>, tensor<9x4x2xf32> -> tensor<5x3xi32, #spconv.grid<[4, 4]>>, tensor<?x2xf32>
  return %oc : tensor<5x3xi32, #spconv.grid<[4, 4]>>
}
func.func @down5_rows(%c: !in, %f: tensor<?x4xf32>, %w: tensor<9x4x2xf32>) -> tensor<5x2xf32> {
  %oc, %y = spconv.conv <regular, kernel = [3, 3], stride = [2, 2], padding = [1, 1]> %c, %f, %w : !in, tensor<?x4xf32>, tensor<9x4x2xf32> -> tensor<?x3xi32, #spconv.grid<[4, 4]>>, tensor<5x2xf32>
  return %y : tensor<5x2xf32>
}
func.func @pool5(%c: !in, %f: tensor<?x4xf32>) -> tensor<5x4xf32> {
  %oc, %y = spconv.pool max <regular, kernel = [3, 3], stride = [2, 2], padding = [1, 1]> %c, %f : !in, tensor<?x4xf32> -> tensor<?x3xi32, #spconv.grid<[4, 4]>>, tensor<5x4xf32>
  return %y : tensor<5x4xf32>
}

// RUN: rm -rf %t && mkdir -p %t
// Two sites whose 3x3 stride-2 windows reach 4 outputs each, 8 in all.
// RUN: %python %S/Inputs/make_npy.py %t/c.npy int32 "[[0, 1, 1], [0, 5, 5]]"
// RUN: %python %S/Inputs/make_npy.py %t/f.npy float32 "[[1, 2, 3, 4], [5, 6, 7, 8]]"
// RUN: %python -c "import numpy as np; np.save('%t/w.npy', np.arange(72, dtype=np.float32).reshape(9, 4, 2) / 10)"
// RUN: spconv-ref conv --kind regular --kernel 3,3 --stride 2,2 --padding 1,1 --grid 8,8 --coords %t/c.npy --features %t/f.npy --weight %t/w.npy --out-dir %t/ref

// The right static count: the same as the reference.
// RUN: spconv-run %s --entry down8 --input %t/c.npy --input %t/f.npy --input %t/w.npy --output-dir %t/down8
// RUN: spconv-npy-compare %t/down8/out0.npy %t/ref/out0.npy
// RUN: spconv-npy-compare %t/down8/out1.npy %t/ref/out1.npy
// RUN: spconv-run %s --entry down8 --target gpu-emulator --input %t/c.npy --input %t/f.npy --input %t/w.npy --output-dir %t/down8-emu
// RUN: spconv-npy-compare %t/down8-emu/out1.npy %t/ref/out1.npy

// A wrong one is named, for the coordinates, the features and a pool.
// RUN: not spconv-run %s --entry down5_sites --input %t/c.npy --input %t/f.npy --input %t/w.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=SITES
// SITES: spconv-run: error: @down5_sites: spconv.build_rulebook at line 9: 8 output sites, but its output coordinates have the static number of rows 5
// RUN: not spconv-run %s --entry down5_rows --input %t/c.npy --input %t/f.npy --input %t/w.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not spconv-run %s --entry down5_rows --target gpu-emulator --input %t/c.npy --input %t/f.npy --input %t/w.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: spconv-run: error: @down5_rows: spconv.rulebook_conv at line 13: 8 output rows, but its result has the static number of rows 5
// RUN: not spconv-run %s --entry pool5 --input %t/c.npy --input %t/f.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=POOL
// POOL: spconv-run: error: @pool5: spconv.rulebook_pool at line 17: 8 output sites, but its result has the static number of rows 5
