// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash" -split-input-file | FileCheck %s --check-prefix=GPU

// On the GPU, a thread per element (offset, input channel, output channel)
// sums its pairs in a register (an empty range where the rows were wrong)
// and stores once; 16-bit floats round that f32 sum.
// GPU-LABEL: func.func @weight_grad
// GPU: %[[OK:.*]] = arith.andi
// GPU: %[[DW:.*]] = memref.alloc() : memref<27x4x8xf32>
// GPU: scf.parallel (%[[J:.*]], %[[CI:.*]], %[[CO:.*]]) =
// GPU: %[[BEGIN:.*]] = memref.load
// GPU: %[[END:.*]] = memref.load
// GPU: %[[LAST:.*]] = arith.select %[[OK]], %[[END]], %[[BEGIN]] : index
// GPU: %[[SUM:.*]] = scf.for %{{.*}} = %[[BEGIN]] to %[[LAST]] step %{{.*}} iter_args(%[[S:.*]] = %{{.*}}) -> (f32)
// GPU: arith.mulf
// GPU: %[[NEXT:.*]] = arith.addf %[[S]]
// GPU: scf.yield %[[NEXT]] : f32
// GPU: memref.store %[[SUM]], %[[DW]][%[[J]], %[[CI]], %[[CO]]]
// GPU: {spconv.kernel = "weight_grad_f32"}
// GPU-LABEL: func.func @weight_grad_inverse
// GPU-LABEL: func.func @weight_grad_f16
// GPU-NOT: memref<27x4x8xf32>
// GPU: arith.truncf %{{.*}} : f32 to f16
// GPU: {spconv.kernel = "weight_grad_f16"}

// The weight gradient: one parallel loop over (offset, input channel); each
// iteration zeroes its row of the result and adds, pair by pair of its
// offset in the rulebook's order, features[in, ci] * out_grad[out, :].
// Both operands' rows are checked first (0: input sites, 2: output sites).
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
// CHECK: scf.parallel (%[[J:.*]], %[[CI:.*]]) = ({{.*}}) to (%[[K]], %{{.*}})
// CHECK: scf.for %[[CO0:.*]] =
// CHECK: memref.store %{{.*}}, %[[DW]][%[[J]], %[[CI]], %[[CO0]]]
// CHECK: scf.if %[[OK]] {
// CHECK: %[[BEGIN:.*]] = memref.load %[[RB]]#2[%[[J]]] : memref<28xindex>
// CHECK: %[[END:.*]] = memref.load %[[RB]]#2[%{{.*}}] : memref<28xindex>
// CHECK: scf.for %[[P:.*]] = %[[BEGIN]] to %[[END]]
// CHECK: %[[IN:.*]] = memref.load %[[RB]]#0[%[[P]]]
// CHECK: %[[IN_I:.*]] = arith.index_cast %[[IN]]
// CHECK: %[[OUT:.*]] = memref.load %[[RB]]#1[%[[P]]]
// CHECK: %[[OUT_I:.*]] = arith.index_cast %[[OUT]]
// CHECK: %[[A:.*]] = memref.load %[[X]][%[[IN_I]], %[[CI]]]
// CHECK: scf.for %[[CO:.*]] =
// CHECK: %[[B:.*]] = memref.load %[[G]][%[[OUT_I]], %[[CO]]]
// CHECK: %[[AB:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: %[[OLD:.*]] = memref.load %[[DW]][%[[J]], %[[CI]], %[[CO]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[AB]] : f32
// CHECK: memref.store %[[NEW]], %[[DW]][%[[J]], %[[CI]], %[[CO]]]
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
// CHECK: scf.parallel (%{{.*}}, %[[CI:.*]]) =
// CHECK: %[[IN:.*]] = memref.load %[[RB]]#1
// CHECK: %[[IN_I:.*]] = arith.index_cast %[[IN]]
// CHECK: %[[OUT:.*]] = memref.load %[[RB]]#2
// CHECK: %[[OUT_I:.*]] = arith.index_cast %[[OUT]]
// CHECK: memref.load %[[Y]][%[[OUT_I]], %[[CI]]]
// CHECK: memref.load %[[G]][%[[IN_I]], %{{.*}}]
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

// f16 sums in f32, in a buffer of its own, and each finished row is rounded
// into the f16 result.
// CHECK-LABEL: func.func @weight_grad_f16
// CHECK: %[[DW:.*]] = memref.alloc() : memref<27x4x8xf16>
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<27x4x8xf32>
// CHECK: scf.parallel
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.mulf %{{.*}} : f32
// CHECK: memref.store %{{.*}}, %[[ACC]]
// CHECK: %[[SUM:.*]] = memref.load %[[ACC]]
// CHECK: %[[ROUNDED:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK: memref.store %[[ROUNDED]], %[[DW]]
// CHECK: {spconv.kernel = "weight_grad_f16"}
!g16 = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!subm16 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @weight_grad_f16(%c: !g16, %x: tensor<?x4xf16>, %g: tensor<?x8xf16>) -> tensor<27x4x8xf16> {
  %rb, %oc = spconv.build_rulebook %c : !g16 -> !subm16, !g16
  %dw = spconv.rulebook_weight_grad %rb, %x, %g
      : !subm16, tensor<?x4xf16>, tensor<?x8xf16> -> tensor<27x4x8xf16>
  return %dw : tensor<27x4x8xf16>
}
