// One submanifold 3x3x3 layer on the KITTI grid, at the two widths the
// benchmarks quote (16 -> 16, 64 -> 64).
func.func @subm16(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x16xf32>,
                  %w: tensor<27x16x16xf32>) -> tensor<?x16xf32> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x16xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>
  return %of : tensor<?x16xf32>
}

func.func @subm64(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x64xf32>,
                  %w: tensor<27x64x64xf32>) -> tensor<?x64xf32> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x64xf32>, tensor<27x64x64xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x64xf32>
  return %of : tensor<?x64xf32>
}
