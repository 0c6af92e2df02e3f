func.func @regular(%c: tensor<?x3xi32, #spconv.grid<[9, 7], batch = 2>>, %f: tensor<?x3xf16>,
                   %w: tensor<9x3x5xf16>)
    -> (tensor<?x3xi32, #spconv.grid<[5, 4], batch = 2>>, tensor<?x5xf16>) {
  %0:2 = spconv.conv <regular, kernel = [3, 3], stride = [2, 2], padding = [1, 1]> %c, %f, %w
      : tensor<?x3xi32, #spconv.grid<[9, 7], batch = 2>>, tensor<?x3xf16>, tensor<9x3x5xf16>
      -> tensor<?x3xi32, #spconv.grid<[5, 4], batch = 2>>, tensor<?x5xf16>
  return %0#0, %0#1 : tensor<?x3xi32, #spconv.grid<[5, 4], batch = 2>>, tensor<?x5xf16>
}
