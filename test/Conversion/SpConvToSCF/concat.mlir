// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-matmul=fma" -split-input-file | FileCheck %s --check-prefix=GEMM
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-conv=gather-scatter" -split-input-file | FileCheck %s --check-prefix=GATHER

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// Convs whose only user is a concatenation along the channels write their
// rows into its columns: the first allocates the joint buffer (its rows),
// the next checks its rows against it (19: the concatenation's rows; on a
// mismatch its columns are zero and it writes a scratch buffer). The other
// operand is copied in, its rows checked too. No conv buffer of its own.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: %{{[^:]*}}: index, %[[ROWS:[^:]*]]: index
// CHECK-NOT: memref.alloc
// CHECK: %[[JOINT:.*]] = memref.alloc(%[[ROWS]]) : memref<?x28xf32>
// CHECK-NEXT: %[[A:.*]] = memref.subview %[[JOINT]][0, 0] [%[[ROWS]], 16] [1, 1] : memref<?x28xf32> to memref<?x16xf32, strided<[28, 1]>>
// CHECK-NOT: memref.alloc
// CHECK: vector.store %{{.*}}, %[[A]][%{{.*}}, %{{.*}}] : memref<?x16xf32, strided<[28, 1]>>, vector<16xf32>
// CHECK: spconv.kernel = "conv_f32_4x16"
// CHECK: %[[JROWS:.*]] = memref.dim %[[JOINT]], %{{.*}} : memref<?x28xf32>
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[ROWS]], %[[JROWS]] : index
// CHECK: %[[C19:.*]] = arith.constant 19 : i64
// CHECK: call @spconv_rt_report_size_mismatch(%[[C19]]
// CHECK: %[[B:.*]] = scf.if %[[OK]] -> (memref<?x8xf32, strided<[28, 1], offset: 20>>) {
// CHECK-NEXT: %[[VIEW:.*]] = memref.subview %[[JOINT]][0, 20] [%[[ROWS]], 8] [1, 1]
// CHECK-NEXT: scf.yield %[[VIEW]]
// CHECK-NEXT: } else {
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<?x8xf32, strided<[28, 1], offset: 20>>
// CHECK: %[[SCRATCH:.*]] = memref.alloc(%[[ROWS]]) : memref<?x28xf32>
// CHECK: memref.subview %[[SCRATCH]][0, 20] [%[[ROWS]], 8] [1, 1]
// CHECK: vector.store %{{.*}}, %[[B]][%{{.*}}, %{{.*}}] : memref<?x8xf32, strided<[28, 1], offset: 20>>, vector<8xf32>
// CHECK: spconv.kernel = "conv_f32_4x8"
// CHECK-NOT: memref.alloc
// CHECK: %[[SKIP:.*]] = memref.subview %[[JOINT]][0, 16] [%{{.*}}, 4] [1, 1]
// CHECK: arith.constant 19 : i64
// CHECK: scf.if
// CHECK-NEXT: memref.copy %{{.*}}, %[[SKIP]] : memref<?x4xf32, strided<[?, ?], offset: ?>> to memref<?x4xf32, strided<[28, 1], offset: 16>>
// CHECK: %[[CAT:.*]] = bufferization.to_tensor %[[JOINT]] restrict writable : memref<?x28xf32> to tensor<?x28xf32>
// CHECK-NEXT: return %[[CAT]]

// GPU, implicit-GEMM form: each output element's one store goes to the
// view, four channels (16 bytes) at a time, as the rows of 28 allow; where
// the features have the wrong length, the bias rows do too.
// GEMM-LABEL: func.func @in_place
// GEMM: %[[JOINT:.*]] = memref.alloc(%{{.*}}) : memref<?x28xf32>
// GEMM-NEXT: %[[A:.*]] = memref.subview %[[JOINT]][0, 0]
// GEMM: vector.store %{{.*}}, %[[A]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x16xf32, strided<[28, 1]>>, vector<4xf32>
// GEMM: vector.store %{{.*}}, %[[A]][%{{.*}}, %{{.*}}] : memref<?x16xf32, strided<[28, 1]>>, vector<4xf32>
// GEMM: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// GEMM-NEXT: memref.store %[[ZERO]], %[[A]][%{{.*}}, %{{.*}}] : memref<?x16xf32, strided<[28, 1]>>
// GEMM-NEXT: scf.reduce
// GEMM-NEXT: } {spconv.kernel = "init_rows"}
// GEMM: bufferization.to_tensor %[[JOINT]]

// GPU, pair per thread: the sums accumulate in the view.
// GATHER-LABEL: func.func @in_place
// GATHER: %[[JOINT:.*]] = memref.alloc(%{{.*}}) : memref<?x28xf32>
// GATHER-NEXT: %[[A:.*]] = memref.subview %[[JOINT]][0, 0]
// GATHER: memref.store %{{.*}}, %[[A]][%{{.*}}, %{{.*}}] : memref<?x16xf32, strided<[28, 1]>>
// GATHER-NEXT: scf.reduce
// GATHER-NEXT: } {spconv.kernel = "init_rows"}
// GATHER: %[[OLD:.*]] = memref.load %[[A]][%[[ROW:.*]], %[[COL:.*]]] : memref<?x16xf32, strided<[28, 1]>>
// GATHER: memref.store %{{.*}}, %[[A]][%[[ROW]], %[[COL]]]
// GATHER: bufferization.to_tensor %[[JOINT]]
func.func @in_place(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x16xf32>, %w2: tensor<27x4x8xf32>,
                    %skip: tensor<?x4xf32>) -> tensor<?x28xf32> {
  %a = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x16xf32> -> tensor<?x16xf32>
  %b = spconv.rulebook_conv %rb, %f, %w2 : !rb, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
  %cat = tensor.concat dim(1) %a, %skip, %b : (tensor<?x16xf32>, tensor<?x4xf32>, tensor<?x8xf32>) -> tensor<?x28xf32>
  return %cat : tensor<?x28xf32>
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// f16: the f32 sums are rounded into the view.
// CHECK-LABEL: func.func @half
// CHECK: %[[JOINT:.*]] = memref.alloc(%{{.*}}) : memref<?x20xf16>
// CHECK-NEXT: %[[A:.*]] = memref.subview %[[JOINT]][0, 0] [%{{.*}}, 16] [1, 1] : memref<?x20xf16> to memref<?x16xf16, strided<[20, 1]>>
// CHECK: %[[SUMS:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK: %[[S:.*]] = memref.load %[[SUMS]]
// CHECK-NEXT: %[[H:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: memref.store %[[H]], %[[A]]
func.func @half(%rb: !rb, %f: tensor<?x4xf16>, %w: tensor<27x4x16xf16>, %skip: tensor<?x4xf16>) -> tensor<?x20xf16> {
  %a = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf16>, tensor<27x4x16xf16> -> tensor<?x16xf16>
  %cat = tensor.concat dim(1) %a, %skip : (tensor<?x16xf16>, tensor<?x4xf16>) -> tensor<?x20xf16>
  return %cat : tensor<?x20xf16>
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// Shape queries of the conv's result (left by the epilogue fusion) do not
// keep it out of place: the view answers them.
// CHECK-LABEL: func.func @shape_query
// CHECK: %[[JOINT:.*]] = memref.alloc(%{{.*}}) : memref<?x20xf32>
// CHECK-NEXT: %[[A:.*]] = memref.subview %[[JOINT]][0, 0]
// CHECK: %[[VIEW:.*]] = bufferization.to_tensor %[[A]]
// CHECK: %[[N:.*]] = tensor.dim %[[VIEW]]
// CHECK: return %{{.*}}, %[[N]]
func.func @shape_query(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x16xf32>, %skip: tensor<?x4xf32>)
    -> (tensor<?x20xf32>, index) {
  %a = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x16xf32> -> tensor<?x16xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x16xf32>
  %cat = tensor.concat dim(1) %a, %skip : (tensor<?x16xf32>, tensor<?x4xf32>) -> tensor<?x20xf32>
  return %cat, %n : tensor<?x20xf32>, index
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// Copied: a conv with another user, and one whose concatenation is in
// another block (the buffer of each concatenation is allocated where it is,
// sized by its first operand's rows).
// CHECK-LABEL: func.func @copied
// CHECK-NOT: memref.subview
// CHECK: %[[A:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK: %[[JOINT:.*]] = memref.alloc(%{{.*}}) : memref<?x20xf32>
// CHECK: %[[COLS:.*]] = memref.subview %[[JOINT]][0, 0] [%{{.*}}, 16] [1, 1]
// CHECK: memref.copy %{{.*}}, %[[COLS]]
// CHECK: spconv.kernel = "zero_columns"
// CHECK: scf.if
// CHECK: %[[JOINT2:.*]] = memref.alloc(%{{.*}}) : memref<?x20xf32>
// CHECK: %[[COLS2:.*]] = memref.subview %[[JOINT2]][0, 0] [%{{.*}}, 16] [1, 1]
// CHECK: memref.copy %{{.*}}, %[[COLS2]]
// CHECK-NOT: tensor.concat
// CHECK: return
func.func @copied(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x16xf32>, %skip: tensor<?x4xf32>,
                  %flag: i1) -> (tensor<?x20xf32>, tensor<?x16xf32>, tensor<?x20xf32>) {
  %a = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x16xf32> -> tensor<?x16xf32>
  %cat = tensor.concat dim(1) %a, %skip : (tensor<?x16xf32>, tensor<?x4xf32>) -> tensor<?x20xf32>
  %b = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x16xf32> -> tensor<?x16xf32>
  %cat2 = scf.if %flag -> tensor<?x20xf32> {
    %in = tensor.concat dim(1) %b, %skip : (tensor<?x16xf32>, tensor<?x4xf32>) -> tensor<?x20xf32>
    scf.yield %in : tensor<?x20xf32>
  } else {
    %in = tensor.concat dim(1) %skip, %b : (tensor<?x4xf32>, tensor<?x16xf32>) -> tensor<?x20xf32>
    scf.yield %in : tensor<?x20xf32>
  }
  return %cat, %a, %cat2 : tensor<?x20xf32>, tensor<?x16xf32>, tensor<?x20xf32>
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// Left to bufferization: a concatenation of rows, and one with static rows
// (which the verifier checks where they are static on both sides).
// CHECK-LABEL: func.func @left_to_bufferization
// CHECK-NOT: memref.subview
// CHECK-COUNT-2: tensor.concat
// CHECK-NOT: memref.subview
// CHECK: return
func.func @left_to_bufferization(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x16xf32>, %rows: tensor<?x16xf32>,
                                 %f5: tensor<5x4xf32>, %skip5: tensor<5x4xf32>) -> (tensor<?x16xf32>, tensor<5x20xf32>) {
  %c = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x16xf32> -> tensor<?x16xf32>
  %cat = tensor.concat dim(0) %c, %rows : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %d = spconv.rulebook_conv %rb, %f5, %w : !rb, tensor<5x4xf32>, tensor<27x4x16xf32> -> tensor<5x16xf32>
  %cat2 = tensor.concat dim(1) %d, %skip5 : (tensor<5x16xf32>, tensor<5x4xf32>) -> tensor<5x20xf32>
  return %cat, %cat2 : tensor<?x16xf32>, tensor<5x20xf32>
}
