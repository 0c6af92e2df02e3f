// A column sum: a reduction over rows, the outer dimension (row-reductions.test).
func.func @colsum(%x: tensor<?x24xf32>) -> tensor<24xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<24xf32>) -> tensor<24xf32>
  %sum = linalg.reduce ins(%x : tensor<?x24xf32>) outs(%acc : tensor<24xf32>) dimensions = [0]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  return %sum : tensor<24xf32>
}
