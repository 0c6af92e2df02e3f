func.func @dense(%x: tensor<2x3x6x5xf32>, %x1: tensor<1x2x9xf64>, %d: tensor<2x4x10xf32>,
                 %i: tensor<2x10xi64>)
    -> (tensor<2x3x6x5xf32>, tensor<1x6x4xf64>, tensor<2x4x3xf32>, tensor<2x4x3xi32>) {
  %cols = spconv.unfold <regular, kernel = [3, 2], stride = [1, 2], padding = [1, 0]> %x
      : tensor<2x3x6x5xf32> -> tensor<2x18x12xf32>
  %back = spconv.fold <regular, kernel = [3, 2], stride = [1, 2], padding = [1, 0]> %cols
      : tensor<2x18x12xf32> -> tensor<2x3x6x5xf32>
  %c1 = spconv.unfold <regular, kernel = [3], stride = [2], dilation = [2]> %x1
      : tensor<1x2x9xf64> -> tensor<1x6x3xf64>
  %d1 = spconv.unfold <regular, kernel = [3], stride = [2], dilation = [2], padding = [1]> %x1
      : tensor<1x2x9xf64> -> tensor<1x6x4xf64>
  %m, %a = spconv.segment_max %d, %i
      : tensor<2x4x10xf32>, tensor<2x10xi64> -> tensor<2x4x3xf32>, tensor<2x4x3xi32>
  return %back, %d1, %m, %a : tensor<2x3x6x5xf32>, tensor<1x6x4xf64>, tensor<2x4x3xf32>, tensor<2x4x3xi32>
}
