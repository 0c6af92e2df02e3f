// A symbol that is no C identifier.
func.func @"layer.1"(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
