func.func @grouped(%c: tensor<?x3xi32, #spconv.grid<[8, 8]>>, %f: tensor<?x4xf32>,
                   %w: tensor<9x2x8xf32>, %dw: tensor<9x1x4xf32>, %g: tensor<?x8xf32>,
                   %wt: tensor<9x4x4xf32>, %rows: tensor<?xi32>, %gv: tensor<2x4x3xf32>,
                   %pos: tensor<2x4x3xi32>, %zd: tensor<2x4x10xf32>)
    -> (tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<9x2x8xf32>, tensor<?x4xf32>,
        tensor<2x4x10xf32>) {
  %oc, %y = spconv.conv <subm, kernel = [3, 3]> groups 2 %c, %f, %w
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>, tensor<9x2x8xf32>
      -> tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x8xf32>
  %dc, %d = spconv.conv <subm, kernel = [3, 3]> groups 4 %c, %f, %dw
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>, tensor<9x1x4xf32>
      -> tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>
  %rb, %rc = spconv.build_rulebook %c
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8]>>, tensor<?x3xi32, #spconv.grid<[8, 8]>>
  %dx = spconv.rulebook_conv inverse groups 2 %rb, %g, %wt
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8]>>,
        tensor<?x8xf32>, tensor<9x4x4xf32> -> tensor<?x4xf32>
  %gw = spconv.rulebook_weight_grad groups 2 %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8]>>,
        tensor<?x4xf32>, tensor<?x8xf32> -> tensor<9x2x8xf32>
  %s = spconv.scatter_add_rows %d, %rows into %f : tensor<?x4xf32>, tensor<?xi32> into tensor<?x4xf32>
  %m = spconv.segment_max_grad %gv, %pos into %zd
      : tensor<2x4x3xf32>, tensor<2x4x3xi32> into tensor<2x4x10xf32>
  return %y, %d, %dx, %gw, %s, %m
      : tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<9x2x8xf32>, tensor<?x4xf32>,
        tensor<2x4x10xf32>
}
