// A dense unfold: no spconv runtime call, only allocations.
func.func @unfold(%x: tensor<1x2x6x6xf32>) -> tensor<1x18x16xf32> {
  %y = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x2x6x6xf32> -> tensor<1x18x16xf32>
  return %y : tensor<1x18x16xf32>
}
