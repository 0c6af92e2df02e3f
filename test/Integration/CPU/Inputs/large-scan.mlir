// One subm 3x3x3 layer, 1 channel, on a 1024^3 grid (large-scan.test).
func.func @f(%c: tensor<?x4xi32, #spconv.grid<[1024, 1024, 1024]>>, %x: tensor<?x1xf32>,
             %w: tensor<27x1x1xf32>) -> tensor<?x1xf32> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : tensor<?x4xi32, #spconv.grid<[1024, 1024, 1024]>>, tensor<?x1xf32>, tensor<27x1x1xf32>
      -> tensor<?x4xi32, #spconv.grid<[1024, 1024, 1024]>>, tensor<?x1xf32>
  return %of : tensor<?x1xf32>
}
