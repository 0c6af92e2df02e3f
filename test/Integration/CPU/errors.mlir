// Bad inputs stop spconv-run with a message that names the problem.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_npy.py %t/feats.npy float32 "zeros:2x4"
// RUN: %python %S/Inputs/make_npy.py %t/weight.npy float32 "zeros:27x4x4"

// Two input rows at the same site.
// RUN: %python %S/Inputs/make_npy.py %t/dup.npy int32 "[[0, 1, 2, 3], [0, 1, 2, 3]]"
// RUN: not spconv-run %s --entry f --input %t/dup.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=DUP
// DUP: spconv-run: error: @f: duplicate input site (0, 1, 2, 3) at rows 0 and 1

// Regular convs detect duplicates too.
// RUN: %python %S/Inputs/make_npy.py %t/dup3.npy int32 "[[0, 1, 2, 3], [0, 5, 5, 5], [0, 1, 2, 3]]"
// RUN: %python %S/Inputs/make_npy.py %t/feats3.npy float32 "zeros:3x4"
// RUN: %python %S/Inputs/make_npy.py %t/weight8.npy float32 "zeros:8x4x4"
// RUN: not spconv-run %s --entry down --input %t/dup3.npy --input %t/feats3.npy --input %t/weight8.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=DUP-REGULAR
// DUP-REGULAR: spconv-run: error: @down: duplicate input site (0, 1, 2, 3) at rows 0 and 2

// A coordinate outside the [8, 8, 8] grid.
// RUN: %python %S/Inputs/make_npy.py %t/outside.npy int32 "[[0, 1, 2, 3], [0, 8, 0, 0]]"
// RUN: not spconv-run %s --entry f --input %t/outside.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// OUTSIDE: spconv-run: error: @f: input coordinates: row 1: coordinate 0 (column 1) = 8 is outside [0, 8)

// A negative batch index.
// RUN: %python %S/Inputs/make_npy.py %t/negative.npy int32 "[[0, 1, 2, 3], [-1, 0, 0, 0]]"
// RUN: not spconv-run %s --entry f --input %t/negative.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: spconv-run: error: @f: input coordinates: row 1: batch index -1 is outside

// A strided build finds a site outside the grid as well.
// RUN: %python %S/Inputs/make_npy.py %t/outside3.npy int32 "[[0, 1, 2, 3], [0, 8, 0, 0], [0, 5, 5, 5]]"
// RUN: not spconv-run %s --entry down --input %t/outside3.npy --input %t/feats3.npy --input %t/weight8.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=OUTSIDE-REGULAR
// OUTSIDE-REGULAR: spconv-run: error: @down: input coordinates: row 1: coordinate 0 (column 1) = 8 is outside [0, 8)

// The GPU target's builds report the same errors (docs/GPU.md): a subm
// build whose layers are implicit GEMMs at the end of the call, a strided
// build at its one read-back, after the unique.
// RUN: not spconv-run %s --entry f --target gpu-emulator --input %t/dup.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=DUP
// RUN: not spconv-run %s --entry f --target gpu-emulator --input %t/outside.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// RUN: not spconv-run %s --entry f --target gpu-emulator --input %t/negative.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not spconv-run %s --entry down --target gpu-emulator --input %t/dup3.npy --input %t/feats3.npy --input %t/weight8.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=DUP-REGULAR
// RUN: not spconv-run %s --entry down --target gpu-emulator --input %t/outside3.npy --input %t/feats3.npy --input %t/weight8.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=OUTSIDE-REGULAR

// Inputs that do not match the function's arguments.
// RUN: %python %S/Inputs/make_npy.py %t/ok.npy int32 "[[0, 1, 2, 3], [0, 1, 2, 4]]"
// RUN: not spconv-run %s --entry f --input %t/feats.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: spconv-run: error: --input #0 ({{.*}}feats.npy): dtype f4 does not match argument 0 (tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, dtype i4)
// RUN: not spconv-run %s --entry f --input %t/ok.npy --input %t/weight.npy --input %t/weight.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: spconv-run: error: --input #1 ({{.*}}weight.npy): rank 3 does not match argument 1 (tensor<?x4xf32>)
// RUN: not spconv-run %s --entry f --input %t/ok.npy --input %t/feats.npy --input %t/feats.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: spconv-run: error: --input #2 ({{.*}}feats.npy): rank 2 does not match argument 2 (tensor<27x4x4xf32>)
// RUN: %python %S/Inputs/make_npy.py %t/weight26.npy float32 "zeros:26x4x4"
// RUN: not spconv-run %s --entry f --input %t/ok.npy --input %t/feats.npy --input %t/weight26.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=EXTENT
// EXTENT: spconv-run: error: --input #2 ({{.*}}weight26.npy): shape f4[26, 4, 4] does not match argument 2 (tensor<27x4x4xf32>) in dimension 0
// RUN: not spconv-run %s --entry f --input %t/missing.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: spconv-run: error: --input #0 ({{.*}}missing.npy):
// RUN: not spconv-run %s --entry f --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: spconv-run: error: @f takes 3 arguments but 1 --input files were given
// RUN: not spconv-run %s --entry g --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: spconv-run: error: unknown entry function 'g'; the module defines: f, down
// RUN: not spconv-run %s --entry f --target tpu --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: spconv-run: error: --target must be cpu, cuda or gpu-emulator, got 'tpu'
// RUN: not spconv-run %s --entry f --target gpu-emulator --subm-search hash --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=SEARCH
// SEARCH: spconv-run: error: --subm-search applies to --target cpu only
// RUN: not spconv-run %s --entry f --target gpu-emulator --chunk-bytes 64 --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=CHUNK-TARGET
// CHUNK-TARGET: spconv-run: error: --chunk-bytes applies to --target cpu only
// RUN: not spconv-run %s --entry f --gpu-race-check --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=RACE-TARGET
// RACE-TARGET: spconv-run: error: --gpu-race-check applies to --target gpu-emulator only
// RUN: not spconv-run %s --entry f --gpu-conv=gather-scatter --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=CONV-TARGET
// CONV-TARGET: spconv-run: error: --gpu-conv applies to the GPU targets only
// RUN: not spconv-run %s --entry f --target gpu-emulator --gpu-conv=winograd --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=CONV-KIND
// CONV-KIND: spconv-run: error: --gpu-conv must be implicit-gemm or gather-scatter, got 'winograd'
// RUN: not spconv-run %s --entry f --chunk-bytes 0 --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=CHUNK
// CHUNK: spconv-run: error: --chunk-bytes must be positive

// Features with a row count other than the coordinates' (the types cannot
// say: both are dynamic). Neither target reads past the features.
// RUN: not spconv-run %s --entry f --input %t/ok.npy --input %t/feats3.npy --input %t/weight.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not spconv-run %s --entry f --input %t/ok.npy --input %t/feats3.npy --input %t/weight.npy --output-dir %t/out --target gpu-emulator 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: spconv-run: error: @f: features have 3 rows but there are 2 input sites
// RUN: %python %S/Inputs/make_npy.py %t/feats1.npy float32 "zeros:1x4"
// RUN: not spconv-run %s --entry up --input %t/ok.npy --input %t/feats.npy --input %t/weight8.npy --input %t/feats1.npy --input %t/weight8.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=ROWS-INVERSE
// ROWS-INVERSE: spconv-run: error: @up: features have 1 rows but there are 2 output sites of the inverted convolution

// And with good inputs it runs.
// RUN: spconv-run %s --entry f --input %t/ok.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/out
// RUN: ls %t/out | FileCheck %s --check-prefix=OUT
// OUT: out0.npy

func.func @f(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %x: tensor<?x4xf32>, %w: tensor<27x4x4xf32>)
    -> tensor<?x4xf32> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  return %of : tensor<?x4xf32>
}

func.func @down(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %x: tensor<?x4xf32>, %w: tensor<8x4x4xf32>)
    -> tensor<?x4xf32> {
  %oc, %of = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %x, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<8x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>
  return %of : tensor<?x4xf32>
}

// The inverse conv reads its forward conv's output sites: its features
// must have one row per output site.
func.func @up(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %x: tensor<?x4xf32>, %w: tensor<8x4x4xf32>,
              %y: tensor<?x4xf32>, %wi: tensor<8x4x4xf32>) -> tensor<?x4xf32> {
  %oc, %of = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %x, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<8x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>
  %up = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %oc, %y, %wi
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>,
        tensor<?x4xf32>, tensor<8x4x4xf32> -> tensor<?x4xf32>
  return %up : tensor<?x4xf32>
}

// --profile prints one line per timed op: id, ms, rows produced, label.
// RUN: spconv-run %s --entry f --input %t/ok.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/out --profile | FileCheck %s --check-prefix=PROFILE
// PROFILE: # ms rows op
// PROFILE-NEXT: 0 {{[0-9.]+}} 2 build_rulebook #spconv.geom<subm, kernel = [3, 3, 3]> on [8, 8, 8] at line
// PROFILE-NEXT: 1 {{[0-9.]+}} 2 rulebook_conv #spconv.geom<subm, kernel = [3, 3, 3]> 4->4 at line
// PROFILE-NEXT: {{[0-9.]+}} total of the timed ops

// Kept at the end: spconv-run-cache.test names the lines of @f.
// RUN: not spconv-run %s --entry f --gpu-mma-ops=mma-sync --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=MMA-TARGET
// MMA-TARGET: spconv-run: error: --gpu-mma-ops applies to the GPU targets only
// RUN: not spconv-run %s --entry f --target gpu-emulator --gpu-mma-ops=wgmma --input %t/ok.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=MMA-KIND
// MMA-KIND: spconv-run: error: --gpu-mma-ops must be auto, mma-sync or subgroup-mma, got 'wgmma'
