// RUN: spconv-opt %s -split-input-file -convert-spconv-to-scf | FileCheck %s
// RUN: spconv-opt %s -split-input-file -convert-spconv-to-scf="max-unrolled-offsets=343" | FileCheck %s --check-prefix=UNROLLED
// RUN: spconv-opt %s -split-input-file -spconv-to-cpu -o /dev/null
// RUN: spconv-opt %s -split-input-file -spconv-to-cuda="format=isa" -o /dev/null

// Kernels of more than max-unrolled-offsets (125) offsets loop over them: the
// builder's IR does not grow with the kernel volume, so a 7x7x7 or a
// 21x21x21 kernel compiles as quickly as a 3x3x3 one. Subm searches the hash
// table (the sorted merge is built for unrolled offsets), only the offsets
// below the centre (171 of 343), one probe per loop.

// CHECK-LABEL: func.func private @spconv_build_subm_k7x7x7_s1x1x1_p3x3x3_d1x1x1_g16x16x16(
// CHECK:         scf.parallel
// CHECK:           scf.for %[[OFFSET:.*]] = %{{.*}} to %c171{{.*}} step
// CHECK:             scf.for
// CHECK:               call @spconv_ht_find_slot
// CHECK-NOT:           call @spconv_ht_find_slot
// CHECK:         } {spconv.kernel = "count_pairs"}
// CHECK:         scf.parallel
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c171{{.*}} step
// CHECK:               call @spconv_ht_find_slot
// CHECK-NOT:           call @spconv_ht_find_slot
// CHECK:         } {spconv.kernel = "write_pairs"}

// Unrolled at a higher threshold: the sorted merge, offsets as constants.
// UNROLLED: func.func private @spconv_build_subm_k7x7x7_s1x1x1_p3x3x3_d1x1x1_g16x16x16_sorted(

!c = tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [7, 7, 7]>, #spconv.grid<[16, 16, 16]>>
func.func @subm7(%c: !c, %f: tensor<?x4xf32>, %w: tensor<343x4x4xf32>) -> tensor<?x4xf32> {
  %rb, %oc = spconv.build_rulebook %c : !c -> !rb, !c
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<343x4x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// Regular: every offset is searched, in one loop.
// CHECK-LABEL: func.func private @spconv_build_regular_k21x21x21_s2x2x2_p10x10x10_d1x1x1_g41x1600x1408(
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c9261{{.*}} step
// CHECK:         } {spconv.kernel = "count_pairs"}
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c9261{{.*}} step
// CHECK:         } {spconv.kernel = "write_pairs"}

!c = tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
!rb = !spconv.rulebook<#spconv.geom<regular, kernel = [21, 21, 21], stride = [2, 2, 2], padding = [10, 10, 10]>, #spconv.grid<[41, 1600, 1408]>>
func.func @regular21(%c: !c, %f: tensor<?x16xf32>, %w: tensor<9261x16x16xf32>) -> tensor<?x16xf32> {
  %rb, %oc = spconv.build_rulebook %c : !c -> !rb, tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x16xf32>, tensor<9261x16x16xf32> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// Fold sums its columns in an offset loop too.
// CHECK-LABEL: func.func @fold_large(
// CHECK:         scf.parallel
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c169{{.*}} step %{{.*}} iter_args
// CHECK:         } {spconv.kernel = "fold"}
func.func @fold_large(%x: tensor<1x338x256xf32>) -> tensor<1x2x16x16xf32> {
  %y = spconv.fold <regular, kernel = [13, 13], padding = [6, 6]> %x : tensor<1x338x256xf32> -> tensor<1x2x16x16xf32>
  return %y : tensor<1x2x16x16xf32>
}
