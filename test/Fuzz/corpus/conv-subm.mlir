func.func @subm(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>,
                %w: tensor<27x4x8xf32>, %b: tensor<8xf32>)
    -> (tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>) {
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w bias %b
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>
  return %0#0, %0#1 : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>
}
