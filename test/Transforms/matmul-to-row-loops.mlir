// RUN: spconv-opt %s -spconv-matmul-to-row-loops -split-input-file | FileCheck %s
// RUN: spconv-opt %s -spconv-matmul-to-row-loops="vector-bits=256" -split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: not spconv-opt %s -spconv-matmul-to-row-loops="vector-bits=1024" -split-input-file 2>&1 | FileCheck %s --check-prefix=BITS
// BITS: spconv-matmul-to-row-loops: vector-bits must be 128, 256 or 512, got 1024

// With 256-bit registers (AVX2) a chunk is one of them: 24 columns in three
// vector<8xf32>, not two vector<12xf32>.
// AVX2-LABEL: func.func @pointwise
// AVX2-COUNT-3: scf.for {{.*}} -> (vector<8xf32>)
// AVX2-NOT: vector<12xf32>

// One parallel iteration per output row; its 24 columns are two chunks of
// 12 lanes, each accumulating in a vector register a broadcast input channel
// times a weight row, in input-channel order (5 of them, folded).
// CHECK-LABEL: func.func @pointwise
// CHECK-SAME: (%[[X:.*]]: memref<?x5xf32>, %[[W:.*]]: memref<5x24xf32>, %[[Y:.*]]: memref<?x24xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG: %[[ROWS:.*]] = memref.dim %[[Y]], %[[C0]]
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK: scf.parallel (%[[R:.*]]) = (%[[C0]]) to (%[[ROWS]]) step (%[[C1]])
// CHECK: %[[INIT0:.*]] = vector.load %[[Y]][%[[R]], %[[C0]]] : memref<?x24xf32>, vector<12xf32>
// CHECK: %[[SUM0:.*]] = scf.for %[[K:.*]] = %[[C0]] to %[[C5]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[INIT0]]) -> (vector<12xf32>)
// CHECK: %[[A:.*]] = memref.load %[[X]][%[[R]], %[[K]]]
// CHECK: %[[WROW:.*]] = vector.load %[[W]][%[[K]], %[[C0]]] : memref<5x24xf32>, vector<12xf32>
// CHECK: %[[AV:.*]] = vector.broadcast %[[A]] : f32 to vector<12xf32>
// CHECK: %[[NEXT:.*]] = vector.fma %[[AV]], %[[WROW]], %[[ACC]]
// CHECK: scf.yield %[[NEXT]]
// CHECK: vector.store %[[SUM0]], %[[Y]][%[[R]], %[[C0]]]
// CHECK: vector.load %[[Y]][%[[R]], %[[C12]]]
// CHECK: vector.store %{{.*}}, %[[Y]][%[[R]], %[[C12]]]
// CHECK-NOT: linalg.matmul
func.func @pointwise(%x: memref<?x5xf32>, %w: memref<5x24xf32>, %y: memref<?x24xf32>) {
  linalg.matmul ins(%x, %w : memref<?x5xf32>, memref<5x24xf32>) outs(%y : memref<?x24xf32>)
  return
}

// -----

// Left to linalg: tensors (before bufferization), dynamic columns, strided
// rows, other element types.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: linalg.matmul
func.func @left_alone(%t: tensor<?x4xf32>, %tw: tensor<4x8xf32>, %ty: tensor<?x8xf32>,
                      %x: memref<?x4xf32>, %wd: memref<4x?xf32>, %yd: memref<?x?xf32>,
                      %ws: memref<4x8xf32, strided<[16, 2]>>, %ys: memref<?x8xf32>,
                      %xh: memref<?x4xf16>, %wh: memref<4x8xf16>, %yh: memref<?x8xf16>) -> tensor<?x8xf32> {
  %r = linalg.matmul ins(%t, %tw : tensor<?x4xf32>, tensor<4x8xf32>) outs(%ty : tensor<?x8xf32>) -> tensor<?x8xf32>
  linalg.matmul ins(%x, %wd : memref<?x4xf32>, memref<4x?xf32>) outs(%yd : memref<?x?xf32>)
  linalg.matmul ins(%x, %ws : memref<?x4xf32>, memref<4x8xf32, strided<[16, 2]>>) outs(%ys : memref<?x8xf32>)
  linalg.matmul ins(%xh, %wh : memref<?x4xf16>, memref<4x8xf16>) outs(%yh : memref<?x8xf16>)
  return %r : tensor<?x8xf32>
}
