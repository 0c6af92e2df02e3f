// Subm 3x3x3 layers whose tiles Inputs/gpu-tiles.json replaces (ptxas.test
// assembles them with the table).
!coords = tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>

func.func @f32_64(%c: !coords, %x: tensor<?x64xf32>, %w: tensor<27x64x64xf32>) -> tensor<?x64xf32> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x64xf32>, tensor<27x64x64xf32> -> !coords, tensor<?x64xf32>
  return %of : tensor<?x64xf32>
}

func.func @f16_64(%c: !coords, %x: tensor<?x64xf16>, %w: tensor<27x64x64xf16>) -> tensor<?x64xf16> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x64xf16>, tensor<27x64x64xf16> -> !coords, tensor<?x64xf16>
  return %of : tensor<?x64xf16>
}

func.func @bf16_64(%c: !coords, %x: tensor<?x64xbf16>, %w: tensor<27x64x64xbf16>) -> tensor<?x64xbf16> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x64xbf16>, tensor<27x64x64xbf16> -> !coords, tensor<?x64xbf16>
  return %of : tensor<?x64xbf16>
}

func.func @f16_64_256(%c: !coords, %x: tensor<?x64xf16>, %w: tensor<27x64x256xf16>) -> tensor<?x256xf16> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x64xf16>, tensor<27x64x256xf16> -> !coords, tensor<?x256xf16>
  return %of : tensor<?x256xf16>
}

func.func @f32_64_32(%c: !coords, %x: tensor<?x64xf32>, %w: tensor<27x64x32xf32>) -> tensor<?x32xf32> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x64xf32>, tensor<27x64x32xf32> -> !coords, tensor<?x32xf32>
  return %of : tensor<?x32xf32>
}
