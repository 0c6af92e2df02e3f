// Rulebooks and hash tables are values like any other: chosen by
// arith.select, yielded by scf.if and scf.for, passed along cf branches,
// returned from and passed to functions. Each entry computes the same subm 3x3x3 conv through one such
// path (the path not taken holds the rulebook of one site fewer) and must
// equal the reference, on the CPU and under the GPU emulator.
// RUN: rm -rf %t && %python %S/Inputs/make_layer.py %t --grid 8,8,8 --sites 60 --cin 4 --cout 4 --volume 27 --seed 7
// RUN: spconv-ref conv --kind subm --kernel 3,3,3 --grid 8,8,8 --coords %t/coords.npy --features %t/feats.npy --weight %t/weight.npy --out-dir %t/ref
// RUN: %python -c "import numpy as np, sys; n = len(np.load(sys.argv[1])); np.save(sys.argv[2], np.arange(n, dtype=np.int32))" %t/coords.npy %t/rows.npy

// RUN: spconv-run %s --entry select --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/select
// RUN: spconv-npy-compare %t/select/out0.npy %t/ref/out1.npy --rtol 1e-4 --atol 1e-4
// RUN: spconv-run %s --entry if_yield --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/if_yield
// RUN: spconv-npy-compare %t/if_yield/out0.npy %t/ref/out1.npy --rtol 1e-4 --atol 1e-4
// RUN: spconv-run %s --entry for_carried --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/for_carried
// RUN: spconv-npy-compare %t/for_carried/out0.npy %t/ref/out1.npy --rtol 1e-4 --atol 1e-4
// RUN: spconv-run %s --entry through_calls --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/through_calls
// RUN: spconv-npy-compare %t/through_calls/out0.npy %t/ref/out1.npy --rtol 1e-4 --atol 1e-4
// RUN: spconv-run %s --entry branches --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/branches
// RUN: spconv-npy-compare %t/branches/out0.npy %t/ref/out1.npy --rtol 1e-4 --atol 1e-4
// RUN: spconv-run %s --entry select --target gpu-emulator --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/select-emu
// RUN: spconv-npy-compare %t/select-emu/out0.npy %t/ref/out1.npy --rtol 1e-4 --atol 1e-4
// RUN: spconv-run %s --entry through_calls --target gpu-emulator --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --output-dir %t/through_calls-emu
// RUN: spconv-npy-compare %t/through_calls-emu/out0.npy %t/ref/out1.npy --rtol 1e-4 --atol 1e-4

// A hash table returned by a function: every site is found at its row.
// RUN: spconv-run %s --entry table_from_call --input %t/coords.npy --output-dir %t/table
// RUN: spconv-npy-compare %t/table/out0.npy %t/rows.npy

!coords = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
!feats = tensor<?x4xf32>
!weight = tensor<27x4x4xf32>

// The sites without the last one, and whether there is more than one site.
func.func private @fewer(%c: !coords) -> (!coords, i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %c, %c0 : !coords
  %m = arith.subi %n, %c1 : index
  %fewer = tensor.extract_slice %c[0, 0] [%m, 4] [1, 1] : !coords to !coords
  %many = arith.cmpi sgt, %n, %c1 : index
  return %fewer, %many : !coords, i1
}

func.func @select(%c: !coords, %f: !feats, %w: !weight) -> !feats {
  %d, %many = func.call @fewer(%c) : (!coords) -> (!coords, i1)
  %all, %oc = spconv.build_rulebook %c : !coords -> !rb, !coords
  %some, %od = spconv.build_rulebook %d : !coords -> !rb, !coords
  %rb = arith.select %many, %all, %some : !rb
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, !feats, !weight -> !feats
  return %y : !feats
}

func.func @if_yield(%c: !coords, %f: !feats, %w: !weight) -> !feats {
  %d, %many = func.call @fewer(%c) : (!coords) -> (!coords, i1)
  %rb = scf.if %many -> !rb {
    %all, %oc = spconv.build_rulebook %c : !coords -> !rb, !coords
    scf.yield %all : !rb
  } else {
    %some, %od = spconv.build_rulebook %d : !coords -> !rb, !coords
    scf.yield %some : !rb
  }
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, !feats, !weight -> !feats
  return %y : !feats
}

func.func @branches(%c: !coords, %f: !feats, %w: !weight) -> !feats {
  %d, %many = func.call @fewer(%c) : (!coords) -> (!coords, i1)
  %all, %oc = spconv.build_rulebook %c : !coords -> !rb, !coords
  %some, %od = spconv.build_rulebook %d : !coords -> !rb, !coords
  cf.cond_br %many, ^conv(%all : !rb), ^conv(%some : !rb)
^conv(%rb: !rb):
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, !feats, !weight -> !feats
  return %y : !feats
}

// Starts from the smaller rulebook; the loop replaces it.
func.func @for_carried(%c: !coords, %f: !feats, %w: !weight) -> !feats {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d, %many = func.call @fewer(%c) : (!coords) -> (!coords, i1)
  %some, %od = spconv.build_rulebook %d : !coords -> !rb, !coords
  %rb = scf.for %i = %c0 to %c2 step %c1 iter_args(%carried = %some) -> !rb {
    %all, %oc = spconv.build_rulebook %c : !coords -> !rb, !coords
    scf.yield %all : !rb
  }
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, !feats, !weight -> !feats
  return %y : !feats
}

func.func private @make_rulebook(%c: !coords) -> !rb {
  %rb, %oc = spconv.build_rulebook %c : !coords -> !rb, !coords
  return %rb : !rb
}

func.func private @apply(%rb: !rb, %f: !feats, %w: !weight) -> !feats {
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, !feats, !weight -> !feats
  return %y : !feats
}

func.func @through_calls(%c: !coords, %f: !feats, %w: !weight) -> !feats {
  %rb = func.call @make_rulebook(%c) : (!coords) -> !rb
  %y = func.call @apply(%rb, %f, %w) : (!rb, !feats, !weight) -> !feats
  return %y : !feats
}

func.func private @make_table(%keys: tensor<?xi64>) -> !spconv.hash_table {
  %t = spconv.hash_build %keys : tensor<?xi64> -> !spconv.hash_table
  return %t : !spconv.hash_table
}

func.func @table_from_call(%c: !coords) -> tensor<?xi32> {
  %keys = spconv.linearize %c : !coords -> tensor<?xi64>
  %t = func.call @make_table(%keys) : (tensor<?xi64>) -> !spconv.hash_table
  %rows = spconv.hash_lookup %t, %keys : !spconv.hash_table, tensor<?xi64> -> tensor<?xi32>
  return %rows : tensor<?xi32>
}
