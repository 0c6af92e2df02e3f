// Static result sizes that only the data can confirm are checked at run
// time: when they hold the op runs as usual, when they do not spconv-run
// stops with a message naming the op, its line (the line numbers below are
// those of the ops at the end of this file) and both sizes, and the op reads
// and writes nothing past its buffers meanwhile.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_npy.py %t/keys3.npy int64 "[7, 3, 7, 9, 3]"
// RUN: %python %S/Inputs/make_npy.py %t/keys4.npy int64 "[7, 3, 7, 9, 1]"
// RUN: %python %S/Inputs/make_npy.py %t/keys_short.npy int64 "[7, 3, 7, 9]"
// RUN: %python %S/Inputs/make_npy.py %t/coords2.npy int32 "[[0, 1, 2, 3], [0, 4, 5, 6]]"
// RUN: %python %S/Inputs/make_npy.py %t/coords3.npy int32 "[[0, 1, 2, 3], [0, 4, 5, 6], [0, 7, 7, 7]]"
// RUN: %python %S/Inputs/make_npy.py %t/feats.npy float32 "[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]"
// RUN: %python %S/Inputs/make_npy.py %t/feats2.npy float32 "[[1, 2], [5, 6]]"
// RUN: %python %S/Inputs/make_npy.py %t/rows2.npy int32 "[2, -1]"
// RUN: %python %S/Inputs/make_npy.py %t/rows3.npy int32 "[2, -1, 0]"

// The static unique count is right: the usual results.
// RUN: spconv-run %s --entry unique3 --input %t/keys3.npy --output-dir %t/unique3
// RUN: %python -c "import numpy, sys; [print(numpy.load(f).tolist()) for f in sys.argv[1:]]" %t/unique3/out0.npy %t/unique3/out1.npy %t/unique3/out2.npy | FileCheck %s --check-prefix=UNIQUE3
// UNIQUE3: [3, 7, 9]
// UNIQUE3-NEXT: [1, 0, 3]
// UNIQUE3-NEXT: [1, 0, 1, 2, 0]

// Four distinct keys where the types say three.
// RUN: not spconv-run %s --entry unique3 --input %t/keys4.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=UNIQUE4
// UNIQUE4: spconv-run: error: @unique3: spconv.sort_unique at line 64: 4 unique keys, but its unique and first results have the static size 3

// Dynamic keys against a static inverse map.
// RUN: spconv-run %s --entry inverse5 --input %t/keys3.npy --output-dir %t/inverse5
// RUN: not spconv-run %s --entry inverse5 --input %t/keys_short.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=INVERSE
// INVERSE: spconv-run: error: @inverse5: spconv.sort_unique at line 69: 4 keys, but its inverse result has the static size 5

// linearize and delinearize with a static number of sites.
// RUN: spconv-run %s --entry linearize2 --input %t/coords2.npy --output-dir %t/lin
// RUN: %python -c "import numpy, sys; print(numpy.load(sys.argv[1]).tolist())" %t/lin/out0.npy | FileCheck %s --check-prefix=LIN
// LIN: [83, 302]
// RUN: not spconv-run %s --entry linearize2 --input %t/coords3.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=LIN-BAD
// LIN-BAD: spconv-run: error: @linearize2: spconv.linearize at line 74: 3 coordinate rows, but its keys have the static size 2
// RUN: spconv-run %s --entry delinearize2 --input %t/lin/out0.npy --output-dir %t/delin
// RUN: %python -c "import numpy, sys; print(numpy.load(sys.argv[1]).tolist())" %t/delin/out0.npy | FileCheck %s --check-prefix=DELIN
// DELIN: {{\[}}[0, 1, 2, 3], [0, 4, 5, 6]]
// RUN: not spconv-run %s --entry delinearize2 --input %t/keys_short.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=DELIN-BAD
// DELIN-BAD: spconv-run: error: @delinearize2: spconv.delinearize at line 79: 4 keys, but its coordinates have the static number of rows 2

// hash_lookup into a static result: one row per query.
// RUN: %python %S/Inputs/make_npy.py %t/table_keys.npy int64 "[7, 3, 9]"
// RUN: %python %S/Inputs/make_npy.py %t/queries3.npy int64 "[9, 4, 7]"
// RUN: spconv-run %s --entry lookup3 --input %t/table_keys.npy --input %t/queries3.npy --output-dir %t/lookup
// RUN: %python -c "import numpy, sys; print(numpy.load(sys.argv[1]).tolist())" %t/lookup/out0.npy | FileCheck %s --check-prefix=LOOKUP
// LOOKUP: [2, -1, 0]
// RUN: not spconv-run %s --entry lookup3 --input %t/table_keys.npy --input %t/keys_short.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=LOOKUP-BAD
// LOOKUP-BAD: spconv-run: error: @lookup3: spconv.hash_lookup at line 90: 4 queries, but its result has the static size 3

// gather_rows into a static result.
// RUN: spconv-run %s --entry gather2x4 --input %t/feats.npy --input %t/rows2.npy --output-dir %t/gather
// RUN: %python -c "import numpy, sys; print(numpy.load(sys.argv[1]).tolist())" %t/gather/out0.npy | FileCheck %s --check-prefix=GATHER
// GATHER: {{\[}}[9.0, 10.0, 11.0, 12.0], [0.0, 0.0, 0.0, 0.0]]
// RUN: not spconv-run %s --entry gather2x4 --input %t/feats.npy --input %t/rows3.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=GATHER-ROWS
// GATHER-ROWS: spconv-run: error: @gather2x4: spconv.gather_rows at line 84: 3 row indices, but its result has the static number of rows 2
// RUN: not spconv-run %s --entry gather2x4 --input %t/feats2.npy --input %t/rows2.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=GATHER-CHANNELS
// GATHER-CHANNELS: spconv-run: error: @gather2x4: spconv.gather_rows at line 84: 2 feature channels, but its result has the static number of channels 4

func.func @unique3(%k: tensor<5xi64>) -> (tensor<3xi64>, tensor<3xi32>, tensor<5xi32>) {
  %u, %f, %i = spconv.sort_unique %k : tensor<5xi64> -> tensor<3xi64>, tensor<3xi32>, tensor<5xi32>
  return %u, %f, %i : tensor<3xi64>, tensor<3xi32>, tensor<5xi32>
}

func.func @inverse5(%k: tensor<?xi64>) -> (tensor<?xi64>, tensor<5xi32>) {
  %u, %f, %i = spconv.sort_unique %k : tensor<?xi64> -> tensor<?xi64>, tensor<?xi32>, tensor<5xi32>
  return %u, %i : tensor<?xi64>, tensor<5xi32>
}

func.func @linearize2(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>) -> tensor<2xi64> {
  %k = spconv.linearize %c : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>> -> tensor<2xi64>
  return %k : tensor<2xi64>
}

func.func @delinearize2(%k: tensor<?xi64>) -> tensor<2x4xi32, #spconv.grid<[8, 8, 8]>> {
  %c = spconv.delinearize %k : tensor<?xi64> -> tensor<2x4xi32, #spconv.grid<[8, 8, 8]>>
  return %c : tensor<2x4xi32, #spconv.grid<[8, 8, 8]>>
}

func.func @gather2x4(%f: tensor<?x?xf32>, %r: tensor<?xi32>) -> tensor<2x4xf32> {
  %g = spconv.gather_rows %f, %r : tensor<?x?xf32>, tensor<?xi32> -> tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}

func.func @lookup3(%k: tensor<?xi64>, %q: tensor<?xi64>) -> tensor<3xi32> {
  %t = spconv.hash_build %k : tensor<?xi64> -> !spconv.hash_table
  %r = spconv.hash_lookup %t, %q : !spconv.hash_table, tensor<?xi64> -> tensor<3xi32>
  return %r : tensor<3xi32>
}
