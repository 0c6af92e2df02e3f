// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash" -split-input-file | FileCheck %s --check-prefix=GPU

// Grouped convs (groups = 4: 8 -> 16 channels, a K x 2 x 16 weight). On the
// CPU each group of pairs runs a register-blocked update per channel group:
// its output columns start at q * 4, its input channels at q * 2. On the GPU
// the pair-channel form (the implicit GEMM wants one dense block per offset)
// reads, for output channel co, the input channels from co / 4 * 2 on.
// CHECK-LABEL: func.func @grouped
// CHECK: scf.for %[[Q:.*]] = %{{.*}} to %c4{{(_[0-9]+)?}} step
// CHECK: %[[IN:.*]] = arith.muli %[[Q]], %{{.*}} : index
// CHECK: %[[OUT:.*]] = arith.muli %[[Q]], %{{.*}} : index
// CHECK: %[[COLUMN:.*]] = arith.addi %[[OUT]], %{{.*}} : index
// CHECK-COUNT-8: vector.load %{{.*}}[%{{.*}}, %[[COLUMN]]] : memref<?x?xf32>
// CHECK: scf.for %[[CI:[^ ]*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: vector.load %{{.*}}[%{{.*}}, %[[CI]], %[[COLUMN]]] : memref<27x2x16xf32>
// CHECK: %[[X:.*]] = arith.addi %[[IN]], %[[CI]] : index
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[X]]] : memref<?x8xf32>
// CHECK: vector.broadcast
// CHECK: vector.fma
// CHECK: {spconv.kernel = "conv_f32_2x16_g4"}
// GPU-LABEL: func.func @grouped
// GPU: %[[COUT:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// GPU: {spconv.kernel = "init_rows"}
// GPU: scf.parallel (%[[P:[^,]*]], %[[CO:[^)]*]]) =
// GPU: %[[Q:.*]] = arith.divui %[[CO]], %[[COUT]] : index
// GPU: %[[IN:.*]] = arith.muli %[[Q]], %{{.*}} : index
// GPU: scf.for %[[CI:[^ ]*]] =
// GPU: %[[X:.*]] = arith.addi %[[IN]], %[[CI]] : index
// GPU: memref.load %{{.*}}[%{{.*}}, %[[X]]] : memref<?x8xf32>
// GPU: memref.load %{{.*}}[%{{.*}}, %[[CI]], %[[CO]]] : memref<27x2x16xf32>
// GPU: {spconv.kernel = "conv_f32_2x16_g4"}
!g = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @grouped(%c: !g, %x: tensor<?x8xf32>, %w: tensor<27x2x16xf32>) -> tensor<?x16xf32> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %y = spconv.rulebook_conv groups 4 %rb, %x, %w
      : !subm, tensor<?x8xf32>, tensor<27x2x16xf32> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// Depthwise (a channel per group, K x 1 x 16): per pair one vector FMA of
// the feature row and the offset's weight row, no broadcast.
// CHECK-LABEL: func.func @depthwise
// CHECK: %[[W:.*]] = vector.load %{{.*}} : memref<27x1x16xf32>, vector<[[N:[0-9]+]]xf32>
// CHECK: %[[ACC:.*]] = vector.load %{{.*}} : memref<?x?xf32>, vector<[[N]]xf32>
// CHECK: %[[X:.*]] = vector.load %{{.*}} : memref<?x16xf32>, vector<[[N]]xf32>
// CHECK: vector.fma %[[X]], %[[W]], %[[ACC]]
// CHECK-NOT: vector.broadcast
// CHECK: {spconv.kernel = "conv_f32_1x16_g16"}
// GPU-LABEL: func.func @depthwise
// GPU: {spconv.kernel = "conv_f32_1x16_g16"}
!g = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @depthwise(%c: !g, %x: tensor<?x16xf32>, %w: tensor<27x1x16xf32>) -> tensor<?x16xf32> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %y = spconv.rulebook_conv groups 16 %rb, %x, %w
      : !subm, tensor<?x16xf32>, tensor<27x1x16xf32> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// The grouped weight gradient: on the CPU each block of an offset's pairs
// runs the tiles group by group (output columns from q * 4, input channels
// from q * 2: a tile of both rows of a group's 2 x 4 block); on the GPU the
// thread of (j, ci, co) reads input channel co / 4 * 2 + ci.
// CHECK-LABEL: func.func @grouped_weight_grad
// CHECK: scf.parallel
// CHECK: arith.constant 128 : index
// CHECK: scf.for %[[Q:.*]] = %{{.*}} to %c4{{(_[0-9]+)?}} step
// CHECK: %[[IN:.*]] = arith.muli %[[Q]], %{{.*}} : index
// CHECK: %[[OUT:.*]] = arith.muli %[[Q]], %{{.*}} : index
// CHECK: scf.for %[[CI:[^ ]*]] =
// CHECK: %[[COLUMN:.*]] = arith.addi %[[OUT]], %{{.*}} : index
// CHECK: %[[ROW:.*]] = arith.addi %[[CI]], %{{.*}} : index
// CHECK: %[[X:.*]] = arith.addi %[[IN]], %[[ROW]] : index
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.load %{{.*}}[%{{.*}}, %[[COLUMN]]] : memref<?x16xf32>, vector<4xf32>
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[X]]] : memref<?x8xf32>
// CHECK: {spconv.kernel = "weight_grad_f32_g4"}
// GPU-LABEL: func.func @grouped_weight_grad
// GPU: %[[CIN:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// GPU: %[[COUT:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// GPU: scf.parallel (%[[J:[^,]*]], %[[CI:[^,]*]], %[[CO:[^)]*]]) = {{.*}} to (%{{.*}}, %[[CIN]], %{{.*}})
// GPU: %[[Q:.*]] = arith.divui %[[CO]], %[[COUT]] : index
// GPU: %[[IN:.*]] = arith.muli %[[Q]], %[[CIN]] : index
// GPU: %[[X:.*]] = arith.addi %[[IN]], %[[CI]] : index
// GPU: memref.load %{{.*}}[%{{.*}}, %[[X]]] : memref<?x8xf32>
// GPU: {spconv.kernel = "weight_grad_f32_g4"}
!g = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @grouped_weight_grad(%c: !g, %x: tensor<?x8xf32>, %g: tensor<?x16xf32>) -> tensor<27x2x16xf32> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %dw = spconv.rulebook_weight_grad groups 4 %rb, %x, %g
      : !subm, tensor<?x8xf32>, tensor<?x16xf32> -> tensor<27x2x16xf32>
  return %dw : tensor<27x2x16xf32>
}
