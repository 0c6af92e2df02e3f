// The gradients of sparse max and average pooling (pool_gradients.py checks
// them against PyTorch autograd): spconv.rulebook_pool_grad over the
// forward pooling's rulebook.

!g = tensor<?x4xi32, #spconv.grid<[8, 6, 7]>>
!p = tensor<?x4xi32, #spconv.grid<[4, 3, 3]>>
!q = tensor<?x4xi32, #spconv.grid<[4, 3, 4]>>
!pool2 = !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 6, 7]>>
!pool3 = !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[8, 6, 7]>>

// Non-overlapping windows.
func.func @max_pool_grad(%c: !g, %x: tensor<?x5xf32>, %gout: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !pool2, !p
  %dx = spconv.rulebook_pool_grad max %rb, %x, %gout
      : !pool2, tensor<?x5xf32>, tensor<?x5xf32> -> tensor<?x5xf32>
  return %dx : tensor<?x5xf32>
}

func.func @avg_pool_grad(%c: !g, %x: tensor<?x5xf32>, %gout: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !pool2, !p
  %dx = spconv.rulebook_pool_grad avg %rb, %x, %gout
      : !pool2, tensor<?x5xf32>, tensor<?x5xf32> -> tensor<?x5xf32>
  return %dx : tensor<?x5xf32>
}

// Overlapping windows (3x3x3, stride 2, padding 1): an input reaches
// several outputs.
func.func @max_pool3_grad(%c: !g, %x: tensor<?x5xf32>, %gout: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !pool3, !q
  %dx = spconv.rulebook_pool_grad max %rb, %x, %gout
      : !pool3, tensor<?x5xf32>, tensor<?x5xf32> -> tensor<?x5xf32>
  return %dx : tensor<?x5xf32>
}

func.func @avg_pool3_grad(%c: !g, %x: tensor<?x5xf64>, %gout: tensor<?x5xf64>) -> tensor<?x5xf64> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !pool3, !q
  %dx = spconv.rulebook_pool_grad avg %rb, %x, %gout
      : !pool3, tensor<?x5xf64>, tensor<?x5xf64> -> tensor<?x5xf64>
  return %dx : tensor<?x5xf64>
}
