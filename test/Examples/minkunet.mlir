// The example network must parse, verify, roundtrip and canonicalize.
// RUN: spconv-opt %spconv_src_root/examples/minkunet.mlir | spconv-opt | FileCheck %s
// RUN: spconv-opt %spconv_src_root/examples/minkunet.mlir -canonicalize -cse | FileCheck %s --check-prefix=CANON
//
// CHECK-LABEL: func.func @minkunet
// CHECK-COUNT-4: spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]>
// CHECK: spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> {{.*}} : tensor<?x4xi32, #spconv.grid<[128, 128, 8]>>, tensor<?x4xi32, #spconv.grid<[64, 64, 4]>>
// CHECK: tensor.concat
// CHECK: spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> {{.*}} : tensor<?x4xi32, #spconv.grid<[256, 256, 16]>>, tensor<?x4xi32, #spconv.grid<[128, 128, 8]>>
// CHECK: spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> {{.*}} : tensor<?x4xi32, #spconv.grid<[512, 512, 32]>>, tensor<?x4xi32, #spconv.grid<[256, 256, 16]>>
// CHECK: spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> {{.*}} : tensor<?x4xi32, #spconv.grid<[1024, 1024, 64]>>, tensor<?x4xi32, #spconv.grid<[512, 512, 32]>>
// CHECK: spconv.conv <subm, kernel = [1, 1, 1]> {{.*}} -> tensor<?x4xi32, #spconv.grid<[1024, 1024, 64]>>, tensor<?x19xf32>
//
// Canonicalization turns every pointwise subm conv (the width-changing
// projections and the classifier) into a matmul.
// CANON-LABEL: func.func @minkunet
// CANON-COUNT-7: linalg.matmul
// CANON-NOT: spconv.conv <subm, kernel = [1, 1, 1]>
// CANON-LABEL: func.func private @relu
//
// RUN: spconv-opt %spconv_src_root/examples/minkunet.mlir -canonicalize -spconv-decompose -spconv-share-rulebooks | FileCheck %s --check-prefix=SHARED
// Nine rulebooks serve 41 layers: the stem's subm, four downsamplings, the
// subm layers of the four coarser levels; every decoder layer (subm and
// inverse) reuses its encoder level's rulebooks, and nothing is realigned.
// SHARED-LABEL: func.func @minkunet
// SHARED-COUNT-9: spconv.build_rulebook
// SHARED-NOT: spconv.build_rulebook
// SHARED-NOT: spconv.gather_rows
// SHARED: return
