// RUN: spconv-opt %s -spconv-decompose -spconv-share-rulebooks -split-input-file | FileCheck %s

// Two subm layers on the same sites share one rulebook; the stride-2 conv
// builds its own; the subm layers on its output share another.
// CHECK-LABEL: func @encoder
// CHECK-SAME: (%[[C:[^:]*]]:
// CHECK: %[[S0:.*]], %{{.*}} = spconv.build_rulebook %[[C]] {{.*}}<subm, kernel = [3, 3, 3]>
// CHECK: spconv.rulebook_conv %[[S0]]
// CHECK-NEXT: spconv.rulebook_conv %[[S0]]
// CHECK: %[[D:.*]], %[[C1:.*]] = spconv.build_rulebook %[[C]] {{.*}}<regular
// CHECK: spconv.rulebook_conv %[[D]]
// CHECK: %[[S1:.*]], %{{.*}} = spconv.build_rulebook %[[C1]] {{.*}}<subm, kernel = [3, 3, 3]>
// CHECK: spconv.rulebook_conv %[[S1]]
// CHECK-NEXT: spconv.rulebook_conv %[[S1]]
// CHECK-NOT: spconv.build_rulebook
func.func @encoder(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x16xf32>,
                   %w: tensor<27x16x16xf32>, %wd: tensor<27x16x16xf32>) -> tensor<?x16xf32> {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x16xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>
  %b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %a#1, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x16xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>
  %d:2 = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %c, %b#1, %wd
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x16xf32>
      -> tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x16xf32>
  %e:2 = spconv.conv <subm, kernel = [3, 3, 3]> %d#0, %d#1, %w
      : tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x16xf32>, tensor<27x16x16xf32>
      -> tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x16xf32>
  %g:2 = spconv.conv <subm, kernel = [3, 3, 3]> %d#0, %e#1, %w
      : tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x16xf32>, tensor<27x16x16xf32>
      -> tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x16xf32>
  return %g#1 : tensor<?x16xf32>
}

// -----

// A build in a region is replaced by a dominating one outside it; a build
// in one branch does not replace one in the other.
// CHECK-LABEL: func @dominance
// CHECK: %[[RB:.*]], %{{.*}} = spconv.build_rulebook
// CHECK: scf.if
// CHECK-NOT: spconv.build_rulebook
// CHECK: spconv.rulebook_conv %[[RB]]
// CHECK: } else {
// CHECK-NOT: spconv.build_rulebook
// CHECK: spconv.rulebook_conv %[[RB]]
func.func @dominance(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>,
                     %w: tensor<27x4x4xf32>, %cond: i1) -> tensor<?x4xf32> {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  %r = scf.if %cond -> tensor<?x4xf32> {
    %b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %a#1, %w
        : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
        -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
    scf.yield %b#1 : tensor<?x4xf32>
  } else {
    %b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
        : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
        -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
    scf.yield %b#1 : tensor<?x4xf32>
  }
  return %r : tensor<?x4xf32>
}

// -----

// Sibling branches do not dominate each other: each keeps its build.
// CHECK-LABEL: func @siblings
// CHECK: scf.if
// CHECK: spconv.build_rulebook
// CHECK: } else {
// CHECK: spconv.build_rulebook
func.func @siblings(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>,
                    %w: tensor<27x4x4xf32>, %cond: i1) -> tensor<?x4xf32> {
  %r = scf.if %cond -> tensor<?x4xf32> {
    %b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
        : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
        -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
    scf.yield %b#1 : tensor<?x4xf32>
  } else {
    %b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
        : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
        -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
    scf.yield %b#1 : tensor<?x4xf32>
  }
  return %r : tensor<?x4xf32>
}

// -----

// The MinkUNet pattern: after sharing, each decoder stage reads the
// rulebook of the encoder stage it inverts.
// CHECK-LABEL: func @unet
// CHECK: %[[D1:.*]], %[[C1:.*]] = spconv.build_rulebook %{{.*}} {{.*}}<regular
// CHECK: %[[X1:.*]] = spconv.rulebook_conv %[[D1]]
// CHECK: %[[D2:.*]], %{{.*}} = spconv.build_rulebook %[[C1]] {{.*}}<regular
// CHECK: %[[X2:.*]] = spconv.rulebook_conv %[[D2]], %[[X1]]
// CHECK-NOT: spconv.build_rulebook
// CHECK: %[[U2:.*]] = spconv.rulebook_conv inverse %[[D2]], %[[X2]]
// CHECK: spconv.rulebook_conv inverse %[[D1]], %[[U2]]
func.func @unet(%c0: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>, %f: tensor<?x4xf32>,
                %w: tensor<8x4x4xf32>) -> tensor<?x4xf32> {
  %d1:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c0, %f, %w
      : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>, tensor<?x4xf32>, tensor<8x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  %d2:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %d1#0, %d1#1, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<8x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>
  %u2 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %d1#0, %d2#0, %d2#1, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>,
        tensor<?x4xf32>, tensor<8x4x4xf32> -> tensor<?x4xf32>
  %u1 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %c0, %d1#0, %u2, %w
      : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>,
        tensor<?x4xf32>, tensor<8x4x4xf32> -> tensor<?x4xf32>
  return %u1 : tensor<?x4xf32>
}
