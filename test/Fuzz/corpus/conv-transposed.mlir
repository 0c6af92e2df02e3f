func.func @transposed(%c: tensor<?x2xi32, #spconv.grid<[5]>>, %f: tensor<?x4xf32>,
                      %w: tensor<3x4x2xf32>)
    -> (tensor<?x2xi32, #spconv.grid<[10]>>, tensor<?x2xf32>) {
  %0:2 = spconv.conv <transposed, kernel = [3], stride = [2], padding = [1], output_padding = [1]> %c, %f, %w
      : tensor<?x2xi32, #spconv.grid<[5]>>, tensor<?x4xf32>, tensor<3x4x2xf32>
      -> tensor<?x2xi32, #spconv.grid<[10]>>, tensor<?x2xf32>
  return %0#0, %0#1 : tensor<?x2xi32, #spconv.grid<[10]>>, tensor<?x2xf32>
}
