func.func @loss(%c: tensor<?x3xi32, #spconv.grid<[8, 8]>>, %x: tensor<?x4xf32>,
                %w: tensor<9x2x8xf32>, %b: tensor<8xf32>, %m: tensor<8x3xf32>)
    -> tensor<f32> attributes {spconv.backward = @loss_backward} {
  %oc, %y = spconv.conv <subm, kernel = [3, 3]> groups 2 %c, %x, %w bias %b
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>, tensor<9x2x8xf32>, tensor<8xf32>
      -> tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x8xf32>
  %pc, %p = spconv.pool max <regular, kernel = [2, 2], stride = [2, 2]> %c, %y
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x8xf32>
      -> tensor<?x3xi32, #spconv.grid<[4, 4]>>, tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %p, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %logits = linalg.matmul ins(%p, %m : tensor<?x8xf32>, tensor<8x3xf32>) outs(%z : tensor<?x3xf32>) -> tensor<?x3xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
      iterator_types = ["reduction", "reduction"]}
      ins(%logits : tensor<?x3xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = math.tanh %v : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
