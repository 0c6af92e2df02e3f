// The network of the ahead-of-time example (main.cpp): compiled by
// spconv-compile into net.o and net.h at build time.
//
// @net: a submanifold 3x3x3 conv (4 -> 8 channels, bias, ReLU) on a
// 16x16x16 grid, then a stride-2 regular 3x3x3 conv (8 -> 16) down to 8x8x8.
// @subm: the first layer alone, for the one-result form of the C interface.

!grid = tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
!grid_s2 = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>

func.func @net(%coords: !grid, %features: tensor<?x4xf32>,
               %w_subm: tensor<27x4x8xf32>, %b_subm: tensor<8xf32>,
               %w_down: tensor<27x8x16xf32>) -> (!grid_s2, tensor<?x16xf32>) {
  %subm:2 = spconv.conv <subm, kernel = [3, 3, 3]> %coords, %features, %w_subm bias %b_subm
      : !grid, tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32> -> !grid, tensor<?x8xf32>
  %relu = func.call @relu8(%subm#1) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %down:2 = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %coords, %relu, %w_down
      : !grid, tensor<?x8xf32>, tensor<27x8x16xf32> -> !grid_s2, tensor<?x16xf32>
  return %down#0, %down#1 : !grid_s2, tensor<?x16xf32>
}

func.func @subm(%coords: !grid, %features: tensor<?x4xf32>,
                %w_subm: tensor<27x4x8xf32>, %b_subm: tensor<8xf32>) -> tensor<?x8xf32> {
  %subm:2 = spconv.conv <subm, kernel = [3, 3, 3]> %coords, %features, %w_subm bias %b_subm
      : !grid, tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32> -> !grid, tensor<?x8xf32>
  return %subm#1 : tensor<?x8xf32>
}

func.func private @relu8(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %init = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.map ins(%x : tensor<?x8xf32>) outs(%init : tensor<?x8xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.maximumf %v, %zero : f32
        linalg.yield %m : f32
      }
  return %y : tensor<?x8xf32>
}
