func.func @rulebook(%c: tensor<?x3xi32, #spconv.grid<[8, 8]>>, %f: tensor<?x4xf32>,
                    %w: tensor<9x4x4xf32>, %wd: tensor<4x4x8xf32>, %wi: tensor<4x8x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8]>>, tensor<?x3xi32, #spconv.grid<[8, 8]>>
  %y = spconv.rulebook_conv %rb, %f, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8]>>,
        tensor<?x4xf32>, tensor<9x4x4xf32> -> tensor<?x4xf32>
  %down, %dc = spconv.build_rulebook %c
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>
      -> !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[8, 8]>>, tensor<?x3xi32, #spconv.grid<[4, 4]>>
  %z = spconv.rulebook_conv %down, %y, %wd
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[8, 8]>>,
        tensor<?x4xf32>, tensor<4x4x8xf32> -> tensor<?x8xf32>
  %u = spconv.rulebook_conv inverse %down, %z, %wi
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[8, 8]>>,
        tensor<?x8xf32>, tensor<4x8x4xf32> -> tensor<?x4xf32>
  %p = spconv.rulebook_pool max %down, %f
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[8, 8]>>,
        tensor<?x4xf32> -> tensor<?x4xf32>
  return %y, %u, %p : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}
