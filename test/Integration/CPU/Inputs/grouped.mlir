// Grouped and depthwise convs (grouped.py checks them against PyTorch's
// conv3d / conv_transpose3d with `groups`): each function returns the
// forward result, then the data and weight gradients of the loss
// sum(out * gout). The data gradient is the forward rulebook read backwards
// with the grouped weight's blocks transposed (@regroup_*), the weight
// gradient spconv.rulebook_weight_grad with the same groups.

!g = tensor<?x4xi32, #spconv.grid<[6, 7, 5]>>
!d = tensor<?x4xi32, #spconv.grid<[3, 4, 3]>>
!t = tensor<?x4xi32, #spconv.grid<[11, 13, 9]>>
!f = tensor<?x4xi32, #spconv.grid<[8, 6, 4]>>
!c = tensor<?x4xi32, #spconv.grid<[4, 3, 2]>>

!subm = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[6, 7, 5]>>
!down = !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[6, 7, 5]>>
!up = !spconv.rulebook<#spconv.geom<transposed, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[6, 7, 5]>>
!pool = !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 6, 4]>>

// A grouped weight K x Cin/g x Cout, g = 2, Cin = 4, Cout = 8, regrouped for
// the data gradient: K x Cout/g x Cin with block (q) transposed,
// wt[j, c, q * 2 + ci] = w[j, ci, q * 4 + c].
func.func private @regroup_2x8(%w: tensor<27x2x8xf32>) -> tensor<27x4x4xf32> {
  %e = tensor.expand_shape %w [[0], [1], [2, 3]] output_shape [27, 2, 2, 4]
      : tensor<27x2x8xf32> into tensor<27x2x2x4xf32>
  %init = tensor.empty() : tensor<27x4x2x2xf32>
  %t = linalg.transpose ins(%e : tensor<27x2x2x4xf32>) outs(%init : tensor<27x4x2x2xf32>)
      permutation = [0, 3, 2, 1]
  %c = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<27x4x2x2xf32> into tensor<27x4x4xf32>
  return %c : tensor<27x4x4xf32>
}

func.func @grouped_subm(%c: !g, %x: tensor<?x4xf32>, %w: tensor<27x2x8xf32>, %gout: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x4xf32>, tensor<27x2x8xf32>) {
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> groups 2 %c, %x, %w
      : !g, tensor<?x4xf32>, tensor<27x2x8xf32> -> !g, tensor<?x8xf32>
  %rb, %rc = spconv.build_rulebook %c : !g -> !subm, !g
  %wt = func.call @regroup_2x8(%w) : (tensor<27x2x8xf32>) -> tensor<27x4x4xf32>
  %dx = spconv.rulebook_conv inverse groups 2 %rb, %gout, %wt
      : !subm, tensor<?x8xf32>, tensor<27x4x4xf32> -> tensor<?x4xf32>
  %dw = spconv.rulebook_weight_grad groups 2 %rb, %x, %gout
      : !subm, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x2x8xf32>
  return %y, %dx, %dw : tensor<?x8xf32>, tensor<?x4xf32>, tensor<27x2x8xf32>
}

func.func @grouped_regular(%c: !g, %x: tensor<?x4xf32>, %w: tensor<27x2x8xf32>, %gout: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x4xf32>, tensor<27x2x8xf32>) {
  %oc, %y = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> groups 2 %c, %x, %w
      : !g, tensor<?x4xf32>, tensor<27x2x8xf32> -> !d, tensor<?x8xf32>
  %rb, %rc = spconv.build_rulebook %c : !g -> !down, !d
  %wt = func.call @regroup_2x8(%w) : (tensor<27x2x8xf32>) -> tensor<27x4x4xf32>
  %dx = spconv.rulebook_conv inverse groups 2 %rb, %gout, %wt
      : !down, tensor<?x8xf32>, tensor<27x4x4xf32> -> tensor<?x4xf32>
  %dw = spconv.rulebook_weight_grad groups 2 %rb, %x, %gout
      : !down, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x2x8xf32>
  return %y, %dx, %dw : tensor<?x8xf32>, tensor<?x4xf32>, tensor<27x2x8xf32>
}

func.func @grouped_transposed(%c: !g, %x: tensor<?x4xf32>, %w: tensor<27x2x8xf32>, %gout: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x4xf32>, tensor<27x2x8xf32>) {
  %oc, %y = spconv.conv <transposed, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> groups 2 %c, %x, %w
      : !g, tensor<?x4xf32>, tensor<27x2x8xf32> -> !t, tensor<?x8xf32>
  %rb, %rc = spconv.build_rulebook %c : !g -> !up, !t
  %wt = func.call @regroup_2x8(%w) : (tensor<27x2x8xf32>) -> tensor<27x4x4xf32>
  %dx = spconv.rulebook_conv inverse groups 2 %rb, %gout, %wt
      : !up, tensor<?x8xf32>, tensor<27x4x4xf32> -> tensor<?x4xf32>
  %dw = spconv.rulebook_weight_grad groups 2 %rb, %x, %gout
      : !up, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x2x8xf32>
  return %y, %dx, %dw : tensor<?x8xf32>, tensor<?x4xf32>, tensor<27x2x8xf32>
}

// Depthwise (groups = channels = 8, K x 1 x 8): the transposed blocks are
// 1 x 1, so the data gradient takes the weight as it is.
func.func @depthwise_subm(%c: !g, %x: tensor<?x8xf32>, %w: tensor<27x1x8xf32>, %gout: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<27x1x8xf32>) {
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> groups 8 %c, %x, %w
      : !g, tensor<?x8xf32>, tensor<27x1x8xf32> -> !g, tensor<?x8xf32>
  %rb, %rc = spconv.build_rulebook %c : !g -> !subm, !g
  %dx = spconv.rulebook_conv inverse groups 8 %rb, %gout, %w
      : !subm, tensor<?x8xf32>, tensor<27x1x8xf32> -> tensor<?x8xf32>
  %dw = spconv.rulebook_weight_grad groups 8 %rb, %x, %gout
      : !subm, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<27x1x8xf32>
  return %y, %dx, %dw : tensor<?x8xf32>, tensor<?x8xf32>, tensor<27x1x8xf32>
}

// Channels known only at run time (groups = 2): the regrouped weight `wt`
// comes in as an argument.
func.func @grouped_dynamic(%c: !g, %x: tensor<?x?xf32>, %w: tensor<27x?x?xf32>, %gout: tensor<?x?xf32>,
                           %wt: tensor<27x?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<27x?x?xf32>) {
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> groups 2 %c, %x, %w
      : !g, tensor<?x?xf32>, tensor<27x?x?xf32> -> !g, tensor<?x?xf32>
  %rb, %rc = spconv.build_rulebook %c : !g -> !subm, !g
  %dx = spconv.rulebook_conv inverse groups 2 %rb, %gout, %wt
      : !subm, tensor<?x?xf32>, tensor<27x?x?xf32> -> tensor<?x?xf32>
  %dw = spconv.rulebook_weight_grad groups 2 %rb, %x, %gout
      : !subm, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<27x?x?xf32>
  return %y, %dx, %dw : tensor<?x?xf32>, tensor<?x?xf32>, tensor<27x?x?xf32>
}

// The inverse conv of a 2x2x2 / stride-2 conv, groups = 2, 8 -> 4 channels
// (w: 8 x 4 x 4): the data gradient reads the rulebook forwards with the
// blocks transposed (8 x 2 x 8), the weight gradient backwards.
func.func @grouped_inverse(%fine: !f, %y: tensor<?x8xf32>, %w: tensor<8x4x4xf32>, %gout: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x8xf32>, tensor<8x4x4xf32>) {
  %rb, %coarse = spconv.build_rulebook %fine : !f -> !pool, !c
  %up = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> groups 2 %fine, %coarse, %y, %w
      : !f, !c, tensor<?x8xf32>, tensor<8x4x4xf32> -> tensor<?x4xf32>
  %e = tensor.expand_shape %w [[0], [1], [2, 3]] output_shape [8, 4, 2, 2]
      : tensor<8x4x4xf32> into tensor<8x4x2x2xf32>
  %init = tensor.empty() : tensor<8x2x2x4xf32>
  %t = linalg.transpose ins(%e : tensor<8x4x2x2xf32>) outs(%init : tensor<8x2x2x4xf32>)
      permutation = [0, 3, 2, 1]
  %wt = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<8x2x2x4xf32> into tensor<8x2x8xf32>
  %dy = spconv.rulebook_conv groups 2 %rb, %gout, %wt
      : !pool, tensor<?x4xf32>, tensor<8x2x8xf32> -> tensor<?x8xf32>
  %dw = spconv.rulebook_weight_grad inverse groups 2 %rb, %y, %gout
      : !pool, tensor<?x8xf32>, tensor<?x4xf32> -> tensor<8x4x4xf32>
  return %up, %dy, %dw : tensor<?x4xf32>, tensor<?x8xf32>, tensor<8x4x4xf32>
}

// f64 with a depth multiplier (groups = 4, Cin = 4, Cout = 8, K x 1 x 8):
// also the function finite differences are taken of.
func.func @multiplier_subm_f64(%c: !g, %x: tensor<?x4xf64>, %w: tensor<27x1x8xf64>, %gout: tensor<?x8xf64>)
    -> (tensor<?x8xf64>, tensor<?x4xf64>, tensor<27x1x8xf64>) {
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> groups 4 %c, %x, %w
      : !g, tensor<?x4xf64>, tensor<27x1x8xf64> -> !g, tensor<?x8xf64>
  %rb, %rc = spconv.build_rulebook %c : !g -> !subm, !g
  %e = tensor.expand_shape %w [[0], [1], [2, 3]] output_shape [27, 1, 4, 2]
      : tensor<27x1x8xf64> into tensor<27x1x4x2xf64>
  %init = tensor.empty() : tensor<27x2x4x1xf64>
  %t = linalg.transpose ins(%e : tensor<27x1x4x2xf64>) outs(%init : tensor<27x2x4x1xf64>)
      permutation = [0, 3, 2, 1]
  %wt = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<27x2x4x1xf64> into tensor<27x2x4xf64>
  %dx = spconv.rulebook_conv inverse groups 4 %rb, %gout, %wt
      : !subm, tensor<?x8xf64>, tensor<27x2x4xf64> -> tensor<?x4xf64>
  %dw = spconv.rulebook_weight_grad groups 4 %rb, %x, %gout
      : !subm, tensor<?x4xf64>, tensor<?x8xf64> -> tensor<27x1x8xf64>
  return %y, %dx, %dw : tensor<?x8xf64>, tensor<?x4xf64>, tensor<27x1x8xf64>
}
