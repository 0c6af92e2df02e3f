// Nothing to export: the only function with a body is private.
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @external(%x: tensor<4xf32>) -> tensor<4xf32>
