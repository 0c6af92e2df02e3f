// The gradients of the row and dense primitives (primitive_gradients.py
// checks them against PyTorch autograd). Each function returns the forward
// result, then the gradient of sum(result * gout) with respect to its data:
//  - gather_rows: scatter_add_rows of gout into zeros (repeated rows add up,
//    -1 rows pass nothing back);
//  - segment_max: segment_max_grad of gout at the positions into zeros;
//  - unfold: fold of gout, and fold: unfold of gout (each is the other's
//    adjoint).

func.func @gather_grads(%x: tensor<?x8xf32>, %rows: tensor<?xi32>, %gout: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %y = spconv.gather_rows %x, %rows : tensor<?x8xf32>, tensor<?xi32> -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %empty = tensor.empty(%n) : tensor<?x8xf32>
  %zero = arith.constant 0.0 : f32
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  %dx = spconv.scatter_add_rows %gout, %rows into %zeros
      : tensor<?x8xf32>, tensor<?xi32> into tensor<?x8xf32>
  return %y, %dx : tensor<?x8xf32>, tensor<?x8xf32>
}

func.func @segment_max_grads(%data: tensor<2x5x40xf64>, %index: tensor<2x40xi32>,
                             %gout: tensor<2x5x7xf64>)
    -> (tensor<2x5x7xf64>, tensor<2x5x40xf64>) {
  %values, %positions = spconv.segment_max %data, %index
      : tensor<2x5x40xf64>, tensor<2x40xi32> -> tensor<2x5x7xf64>, tensor<2x5x7xi32>
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<2x5x40xf64>
  %zeros = linalg.fill ins(%zero : f64) outs(%empty : tensor<2x5x40xf64>) -> tensor<2x5x40xf64>
  %dx = spconv.segment_max_grad %gout, %positions into %zeros
      : tensor<2x5x7xf64>, tensor<2x5x7xi32> into tensor<2x5x40xf64>
  return %values, %dx : tensor<2x5x7xf64>, tensor<2x5x40xf64>
}

// 3x3 window, stride 2, padding 1, dilation 1 on 7x6 (L = 4 x 3 = 12).
func.func @unfold_grads(%x: tensor<2x3x7x6xf32>, %gout: tensor<2x27x12xf32>)
    -> (tensor<2x27x12xf32>, tensor<2x3x7x6xf32>) {
  %cols = spconv.unfold <regular, kernel = [3, 3], stride = [2, 2], padding = [1, 1]> %x
      : tensor<2x3x7x6xf32> -> tensor<2x27x12xf32>
  %dx = spconv.fold <regular, kernel = [3, 3], stride = [2, 2], padding = [1, 1]> %gout
      : tensor<2x27x12xf32> -> tensor<2x3x7x6xf32>
  return %cols, %dx : tensor<2x27x12xf32>, tensor<2x3x7x6xf32>
}

// 2x3 window, dilation (2, 1), padding (1, 0) on 6x5 (L = 6 x 3 = 18).
func.func @fold_grads(%cols: tensor<2x18x18xf32>, %gout: tensor<2x3x6x5xf32>)
    -> (tensor<2x3x6x5xf32>, tensor<2x18x18xf32>) {
  %x = spconv.fold <regular, kernel = [2, 3], padding = [1, 0], dilation = [2, 1]> %cols
      : tensor<2x18x18xf32> -> tensor<2x3x6x5xf32>
  %dcols = spconv.unfold <regular, kernel = [2, 3], padding = [1, 0], dilation = [2, 1]> %gout
      : tensor<2x3x6x5xf32> -> tensor<2x18x18xf32>
  return %x, %dcols : tensor<2x3x6x5xf32>, tensor<2x18x18xf32>
}
