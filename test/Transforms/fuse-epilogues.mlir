// RUN: spconv-opt %s -split-input-file -spconv-fuse-epilogues | FileCheck %s

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
#rows = affine_map<(d0, d1) -> (d0, d1)>
#channels = affine_map<(d0, d1) -> (d1)>

// BatchNorm (channel operands), a residual add (a row operand) and ReLU
// chain into one epilogue, in that order; the constant from outside the
// ReLU's body is copied in. The fused conv takes the place of the conv,
// whose extents the ReLU's init reads.
// CHECK-LABEL: func @chain
// CHECK: %[[Y:.*]] = spconv.rulebook_conv %arg0, %arg1, %arg2 bias %arg4 : {{.*}} -> tensor<?x8xf32> epilogue(%arg3, %arg4, %arg5 : tensor<8xf32>, tensor<8xf32>, tensor<?x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[VS:.*]]: f32, %[[VT:.*]]: f32, %[[VR:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[V]], %[[VS]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[M]], %[[VT]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[A]], %[[VR]] : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[RELU:.*]] = arith.maximumf %[[SUM]], %[[ZERO]] : f32
// CHECK-NEXT: spconv.yield %[[RELU]] : f32
// CHECK-NEXT: }
// CHECK-NOT: linalg
// CHECK: return %[[Y]]
func.func @chain(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %scale: tensor<8xf32>,
                 %shift: tensor<8xf32>, %res: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %y = spconv.rulebook_conv %rb, %f, %w bias %shift : !rb, tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
  %n = tensor.dim %y, %c0 : tensor<?x8xf32>
  %init = tensor.empty(%n) : tensor<?x8xf32>
  %bn = linalg.generic {indexing_maps = [#rows, #channels, #channels, #rows],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y, %scale, %shift : tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>)
      outs(%init : tensor<?x8xf32>) {
    ^bb0(%v: f32, %s: f32, %t: f32, %unused: f32):
      %m = arith.mulf %v, %s : f32
      %a = arith.addf %m, %t : f32
      linalg.yield %a : f32
  } -> tensor<?x8xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #rows, #rows],
                         iterator_types = ["parallel", "parallel"]}
      ins(%bn, %res : tensor<?x8xf32>, tensor<?x8xf32>) outs(%bn : tensor<?x8xf32>) {
    ^bb0(%a: f32, %b: f32, %unused: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %relu = linalg.map ins(%sum : tensor<?x8xf32>) outs(%init : tensor<?x8xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.maximumf %v, %zero : f32
        linalg.yield %m : f32
      }
  return %relu : tensor<?x8xf32>
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
#rows = affine_map<(d0, d1) -> (d0, d1)>

// The residual is defined after the conv and nothing reads the conv's
// extents: the fused conv takes the add's place. The second conv's
// result is read by the add and by the return, so it stays unfused.
// CHECK-LABEL: func @late_residual
// CHECK: %[[B:[^ ]*]] = spconv.rulebook_conv {{.*}} -> tensor<?x8xf32>{{$}}
// CHECK-NEXT: %[[A:.*]] = spconv.rulebook_conv {{.*}} epilogue(%[[B]] : tensor<?x8xf32>) {
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[A]], %[[B]]
func.func @late_residual(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %a = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
  %b = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #rows, #rows],
                         iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<?x8xf32>, tensor<?x8xf32>) outs(%a : tensor<?x8xf32>) {
    ^bb0(%x: f32, %y: f32, %unused: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %sum, %b : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
#rows = affine_map<(d0, d1) -> (d0, d1)>

// A residual defined after the conv, while the conv's extents are read
// before it: neither place works, nothing is fused.
// CHECK-LABEL: func @no_place
// CHECK: spconv.rulebook_conv
// CHECK-NOT: epilogue
// CHECK: linalg.generic
func.func @no_place(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %g: tensor<?x8xf32>)
    -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %a = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
  %n = tensor.dim %a, %c0 : tensor<?x8xf32>
  %init = tensor.empty(%n) : tensor<?x8xf32>
  %late = tensor.empty(%n) : tensor<?x8xf32>
  %res = linalg.copy ins(%g : tensor<?x8xf32>) outs(%late : tensor<?x8xf32>) -> tensor<?x8xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #rows, #rows],
                         iterator_types = ["parallel", "parallel"]}
      ins(%a, %res : tensor<?x8xf32>, tensor<?x8xf32>) outs(%init : tensor<?x8xf32>) {
    ^bb0(%x: f32, %y: f32, %unused: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %sum : tensor<?x8xf32>
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
#rows = affine_map<(d0, d1) -> (d0, d1)>
#transposed = affine_map<(d0, d1) -> (d1, d0)>

// What an epilogue cannot express is left alone: a body that reads a value
// from outside that no constant defines, a transposed read of the conv, a
// reduction, a body that reads its init.
// CHECK-LABEL: func @not_fusable
// CHECK-NOT: epilogue
// CHECK-COUNT-4: linalg.generic
func.func @not_fusable(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %x: f32,
                       %sq: tensor<8x8xf32>, %acc: tensor<8xf32>, %into: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<?x8xf32>) {
  %a = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
  %outside = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x8xf32>) outs(%a : tensor<?x8xf32>) {
    ^bb0(%v: f32, %unused: f32):
      %s = arith.mulf %v, %x : f32
      linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %b = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [#transposed, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8x8xf32>) outs(%sq : tensor<8x8xf32>) {
    ^bb0(%v: f32, %unused: f32):
      linalg.yield %v : f32
  } -> tensor<8x8xf32>
  %c = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
  %r = linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1) -> (d1)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%c : tensor<?x8xf32>) outs(%acc : tensor<8xf32>) {
    ^bb0(%v: f32, %s: f32):
      %n = arith.addf %v, %s : f32
      linalg.yield %n : f32
  } -> tensor<8xf32>
  %d = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
  %reads = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<?x8xf32>) outs(%into : tensor<?x8xf32>) {
    ^bb0(%v: f32, %old: f32):
      %n = arith.addf %v, %old : f32
      linalg.yield %n : f32
  } -> tensor<?x8xf32>
  return %outside, %t, %r, %reads : tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<?x8xf32>
}

// -----

!down = !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>

// An inverse conv fuses too, and the fused op keeps `inverse`.
// CHECK-LABEL: func @inverse
// CHECK: spconv.rulebook_conv inverse {{.*}} epilogue {
// CHECK: arith.negf
func.func @inverse(%rb: !down, %f: tensor<?x8xf32>, %w: tensor<8x8x4xf32>) -> tensor<?x4xf32> {
  %y = spconv.rulebook_conv inverse %rb, %f, %w : !down, tensor<?x8xf32>, tensor<8x8x4xf32> -> tensor<?x4xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?x4xf32>
  %init = tensor.empty(%n) : tensor<?x4xf32>
  %neg = linalg.map ins(%y : tensor<?x4xf32>) outs(%init : tensor<?x4xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.negf %v : f32
        linalg.yield %m : f32
      }
  return %neg : tensor<?x4xf32>
}

// -----

!rb = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
#rows = affine_map<(d0, d1) -> (d0, d1)>

// An i1 mask is stored a byte per element, which the epilogue's vector
// loads would read as bits: it stays a separate op. An i8 mask fuses, and
// a constant defined inside the body comes along.
// CHECK-LABEL: func @masks
// CHECK: %[[A:.*]] = spconv.rulebook_conv {{.*}} -> tensor<?x8xf32>{{$}}
// CHECK: linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<?x8xf32>, tensor<?x8xi1>)
// CHECK: spconv.rulebook_conv {{.*}} epilogue(%{{.*}} : tensor<?x8xi8>) {
// CHECK: arith.constant 0 : i8
// CHECK: arith.cmpi
func.func @masks(%rb: !rb, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %m1: tensor<?x8xi1>,
                 %m8: tensor<?x8xi8>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %a = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
  %x = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%a, %m1 : tensor<?x8xf32>, tensor<?x8xi1>) outs(%a : tensor<?x8xf32>) {
    ^bb0(%v: f32, %keep: i1, %unused: f32):
      %zero = arith.constant 0.0 : f32
      %r = arith.select %keep, %v, %zero : f32
      linalg.yield %r : f32
  } -> tensor<?x8xf32>
  %b = spconv.rulebook_conv %rb, %f, %w : !rb, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%b, %m8 : tensor<?x8xf32>, tensor<?x8xi8>) outs(%b : tensor<?x8xf32>) {
    ^bb0(%v: f32, %keep: i8, %unused: f32):
      %zero = arith.constant 0 : i8
      %fzero = arith.constant 0.0 : f32
      %k = arith.cmpi ne, %keep, %zero : i8
      %r = arith.select %k, %v, %fzero : f32
      linalg.yield %r : f32
  } -> tensor<?x8xf32>
  return %x, %y : tensor<?x8xf32>, tensor<?x8xf32>
}
