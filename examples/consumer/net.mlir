// A subm 3x3x3 conv with bias, 2 -> 3 channels, on a 4x4x4 grid.
func.func @net(%coords: tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>,
               %features: tensor<?x2xf32>, %weight: tensor<27x2x3xf32>,
               %bias: tensor<3xf32>) -> tensor<?x3xf32> {
  %out:2 = spconv.conv <subm, kernel = [3, 3, 3]> %coords, %features, %weight bias %bias
      : tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x2xf32>,
        tensor<27x2x3xf32>, tensor<3xf32>
      -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x3xf32>
  return %out#1 : tensor<?x3xf32>
}
