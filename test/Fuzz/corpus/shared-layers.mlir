!g = tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
!h = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
func.func @layers(%c: !g, %f: tensor<?x8xf32>, %w1: tensor<27x8x8xf32>, %w2: tensor<27x8x8xf32>,
                  %wd: tensor<27x8x16xf32>, %wu: tensor<27x16x8xf32>) -> (!g, tensor<?x8xf32>) {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w1
      : !g, tensor<?x8xf32>, tensor<27x8x8xf32> -> !g, tensor<?x8xf32>
  %b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %a#0, %a#1, %w2
      : !g, tensor<?x8xf32>, tensor<27x8x8xf32> -> !g, tensor<?x8xf32>
  %d:2 = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %b#0, %b#1, %wd
      : !g, tensor<?x8xf32>, tensor<27x8x16xf32> -> !h, tensor<?x16xf32>
  %u = spconv.inverse_conv <inverse, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %b#0, %d#0, %d#1, %wu
      : !g, !h, tensor<?x16xf32>, tensor<27x16x8xf32> -> tensor<?x8xf32>
  %s = arith.addf %u, %b#1 : tensor<?x8xf32>
  return %b#0, %s : !g, tensor<?x8xf32>
}
