// The gradients of sparse convs at the rulebook level (gradients.py checks
// them against PyTorch autograd on the dense equivalent): the data gradient
// is the forward rulebook read backwards (`inverse`) with the weights
// transposed, the weight gradient spconv.rulebook_weight_grad over the same
// rulebook. No second rulebook is built.

!g = tensor<?x4xi32, #spconv.grid<[6, 7, 5]>>
!d = tensor<?x4xi32, #spconv.grid<[3, 4, 3]>>
!t = tensor<?x4xi32, #spconv.grid<[11, 13, 9]>>
!f = tensor<?x4xi32, #spconv.grid<[8, 6, 4]>>
!c = tensor<?x4xi32, #spconv.grid<[4, 3, 2]>>

!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[6, 7, 5]>>
!subm_d2 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3], dilation = [2, 1, 2]>, #spconv.grid<[6, 7, 5]>>
!down = !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[6, 7, 5]>>
!up = !spconv.rulebook<#spconv.geom<transposed, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[6, 7, 5]>>
!pool = !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 6, 4]>>

// W (K x Cin x Cout) -> W^T per offset (K x Cout x Cin).
func.func private @transpose_4x8(%w: tensor<27x4x8xf32>) -> tensor<27x8x4xf32> {
  %init = tensor.empty() : tensor<27x8x4xf32>
  %t = linalg.transpose ins(%w : tensor<27x4x8xf32>) outs(%init : tensor<27x8x4xf32>)
      permutation = [0, 2, 1]
  return %t : tensor<27x8x4xf32>
}

// out = subm(x, w); given dL/dout, returns (dL/dx, dL/dw).
func.func @subm_grads(%c: !g, %x: tensor<?x4xf32>, %w: tensor<27x4x8xf32>,
                      %gout: tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<27x4x8xf32>) {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %wt = func.call @transpose_4x8(%w) : (tensor<27x4x8xf32>) -> tensor<27x8x4xf32>
  %dx = spconv.rulebook_conv inverse %rb, %gout, %wt
      : !subm, tensor<?x8xf32>, tensor<27x8x4xf32> -> tensor<?x4xf32>
  %dw = spconv.rulebook_weight_grad %rb, %x, %gout
      : !subm, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x4x8xf32>
  return %dx, %dw : tensor<?x4xf32>, tensor<27x4x8xf32>
}

// The weight gradient with channels known only at run time.
func.func @subm_weight_grad_dynamic(%c: !g, %x: tensor<?x?xf32>, %gout: tensor<?x?xf32>)
    -> tensor<27x?x?xf32> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %dw = spconv.rulebook_weight_grad %rb, %x, %gout
      : !subm, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<27x?x?xf32>
  return %dw : tensor<27x?x?xf32>
}

// The same with a dilated kernel.
func.func @subm_dilated_grads(%c: !g, %x: tensor<?x4xf32>, %w: tensor<27x4x8xf32>,
                              %gout: tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<27x4x8xf32>) {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm_d2, !g
  %wt = func.call @transpose_4x8(%w) : (tensor<27x4x8xf32>) -> tensor<27x8x4xf32>
  %dx = spconv.rulebook_conv inverse %rb, %gout, %wt
      : !subm_d2, tensor<?x8xf32>, tensor<27x8x4xf32> -> tensor<?x4xf32>
  %dw = spconv.rulebook_weight_grad %rb, %x, %gout
      : !subm_d2, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x4x8xf32>
  return %dx, %dw : tensor<?x4xf32>, tensor<27x4x8xf32>
}

// A regular conv (3x3x3, stride 2, padding 1): dL/dout has one row per
// output site, sorted by key.
func.func @regular_grads(%c: !g, %x: tensor<?x4xf32>, %w: tensor<27x4x8xf32>,
                         %gout: tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<27x4x8xf32>) {
  %rb, %oc = spconv.build_rulebook %c : !g -> !down, !d
  %wt = func.call @transpose_4x8(%w) : (tensor<27x4x8xf32>) -> tensor<27x8x4xf32>
  %dx = spconv.rulebook_conv inverse %rb, %gout, %wt
      : !down, tensor<?x8xf32>, tensor<27x8x4xf32> -> tensor<?x4xf32>
  %dw = spconv.rulebook_weight_grad %rb, %x, %gout
      : !down, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x4x8xf32>
  return %dx, %dw : tensor<?x4xf32>, tensor<27x4x8xf32>
}

// A transposed conv (3x3x3, stride 2, padding 1).
func.func @transposed_grads(%c: !g, %x: tensor<?x4xf32>, %w: tensor<27x4x8xf32>,
                            %gout: tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<27x4x8xf32>) {
  %rb, %oc = spconv.build_rulebook %c : !g -> !up, !t
  %wt = func.call @transpose_4x8(%w) : (tensor<27x4x8xf32>) -> tensor<27x8x4xf32>
  %dx = spconv.rulebook_conv inverse %rb, %gout, %wt
      : !up, tensor<?x8xf32>, tensor<27x8x4xf32> -> tensor<?x4xf32>
  %dw = spconv.rulebook_weight_grad %rb, %x, %gout
      : !up, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x4x8xf32>
  return %dx, %dw : tensor<?x4xf32>, tensor<27x4x8xf32>
}

// out = inverse_conv(fine, coarse, y, w) of the 2x2x2 / stride-2 conv: the
// data gradient reads that conv's rulebook forwards, the weight gradient
// backwards. y has one row per coarse site (the forward conv's outputs).
func.func @inverse_grads(%fine: !f, %y: tensor<?x8xf32>, %w: tensor<8x8x4xf32>,
                         %gout: tensor<?x4xf32>) -> (tensor<?x8xf32>, tensor<8x8x4xf32>) {
  %rb, %coarse = spconv.build_rulebook %fine : !f -> !pool, !c
  %init = tensor.empty() : tensor<8x4x8xf32>
  %wt = linalg.transpose ins(%w : tensor<8x8x4xf32>) outs(%init : tensor<8x4x8xf32>)
      permutation = [0, 2, 1]
  %dy = spconv.rulebook_conv %rb, %gout, %wt
      : !pool, tensor<?x4xf32>, tensor<8x4x8xf32> -> tensor<?x8xf32>
  %dw = spconv.rulebook_weight_grad inverse %rb, %y, %gout
      : !pool, tensor<?x8xf32>, tensor<?x4xf32> -> tensor<8x8x4xf32>
  return %dy, %dw : tensor<?x8xf32>, tensor<8x8x4xf32>
}

// f64: the subm gradients, and the forward conv that finite differences of
// the loss sum(out * gout) are taken with.
func.func @subm_grads_f64(%c: !g, %x: tensor<?x4xf64>, %w: tensor<27x4x8xf64>,
                          %gout: tensor<?x8xf64>) -> (tensor<?x4xf64>, tensor<27x4x8xf64>) {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %init = tensor.empty() : tensor<27x8x4xf64>
  %wt = linalg.transpose ins(%w : tensor<27x4x8xf64>) outs(%init : tensor<27x8x4xf64>)
      permutation = [0, 2, 1]
  %dx = spconv.rulebook_conv inverse %rb, %gout, %wt
      : !subm, tensor<?x8xf64>, tensor<27x8x4xf64> -> tensor<?x4xf64>
  %dw = spconv.rulebook_weight_grad %rb, %x, %gout
      : !subm, tensor<?x4xf64>, tensor<?x8xf64> -> tensor<27x4x8xf64>
  return %dx, %dw : tensor<?x4xf64>, tensor<27x4x8xf64>
}

func.func @subm_forward_f64(%c: !g, %x: tensor<?x4xf64>, %w: tensor<27x4x8xf64>)
    -> tensor<?x8xf64> {
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !g, tensor<?x4xf64>, tensor<27x4x8xf64> -> !g, tensor<?x8xf64>
  return %y : tensor<?x8xf64>
}

// Channels wider than the GPU's 32 x 32 weight-gradient tiles (partial
// tiles at both edges) and more sites per offset than one staged step.
func.func @weight_grad_wide(%c: !g, %x: tensor<?x40xf32>, %gout: tensor<?x36xf32>)
    -> tensor<27x40x36xf32> {
  %rb, %oc = spconv.build_rulebook %c : !g -> !subm, !g
  %dw = spconv.rulebook_weight_grad %rb, %x, %gout
      : !subm, tensor<?x40xf32>, tensor<?x36xf32> -> tensor<27x40x36xf32>
  return %dw : tensor<27x40x36xf32>
}
