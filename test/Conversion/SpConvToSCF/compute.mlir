// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="chunk-bytes=64" -split-input-file | FileCheck %s --check-prefix=CHUNK
// RUN: spconv-opt %s -convert-spconv-to-scf="vector-bits=256 vector-registers=16" -split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: spconv-opt %s -convert-spconv-to-scf="vector-bits=128 vector-registers=32" -split-input-file | FileCheck %s --check-prefix=NEON
// RUN: spconv-opt %s -convert-spconv-to-scf="vector-bits=256 vector-registers=8 fma-pipes=1 fma-latency=4" -split-input-file | FileCheck %s --check-prefix=PIPES1
// RUN: spconv-opt %s -convert-spconv-to-scf="vector-bits=256 vector-registers=8 fma-pipes=2 fma-latency=4" -split-input-file | FileCheck %s --check-prefix=PIPES2
// CHUNK-LABEL: func.func @conv
// CHUNK: arith.constant 64 : index

// The compute: offsets in order, the pairs of one offset in parallel (no two
// share an output row) in groups of 8 that share each weight load; each
// pair adds features[in] @ weight[offset] to row out. A partial last group
// goes pair by pair.
// CHECK-LABEL: func.func @conv
// CHECK: %[[RB:.*]]:3 = call @spconv_build_subm_k3_s1_p1_d1_g16
// CHECK: %[[ACC:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[ACC]]
// The features must have one row per site: otherwise the runtime reports it
// and no pair is read.
// CHECK: %[[ROWS:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x4xf32
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[ROWS]]
// CHECK: call @spconv_rt_report_row_mismatch
// CHECK: scf.if %[[OK]] {
// Chunks of sites of about chunk-bytes (2 MiB by default) of feature and
// accumulator rows (4 + 4 channels x 4 bytes = 32 per site), one after the
// other; each takes its piece of every offset's pairs.
// CHECK: %[[CHUNK_BYTES:.*]] = arith.constant 2097152 : index
// CHECK: %[[CHUNK_ROWS:.*]] = arith.divsi %[[CHUNK_BYTES]], %{{.*}} : index
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %[[CHUNKS:.*]] step
// CHECK: %[[K:.*]] = arith.constant 3 : index
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[K]]
// CHECK: %[[FIRST:.*]] = memref.load %[[RB]]#2[%[[J]]] : memref<4xindex>
// CHECK: %[[LAST:.*]] = memref.load %[[RB]]#2[%{{.*}}] : memref<4xindex>
// CHECK: %[[COUNT:.*]] = arith.subi %[[LAST]], %[[FIRST]]
// CHECK: arith.muli %[[COUNT]], %[[C]]
// CHECK: %[[BEGIN:.*]] = arith.addi %[[FIRST]]
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]]
// CHECK: scf.parallel (%[[P:.*]]) = (%[[BEGIN]]) to (%[[END]]) step (%[[GROUP:.*]])
// CHECK: %[[FULL:.*]] = arith.cmpi ule, %{{.*}}, %[[END]] : index
// CHECK: scf.if %[[FULL]] {
// CHECK-COUNT-8: memref.load %[[RB]]#1
// CHECK-COUNT-8: vector.load %[[ACC]]
// CHECK: %{{.*}}:8 = scf.for %{{.*}} iter_args(%[[PARTIAL:[a-z0-9_]+]] = %{{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: vector.load %{{.*}} : memref<3x4x4xf32>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK: vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK: vector.fma %{{.*}}, %{{.*}}, %[[PARTIAL]] : vector<4xf32>
// CHECK-COUNT-7: vector.fma
// CHECK-COUNT-8: vector.store %{{.*}}, %[[ACC]]
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %[[P]] to %[[END]]
// CHECK: vector.fma
// CHECK: vector.store %{{.*}}, %[[ACC]]
// CHECK: bufferization.to_tensor
func.func @conv(%c: tensor<?x2xi32, #spconv.grid<[16]>>, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>) -> tensor<?x4xf32> {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x2xi32, #spconv.grid<[16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x2xi32, #spconv.grid<[16]>>
  %y = spconv.rulebook_conv %rb, %f, %w : !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x4xf32>, tensor<3x4x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// f16 accumulates in f32, starting from the bias, and is truncated once.
// The inverse reads the pairs backwards (output row -> input row) and has
// one row per input site.
// CHECK-LABEL: func.func @inverse_f16
// CHECK: %[[RB:.*]]:4 = call @spconv_build_regular_k2_s2_p0_d1_g8
// CHECK: %[[ROWS:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x2xi32, strided<[?, ?], offset: ?>>
// CHECK: %[[ACC:.*]] = memref.alloc(%[[ROWS]], %{{.*}}) : memref<?x?xf32>
// CHECK: memref.load %{{.*}} : memref<8xf16>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: scf.parallel
// CHECK: %[[DST:.*]] = memref.load %[[RB]]#1[
// CHECK: %[[DSTI:.*]] = arith.index_cast %[[DST]]
// CHECK: %[[SRC:.*]] = memref.load %[[RB]]#2[
// CHECK: %[[SRCI:.*]] = arith.index_cast %[[SRC]]
// CHECK: vector.load %[[ACC]][%[[DSTI]], %{{.*}}] : memref<?x?xf32>, vector<8xf32>
// CHECK: memref.load %{{.*}}[%[[SRCI]], %{{.*}}] : memref<?x4xf16>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: vector.load %{{.*}} : memref<2x4x8xf16>, vector<8xf16>
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: vector.fma
// CHECK: %{{.*}} = memref.alloc(%[[ROWS]], %{{.*}}) : memref<?x?xf16>
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @inverse_f16(%c: tensor<?x2xi32, #spconv.grid<[8]>>, %f: tensor<?x4xf16>, %w: tensor<2x4x8xf16>, %b: tensor<8xf16>) -> tensor<?x8xf16> {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x2xi32, #spconv.grid<[8]>> -> !spconv.rulebook<#spconv.geom<regular, kernel = [2], stride = [2]>, #spconv.grid<[8]>>, tensor<?x2xi32, #spconv.grid<[4]>>
  %y = spconv.rulebook_conv inverse %rb, %f, %w bias %b : !spconv.rulebook<#spconv.geom<regular, kernel = [2], stride = [2]>, #spconv.grid<[8]>>, tensor<?x4xf16>, tensor<2x4x8xf16>, tensor<8xf16> -> tensor<?x8xf16>
  return %y : tensor<?x8xf16>
}

// -----

// Max pooling starts from -inf (every output has a contributor); average
// pooling counts contributors per output and divides at the end.
// CHECK-LABEL: func.func @pools
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: memref.alloc(%{{.*}}) : memref<?xi32>
// CHECK: arith.addf
// CHECK: arith.sitofp
// CHECK: arith.divf
func.func @pools(%c: tensor<?x2xi32, #spconv.grid<[8]>>, %f: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x2xi32, #spconv.grid<[8]>> -> !spconv.rulebook<#spconv.geom<regular, kernel = [2], stride = [2]>, #spconv.grid<[8]>>, tensor<?x2xi32, #spconv.grid<[4]>>
  %m = spconv.rulebook_pool max %rb, %f : !spconv.rulebook<#spconv.geom<regular, kernel = [2], stride = [2]>, #spconv.grid<[8]>>, tensor<?x4xf32> -> tensor<?x4xf32>
  %a = spconv.rulebook_pool avg %rb, %f : !spconv.rulebook<#spconv.geom<regular, kernel = [2], stride = [2]>, #spconv.grid<[8]>>, tensor<?x4xf32> -> tensor<?x4xf32>
  return %m, %a : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Output widths that are not a multiple of the vector width use the widest
// chunk that divides them: 5 channels in one vector<5xf32>, 96 in three
// vector<32xf32> (a chunk wider than a register is a power of two of them:
// LLVM assembles a six-register vector<96xf32> lane by lane); a dynamic
// width falls back to scalar dot products. The group's rows and chunk
// registers follow the target (chooseRowBlocking: the fewest loads per FMA
// among the shapes whose accumulators, weight vectors and broadcast fit the
// registers): AVX-512 (the default, 32 x 512 bits) takes 5 channels 8 rows
// at a time and 96 channels 8 rows of 2 registers; AVX2 (16 x 256) 6 rows of
// 2 registers, vector<16xf32>; NEON (32 x 128) 6 rows of 4 registers,
// vector<16xf32>. A last, partial group goes one row at a time in the same
// chunks.
// AVX2-LABEL: func.func @widths
// AVX2-COUNT-8: vector.fma %{{.*}} : vector<5xf32>
// AVX2: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX2-COUNT-36: vector.fma %{{.*}} : vector<16xf32>
// AVX2-NOT: vector<24xf32>
// AVX2-NOT: vector<32xf32>
// AVX2-NOT: vector<96xf32>
// AVX2: arith.mulf %{{.*}} : f32
// NEON-LABEL: func.func @widths
// NEON: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// NEON-COUNT-36: vector.fma %{{.*}} : vector<16xf32>
// NEON-NOT: vector<32xf32>
// NEON: arith.mulf %{{.*}} : f32
// CHECK-LABEL: func.func @widths
// CHECK-COUNT-8: vector.fma %{{.*}} : vector<5xf32>
// CHECK: scf.for {{.*}} -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK-COUNT-24: vector.fma %{{.*}} : vector<32xf32>
// CHECK-NOT: vector<96xf32>
// CHECK: scf.for {{.*}} -> (vector<32xf32>)
// CHECK: vector.fma %{{.*}} : vector<32xf32>
// CHECK-NOT: vector<96xf32>
// CHECK: arith.mulf %{{.*}} : f32
// A chunk wider than a register is a power of two of them: 48 channels in
// 32-lane chunks would be two vector<24xf32>, a register and a half each,
// which LLVM splits into spilling pieces with eight rows live (a 16 -> 48
// conv ran 7x slower than 16 -> 64), and one vector<48xf32> of three
// registers is assembled lane by lane; they are three vector<16xf32>, one
// register each, for each of 8 rows.
// CHECK-LABEL: func.func @ragged
// CHECK-NOT: vector<{{24|48}}xf32>
// CHECK-COUNT-24: vector.fma %{{.*}} : vector<16xf32>
// CHECK-NOT: vector<{{24|48}}xf32>
// CHECK: return
func.func @widths(%c: tensor<?x2xi32, #spconv.grid<[16]>>, %f: tensor<?x3xf32>, %w5: tensor<3x3x5xf32>,
                  %w96: tensor<3x3x96xf32>, %wd: tensor<3x3x?xf32>) -> (tensor<?x5xf32>, tensor<?x96xf32>, tensor<?x?xf32>) {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x2xi32, #spconv.grid<[16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x2xi32, #spconv.grid<[16]>>
  %a = spconv.rulebook_conv %rb, %f, %w5 : !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x3xf32>, tensor<3x3x5xf32> -> tensor<?x5xf32>
  %b = spconv.rulebook_conv %rb, %f, %w96 : !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x3xf32>, tensor<3x3x96xf32> -> tensor<?x96xf32>
  %d = spconv.rulebook_conv %rb, %f, %wd : !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x3xf32>, tensor<3x3x?xf32> -> tensor<?x?xf32>
  return %a, %b, %d : tensor<?x5xf32>, tensor<?x96xf32>, tensor<?x?xf32>
}
func.func @ragged(%c: tensor<?x2xi32, #spconv.grid<[16]>>, %f: tensor<?x3xf32>, %w48: tensor<3x3x48xf32>) -> tensor<?x48xf32> {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x2xi32, #spconv.grid<[16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x2xi32, #spconv.grid<[16]>>
  %a = spconv.rulebook_conv %rb, %f, %w48 : !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x3xf32>, tensor<3x3x48xf32> -> tensor<?x48xf32>
  return %a : tensor<?x48xf32>
}

// -----

// The FMA units bound the rows from below where the registers are few: with
// 8 registers of 256 bits, 32 channels fit 2 rows of two registers (4
// chains, 6 loads per 8 FMAs) or 6 rows of one (6 chains, 7 loads per 6
// FMAs). One pipe of latency 4 needs 4 chains: the fewer loads win; two
// pipes need 8: the more chains do.
// PIPES1: func.func @fma_units
// PIPES1: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>)
// PIPES1-NOT: vector<8xf32>
// PIPES2: func.func @fma_units
// PIPES2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// PIPES2-NOT: vector<16xf32>
func.func @fma_units(%c: tensor<?x2xi32, #spconv.grid<[16]>>, %f: tensor<?x32xf32>, %w: tensor<3x32x32xf32>) -> tensor<?x32xf32> {
  %rb, %oc = spconv.build_rulebook %c : tensor<?x2xi32, #spconv.grid<[16]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x2xi32, #spconv.grid<[16]>>
  %y = spconv.rulebook_conv %rb, %f, %w : !spconv.rulebook<#spconv.geom<subm, kernel = [3]>, #spconv.grid<[16]>>, tensor<?x32xf32>, tensor<3x32x32xf32> -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}
