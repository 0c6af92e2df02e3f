func.func @pointwise(%c: tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, %f: tensor<?x3xf32>,
                     %w: tensor<1x3x6xf32>, %b: tensor<6xf32>) -> tensor<?x6xf32> {
  %0:2 = spconv.conv <subm, kernel = [1, 1, 1]> %c, %f, %w bias %b
      : tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x3xf32>, tensor<1x3x6xf32>, tensor<6xf32>
      -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x6xf32>
  %1 = arith.addf %0#1, %0#1 : tensor<?x6xf32>
  return %1 : tensor<?x6xf32>
}
