// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash" -split-input-file | FileCheck %s --check-prefix=GPU

// On the GPU, static channels: a tiled reduction. A block per (piece of the
// offset's pairs, offset, 32 x 32 channel tile): 8 x 27 x 1 x 1 = 216 blocks
// of 256 threads stage 32 pairs' gathered rows in workgroup memory between
// two barriers, each thread accumulating 2 x 2 elements (empty pair ranges
// where the rows were wrong); a second kernel sums the 8 pieces of every
// element in order. 16-bit floats round that f32 sum. Channels known at run
// time keep a thread per element.
// GPU-LABEL: func.func @weight_grad
// GPU: %[[OK:.*]] = arith.andi
// GPU: %[[DW:.*]] = memref.alloc() : memref<27x4x8xf32>
// GPU: %[[PIECES:.*]] = memref.alloc() : memref<8x27x4x8xf32>
// GPU: gpu.launch blocks({{.*}}) in ({{.*}} = %c216, {{.*}}) threads({{.*}}) in ({{.*}} = %c256,
// GPU: %[[XS:.*]] = memref.alloca() : memref<32x32xf32, #gpu.address_space<workgroup>>
// GPU: %[[GS:.*]] = memref.alloca() : memref<32x32xf32, #gpu.address_space<workgroup>>
// GPU: arith.select %[[OK]], %{{.*}}, %{{.*}} : index
// GPU: memref.store %{{.*}}, %[[XS]]
// GPU: memref.store %{{.*}}, %[[GS]]
// GPU: gpu.barrier
// GPU-COUNT-4: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// GPU: gpu.barrier
// GPU-COUNT-4: memref.store %{{.*}}, %[[PIECES]]
// GPU: } {spconv.kernel = "weight_grad_f32"}
// GPU: scf.parallel (%[[J:[^,]*]], %[[CI:[^,]*]], %[[CO:[^)]*]]) =
// GPU-COUNT-8: memref.load %[[PIECES]][%{{.*}}, %[[J]], %[[CI]], %[[CO]]]
// GPU: memref.store %{{.*}}, %[[DW]][%[[J]], %[[CI]], %[[CO]]]
// GPU: {spconv.kernel = "weight_grad_f32_sum"}
// GPU-LABEL: func.func @weight_grad_inverse
// GPU-LABEL: func.func @weight_grad_f16
// GPU: memref.alloc() : memref<8x27x4x8xf32>
// GPU: {spconv.kernel = "weight_grad_f16"}
// GPU: arith.truncf %{{.*}} : f32 to f16
// GPU: {spconv.kernel = "weight_grad_f16_sum"}

// The weight gradient on the CPU (both operands' rows checked first: 0
// input sites, 2 output sites): a GEMM per kernel offset over its pairs,
// one parallel iteration per (offset, chunk of output channels; here one
// chunk of 8). It zeroes its chunk of the 4 x 8 block, then takes the pairs
// 128 at a time through each tile of input channels (4 rows here): the
// tile's sums are loaded into registers, every pair of the block adds its
// gradient chunk (one load) times its feature of each row (a broadcast)
// in pair order, and the sums are stored back.
// CHECK-LABEL: func.func @weight_grad
// CHECK: %[[RB:.*]]:3 = call @spconv_build_subm_k3x3x3
// CHECK: %[[G:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x8xf32> to memref<?x8xf32>
// CHECK: %[[X:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x4xf32> to memref<?x4xf32>
// CHECK: %[[XOK:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK: %[[C0:.*]] = arith.constant 0 : i64
// CHECK: call @spconv_rt_report_row_mismatch({{.*}}, %[[C0]])
// CHECK: %[[GOK:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK: %[[C2:.*]] = arith.constant 2 : i64
// CHECK: call @spconv_rt_report_row_mismatch({{.*}}, %[[C2]])
// CHECK: %[[OK:.*]] = arith.andi %[[XOK]], %[[GOK]] : i1
// CHECK: %[[DW:.*]] = memref.alloc() : memref<27x4x8xf32>
// CHECK: %[[K:.*]] = arith.constant 27 : index
// CHECK: %[[CHUNKS:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%[[J:.*]], %[[CHUNK:.*]]) = ({{.*}}) to (%[[K]], %[[CHUNKS]])
// CHECK: %[[COL:.*]] = arith.muli %[[CHUNK]], %c8 : index
// CHECK: %[[BEGIN:.*]] = memref.load %[[RB]]#2[%[[J]]] : memref<28xindex>
// CHECK: %[[END:.*]] = memref.load %[[RB]]#2[%{{.*}}] : memref<28xindex>
// CHECK: %[[LAST:.*]] = arith.select %[[OK]], %[[END]], %[[BEGIN]] : index
// CHECK: scf.for %[[CI0:.*]] = %{{.*}} to %c4 step
// CHECK: vector.store %{{.*}}, %[[DW]][%[[J]], %[[CI0]], %[[COL]]] : memref<27x4x8xf32>, vector<8xf32>
// CHECK: %[[BLOCK:.*]] = arith.constant 128 : index
// CHECK: scf.for %[[FIRST:.*]] = %[[BEGIN]] to %[[LAST]] step %[[BLOCK]] {
// CHECK: %[[NEXT:.*]] = arith.addi %[[FIRST]], %[[BLOCK]] : index
// CHECK: %[[STOP:.*]] = arith.minsi %[[NEXT]], %[[LAST]] : index
// CHECK: scf.for %[[CI:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-4: vector.load %[[DW]][%[[J]], %{{.*}}, %[[COL]]] : memref<27x4x8xf32>, vector<8xf32>
// CHECK: %[[SUMS:.*]]:4 = scf.for %[[P:.*]] = %[[FIRST]] to %[[STOP]] step %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK: %[[SRC:.*]] = memref.load %[[RB]]#0[%[[P]]]
// CHECK: %[[SRC_I:.*]] = arith.index_cast %[[SRC]]
// CHECK: %[[DST:.*]] = memref.load %[[RB]]#1[%[[P]]]
// CHECK: %[[DST_I:.*]] = arith.index_cast %[[DST]]
// CHECK: %[[GROW:.*]] = vector.load %[[G]][%[[DST_I]], %[[COL]]] : memref<?x8xf32>, vector<8xf32>
// CHECK-NOT: vector.load
// CHECK: %[[A:.*]] = memref.load %[[X]][%[[SRC_I]], %{{.*}}] : memref<?x4xf32>
// CHECK: %[[SPLAT:.*]] = vector.broadcast %[[A]] : f32 to vector<8xf32>
// CHECK: vector.fma %[[SPLAT]], %[[GROW]], %{{.*}} : vector<8xf32>
// CHECK-COUNT-3: vector.fma %{{.*}}, %[[GROW]]
// CHECK: scf.yield
// CHECK-COUNT-4: vector.store %[[SUMS]]#{{[0-3]}}, %[[DW]][%[[J]], %{{.*}}, %[[COL]]]
// CHECK: } {spconv.kernel = "weight_grad_f32"}
!g = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @weight_grad(%c: !g, %x: tensor<?x4xf32>, %g: tensor<?x8xf32>) -> tensor<27x4x8xf32> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %dw = spconv.rulebook_weight_grad %rb, %x, %g
      : !subm, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x4x8xf32>
  return %dw : tensor<27x4x8xf32>
}

// -----

// Read backwards (an inverse conv's weight gradient): the features are rows
// of the output sites, the gradient rows of the input sites (1: the output
// sites of the inverted conv, 0: input sites), and each pair's rows swap.
// CHECK-LABEL: func.func @weight_grad_inverse
// CHECK: %[[RB:.*]]:4 = call @spconv_build_regular
// CHECK: %[[G:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x4xf32> to memref<?x4xf32>
// CHECK: %[[Y:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x8xf32> to memref<?x8xf32>
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK: call @spconv_rt_report_row_mismatch({{.*}}, %[[C1]])
// CHECK: %[[C0:.*]] = arith.constant 0 : i64
// CHECK: call @spconv_rt_report_row_mismatch({{.*}}, %[[C0]])
// CHECK: scf.parallel
// CHECK: %[[IN:.*]] = memref.load %[[RB]]#1
// CHECK: %[[IN_I:.*]] = arith.index_cast %[[IN]]
// CHECK: %[[OUT:.*]] = memref.load %[[RB]]#2
// CHECK: %[[OUT_I:.*]] = arith.index_cast %[[OUT]]
// CHECK: vector.load %[[G]][%[[IN_I]], %{{.*}}] : memref<?x4xf32>, vector<4xf32>
// CHECK: memref.load %[[Y]][%[[OUT_I]], %{{.*}}]
// CHECK: {spconv.kernel = "weight_grad_f32"}
!f = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!c = tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>
!down = !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>
func.func @weight_grad_inverse(%fine: !f, %y: tensor<?x8xf32>, %g: tensor<?x4xf32>) -> tensor<8x8x4xf32> {
  %rb, %coarse = spconv.build_rulebook %fine : !f -> !down, !c
  %dw = spconv.rulebook_weight_grad inverse %rb, %y, %g
      : !down, tensor<?x8xf32>, tensor<?x4xf32> -> tensor<8x8x4xf32>
  return %dw : tensor<8x8x4xf32>
}

// -----

// f16 sums in f32, in a buffer of its own, and each finished chunk is
// rounded into the f16 result.
// CHECK-LABEL: func.func @weight_grad_f16
// CHECK: %[[DW:.*]] = memref.alloc() : memref<27x4x8xf16>
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<27x4x8xf32>
// CHECK: scf.parallel
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: vector.fma %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[ACC]]
// CHECK: %[[ROUNDED:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: vector.store %[[ROUNDED]], %[[DW]]
// CHECK: {spconv.kernel = "weight_grad_f16"}
!g16 = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!subm16 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @weight_grad_f16(%c: !g16, %x: tensor<?x4xf16>, %g: tensor<?x8xf16>) -> tensor<27x4x8xf16> {
  %rb, %oc = spconv.build_rulebook %c : !g16 -> !subm16, !g16
  %dw = spconv.rulebook_weight_grad %rb, %x, %g
      : !subm16, tensor<?x4xf16>, tensor<?x8xf16> -> tensor<27x4x8xf16>
  return %dw : tensor<27x4x8xf16>
}

// -----

// Channels known only at run time: a parallel loop over (offset, input
// channel) whose iterations add each pair's product into their row of the
// result, element by element, group by group (here one group); the pair
// range is empty where the rows were wrong.
// CHECK-LABEL: func.func @weight_grad_dynamic
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: %[[DW:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<27x?x?xf32>
// CHECK: scf.parallel (%[[J:[^,]*]], %[[CI:[^)]*]]) =
// CHECK: arith.select %[[OK]], %{{.*}}, %{{.*}} : index
// CHECK: scf.for %{{.*}} =
// CHECK: scf.for %{{.*}} =
// CHECK: scf.for %[[CO:[^ ]*]] =
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[DW]][%[[J]], %[[CI]], %[[CO]]]
// CHECK: {spconv.kernel = "weight_grad_f32"}
// GPU-LABEL: func.func @weight_grad_dynamic
// GPU-NOT: gpu.launch
// GPU: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) =
// GPU: scf.for
// GPU: arith.mulf
// GPU: {spconv.kernel = "weight_grad_f32"}
!gd = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!submd = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @weight_grad_dynamic(%c: !gd, %x: tensor<?x?xf32>, %g: tensor<?x?xf32>) -> tensor<27x?x?xf32> {
  %rb, %oc = spconv.build_rulebook %c : !gd -> !submd, !gd
  %dw = spconv.rulebook_weight_grad %rb, %x, %g
      : !submd, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<27x?x?xf32>
  return %dw : tensor<27x?x?xf32>
}
