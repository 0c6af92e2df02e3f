// RUN: spconv-opt %s -spconv-outline-kernels -split-input-file | FileCheck %s
// Running it again changes nothing: kernels are not outlined twice, and a
// layer equal to an existing kernel calls it.
// RUN: spconv-opt %s -spconv-outline-kernels -spconv-outline-kernels -split-input-file | FileCheck %s

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8]>>
!in = tensor<?x3xi32, #spconv.grid<[8, 8]>>

// Two equal convs (on lines 25 and 26 of this file) call one kernel, each
// passing its own line; the conv with another weight type gets its own.
// The subm build's output coordinates are unused: not returned.
// CHECK-LABEL: func.func @layers
// CHECK-SAME: (%[[C:[^:]*]]: tensor<?x3xi32, #spconv.grid<[8, 8]>>, %[[F:[^:]*]]: tensor<?x4xf32>, %[[W:[^:]*]]: tensor<9x4x4xf32>, %[[W8:[^:]*]]: tensor<9x4x8xf32>)
// CHECK: %[[L20:.*]] = arith.constant 23 : i64
// CHECK: %[[RB:.*]] = call @[[BUILD:spconv_kernel_build_rulebook_[0-9a-f]{16}]](%[[L20]], %[[C]]) {no_inline} : (i64, tensor<?x3xi32, #spconv.grid<[8, 8]>>) -> !spconv.rulebook
// CHECK: %[[L21:.*]] = arith.constant 24 : i64
// CHECK: %[[A:.*]] = call @[[CONV:spconv_kernel_rulebook_conv_[0-9a-f]{16}]](%[[L21]], %[[RB]], %[[F]], %[[W]]) {no_inline}
// CHECK: %[[L22:.*]] = arith.constant 25 : i64
// CHECK: %[[B:.*]] = call @[[CONV]](%[[L22]], %[[RB]], %[[A]], %[[W]]) {no_inline}
// CHECK: %[[L23:.*]] = arith.constant 26 : i64
// CHECK: call @[[CONV8:spconv_kernel_rulebook_conv_[0-9a-f]{16}]](%[[L23]], %[[RB]], %[[B]], %[[W8]]) {no_inline}
func.func @layers(%c: !in, %f: tensor<?x4xf32>, %w: tensor<9x4x4xf32>, %w8: tensor<9x4x8xf32>) -> tensor<?x8xf32> {
  %rb, %oc = spconv.build_rulebook %c : !in -> !rb, !in
  %a = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<9x4x4xf32> -> tensor<?x4xf32>
  %b = spconv.rulebook_conv %rb, %a, %w : !rb, tensor<?x4xf32>, tensor<9x4x4xf32> -> tensor<?x4xf32>
  %d = spconv.rulebook_conv %rb, %b, %w8 : !rb, tensor<?x4xf32>, tensor<9x4x8xf32> -> tensor<?x8xf32>
  return %d : tensor<?x8xf32>
}
// CHECK: func.func private @[[BUILD]](%{{.*}}: i64 {spconv.source_line}, %[[KC:.*]]: tensor<?x3xi32, #spconv.grid<[8, 8]>> {bufferization.access = "read"}) -> !spconv.rulebook
// CHECK-NEXT: %[[KRB:.*]], %{{.*}} = spconv.build_rulebook %[[KC]]
// CHECK-NEXT: return %[[KRB]]
// Its tensors are read, never written (bufferization.access), the rulebook
// is no tensor.
// CHECK: func.func private @[[CONV]](%{{.*}}: i64 {spconv.source_line}, %{{.*}}: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8]>>, %{{.*}}: tensor<?x4xf32> {bufferization.access = "read"}, %{{.*}}: tensor<9x4x4xf32> {bufferization.access = "read"}) -> tensor<?x4xf32>
// CHECK-NEXT: spconv.rulebook_conv
// CHECK-NEXT: return
// CHECK: func.func private @[[CONV8]](
// CHECK-NOT: func.func

// -----

!rb = !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[8, 8]>>
!in = tensor<?x3xi32, #spconv.grid<[8, 8]>>
!out = tensor<?x3xi32, #spconv.grid<[4, 4]>>

// Epilogues are part of a kernel: a conv with a ReLU and one without are two
// kernels. Every result used is returned (a regular build's coordinates);
// pools, their gradients and weight gradients are kernels too.
// CHECK-LABEL: func.func @down
// CHECK: %{{.*}}:2 = call @spconv_kernel_build_rulebook_{{[0-9a-f]*}}({{.*}}) {no_inline} : ({{.*}}) -> (!spconv.rulebook<{{.*}}>, tensor<?x3xi32, #spconv.grid<[4, 4]>>)
// CHECK: call @[[RELU:spconv_kernel_rulebook_conv_[0-9a-f]*]](
// CHECK: call @[[PLAIN:spconv_kernel_rulebook_conv_[0-9a-f]*]](
// CHECK: call @spconv_kernel_rulebook_pool_{{[0-9a-f]*}}(
// CHECK: call @spconv_kernel_rulebook_pool_grad_{{[0-9a-f]*}}(
// CHECK: call @spconv_kernel_rulebook_weight_grad_{{[0-9a-f]*}}(
// CHECK: func.func private @[[RELU]](
// CHECK: arith.maximumf
// CHECK: func.func private @[[PLAIN]](
// CHECK-NOT: arith.maximumf
// CHECK: func.func private @spconv_kernel_rulebook_pool_
func.func @down(%c: !in, %f: tensor<?x4xf32>, %w: tensor<4x4x4xf32>) -> (!out, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4x4x4xf32>) {
  %rb, %oc = spconv.build_rulebook %c : !in -> !rb, !out
  %a = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<4x4x4xf32> -> tensor<?x4xf32> epilogue {
  ^bb0(%v: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %zero : f32
    spconv.yield %r : f32
  }
  %b = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<4x4x4xf32> -> tensor<?x4xf32>
  %p = spconv.rulebook_pool max %rb, %f : !rb, tensor<?x4xf32> -> tensor<?x4xf32>
  %g = spconv.rulebook_pool_grad max %rb, %f, %p : !rb, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %dw = spconv.rulebook_weight_grad %rb, %f, %a : !rb, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<4x4x4xf32>
  return %oc, %a, %b, %g, %dw : !out, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4x4x4xf32>
}
