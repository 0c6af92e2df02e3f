// A tile table replaces the built-in tiles of the convs it lists, for the
// math the built-in choice takes under gpu-matmul: f32 16 -> 32 gets the
// table's fma tiles by default and its mma-tf32 tiles with gpu-matmul=tf32;
// f16 8 -> 8 gets its mma-f16 tiles (pipelined as the built-in ones are),
// but keeps the built-in fma tiles with gpu-matmul=fma (the table has no
// f16 fma entry); bf16 is not listed (its built-in tiles: bf16 fragments,
// pipelined as f16's).
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/tuned.json" | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/tuned.json gpu-matmul=tf32" | FileCheck %s --check-prefix=TF32
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/tuned.json gpu-matmul=fma" | FileCheck %s --check-prefix=FMA

// CHECK-LABEL: func.func @conv_f32
// CHECK: memref.alloca() : memref<8x32xf32, #gpu.address_space<workgroup>>
// CHECK: memref.alloca() {alignment = 16 : i64} : memref<8x16xf32, #gpu.address_space<workgroup>>
// CHECK: memref.alloca() : memref<32xi32, #gpu.address_space<workgroup>>
// CHECK: spconv.kernel = "conv_f32_16x32", spconv.tile = {cols = 16 : i64, depth = 8 : i64, math = "fma", rows = 32 : i64, thread_cols = 4 : i64, thread_rows = 2 : i64, threads = 64 : i64}
// CHECK-LABEL: func.func @conv_f16
// CHECK: spconv.kernel = "conv_f16_8x8", spconv.tile = {cols = 16 : i64, depth = 16 : i64, math = "mma-f16", rows = 64 : i64, stages = 3 : i64, threads = 128 : i64, warp_cols = 16 : i64, warp_rows = 16 : i64}
// CHECK-LABEL: func.func @conv_bf16
// CHECK: spconv.kernel = "conv_bf16_8x8", spconv.tile = {cols = 16 : i64, depth = 16 : i64, math = "mma-bf16", max_registers = 80 : i64, rows = 256 : i64, stages = 3 : i64, threads = 256 : i64, warp_cols = 16 : i64, warp_rows = 32 : i64}
// A block of more than 256 threads gets the register budget that lets one
// block fit an SM (65536 / 512).
// CHECK-LABEL: func.func @conv_f32_512_threads
// CHECK: spconv.kernel = "conv_f32_8x16", spconv.tile = {cols = 16 : i64, depth = 8 : i64, math = "fma", max_registers = 128 : i64, rows = 128 : i64, thread_cols = 4 : i64, thread_rows = 1 : i64, threads = 512 : i64}
// An entry's `stages` pins the pipeline: 1 keeps f16 16 -> 16 (which the
// built-in choice stages three deep) in one stage; 2 stages 32 -> 32 two
// deep, with the register budget a copied `spconv.tile` states.
// CHECK-LABEL: func.func @conv_f16_one_stage
// CHECK: spconv.kernel = "conv_f16_16x16", spconv.tile = {cols = 16 : i64, depth = 16 : i64, math = "mma-f16", rows = 256 : i64, threads = 256 : i64, warp_cols = 16 : i64, warp_rows = 32 : i64}
// CHECK-LABEL: func.func @conv_f16_two_stages
// CHECK: spconv.kernel = "conv_f16_32x32", spconv.tile = {cols = 32 : i64, depth = 32 : i64, math = "mma-f16", max_registers = 128 : i64, rows = 128 : i64, stages = 2 : i64, threads = 128 : i64, warp_cols = 32 : i64, warp_rows = 32 : i64}

// TF32-LABEL: func.func @conv_f32
// TF32: spconv.kernel = "conv_f32_16x32", spconv.tile = {cols = 32 : i64, depth = 8 : i64, math = "mma-tf32", rows = 64 : i64, threads = 128 : i64, warp_cols = 16 : i64, warp_rows = 32 : i64}

// FMA-LABEL: func.func @conv_f32
// FMA: spconv.tile = {cols = 16 : i64, depth = 8 : i64, math = "fma", rows = 32 : i64, thread_cols = 4 : i64, thread_rows = 2 : i64, threads = 64 : i64}
// FMA-LABEL: func.func @conv_f16
// FMA: spconv.tile = {cols = 8 : i64, depth = 8 : i64, math = "fma", rows = 128 : i64, thread_cols = 4 : i64, thread_rows = 4 : i64, threads = 64 : i64}

func.func @conv_f32(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                    %features: tensor<?x16xf32>, %w: tensor<27x16x32xf32>) -> tensor<?x32xf32> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x16xf32>, tensor<27x16x32xf32> -> tensor<?x32xf32>
  return %out : tensor<?x32xf32>
}
func.func @conv_f16(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                    %features: tensor<?x8xf16>, %w: tensor<27x8x8xf16>) -> tensor<?x8xf16> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x8xf16>, tensor<27x8x8xf16> -> tensor<?x8xf16>
  return %out : tensor<?x8xf16>
}
func.func @conv_bf16(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                     %features: tensor<?x8xbf16>, %w: tensor<27x8x8xbf16>) -> tensor<?x8xbf16> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x8xbf16>, tensor<27x8x8xbf16> -> tensor<?x8xbf16>
  return %out : tensor<?x8xbf16>
}
func.func @conv_f32_512_threads(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                                %features: tensor<?x8xf32>, %w: tensor<27x8x16xf32>) -> tensor<?x16xf32> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x8xf32>, tensor<27x8x16xf32> -> tensor<?x16xf32>
  return %out : tensor<?x16xf32>
}
func.func @conv_f16_one_stage(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                             %features: tensor<?x16xf16>, %w: tensor<27x16x16xf16>) -> tensor<?x16xf16> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x16xf16>, tensor<27x16x16xf16> -> tensor<?x16xf16>
  return %out : tensor<?x16xf16>
}
func.func @conv_f16_two_stages(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                              %features: tensor<?x32xf16>, %w: tensor<27x32x32xf16>) -> tensor<?x32xf16> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x32xf16>, tensor<27x32x32xf16> -> tensor<?x32xf16>
  return %out : tensor<?x32xf16>
}
