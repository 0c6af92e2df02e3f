// Network B of spconv-run-kernels.test: A's first layer (subm 4->4), then a
// stride-2 conv 4->4 that A does not have.
!c = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!d = tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>
func.func @b(%c: !c, %f: tensor<?x4xf32>, %w: tensor<27x4x4xf32>) -> (!d, tensor<?x4xf32>) {
  %c1, %y = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w : !c, tensor<?x4xf32>, tensor<27x4x4xf32> -> !c, tensor<?x4xf32>
  %c2, %z = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %c1, %y, %w : !c, tensor<?x4xf32>, tensor<27x4x4xf32> -> !d, tensor<?x4xf32>
  return %c2, %z : !d, tensor<?x4xf32>
}
