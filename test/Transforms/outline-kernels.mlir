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

// -----

// A pointwise conv (a matmul into a filled or bias-broadcast empty tensor)
// is a kernel with its fill or broadcast: the kernel allocates its result
// and writes none of its arguments; the constant is cloned in, the row
// count passed. A matmul whose accumulator is used elsewhere stays.
// CHECK-LABEL: func.func @pointwise
// CHECK: %[[N:.*]] = tensor.dim
// CHECK: %[[Y:.*]] = call @[[MM:spconv_kernel_matmul_[0-9a-f]{16}]](%{{.*}}, %[[N]], %{{.*}}, %{{.*}}) {no_inline} : (i64, index, tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
// CHECK: call @[[MMB:spconv_kernel_matmul_[0-9a-f]{16}]](%{{.*}}, %[[N]], %{{.*}}, %{{.*}}, %{{.*}}) {no_inline} : (i64, index, tensor<8xf32>, tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
// CHECK: %[[ACC:.*]] = linalg.fill
// CHECK: linalg.matmul {{.*}} outs(%[[ACC]]
// CHECK: func.func private @[[MM]](%{{.*}}: i64 {spconv.source_line}, %[[KN:.*]]: index, %[[KX:.*]]: tensor<?x4xf32> {bufferization.access = "read"}, %[[KW:.*]]: tensor<4x8xf32> {bufferization.access = "read"}) -> tensor<?x8xf32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[E:.*]] = tensor.empty(%[[KN]])
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]]
// CHECK-NEXT: %[[P:.*]] = linalg.matmul ins(%[[KX]], %[[KW]] : {{.*}}) outs(%[[F]]
// CHECK-NEXT: return %[[P]]
// CHECK: func.func private @[[MMB]](
// CHECK: linalg.broadcast
func.func @pointwise(%x: tensor<?x4xf32>, %w: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e2 : tensor<?x8xf32>) dimensions = [0]
  %z = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x8xf32>) outs(%bb : tensor<?x8xf32>) -> tensor<?x8xf32>
  %e3 = tensor.empty(%n) : tensor<?x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %kept = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x8xf32>) outs(%acc : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y, %z, %kept, %acc : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Other linalg ops on tensors into fresh tensors are kernels too (BatchNorm's
// maps and reductions are generics; the constant their body uses is cloned
// in), and so is a concatenation; a linalg op
// that accumulates into a value it did not make (an argument) stays, as
// does one on buffers.
// CHECK-LABEL: func.func @others
// CHECK: call @[[MAP:spconv_kernel_generic_[0-9a-f]{16}]](%{{.*}}, %{{.*}}, %{{.*}}) {no_inline} : (i64, index, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: call @[[CAT:spconv_kernel_concat_[0-9a-f]{16}]](%{{.*}}, %{{.*}}, %{{.*}}) {no_inline} : (i64, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x4xf32>)
// CHECK: linalg.fill {{.*}} outs(%{{.*}} : memref<4xf32>)
// CHECK: func.func private @[[MAP]](%{{.*}}: i64 {spconv.source_line}, %[[KN:.*]]: index, %{{.*}}: tensor<?x4xf32> {bufferization.access = "read"}) -> tensor<?x4xf32>
// CHECK-NEXT: arith.constant 0.0
// CHECK-NEXT: tensor.empty(%[[KN]])
// CHECK-NEXT: linalg.generic
// CHECK: func.func private @[[CAT]](
// CHECK-NEXT: tensor.concat dim(1)
// CHECK-NEXT: return
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @others(%x: tensor<?x4xf32>, %acc: tensor<?x4xf32>, %buf: memref<4xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %relu = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x4xf32>
  %cat = tensor.concat dim(1) %x, %relu : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  %sum = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x4xf32>) outs(%acc : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  linalg.fill ins(%zero : f32) outs(%buf : memref<4xf32>)
  return %cat, %sum : tensor<?x8xf32>, tensor<?x4xf32>
}

// -----

// A fill that starts two accumulators goes into both kernels (each makes
// its own, as each would have copied the shared one; here the two are one
// kernel) and is gone; a bias
// broadcast written as a generic goes with its matmul.
// CHECK-LABEL: func.func @shared_init
// CHECK-NOT: linalg.
// CHECK: call @[[MM:spconv_kernel_matmul_[0-9a-f]{16}]](
// CHECK-NOT: linalg.
// CHECK: call @[[MM]](
// CHECK-NOT: linalg.
// CHECK: call @[[MMB:spconv_kernel_matmul_[0-9a-f]{16}]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {no_inline} : (i64, index, tensor<8xf32>, tensor<?x4xf32>, tensor<4x8xf32>)
// CHECK-NOT: linalg.
// CHECK: return
// CHECK: func.func private @[[MM]](
// CHECK: linalg.fill
// CHECK-NEXT: linalg.matmul
// CHECK: func.func private @[[MMB]](
// CHECK: tensor.empty
// CHECK-NEXT: linalg.generic
// CHECK: linalg.matmul
#bias = affine_map<(d0, d1) -> (d1)>
#rows = affine_map<(d0, d1) -> (d0, d1)>
func.func @shared_init(%x: tensor<?x4xf32>, %w: tensor<4x8xf32>, %w2: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  %y2 = linalg.matmul ins(%x, %w2 : tensor<?x4xf32>, tensor<4x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x8xf32>
  %bb = linalg.generic {indexing_maps = [#bias, #rows], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8xf32>) outs(%e2 : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x8xf32>
  %z = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x8xf32>) outs(%bb : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y, %y2, %z : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
