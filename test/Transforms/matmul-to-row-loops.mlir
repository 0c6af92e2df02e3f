// RUN: spconv-opt %s -spconv-matmul-to-row-loops -split-input-file | FileCheck %s
// RUN: spconv-opt %s -spconv-matmul-to-row-loops="vector-bits=256 vector-registers=16" -split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: not spconv-opt %s -spconv-matmul-to-row-loops="vector-bits=1024" -split-input-file 2>&1 | FileCheck %s --check-prefix=BITS
// BITS: spconv-matmul-to-row-loops: vector-bits must be 128, 256 or 512, got 1024

// RUN: not spconv-opt %s -spconv-matmul-to-row-loops="vector-registers=3" -split-input-file 2>&1 | FileCheck %s --check-prefix=REGS
// REGS: spconv-matmul-to-row-loops: vector-registers must be at least 4, got 3

// RUN: not spconv-opt %s -spconv-matmul-to-row-loops="fma-pipes=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=FMA
// FMA: spconv-matmul-to-row-loops: fma-pipes and fma-latency must be at least 1, got 0 and 4

// The rows and chunk registers of a group are the rulebook conv's
// (chooseRowBlocking). With 16 registers of 256 bits (AVX2) 24 columns are
// three chunks of one register, vector<8xf32>, for each of 8 rows, and for
// each row left over: not two vector<12xf32> (a register and a half each)
// nor one vector<24xf32> (three registers: LLVM assembles a vector of other
// than a power of two of registers lane by lane).
// AVX2-LABEL: func.func @pointwise
// AVX2: arith.divui %{{.*}}, %c8
// AVX2-COUNT-3: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-3: scf.for {{.*}} -> (vector<8xf32>)
// AVX2-NOT: vector<{{12|24}}xf32>

// Groups of eight output rows, one parallel iteration each: each chunk of
// the 24 columns (two of 12 lanes) is held for all eight rows, accumulating
// a broadcast input channel times a weight row, in input-channel order (5
// of them, folded): eight independent FMA chains, one weight load for the
// eight rows. The rows left over (from 8 x groups) go one by one.
// CHECK-LABEL: func.func @pointwise
// CHECK-SAME: (%[[X:.*]]: memref<?x5xf32>, %[[W:.*]]: memref<5x24xf32>, %[[Y:.*]]: memref<?x24xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[ROWS:.*]] = memref.dim %[[Y]], %[[C0]]
// CHECK: %[[GROUPS:.*]] = arith.divui %[[ROWS]], %[[C8]] : index
// CHECK: scf.parallel (%[[G:.*]]) = (%[[C0]]) to (%[[GROUPS]]) step (%[[C1]])
// CHECK: %[[R0:.*]] = arith.muli %[[G]], %[[C8]] : index
// CHECK: %[[R7:.*]] = arith.addi %[[R0]], %[[C7]] : index
// CHECK: %[[INIT0:.*]] = vector.load %[[Y]][%[[R0]], %[[C0]]] : memref<?x24xf32>, vector<12xf32>
// CHECK-COUNT-7: vector.load %[[Y]]
// CHECK: %[[SUMS:.*]]:8 = scf.for %[[K:.*]] = %[[C0]] to %[[C5]] step %[[C1]] iter_args(%[[ACC0:.*]] = %[[INIT0]], {{.*}}, %[[ACC7:.*]] = %{{.*}}) -> (vector<12xf32>, {{.*}})
// CHECK: %[[WROW:.*]] = vector.load %[[W]][%[[K]], %[[C0]]] : memref<5x24xf32>, vector<12xf32>
// CHECK: %[[A0:.*]] = memref.load %[[X]][%[[R0]], %[[K]]]
// CHECK: %[[AV0:.*]] = vector.broadcast %[[A0]] : f32 to vector<12xf32>
// CHECK: vector.fma %[[AV0]], %[[WROW]], %[[ACC0]]
// CHECK-COUNT-6: vector.fma %{{.*}}, %[[WROW]]
// CHECK: %[[A7:.*]] = memref.load %[[X]][%[[R7]], %[[K]]]
// CHECK: %[[AV7:.*]] = vector.broadcast %[[A7]] : f32 to vector<12xf32>
// CHECK: vector.fma %[[AV7]], %[[WROW]], %[[ACC7]]
// CHECK: scf.yield
// CHECK: vector.store %[[SUMS]]#0, %[[Y]][%[[R0]], %[[C0]]]
// CHECK: vector.store %[[SUMS]]#7, %[[Y]][%[[R7]], %[[C0]]]
// CHECK: vector.load %[[Y]][%[[R0]], %[[C12]]]
// CHECK: vector.store %{{.*}}, %[[Y]][%[[R7]], %[[C12]]]
// CHECK: scf.reduce
// CHECK: %[[DONE:.*]] = arith.muli %[[GROUPS]], %[[C8]] : index
// CHECK: scf.parallel (%[[R:.*]]) = (%[[DONE]]) to (%[[ROWS]]) step (%[[C1]])
// CHECK: %[[INIT:.*]] = vector.load %[[Y]][%[[R]], %[[C0]]] : memref<?x24xf32>, vector<12xf32>
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C5]] step %[[C1]] iter_args(%{{.*}} = %[[INIT]]) -> (vector<12xf32>)
// CHECK: vector.store %{{.*}}, %[[Y]][%[[R]], %[[C12]]]
// CHECK-NOT: linalg.matmul
func.func @pointwise(%x: memref<?x5xf32>, %w: memref<5x24xf32>, %y: memref<?x24xf32>) {
  linalg.matmul ins(%x, %w : memref<?x5xf32>, memref<5x24xf32>) outs(%y : memref<?x24xf32>)
  return
}

// -----

// 19 columns (a classifier): whole registers and one short chunk, 16 + 3,
// never a ragged vector<19xf32>, which LLVM would split into pieces that
// spill with eight rows live.
// CHECK-LABEL: func.func @classifier
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for {{.*}} -> (vector<3xf32>, vector<3xf32>, vector<3xf32>, vector<3xf32>, vector<3xf32>, vector<3xf32>, vector<3xf32>, vector<3xf32>)
// CHECK-NOT: vector<19xf32>
func.func @classifier(%x: memref<?x96xf32>, %w: memref<96x19xf32>, %y: memref<?x19xf32>) {
  linalg.matmul ins(%x, %w : memref<?x96xf32>, memref<96x19xf32>) outs(%y : memref<?x19xf32>)
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
