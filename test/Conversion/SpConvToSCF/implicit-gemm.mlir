// The output parses again (an nvgpu.device_async_create_group without
// tokens must be followed by an op without results, its wait). The first
// run's tensor-core tiles are on WMMA fragments (gpu-mma-ops=subgroup-mma);
// MMA-SYNC checks the default's ldmatrix and mma.sync.
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-mma-ops=subgroup-mma" -split-input-file | spconv-opt -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-conv=gather-scatter" -split-input-file | FileCheck %s --check-prefix=GATHER
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-matmul=fma" -split-input-file | FileCheck %s --check-prefix=FMA
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-matmul=tf32" -split-input-file | FileCheck %s --check-prefix=TF32
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-matmul=tf32 gpu-mma-ops=subgroup-mma" -split-input-file | FileCheck %s --check-prefix=WMMA-TF32
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash" -split-input-file | FileCheck %s --check-prefix=MMA-SYNC

// The GPU's convolution with static channel counts: an output-major
// neighbour table from the rulebook's pairs (a rulebook built elsewhere;
// see @table_build for one built here), then one gpu.launch over tiles
// of output rows x output channels that stages gathered rows and the weight
// slice in workgroup memory between two barriers and writes every output
// once, bias included.
// CHECK-LABEL: func.func @conv
// CHECK: %[[RESULT:.*]] = memref.alloc(%{{.*}}) : memref<?x32xf32>
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
// The schedule: each row's offset mask as a key, the rows sorted by it
// (stably, keys of 27 bits), then for each group of 32 slots the offsets
// any of its rows has.
// CHECK: %[[KEYS:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK: %[[ORDER:.*]] = memref.alloc(%{{.*}}) : memref<?xi32>
// CHECK: scf.parallel
// CHECK: memref.load %[[TABLE]]
// CHECK: arith.shli
// CHECK: memref.store %{{.*}}, %[[KEYS]]
// CHECK: } {spconv.kernel = "tile_schedule_keys"}
// CHECK: call @spconv_rt_memref_sort_pairs_bits(%[[KEYS]], %[[ORDER]], %c27_i64)
// CHECK: %[[GROUPS:.*]] = memref.alloc(%{{.*}}) : memref<?x27xi8>
// CHECK: scf.parallel
// CHECK: memref.load %[[ORDER]]
// CHECK: memref.load %[[TABLE]]
// CHECK: memref.store %{{.*}}, %[[GROUPS]]
// CHECK: } {spconv.kernel = "tile_schedule_offsets"}
// CHECK: call @spconv_rt_report_row_mismatch
// CHECK: scf.if %{{.*}} {
// 16 -> 32 channels: tiles of 64 rows x 32 channels, 16 input channels at a
// time, 128 threads of 4 x 4 outputs each; no guard (no tiles, an empty
// grid: the runtime launches nothing).
// CHECK: %[[TILES:.*]] = arith.muli
// CHECK-NOT: scf.if
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%[[GX:.*]] = %[[TILES]], %{{.*}}, %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128
// CHECK: %[[IN_TILE:.*]] = memref.alloca() : memref<16x64xf32, #gpu.address_space<workgroup>>
// CHECK: %[[W_TILE:.*]] = memref.alloca() {alignment = 16 : i64} : memref<16x32xf32, #gpu.address_space<workgroup>>
// CHECK: %[[SOURCE:.*]] = memref.alloca() : memref<64xi32, #gpu.address_space<workgroup>>
// CHECK: scf.for %{{.*}} = %[[BX]] to %[[TILES]] step %[[GX]]
// 16-byte loads where the features and the weights start 16-byte aligned.
// CHECK: memref.extract_aligned_pointer_as_index %[[FEATURES:.*]] : memref<?x16xf32> -> index
// CHECK: memref.extract_aligned_pointer_as_index %[[WEIGHT:.*]] : memref<27x16x32xf32> -> index
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c27
// The tile's two groups of 32 slots: the offset is visited if either lists
// it.
// CHECK-COUNT-2: memref.load %[[GROUPS]][%{{.*}}, %[[K]]] : memref<?x27xi8>
// CHECK: scf.if %{{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// Once per visited offset, each slot's input row (order, then table), then
// a barrier.
// CHECK: scf.for %{{.*}} = %[[TX]] to %c64{{.*}} step %c128{{.*}}
// CHECK: %[[ROW:.*]] = memref.load %[[ORDER]]
// CHECK: %[[ROWI:.*]] = arith.index_cast %[[ROW]]
// CHECK: memref.load %[[TABLE]][%[[ROWI]], %[[K]]] : memref<?x27xi32>
// CHECK: memref.store %{{.*}}, %[[SOURCE]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[C0:.*]] = %{{.*}} to %c16{{.*}} step %c16{{.*}} iter_args
// CHECK: %[[K_ROWS:.*]] = arith.muli %[[K]], %c16
// CHECK: %[[W_ROW:.*]] = arith.addi %[[K_ROWS]], %[[C0]] : index
// Per slice, 64 rows x 4 chunks of 4 channels: the row from the workgroup
// buffer, one 16-byte load, four stores into the transposed tile, into the
// row's column with its block of 4 XOR-ed by 8 x the chunk (bits 2-4), so
// that a warp's 8 rows x 4 chunks store to 32 banks. A chunk's position in
// 32 bits; its channels a view of all rows (the view's address per thread
// and slice, a load adding only its row's).
// CHECK: scf.for %[[ITEM:.*]] = %[[TX]] to %c256 step %c128{{.*}}
// CHECK: %[[ITEM32:.*]] = arith.index_castui %[[ITEM]] : index to i32
// CHECK: %[[M32:.*]] = arith.divui %[[ITEM32]], %c4_i32 : i32
// CHECK: %[[M:.*]] = arith.index_castui %[[M32]] : i32 to index
// CHECK: memref.load %[[SOURCE]][%[[M]]]
// CHECK: %[[COLUMNS:.*]] = memref.subview %[[FEATURES]][0, %{{.*}}] [%{{.*}}, 4] [1, 1] : memref<?x16xf32> to memref<?x4xf32, strided<[16, 1], offset: ?>>
// CHECK: vector.load %[[COLUMNS]][%{{.*}}, %c0{{.*}}] {alignment = 16 : i64} : memref<?x4xf32, strided<[16, 1], offset: ?>>, vector<4xf32>
// CHECK: } else {
// CHECK: vector.load %[[COLUMNS]][%{{.*}}, %c0{{.*}}] : memref<?x4xf32, strided<[16, 1], offset: ?>>, vector<4xf32>
// CHECK: %[[CHUNK:.*]] = arith.remui %{{.*}}, %c4
// CHECK: %[[FLIP:.*]] = arith.muli %[[CHUNK]], %c8
// CHECK: %[[FLIPPED:.*]] = arith.andi %[[FLIP]], %c28
// CHECK: %[[COLUMN:.*]] = arith.xori %[[M]], %[[FLIPPED]] : index
// CHECK-COUNT-4: memref.store %{{.*}}, %[[IN_TILE]][%{{.*}}, %[[COLUMN]]]
// 16 input channels x 8 chunks of 4 output channels, f32 as staged: by
// cp.async (4 elements, a source count of 0 past Cin or Cout) where the
// weights are aligned, else loaded and stored; then one group and a wait
// for it before the barrier. The weights as 27 x 16 rows, a chunk a view
// from its own row and column on (the same for every slice of the tile),
// its slice's rows from offset x 16 + c0 on; the copy into a view of the
// stage.
// CHECK: %[[W_ROWS:.*]] = memref.collapse_shape %[[WEIGHT]] {{\[}}[0, 1], [2]] : memref<27x16x32xf32> into memref<432x32xf32>
// CHECK: scf.for %{{.*}} = %[[TX]] to %c128{{.*}} step %c128{{.*}}
// CHECK: %[[W_CHUNK:.*]] = memref.subview %[[W_ROWS]][%{{.*}}, %{{.*}}] [%{{.*}}, 4] [1, 1] : memref<432x32xf32> to memref<?x4xf32, strided<[32, 1], offset: ?>>
// CHECK: %[[W_STAGE:.*]] = memref.subview %[[W_TILE]][0, 0] [16, 32] [1, 1]
// CHECK: nvgpu.device_async_copy %[[W_CHUNK]][%[[W_ROW]], %c0{{.*}}], %[[W_STAGE]][%{{.*}}, %{{.*}}], 4, %{{.*}} {bypassL1} : memref<?x4xf32, strided<[32, 1], offset: ?>> to memref<16x32xf32, strided<[32, 1]>, #gpu.address_space<workgroup>>
// CHECK: } else {
// CHECK: vector.load %[[W_CHUNK]][%[[W_ROW]], %c0{{.*}}] : memref<?x4xf32, strided<[32, 1], offset: ?>>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[W_TILE]][%{{.*}}, %{{.*}}] {alignment = 16 : i64}
// CHECK: %[[GROUP:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[GROUP]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// A thread reads its 4 rows of a channel where they were stored: one
// block, flipped by that channel's chunk.
// CHECK: %[[READ:.*]] = arith.xori %{{.*}}, %{{.*}} : index
// CHECK: vector.load %[[IN_TILE]][%{{.*}}, %[[READ]]]{{.*}} vector<4xf32>
// CHECK: vector.load %[[W_TILE]]{{.*}} vector<4xf32>
// CHECK-COUNT-4: vector.fma
// CHECK: gpu.barrier
// The epilogue: bias added, each element stored once, a thread's four
// consecutive channels of a row in one 16-byte store where aligned.
// CHECK: memref.load %[[ORDER]]
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[RESULT]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x32xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[RESULT]][%{{.*}}, %{{.*}}] : memref<?x32xf32>, vector<4xf32>
// CHECK: gpu.terminator
// CHECK: } {spconv.kernel = "conv_f32_16x32", spconv.tile = {cols = 32 : i64, depth = 16 : i64, math = "fma", rows = 64 : i64, thread_cols = 4 : i64, thread_rows = 4 : i64, threads = 128 : i64}}
// Features of the wrong length leave the result at its bias.
// CHECK: } else {
// CHECK: } {spconv.kernel = "init_rows"}
//
// GATHER-LABEL: func.func @conv
// GATHER-NOT: gpu.launch
// GATHER: } {spconv.kernel = "conv_f32_16x32"}
//
// With TF32, f32 runs on tensor cores: 256 rows x 32 channels (eight warps
// of 2 x 2 fragments, each warp 32 rows), 16 input channels per slice, two
// k = 8
// fragment steps. The features and weights are rounded to TF32 (add half an
// ulp, clear 13 bits, infinities and NaNs kept) into buffers of their own,
// one kernel each before the launch, so that the staging copies slices as
// they are (cp.async, 4 floats a copy); the rows of each buffer padded (the
// inputs and sums by 16 bytes, the weights by 32: a B fragment's four rows
// then start 8 banks apart) and 32-byte aligned, as WMMA wants (16 bytes
// would do for ldmatrix).
// TF32-LABEL: func.func @conv
// TF32: %[[XR:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// TF32: scf.parallel
// TF32: arith.bitcast %{{.*}} : f32 to i32
// TF32: arith.addi %{{.*}}, %c4096_i32 : i32
// TF32: arith.andi %{{.*}}, %c-8192_i32 : i32
// TF32: arith.select
// TF32: memref.store %{{.*}}, %[[XR]]
// TF32: } {spconv.kernel = "round_tf32_features"}
// TF32: %[[WR:.*]] = memref.alloc() : memref<27x16x32xf32>
// TF32: memref.store %{{.*}}, %[[WR]]
// TF32: } {spconv.kernel = "round_tf32_weights"}
// TF32: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256
// TF32: %[[IN:.*]] = memref.alloca() {alignment = 32 : i64} : memref<256x20xf32, #gpu.address_space<workgroup>>
// TF32: %[[W:.*]] = memref.alloca() {alignment = 32 : i64} : memref<16x40xf32, #gpu.address_space<workgroup>>
// TF32: %[[SUM:.*]] = memref.alloca() {alignment = 32 : i64} : memref<128x36xf32, #gpu.address_space<workgroup>>
// TF32: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2x2xf32>
// TF32: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]])
// TF32-NOT: arith.bitcast
// TF32: nvgpu.device_async_copy %{{.*}}, %{{.*}}, 4, %{{.*}} {bypassL1} : memref<?x4xf32, {{.*}}> to memref<256x20xf32, {{.*}}#gpu.address_space<workgroup>>
// TF32: nvgpu.device_async_copy %{{.*}}, %{{.*}}, 4, %{{.*}} {bypassL1} : memref<?x4xf32, {{.*}}> to memref<16x40xf32, {{.*}}#gpu.address_space<workgroup>>
// TF32: nvgpu.device_async_wait
// TF32: gpu.barrier
// tf32 fragments multiply with nvgpu.mma.sync (gpu-mma-ops=auto), 16 x 8
// each: per k = 8 step the warp's four B fragments of 8 columns, two
// scalar loads each (rows t and t + 4 of the step), then per 16 rows one
// ldmatrix x4 of A (32-bit units) and its four multiplies.
// TF32-COUNT-8: memref.load %[[W]][%{{.*}}, %{{.*}}] : memref<16x40xf32, #gpu.address_space<workgroup>>
// TF32: nvgpu.ldmatrix %[[IN]][%{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<256x20xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// TF32-COUNT-4: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// TF32: nvgpu.ldmatrix %[[IN]]
// TF32-COUNT-4: nvgpu.mma.sync
// TF32-COUNT-8: memref.load %[[W]]
// TF32: nvgpu.ldmatrix %[[IN]]
// TF32: gpu.barrier
// The epilogue, once per fragment row of the warps: their fragments into
// workgroup memory (16 rows per warp; a lane's two pairs of each 16 x 8 as
// 8-byte stores), a barrier, then each output of those rows written once,
// four consecutive channels of a row per thread and store (consecutive
// threads on consecutive chunks), bias added in f32, a barrier.
// TF32-COUNT-8: vector.store %{{.*}}, %[[SUM]][%{{.*}}, %{{.*}}] : memref<128x36xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// TF32: gpu.barrier
// TF32: scf.for %{{.*}} = %{{.*}} to %c1024{{.*}} step %c256
// TF32: vector.load %[[SUM]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<128x36xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// TF32: arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// TF32: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x32xf32>, vector<4xf32>
// TF32: gpu.barrier
// TF32-COUNT-8: vector.store %{{.*}}, %[[SUM]][%{{.*}}, %{{.*}}] : memref<128x36xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// TF32: gpu.barrier
// TF32: scf.for %{{.*}} = %{{.*}} to %c1024{{.*}} step %c256
// TF32: gpu.barrier
// TF32-NOT: vector<2x2xf32>
// With gpu-mma-ops=subgroup-mma, gpu.subgroup_mma fragments of 16 x 16:
// per fragment step the warp's weight fragments, then one input fragment at
// a time with its multiplies; each fragment stored whole.
// WMMA-TF32-LABEL: func.func @conv
// WMMA-TF32: %[[IN:.*]] = memref.alloca() {alignment = 32 : i64} : memref<256x20xf32, #gpu.address_space<workgroup>>
// WMMA-TF32: %[[W:.*]] = memref.alloca() {alignment = 32 : i64} : memref<16x40xf32, #gpu.address_space<workgroup>>
// WMMA-TF32: %[[SUM:.*]] = memref.alloca() {alignment = 32 : i64} : memref<128x36xf32, #gpu.address_space<workgroup>>
// WMMA-TF32: %[[ZERO:.*]] = gpu.subgroup_mma_constant_matrix %{{.*}} : !gpu.mma_matrix<16x16xf32, "COp">
// WMMA-TF32: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]])
// WMMA-TF32: gpu.barrier
// WMMA-TF32-COUNT-2: gpu.subgroup_mma_load_matrix %[[W]][%c0{{.*}}, %{{.*}}] {leadDimension = 40 : index} : memref<16x40xf32, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<8x16xf32, "BOp">
// WMMA-TF32: gpu.subgroup_mma_load_matrix %[[IN]][%{{.*}}, %c0{{.*}}] {leadDimension = 20 : index} : memref<256x20xf32, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x8xf32, "AOp">
// WMMA-TF32-COUNT-2: gpu.subgroup_mma_compute
// WMMA-TF32: gpu.subgroup_mma_load_matrix %[[IN]][%{{.*}}, %c0{{.*}}] {leadDimension = 20 : index}
// WMMA-TF32-COUNT-2: gpu.subgroup_mma_compute
// WMMA-TF32: gpu.subgroup_mma_load_matrix %[[W]][%c8{{.*}}, %{{.*}}] {leadDimension = 40 : index}
// WMMA-TF32: gpu.barrier
// WMMA-TF32-COUNT-2: gpu.subgroup_mma_store_matrix %{{.*}}, %[[SUM]][%{{.*}}, %{{.*}}] {leadDimension = 36 : index}
// WMMA-TF32: gpu.barrier
// WMMA-TF32-COUNT-2: gpu.subgroup_mma_store_matrix %{{.*}}, %[[SUM]][%{{.*}}, %{{.*}}] {leadDimension = 36 : index}
// WMMA-TF32-NOT: gpu.subgroup_mma_store_matrix
// WMMA-TF32: } {spconv.kernel = "conv_f32_16x32"
// TF32: } {spconv.kernel = "conv_f32_16x32", spconv.tile = {cols = 32 : i64, depth = 16 : i64, math = "mma-tf32", rows = 256 : i64, threads = 256 : i64, warp_cols = 32 : i64, warp_rows = 32 : i64}}
func.func @conv(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
                %features: tensor<?x16xf32>, %w: tensor<27x16x32xf32>,
                %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %out = spconv.rulebook_conv %rb, %features, %w bias %b
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x16xf32>, tensor<27x16x32xf32>, tensor<32xf32> -> tensor<?x32xf32>
  return %out : tensor<?x32xf32>
}

// -----

// f16 on tensor cores: staged as f16 (no conversion), m16n16k16 fragments
// summed in f32, one fragment column per warp for 8 output channels (tiles
// 256 x 16), and the depth padded up to one fragment (16) for 8 input
// channels; stored as f16 once. Without tensor cores: staged as f32,
// summed in f32, stored as f16.
// Rows of 8 f16 are whole 16-byte chunks: the slices are a three-stage
// cp.async pipeline (stage buffers 3 deep, the source rows of each stage,
// the offsets the tile visits), one barrier per step, the steps counted in
// 32 bits; unaligned sources
// take the unpipelined loops through registers instead.
// Dynamic channel counts keep the gather-scatter form.
// CHECK-LABEL: func.func @conv_f16
// CHECK: gpu.launch
// CHECK: %[[INPUTS:.*]] = memref.alloca() {alignment = 32 : i64} : memref<768x24xf16, #gpu.address_space<workgroup>>
// CHECK: %[[WEIGHTS:.*]] = memref.alloca() {alignment = 32 : i64} : memref<48x24xf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloca() {alignment = 32 : i64} : memref<128x20xf32, #gpu.address_space<workgroup>>
// CHECK: %[[SOURCES:.*]] = memref.alloca() : memref<768xi32, #gpu.address_space<workgroup>>
// CHECK: %[[VISITED:.*]] = memref.alloca() : memref<27xi32, #gpu.address_space<workgroup>>
// CHECK: %[[ALIGNED:.*]] = arith.andi %{{.*}} : i1
// CHECK: scf.if %[[ALIGNED]] -> (!gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">) {
// CHECK: memref.store %{{.*}}, %[[VISITED]]
// CHECK-COUNT-3: memref.store %{{.*}}, %[[SOURCES]]
// CHECK: gpu.barrier
// A thread's chunks of a step: one column, rows 128 apart (256 threads, 2
// chunks a row), so that their addresses are one register and constant
// offsets: its source rows read at its slot and 128 on.
// CHECK: %[[T32:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[SLOT32:.*]] = arith.divui %[[T32]], %c2_i32{{.*}} : i32
// CHECK: %[[SLOT:.*]] = arith.index_castui %[[SLOT32]] : i32 to index
// CHECK: memref.load %[[SOURCES]][%[[SLOT]]]
// CHECK: %[[SLOT2:.*]] = arith.addi %[[SLOT]], %c128{{.*}} : index
// CHECK: memref.load %[[SOURCES]][%[[SLOT2]]]
// A step's copies go into views of its stages: step 0's from row 0 on,
// step 1's from row 256 of the inputs and row 16 of the weights on.
// CHECK: %[[IN_0:.*]] = memref.subview %[[INPUTS]][0, 0] [768, 24] [1, 1]
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[IN_0]]{{.*}}, 8, %{{.*}} {bypassL1} : memref<?x8xf16, strided<[8, 1], offset: ?>> to memref<768x24xf16, strided<[24, 1]>, #gpu.address_space<workgroup>>
// CHECK: %[[W_0:.*]] = memref.subview %[[WEIGHTS]][0, 0] [48, 24] [1, 1]
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[W_0]]{{.*}}, 8, %{{.*}} {bypassL1} : memref<?x8xf16, strided<[8, 1], offset: ?>> to memref<48x24xf16, strided<[24, 1]>, #gpu.address_space<workgroup>>
// CHECK: %[[FIRST:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[FIRST]] {numGroups = 1 : i32}
// CHECK: %[[IN_1:.*]] = memref.subview %[[INPUTS]][256, 0] [512, 24] [1, 1]
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[IN_1]]
// CHECK: %[[W_1:.*]] = memref.subview %[[WEIGHTS]][16, 0] [32, 24] [1, 1]
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[W_1]]
// CHECK: %[[SECOND:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[SECOND]] {numGroups = 1 : i32}
// The steps count in 32 bits.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c27_i32{{.*}} step %c1_i32{{.*}} iter_args({{.*}}) -> (!gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">) : i32 {
// CHECK: gpu.barrier
// CHECK: %[[IN_T:.*]] = memref.subview %[[INPUTS]][%{{.*}}, 0] [%{{.*}}, 24] [1, 1]
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[IN_T]]
// CHECK: %[[W_T:.*]] = memref.subview %[[WEIGHTS]][%{{.*}}, 0] [%{{.*}}, 24] [1, 1]
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[W_T]]
// CHECK: memref.load %{{.*}} : memref<?x27xi32>
// CHECK: memref.load %[[VISITED]]
// CHECK-COUNT-2: gpu.subgroup_mma_compute {{.*}} : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
// CHECK: memref.store %{{.*}}, %[[SOURCES]]
// CHECK: %[[GROUP:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[GROUP]] {numGroups = 1 : i32}
// CHECK-NEXT: scf.yield
// CHECK: } else {
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?x8xf16, strided<[8, 1], offset: ?>>, vector<8xf16>
// CHECK: vector.load %{{.*}} : memref<?x8xf16, strided<[8, 1], offset: ?>>, vector<8xf16>
// CHECK-NOT: arith.extf
// CHECK-COUNT-2: gpu.subgroup_mma_compute {{.*}} : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
// CHECK-NOT: gpu.subgroup_mma_compute
// The epilogue: four channels of a row, one 16-byte load of their sums and
// one 8-byte store.
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<128x20xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<?x8xf16>, vector<4xf16>
// CHECK: spconv.kernel = "conv_f16_8x8", spconv.tile = {cols = 16 : i64, depth = 16 : i64, math = "mma-f16", max_registers = 80 : i64, rows = 256 : i64, stages = 3 : i64, threads = 256 : i64, warp_cols = 16 : i64, warp_rows = 32 : i64}
// CHECK-LABEL: func.func @conv_bf16
// CHECK: memref.alloca() {alignment = 32 : i64} : memref<256x12xf32, #gpu.address_space<workgroup>>
// CHECK: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK-NOT: arith.addi %{{.*}} : vector<8xi32>
// CHECK: gpu.subgroup_mma_compute {{.*}} : !gpu.mma_matrix<16x8xf32, "AOp">, !gpu.mma_matrix<8x16xf32, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<?x8xbf16>, vector<4xbf16>
// CHECK: spconv.kernel = "conv_bf16_8x8", spconv.tile = {cols = 16 : i64, depth = 8 : i64, math = "mma-tf32"
// By default (gpu-mma-ops=auto) bf16 multiplies as bf16, on mma.sync
// m16n8k16: staged as it is, by the cp.async pipeline f16 has, its
// fragments loaded by ldmatrix. (The first run's WMMA holds no bf16: there
// it is staged as f32 and multiplies as tf32, above.)
// MMA-SYNC-LABEL: func.func @conv_bf16
// MMA-SYNC: %[[BF_IN:.*]] = memref.alloca() {alignment = 32 : i64} : memref<768x24xbf16, #gpu.address_space<workgroup>>
// MMA-SYNC-NOT: arith.extf
// MMA-SYNC: nvgpu.device_async_copy %{{.*}} : memref<?x8xbf16, strided<[8, 1], offset: ?>> to memref<768x24xbf16, strided<[24, 1]>, #gpu.address_space<workgroup>>
// MMA-SYNC: nvgpu.ldmatrix %[[BF_IN]]{{.*}} -> vector<4x2xbf16>
// MMA-SYNC: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// MMA-SYNC-NOT: gpu.subgroup_mma
// MMA-SYNC: spconv.kernel = "conv_bf16_8x8", spconv.tile = {{{.*}}math = "mma-bf16"{{.*}}stages = 3
// CHECK-LABEL: func.func @conv_dynamic
// FMA-LABEL: func.func @conv_f16
// FMA: gpu.launch
// FMA: memref.alloca() : memref<8x128xf32, #gpu.address_space<workgroup>>
// FMA-NOT: gpu.subgroup_mma
// FMA: arith.extf
// FMA: vector.fma
// FMA: arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
// FMA: vector.store %{{.*}} {alignment = 8 : i64} : memref<?x8xf16>, vector<4xf16>
// FMA: spconv.kernel = "conv_f16_8x8", spconv.tile = {{{.*}}math = "fma"
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
func.func @conv_bf16(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                     %features: tensor<?x8xbf16>, %w: tensor<27x8x8xbf16>) -> tensor<?x8xbf16> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x8xbf16>, tensor<27x8x8xbf16> -> tensor<?x8xbf16>
  return %out : tensor<?x8xbf16>
}
func.func @conv_dynamic(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                        %features: tensor<?x?xf32>, %w: tensor<27x?x?xf32>) -> tensor<?x?xf32> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x?xf32>, tensor<27x?x?xf32> -> tensor<?x?xf32>
  return %out : tensor<?x?xf32>
}

// -----

// 64 output channels in f16: each of the eight warps owns 4 x 2 fragments
// (256 x 64 tiles), 32 input channels per slice, a register budget for two
// blocks per SM; the epilogue writes the tile in four passes of 64 rows
// (one fragment row of every warp each), so that its f32 sums take 64 rows
// of workgroup memory, not 256; a thread writes 4 channels of a row (8
// bytes) per store, 1024 chunks a pass. Two pipeline stages (three would not leave
// room for two blocks per SM): 54 steps of 27 offsets x 2 slices, each
// waiting for the next step's copies with none in flight.
// CHECK-LABEL: func.func @conv_f16_64
// CHECK: memref.alloca() {alignment = 32 : i64} : memref<512x40xf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloca() {alignment = 32 : i64} : memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: %[[SUM:.*]] = memref.alloca() {alignment = 32 : i64} : memref<64x68xf32, #gpu.address_space<workgroup>>
// CHECK: %[[ROWS:.*]] = memref.alloca() : memref<512xi32, #gpu.address_space<workgroup>>
// CHECK: %[[ZERO:.*]] = gpu.subgroup_mma_constant_matrix
// The copies compare no channel or column with 64: with 64 channels
// every slice and every tile lies inside. A thread reads its four source
// rows of a step before its first copy (ptxas pads each cp.async that
// follows a shared-memory load).
// CHECK: scf.for %{{.*}} = %{{.*}} to %c54{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]])
// CHECK: memref.load %[[ROWS]]
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.load %[[ROWS]]
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.load %[[ROWS]]
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.load %[[ROWS]]
// CHECK-NOT: arith.cmpi ult, %{{.*}}, %c64{{(_[0-9]+)?}} : index
// CHECK: nvgpu.device_async_copy
// CHECK-NOT: arith.cmpi ult, %{{.*}}, %c64{{(_[0-9]+)?}} : index
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK: } else {
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]])
// CHECK-COUNT-2: gpu.subgroup_mma_store_matrix %{{.*}}, %[[SUM]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} to %c1024{{.*}} step %c256
// CHECK: gpu.barrier
// CHECK-COUNT-2: gpu.subgroup_mma_store_matrix %{{.*}}, %[[SUM]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} to %c1024{{.*}} step %c256
// CHECK: gpu.barrier
// CHECK-COUNT-2: gpu.subgroup_mma_store_matrix %{{.*}}, %[[SUM]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} to %c1024{{.*}} step %c256
// CHECK: gpu.barrier
// CHECK-COUNT-2: gpu.subgroup_mma_store_matrix %{{.*}}, %[[SUM]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} to %c1024{{.*}} step %c256
// CHECK: gpu.barrier
// CHECK-NOT: gpu.subgroup_mma_store_matrix
// CHECK: spconv.kernel = "conv_f16_64x64", spconv.tile = {cols = 64 : i64, depth = 32 : i64, math = "mma-f16", max_registers = 128 : i64, rows = 256 : i64, stages = 2 : i64, threads = 256 : i64, warp_cols = 32 : i64, warp_rows = 64 : i64}
// By default (gpu-mma-ops=auto), f16 multiplies with nvgpu.mma.sync m16n8k16:
// per k = 16 step, the weights of each 16 columns by one ldmatrix x4
// .trans (its halves the B fragments of two 8-column blocks), then per 16
// rows one ldmatrix x4 of A and four multiplies.
// MMA-SYNC-LABEL: func.func @conv_f16_64
// MMA-SYNC: %[[W:.*]] = memref.alloca() {alignment = 32 : i64} : memref<64x72xf16, #gpu.address_space<workgroup>>
// MMA-SYNC: nvgpu.ldmatrix %[[W]][%{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = true} : memref<64x72xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// MMA-SYNC: vector.extract_strided_slice %{{.*}} {offsets = [0, 0], sizes = [2, 2], strides = [1, 1]} : vector<4x2xf16> to vector<2x2xf16>
// MMA-SYNC: vector.extract_strided_slice %{{.*}} {offsets = [2, 0], sizes = [2, 2], strides = [1, 1]} : vector<4x2xf16> to vector<2x2xf16>
// MMA-SYNC: nvgpu.ldmatrix %[[W]]
// MMA-SYNC: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<512x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// MMA-SYNC-COUNT-4: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// MMA-SYNC-NOT: gpu.subgroup_mma
// MMA-SYNC: spconv.kernel = "conv_f16_64x64"
func.func @conv_f16_64(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                       %features: tensor<?x64xf16>, %w: tensor<27x64x64xf16>) -> tensor<?x64xf16> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %out = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x64xf16>, tensor<27x64x64xf16> -> tensor<?x64xf16>
  return %out : tensor<?x64xf16>
}

// -----

// Convs of one rulebook (here an argument) share its table and schedule,
// built once before the first: also a conv nested in an scf.if after it. A
// conv in a branch the first does not dominate builds its own.
// CHECK-LABEL: func.func @shared
// CHECK: } {spconv.kernel = "neighbour_table"}
// CHECK: call @spconv_rt_memref_sort_pairs_bits
// CHECK-NOT: spconv.kernel = "neighbour_table"}
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK-NOT: spconv.kernel = "neighbour_table"}
// CHECK-NOT: call @spconv_rt_memref_sort_pairs_bits
// CHECK: gpu.launch
// CHECK: return
// CHECK-LABEL: func.func @branches
// CHECK: scf.if
// CHECK: } {spconv.kernel = "neighbour_table"}
// CHECK: gpu.launch
// CHECK: } else {
// CHECK: } {spconv.kernel = "neighbour_table"}
// CHECK: gpu.launch
func.func @shared(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
                  %features: tensor<?x16xf32>, %w: tensor<27x16x16xf32>,
                  %again: i1) -> tensor<?x16xf32> {
  %x = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
  %y = scf.if %again -> tensor<?x16xf32> {
    %z = spconv.rulebook_conv %rb, %x, %w
        : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
          tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
    scf.yield %z : tensor<?x16xf32>
  } else {
    scf.yield %x : tensor<?x16xf32>
  }
  return %y : tensor<?x16xf32>
}
func.func @branches(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
                    %features: tensor<?x16xf32>, %w: tensor<27x16x16xf32>,
                    %which: i1) -> tensor<?x16xf32> {
  %y = scf.if %which -> tensor<?x16xf32> {
    %a = spconv.rulebook_conv %rb, %features, %w
        : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
          tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
    scf.yield %a : tensor<?x16xf32>
  } else {
    %b = spconv.rulebook_conv %rb, %features, %w
        : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
          tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
    scf.yield %b : tensor<?x16xf32>
  }
  return %y : tensor<?x16xf32>
}

// -----

// A subm build whose only users are implicit GEMMs makes their neighbour
// table itself: one thread per site probes every offset but the centre
// (the site itself), so no pairs are counted and the host reads no size
// back. The schedule follows the call, and every conv shares both, also
// one in a branch. The status is read back at the end, where a bad or
// repeated site is reported; the host buffer comes first, so that the
// read-backs of several such builds are copied one after the other.
// CHECK-LABEL: func.func @table_build
// CHECK: %[[HOST:.*]] = memref.alloc() : memref<4xi64>
// CHECK: %[[BUILT:.*]]:3 = call @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table(
// CHECK-NOT: memref.copy
// CHECK: call @spconv_rt_memref_sort_pairs_bits
// CHECK-NOT: neighbour_table
// CHECK-NOT: call @spconv_rt_memref_sort_pairs_bits
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK-NOT: neighbour_table
// CHECK: gpu.launch
// CHECK: memref.copy %[[BUILT]]#1, %[[HOST]]
// CHECK: memref.load %[[HOST]]
// CHECK: memref.load %[[HOST]]
// CHECK: scf.if
// CHECK: call @spconv_rt_memref_report_build_error(%{{.*}}, %[[BUILT]]#2,
// CHECK: return
// CHECK-LABEL: func.func @two_tables
// CHECK: memref.copy %{{.*}}#1
// CHECK-NEXT: memref.copy %{{.*}}#1
// CHECK: call @spconv_rt_memref_report_build_error
// CHECK: call @spconv_rt_memref_report_build_error
// CHECK: return
// CHECK-LABEL: func.func @mixed_users
// CHECK: call @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16(
// CHECK: } {spconv.kernel = "neighbour_table"}
// The tiled set takes the dense conv; it declines the grouped one, which
// the per-pair set lowers in the same module.
// CHECK: gpu.launch
// CHECK: } {spconv.kernel = "conv_f32_16x16", spconv.tile =
// CHECK-NOT: gpu.launch
// CHECK: scf.parallel
// CHECK: } {spconv.kernel = "conv_f32_4x16_g4"}
// CHECK-NOT: gpu.launch
// CHECK: return
// CHECK-LABEL: func.func private @spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g16x16x16_table
// CHECK-SAME: -> (memref<?x27xi32>, memref<4xi64>, memref<?xi64>)
// CHECK-NOT: exclusive_scan
// CHECK: %[[TABLE:.*]] = memref.alloc(%{{.*}}) : memref<?x27xi32>
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK-COUNT-13: call @spconv_ht_find_slot
// CHECK: memref.store %{{.*}}, %[[TABLE]][%{{.*}}, %c13]
// CHECK-COUNT-13: call @spconv_ht_find_slot
// CHECK: } else {
// CHECK-COUNT-27: memref.store %c-1_i32{{.*}}, %[[TABLE]]
// CHECK: } {spconv.kernel = "neighbour_table"}
// CHECK: return %[[TABLE]]
func.func @table_build(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                       %features: tensor<?x16xf32>, %w: tensor<27x16x16xf32>,
                       %again: i1) -> tensor<?x16xf32> {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %x = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
  %y = scf.if %again -> tensor<?x16xf32> {
    %z = spconv.rulebook_conv %rb, %x, %w
        : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
          tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
    scf.yield %z : tensor<?x16xf32>
  } else {
    scf.yield %x : tensor<?x16xf32>
  }
  return %y : tensor<?x16xf32>
}
func.func @two_tables(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                      %more: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                      %features: tensor<?x16xf32>, %w: tensor<27x16x16xf32>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %rb2, %oc2 = spconv.build_rulebook %more : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %x = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
  %y = spconv.rulebook_conv %rb2, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
  return %x, %y : tensor<?x16xf32>, tensor<?x16xf32>
}
// A grouped conv takes the pairs: the build makes them, as before, and
// the per-pair form computes it.
func.func @mixed_users(%coords: tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>,
                       %features: tensor<?x16xf32>, %w: tensor<27x16x16xf32>,
                       %wg: tensor<27x4x16xf32>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %rb, %oc = spconv.build_rulebook %coords : tensor<?x4xi32, #spconv.grid<[16, 16, 16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>, tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
  %x = spconv.rulebook_conv %rb, %features, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x16xf32>
  %y = spconv.rulebook_conv groups 4 %rb, %features, %wg
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[16, 16, 16]>>,
        tensor<?x16xf32>, tensor<27x4x16xf32> -> tensor<?x16xf32>
  return %x, %y : tensor<?x16xf32>, tensor<?x16xf32>
}
