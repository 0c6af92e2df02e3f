func.func @gradients(%c: tensor<?x3xi32, #spconv.grid<[8, 8]>>, %f: tensor<?x4xf32>,
                     %wt: tensor<9x8x4xf32>, %g: tensor<?x8xf32>, %gd: tensor<?x8xf32>,
                     %gp: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<9x4x8xf32>, tensor<4x8x4xf32>, tensor<?x4xf32>) {
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8]>>, tensor<?x3xi32, #spconv.grid<[8, 8]>>
  %dx = spconv.rulebook_conv inverse %rb, %g, %wt
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8]>>,
        tensor<?x8xf32>, tensor<9x8x4xf32> -> tensor<?x4xf32>
  %dw = spconv.rulebook_weight_grad %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3]>, #spconv.grid<[8, 8]>>,
        tensor<?x4xf32>, tensor<?x8xf32> -> tensor<9x4x8xf32>
  %down, %dc = spconv.build_rulebook %c
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>
      -> !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[8, 8]>>, tensor<?x3xi32, #spconv.grid<[4, 4]>>
  %dwi = spconv.rulebook_weight_grad inverse %down, %gd, %f
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[8, 8]>>,
        tensor<?x8xf32>, tensor<?x4xf32> -> tensor<4x8x4xf32>
  %dp = spconv.rulebook_pool_grad max %down, %f, %gp
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[8, 8]>>,
        tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  return %dx, %dw, %dwi, %dp : tensor<?x4xf32>, tensor<9x4x8xf32>, tensor<4x8x4xf32>, tensor<?x4xf32>
}
