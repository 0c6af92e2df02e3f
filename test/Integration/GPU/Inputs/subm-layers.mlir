// The benchmark's subm 3x3x3 layers (KITTI grid) in f32, f16 and bf16, for
// the static report of the tiled conv kernels (ptxas.test).
!coords = tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>

func.func @f32_16(%c: !coords, %x: tensor<?x16xf32>, %w: tensor<27x16x16xf32>) -> tensor<?x16xf32> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x16xf32>, tensor<27x16x16xf32> -> !coords, tensor<?x16xf32>
  return %of : tensor<?x16xf32>
}

func.func @f32_64(%c: !coords, %x: tensor<?x64xf32>, %w: tensor<27x64x64xf32>) -> tensor<?x64xf32> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x64xf32>, tensor<27x64x64xf32> -> !coords, tensor<?x64xf32>
  return %of : tensor<?x64xf32>
}

func.func @f32_128(%c: !coords, %x: tensor<?x128xf32>, %w: tensor<27x128x128xf32>) -> tensor<?x128xf32> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x128xf32>, tensor<27x128x128xf32> -> !coords, tensor<?x128xf32>
  return %of : tensor<?x128xf32>
}

func.func @f16_16(%c: !coords, %x: tensor<?x16xf16>, %w: tensor<27x16x16xf16>) -> tensor<?x16xf16> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x16xf16>, tensor<27x16x16xf16> -> !coords, tensor<?x16xf16>
  return %of : tensor<?x16xf16>
}

func.func @f16_64(%c: !coords, %x: tensor<?x64xf16>, %w: tensor<27x64x64xf16>) -> tensor<?x64xf16> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x64xf16>, tensor<27x64x64xf16> -> !coords, tensor<?x64xf16>
  return %of : tensor<?x64xf16>
}

func.func @f16_128(%c: !coords, %x: tensor<?x128xf16>, %w: tensor<27x128x128xf16>) -> tensor<?x128xf16> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x128xf16>, tensor<27x128x128xf16> -> !coords, tensor<?x128xf16>
  return %of : tensor<?x128xf16>
}

func.func @bf16_64(%c: !coords, %x: tensor<?x64xbf16>, %w: tensor<27x64x64xbf16>) -> tensor<?x64xbf16> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x64xbf16>, tensor<27x64x64xbf16> -> !coords, tensor<?x64xbf16>
  return %of : tensor<?x64xbf16>
}

func.func @f32_32(%c: !coords, %x: tensor<?x32xf32>, %w: tensor<27x32x32xf32>) -> tensor<?x32xf32> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x32xf32>, tensor<27x32x32xf32> -> !coords, tensor<?x32xf32>
  return %of : tensor<?x32xf32>
}

func.func @f16_32(%c: !coords, %x: tensor<?x32xf16>, %w: tensor<27x32x32xf16>) -> tensor<?x32xf16> {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x32xf16>, tensor<27x32x32xf16> -> !coords, tensor<?x32xf16>
  return %of : tensor<?x32xf16>
}
