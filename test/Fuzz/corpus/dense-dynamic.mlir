func.func @dense_dynamic(%x: tensor<?x2x?x7xf32>, %d: tensor<?x3x?xf16>, %i: tensor<?x?xi32>)
    -> (tensor<?x8x?xf32>, tensor<?x3x5xf16>, tensor<?x3x5xi32>) {
  %cols = spconv.unfold <regular, kernel = [2, 2]> %x : tensor<?x2x?x7xf32> -> tensor<?x8x?xf32>
  %m, %a = spconv.segment_max %d, %i
      : tensor<?x3x?xf16>, tensor<?x?xi32> -> tensor<?x3x5xf16>, tensor<?x3x5xi32>
  return %cols, %m, %a : tensor<?x8x?xf32>, tensor<?x3x5xf16>, tensor<?x3x5xi32>
}
