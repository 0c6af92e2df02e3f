// The example network must parse, verify, roundtrip and canonicalize.
// RUN: spconv-opt %spconv_src_root/examples/second_middle_encoder.mlir | spconv-opt | FileCheck %s
// RUN: spconv-opt %spconv_src_root/examples/second_middle_encoder.mlir -canonicalize -cse | FileCheck %s --check-prefix=CANON
//
// CHECK-LABEL: func.func @second_middle_encoder
// CHECK-COUNT-2: spconv.conv <subm, kernel = [3, 3, 3]> {{.*}}#spconv.grid<[41, 1600, 1408]>
// CHECK: spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> {{.*}} -> tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x32xf32>
// CHECK: spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> {{.*}} -> tensor<?x4xi32, #spconv.grid<[11, 400, 352]>>, tensor<?x64xf32>
// CHECK: spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [0, 1, 1]> {{.*}} -> tensor<?x4xi32, #spconv.grid<[5, 200, 176]>>, tensor<?x64xf32>
// CHECK: spconv.conv <regular, kernel = [3, 1, 1], stride = [2, 1, 1]> {{.*}} -> tensor<?x4xi32, #spconv.grid<[2, 200, 176]>>, tensor<?x128xf32>
//
// After canonicalization every subm layer reads the coordinates of the layer
// that made its sites.
// CANON-LABEL: func.func @second_middle_encoder
// CANON-SAME: (%[[C:[^:]*]]: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
// CANON: spconv.conv <subm, kernel = [3, 3, 3]> %[[C]],
// CANON: spconv.conv <subm, kernel = [3, 3, 3]> %[[C]],
// CANON: %[[C2:.*]], %{{.*}} = spconv.conv <regular
// CANON: spconv.conv <subm, kernel = [3, 3, 3]> %[[C2]],
// CANON: spconv.conv <subm, kernel = [3, 3, 3]> %[[C2]],
//
// RUN: spconv-opt %spconv_src_root/examples/second_middle_encoder.mlir -spconv-decompose -spconv-share-rulebooks | FileCheck %s --check-prefix=SHARED
// One rulebook per set of sites and geometry: a subm rulebook per level,
// shared by its two subm layers, and one per downsampling conv.
// SHARED-LABEL: func.func @second_middle_encoder
// SHARED-COUNT-8: spconv.build_rulebook
// SHARED-NOT: spconv.build_rulebook
// SHARED: return
