// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash" -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-conv=gather-scatter" -split-input-file | FileCheck %s --check-prefix=GATHER

// The GPU's convolution with static channel counts: an output-major
// neighbour table from the rulebook's pairs, then one gpu.launch over tiles
// of output rows x output channels that stages gathered rows and the weight
// slice in workgroup memory between two barriers and writes every output
// once, bias included.
// CHECK-LABEL: func.func @conv
// CHECK: %[[RESULT:.*]] = memref.alloc(%{{.*}}) : memref<?x32xf32>
// CHECK: call @spconv_rt_report_row_mismatch
// CHECK: scf.if %{{.*}} {
// The table: -1 everywhere, then each pair's input row at (output row,
// offset), the offset found by a binary search over the CSR offsets.
// CHECK: %[[TABLE:.*]] = memref.alloc(%{{.*}}) : memref<?x27xi32>
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[TABLE]]
// CHECK: } {spconv.kernel = "neighbour_table_init"}
// CHECK: scf.parallel
// CHECK-COUNT-5: arith.select
// CHECK: memref.store %{{.*}}, %[[TABLE]][%{{.*}}, %{{.*}}] : memref<?x27xi32>
// CHECK: } {spconv.kernel = "neighbour_table"}
// 16 -> 32 channels: tiles of 64 rows x 32 channels, 16 input channels at a
// time, 128 threads of 4 x 4 outputs each; no launch for no tiles.
// CHECK: %[[TILES:.*]] = arith.muli
// CHECK: scf.if
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%[[GX:.*]] = %[[TILES]], %{{.*}}, %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128
// CHECK: %[[IN_TILE:.*]] = memref.alloca() : memref<16x64xf32, #gpu.address_space<workgroup>>
// CHECK: %[[W_TILE:.*]] = memref.alloca() : memref<16x32xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for %{{.*}} = %[[BX]] to %[[TILES]] step %[[GX]]
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c27
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16 step %c16{{.*}} iter_args
// CHECK: scf.for %{{.*}} = %[[TX]] to %c1024 step %c128
// CHECK: memref.load %[[TABLE]][%{{.*}}, %[[K]]] : memref<?x27xi32>
// CHECK: memref.store %{{.*}}, %[[IN_TILE]]
// CHECK: scf.for %{{.*}} = %[[TX]] to %c512 step %c128
// CHECK: memref.store %{{.*}}, %[[W_TILE]]
// CHECK: gpu.barrier
// CHECK: vector.load %[[IN_TILE]]{{.*}} vector<4xf32>
// CHECK: vector.load %[[W_TILE]]{{.*}} vector<4xf32>
// CHECK-COUNT-4: vector.fma
// CHECK: gpu.barrier
// The epilogue: bias added, each element stored once.
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[RESULT]]
// CHECK: gpu.terminator
// CHECK: } {spconv.kernel = "conv_f32_16x32", spconv.tile = {cols = 32 : i64, depth = 16 : i64, rows = 64 : i64, thread_cols = 4 : i64, thread_rows = 4 : i64, threads = 128 : i64}}
// Features of the wrong length leave the result at its bias.
// CHECK: } else {
// CHECK: } {spconv.kernel = "init_rows"}
//
// GATHER-LABEL: func.func @conv
// GATHER-NOT: gpu.launch
// GATHER: } {spconv.kernel = "conv_f32_16x32"}
func.func @conv(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                %features: tensor<?x16xf32>, %w: tensor<27x16x32xf32>,
                %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w bias %b
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x16xf32>, tensor<27x16x32xf32>, tensor<32xf32> -> tensor<?x32xf32>
  return %out : tensor<?x32xf32>
}

// -----

// f16 features and weights: staged as f32, summed in f32, stored as f16.
// Dynamic channel counts keep the gather-scatter form.
// CHECK-LABEL: func.func @conv_f16
// CHECK: gpu.launch
// CHECK: memref.alloca() : memref<8x128xf32, #gpu.address_space<workgroup>>
// CHECK: arith.extf
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: spconv.kernel = "conv_f16_8x8"
// CHECK-LABEL: func.func @conv_dynamic
// CHECK-NOT: gpu.launch
// CHECK: spconv.kernel = "conv_f32_dynxdyn"
func.func @conv_f16(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                    %features: tensor<?x8xf16>, %w: tensor<27x8x8xf16>) -> tensor<?x8xf16> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x8xf16>, tensor<27x8x8xf16> -> tensor<?x8xf16>
  return %out : tensor<?x8xf16>
}
func.func @conv_dynamic(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                        %features: tensor<?x?xf32>, %w: tensor<27x?x?xf32>) -> tensor<?x?xf32> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x?xf32>, tensor<27x?x?xf32> -> tensor<?x?xf32>
  return %out : tensor<?x?xf32>
}
