func.func @down_up(%c: tensor<?x4xi32, #spconv.grid<[9, 9, 9]>>, %f: tensor<?x4xf32>,
                   %wd: tensor<8x4x8xf32>, %wu: tensor<8x8x4xf32>, %bu: tensor<4xf32>)
    -> tensor<?x4xf32> {
  %d:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %f, %wd
      : tensor<?x4xi32, #spconv.grid<[9, 9, 9]>>, tensor<?x4xf32>, tensor<8x4x8xf32>
      -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x8xf32>
  %u = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %d#0, %d#1, %wu bias %bu
      : tensor<?x4xi32, #spconv.grid<[9, 9, 9]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>,
        tensor<?x8xf32>, tensor<8x8x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  return %u : tensor<?x4xf32>
}
