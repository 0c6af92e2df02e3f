// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-conv=gather-scatter" -split-input-file | FileCheck %s --check-prefix=GATHER
// RUN: spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-matmul=fma" -split-input-file | FileCheck %s --check-prefix=GEMM

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// CPU: after the walk over the pairs, one parallel pass over the rows
// applies the epilogue in place, on vectors of consecutive channels: row
// operands loaded at the row, channel operands at the column, constants
// broadcast. Operands of the wrong size are reported (17: rows, 18:
// channels) and the pass does not run.
// CHECK-LABEL: func.func @residual_scale_relu
// CHECK-SAME: %[[RB0:[^:]*]]: index, %[[ROWS:[^:]*]]: index
// CHECK: %[[RES:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x32xf32>
// CHECK: %[[SCALE:.*]] = bufferization.to_buffer %{{.*}} : tensor<32xf32>
// CHECK: %[[ACC:.*]] = memref.alloc({{.*}}) : memref<?x?xf32>
// CHECK: spconv.kernel = "conv_f32_4x32"
// CHECK: %[[RESROWS:.*]] = memref.dim %[[RES]], %{{.*}} : memref<?x32xf32>
// CHECK: arith.cmpi eq, %[[RESROWS]], %[[ROWS]]
// CHECK: %[[C17:.*]] = arith.constant 17 : i64
// CHECK: call @spconv_rt_report_size_mismatch(%[[C17]]
// CHECK: %[[C18:.*]] = arith.constant 18 : i64
// CHECK: call @spconv_rt_report_size_mismatch(%[[C18]]
// CHECK: scf.parallel (%[[ROW:.*]]) = (%{{.*}}) to (%[[ROWS]])
// CHECK-NEXT: %[[COL:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V:.*]] = vector.load %[[ACC]][%[[ROW]], %[[COL]]] : memref<?x?xf32>, vector<32xf32>
// CHECK-NEXT: %[[R:.*]] = vector.load %[[RES]][%[[ROW]], %[[COL]]] : memref<?x32xf32>, vector<32xf32>
// CHECK-NEXT: %[[S:.*]] = vector.load %[[SCALE]][%[[COL]]] : memref<32xf32>, vector<32xf32>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[V]], %[[S]] : vector<32xf32>
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[M]], %[[R]] : vector<32xf32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ZEROS:.*]] = vector.broadcast %[[ZERO]] : f32 to vector<32xf32>
// CHECK-NEXT: %[[RELU:.*]] = arith.maximumf %[[A]], %[[ZEROS]] : vector<32xf32>
// CHECK-NEXT: vector.store %[[RELU]], %[[ACC]][%[[ROW]], %[[COL]]]
// CHECK: spconv.kernel = "epilogue"
// CHECK-NOT: spconv.kernel = "epilogue"

// GPU, pair per thread: one element per thread after the walk.
// GATHER-LABEL: func.func @residual_scale_relu
// GATHER: spconv.kernel = "conv_f32_4x32"
// GATHER: scf.parallel (%[[ROW:.*]], %[[COL:.*]]) = {{.*}} {
// GATHER-NEXT: %[[V:.*]] = memref.load %{{.*}}[%[[ROW]], %[[COL]]] : memref<?x?xf32>
// GATHER-NEXT: %[[R:.*]] = memref.load %{{.*}}[%[[ROW]], %[[COL]]] : memref<?x32xf32>
// GATHER-NEXT: %[[S:.*]] = memref.load %{{.*}}[%[[COL]]] : memref<32xf32>
// GATHER-NEXT: arith.mulf %[[V]], %[[S]] : f32
// GATHER: arith.maximumf
// GATHER: spconv.kernel = "epilogue"

// GPU, implicit-GEMM form: applied in the kernel, to a thread's four
// consecutive channels of a row before their one store; the bias and the
// operands read as vectors too, each one 16-byte access where the result,
// the bias and every operand start 16-byte aligned; no pass of its own.
// GEMM-LABEL: func.func @residual_scale_relu
// GEMM: gpu.launch
// GEMM: vector.load %{{.*}}[%[[COL:.*]]] {alignment = 16 : i64} : memref<32xf32>, vector<4xf32>
// GEMM-NEXT: scf.yield
// GEMM-NEXT: } else {
// GEMM-NEXT: vector.load %{{.*}}[%[[COL]]] : memref<32xf32>, vector<4xf32>
// GEMM: %[[B:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// GEMM-NEXT: %[[R:.*]] = scf.if %[[ALIGNED:.*]] -> (vector<4xf32>) {
// GEMM-NEXT: vector.load %{{.*}}[%[[ROW:.*]], %[[COL]]] {alignment = 16 : i64} : memref<?x32xf32>, vector<4xf32>
// GEMM: %[[S:.*]] = scf.if %[[ALIGNED]] -> (vector<4xf32>) {
// GEMM-NEXT: vector.load %{{.*}}[%[[COL]]] {alignment = 16 : i64} : memref<32xf32>, vector<4xf32>
// GEMM: %[[M:.*]] = arith.mulf %[[B]], %[[S]] : vector<4xf32>
// GEMM-NEXT: %[[A:.*]] = arith.addf %[[M]], %[[R]] : vector<4xf32>
// GEMM-NEXT: arith.constant 0.000000e+00 : f32
// GEMM-NEXT: vector.broadcast
// GEMM-NEXT: %[[RELU:.*]] = arith.maximumf %[[A]]
// GEMM-NEXT: scf.if %[[ALIGNED]] {
// GEMM-NEXT: vector.store %[[RELU]], %{{.*}}[%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<?x32xf32>, vector<4xf32>
// GEMM-NEXT: } else {
// GEMM-NEXT: vector.store %[[RELU]], %{{.*}}[%[[ROW]], %[[COL]]] : memref<?x32xf32>, vector<4xf32>
// GEMM-NOT: spconv.kernel = "epilogue"
func.func @residual_scale_relu(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x32xf32>, %b: tensor<32xf32>,
                               %res: tensor<?x32xf32>, %scale: tensor<32xf32>) -> tensor<?x32xf32> {
  %y = spconv.rulebook_conv %rb, %f, %w bias %b : !rb, tensor<?x4xf32>, tensor<27x4x32xf32>, tensor<32xf32> -> tensor<?x32xf32>
      epilogue(%res, %scale : tensor<?x32xf32>, tensor<32xf32>) {
      ^bb0(%v: f32, %r: f32, %s: f32):
        %m = arith.mulf %v, %s : f32
        %a = arith.addf %m, %r : f32
        %zero = arith.constant 0.0 : f32
        %relu = arith.maximumf %a, %zero : f32
        spconv.yield %relu : f32
      }
  return %y : tensor<?x32xf32>
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// f16: the f32 sums are rounded, then the epilogue runs in f16 and writes
// the f16 result; where an operand has the wrong size the sums are only
// rounded.
// GEMM-LABEL: func.func @half
// CHECK-LABEL: func.func @half
// CHECK: %[[RESULT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf16>
// CHECK: scf.if
// CHECK: %[[V:.*]] = vector.load %{{.*}} : memref<?x?xf32>, vector<32xf32>
// CHECK-NEXT: %[[H:.*]] = arith.truncf %[[V]] : vector<32xf32> to vector<32xf16>
// CHECK-NEXT: %[[S:.*]] = vector.load %{{.*}} : memref<32xf16>, vector<32xf16>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[H]], %[[S]] : vector<32xf16>
// CHECK-NEXT: vector.store %[[M]], %[[RESULT]]
// CHECK: } else {
// CHECK: %[[V2:.*]] = vector.load %{{.*}} : memref<?x?xf32>, vector<32xf32>
// CHECK-NEXT: %[[H2:.*]] = arith.truncf %[[V2]] : vector<32xf32> to vector<32xf16>
// CHECK-NEXT: vector.store %[[H2]], %[[RESULT]]
func.func @half(%rb: !rb, %f: tensor<?x4xf16>, %w: tensor<27x4x32xf16>, %s: tensor<32xf16>) -> tensor<?x32xf16> {
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf16>, tensor<27x4x32xf16> -> tensor<?x32xf16>
      epilogue(%s : tensor<32xf16>) {
      ^bb0(%v: f16, %x: f16):
        %m = arith.mulf %v, %x : f16
        spconv.yield %m : f16
      }
  return %y : tensor<?x32xf16>
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// A dynamic channel count: one element at a time on the CPU too.
// CHECK-LABEL: func.func @dynamic_channels
// CHECK: spconv.kernel = "conv_f32_4xdyn"
// CHECK: scf.parallel (%[[ROW:.*]], %[[COL:.*]]) = {{.*}} {
// CHECK-NEXT: %[[V:.*]] = memref.load %{{.*}}[%[[ROW]], %[[COL]]] : memref<?x?xf32>
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[V]] : f32
// CHECK-NEXT: memref.store %[[N]]
// CHECK: spconv.kernel = "epilogue"
func.func @dynamic_channels(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x?xf32>) -> tensor<?x?xf32> {
  %y = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x?xf32> -> tensor<?x?xf32>
      epilogue {
      ^bb0(%v: f32):
        %n = arith.negf %v : f32
        spconv.yield %n : f32
      }
  return %y : tensor<?x?xf32>
}
