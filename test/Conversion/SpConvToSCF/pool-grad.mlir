// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s

// Max pooling's gradient: after the rows are checked (0: input sites,
// 2: output sites), a pass over the offsets in order, in parallel over each
// offset's pairs (no two of which share an input or an output), keeps per
// output and channel the largest value and its input row (strictly greater
// wins: the lowest offset among ties); a second gives each winning input
// the output's gradient.
// CHECK-LABEL: func.func @max_grad
// CHECK: %[[RB:.*]]:4 = call @spconv_build_regular
// CHECK: %[[G:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x4xf32> to memref<?x4xf32>
// CHECK: %[[X:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x4xf32> to memref<?x4xf32>
// CHECK: call @spconv_rt_report_row_mismatch
// CHECK: call @spconv_rt_report_row_mismatch
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: %[[DX:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK: {spconv.kernel = "zero_pool_grad_f32"}
// CHECK: %[[BEST:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: {spconv.kernel = "init_pool_max_f32"}
// CHECK: %[[ARG:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xi32>
// CHECK: {spconv.kernel = "init_pool_argmax"}
// CHECK: scf.for %[[J:.*]] =
// CHECK: %[[BEGIN:.*]] = memref.load %[[RB]]#3[%[[J]]]
// CHECK: %[[END:.*]] = memref.load %[[RB]]#3
// CHECK: %[[LAST:.*]] = arith.select %[[OK]], %[[END]], %[[BEGIN]] : index
// CHECK: scf.parallel (%[[P:.*]]) = (%[[BEGIN]]) to (%[[LAST]])
// CHECK: %[[IN:.*]] = memref.load %[[RB]]#1[%[[P]]]
// CHECK: %[[SRC:.*]] = arith.index_cast %[[IN]] : i32 to index
// CHECK: %[[OUT:.*]] = memref.load %[[RB]]#2[%[[P]]]
// CHECK: %[[DST:.*]] = arith.index_cast %[[OUT]] : i32 to index
// CHECK: scf.for %[[C:.*]] =
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[SRC]], %[[C]]]
// CHECK: %[[CUR:.*]] = memref.load %[[BEST]][%[[DST]], %[[C]]]
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[CUR]] : f32
// CHECK: scf.if %[[GT]] {
// CHECK: memref.store %[[V]], %[[BEST]][%[[DST]], %[[C]]]
// CHECK: memref.store %{{.*}}, %[[ARG]][%[[DST]], %[[C]]]
// CHECK: {spconv.kernel = "pool_argmax_f32"}
// CHECK: scf.parallel
// CHECK: %[[WINNER:.*]] = memref.load %[[ARG]]
// CHECK: %[[WINS:.*]] = arith.cmpi eq, %[[WINNER]], %{{.*}} : i32
// CHECK: scf.if %[[WINS]] {
// CHECK: memref.load %[[G]]
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[DX]]
// CHECK: {spconv.kernel = "pool_max_grad_f32"}
// CHECK: %[[RESULT:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK: {spconv.kernel = "store_pool_grad_f32"}
!g = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!p = tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>
!pool = !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>
func.func @max_grad(%c: !g, %x: tensor<?x4xf32>, %g: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !pool, !p
  %dx = spconv.rulebook_pool_grad max %rb, %x, %g
      : !pool, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  return %dx : tensor<?x4xf32>
}

// -----

// Average pooling's gradient: one pass counts each output's contributors,
// a second adds the output's gradient over that count to each contributor;
// f16 sums in f32 and rounds once.
// CHECK-LABEL: func.func @avg_grad_f16
// CHECK: %[[DX:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK: %[[COUNTS:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xi32>
// CHECK: {spconv.kernel = "zero_pool_counts"}
// CHECK: scf.parallel
// CHECK: %[[N:.*]] = memref.load %[[COUNTS]]
// CHECK: arith.addi %[[N]], %{{.*}} : i32
// CHECK: {spconv.kernel = "pool_counts"}
// CHECK: scf.parallel
// CHECK: %[[COUNT:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK: %[[GRAD:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[SHARE:.*]] = arith.divf %[[GRAD]], %[[COUNT]] : f32
// CHECK: arith.addf %{{.*}}, %[[SHARE]] : f32
// CHECK: {spconv.kernel = "pool_avg_grad_f16"}
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: {spconv.kernel = "store_pool_grad_f16"}
!g16 = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!p16 = tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>
!pool16 = !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>
func.func @avg_grad_f16(%c: !g16, %x: tensor<?x4xf16>, %g: tensor<?x4xf16>) -> tensor<?x4xf16> {
  %rb, %oc = spconv.build_rulebook %c : !g16 -> !pool16, !p16
  %dx = spconv.rulebook_pool_grad avg %rb, %x, %g
      : !pool16, tensor<?x4xf16>, tensor<?x4xf16> -> tensor<?x4xf16>
  return %dx : tensor<?x4xf16>
}

// -----

// Static feature rows (found by the fuzzer: the result was allocated with a
// size operand its static type has no room for): the gradient is computed
// a row per input site of the rulebook, then checked against the static 10
// rows (22: SPCONV_RT_SIZE_POOL_GRAD_ROWS) and cast.
// CHECK-LABEL: func.func @static_rows
// CHECK: %[[ROWS:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK: {spconv.kernel = "store_pool_grad_f32"}
// CHECK: %[[WHAT:.*]] = arith.constant 22 : i64
// CHECK: call @spconv_rt_report_size_mismatch(%[[WHAT]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: memref.cast %[[ROWS]] : memref<?x4xf32> to memref<10x4xf32>
// GPU-LABEL: func.func @static_rows
// GPU: memref.cast %{{.*}} : memref<?x4xf32> to memref<10x4xf32>
!rb = !spconv.rulebook<#spconv.geom<regular, kernel = [1, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>
func.func @static_rows(%rb: !rb, %f: tensor<10x4xf32>, %g: tensor<?x4xf32>) -> tensor<10x4xf32> {
  %0 = spconv.rulebook_pool_grad avg %rb, %f, %g : !rb, tensor<10x4xf32>, tensor<?x4xf32> -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}
