func.func @dilated(%c: tensor<?x5xi32, #spconv.grid<[6, 6, 6, 6]>>, %f: tensor<?x2xbf16>,
                   %w: tensor<16x2x2xbf16>)
    -> (tensor<?x5xi32, #spconv.grid<[3, 2, 3, 3]>>, tensor<?x2xbf16>) {
  %0:2 = spconv.conv <regular, kernel = [2, 2, 2, 2], stride = [2, 2, 2, 2], dilation = [1, 2, 1, 1]> %c, %f, %w
      : tensor<?x5xi32, #spconv.grid<[6, 6, 6, 6]>>, tensor<?x2xbf16>, tensor<16x2x2xbf16>
      -> tensor<?x5xi32, #spconv.grid<[3, 2, 3, 3]>>, tensor<?x2xbf16>
  return %0#0, %0#1 : tensor<?x5xi32, #spconv.grid<[3, 2, 3, 3]>>, tensor<?x2xbf16>
}
