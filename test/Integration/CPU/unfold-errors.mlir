// unfold and fold with sizes that only the data can confirm. A kernel that
// does not fit the padded input gives no window position: an error, as in
// PyTorch, never an empty result. Sizes the types make static are checked
// against the data. spconv-run stops with a message naming the op, its line
// (those of the ops at the end of this file) and the sizes.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy; numpy.save('%t/x34.npy', numpy.arange(12, dtype=numpy.float32).reshape(1, 1, 3, 4))"
// RUN: %python -c "import numpy; numpy.save('%t/x42.npy', numpy.zeros((1, 1, 4, 2), numpy.float32))"
// RUN: %python -c "import numpy; numpy.save('%t/x24.npy', numpy.zeros((1, 1, 2, 4), numpy.float32))"
// RUN: %python -c "import numpy; numpy.save('%t/x44.npy', numpy.zeros((1, 1, 4, 4), numpy.float32))"
// RUN: %python -c "import numpy; numpy.save('%t/cols3.npy', numpy.zeros((1, 9, 3), numpy.float32))"
// RUN: %python -c "import numpy; numpy.save('%t/rows10.npy', numpy.zeros((1, 10, 2), numpy.float32))"

// The window fits: two positions of a 3x3 kernel on 3x4.
// RUN: spconv-run %s --entry unfold --input %t/x34.npy --output-dir %t/unfold
// RUN: %python -c "import numpy, sys; print(numpy.load(sys.argv[1]).astype(int).tolist())" %t/unfold/out0.npy | FileCheck %s --check-prefix=UNFOLD
// UNFOLD: {{\[\[\[}}0, 1], [1, 2], [2, 3], [4, 5], [5, 6], [6, 7], [8, 9], [9, 10], [10, 11]]]

// It does not: 2 columns for a kernel 3 wide, with or without a static L.
// RUN: not spconv-run %s --entry unfold --input %t/x42.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: spconv-run: error: @unfold: spconv.unfold at line 42: the window does not fit in spatial dimension 1: input extent 2 + 2 * padding 0 is smaller than the dilated kernel extent 3
// RUN: not spconv-run %s --entry unfold_static_l --input %t/x24.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=EMPTY-STATIC
// EMPTY-STATIC: spconv-run: error: @unfold_static_l: spconv.unfold at line 47: the window does not fit in spatial dimension 0: input extent 2 + 2 * padding 0 is smaller than the dilated kernel extent 3

// A static L that the input contradicts.
// RUN: spconv-run %s --entry unfold_static_l --input %t/x34.npy --output-dir %t/unfold_l
// RUN: cmp %t/unfold/out0.npy %t/unfold_l/out0.npy
// RUN: not spconv-run %s --entry unfold_static_l --input %t/x44.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=COLUMNS
// COLUMNS: spconv-run: error: @unfold_static_l: spconv.unfold at line 47: 4 window positions, but its result has the static number of columns 2

// fold: the adjoint (overlaps summed), then an L and a row count that do
// not fit the output size and the kernel.
// RUN: spconv-run %s --entry fold --input %t/unfold/out0.npy --output-dir %t/fold
// RUN: %python -c "import numpy, sys; print(numpy.load(sys.argv[1]).astype(int).tolist())" %t/fold/out0.npy | FileCheck %s --check-prefix=FOLD
// FOLD: {{\[\[\[\[}}0, 2, 4, 3], [4, 10, 12, 7], [8, 18, 20, 11]]]]
// RUN: not spconv-run %s --entry fold --input %t/cols3.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=FOLD-COLUMNS
// FOLD-COLUMNS: spconv-run: error: @fold: spconv.fold at line 52: 3 input columns, but the output size has the number of window positions 2
// RUN: not spconv-run %s --entry fold_channels --input %t/rows10.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=FOLD-ROWS
// FOLD-ROWS: spconv-run: error: @fold_channels: spconv.fold at line 57: 10 input rows, not a multiple of the kernel volume 9

func.func @unfold(%x: tensor<1x1x?x?xf32>) -> tensor<1x9x?xf32> {
  %c = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x1x?x?xf32> -> tensor<1x9x?xf32>
  return %c : tensor<1x9x?xf32>
}

func.func @unfold_static_l(%x: tensor<1x1x?x4xf32>) -> tensor<1x9x2xf32> {
  %c = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x1x?x4xf32> -> tensor<1x9x2xf32>
  return %c : tensor<1x9x2xf32>
}

func.func @fold(%c: tensor<1x9x?xf32>) -> tensor<1x1x3x4xf32> {
  %x = spconv.fold <regular, kernel = [3, 3]> %c : tensor<1x9x?xf32> -> tensor<1x1x3x4xf32>
  return %x : tensor<1x1x3x4xf32>
}

func.func @fold_channels(%c: tensor<1x?x2xf32>) -> tensor<1x?x3x4xf32> {
  %x = spconv.fold <regular, kernel = [3, 3]> %c : tensor<1x?x2xf32> -> tensor<1x?x3x4xf32>
  return %x : tensor<1x?x3x4xf32>
}
