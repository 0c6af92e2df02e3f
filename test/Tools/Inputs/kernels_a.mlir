// Network A of spconv-run-kernels.test: subm 4->4, then a pointwise subm
// 4->8 (a matmul kernel).
!c = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
func.func @a(%c: !c, %f: tensor<?x4xf32>, %w: tensor<27x4x4xf32>, %w8: tensor<1x4x8xf32>) -> tensor<?x8xf32> {
  %c1, %y = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w : !c, tensor<?x4xf32>, tensor<27x4x4xf32> -> !c, tensor<?x4xf32>
  %c2, %z = spconv.conv <subm, kernel = [1, 1, 1]> %c1, %y, %w8 : !c, tensor<?x4xf32>, tensor<1x4x8xf32> -> !c, tensor<?x8xf32>
  return %z : tensor<?x8xf32>
}
