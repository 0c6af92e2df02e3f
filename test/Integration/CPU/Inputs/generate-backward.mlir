// A small encoder/decoder in f64 whose backward spconv-generate-backward
// derives (generate_backward.py checks it against finite differences): a
// subm conv with bias and ReLU; a grouped strided conv and a max pool of
// the same sites, added; the inverse conv back onto the fine sites; a skip
// concatenation; a pointwise subm conv (a matmul after canonicalization);
// half the squared distance to a target as the loss.

!g = tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
!h = tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>

func.func @net(%c: !g, %x: tensor<?x4xf64>, %w1: tensor<27x4x8xf64>, %b1: tensor<8xf64>,
               %wd: tensor<8x4x8xf64>, %wu: tensor<8x8x8xf64>, %wp: tensor<1x16x4xf64>,
               %target: tensor<?x4xf64>) -> tensor<f64>
    attributes {spconv.backward = @net_backward} {
  %c1, %y1 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w1 bias %b1
      : !g, tensor<?x4xf64>, tensor<27x4x8xf64>, tensor<8xf64> -> !g, tensor<?x8xf64>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %y1, %c0 : tensor<?x8xf64>
  %init = tensor.empty(%n) : tensor<?x8xf64>
  %r1 = linalg.map ins(%y1 : tensor<?x8xf64>) outs(%init : tensor<?x8xf64>)
      (%v: f64, %unused: f64) {
        %m = arith.maximumf %v, %zero : f64
        linalg.yield %m : f64
      }
  %c2, %y2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> groups 2 %c, %r1, %wd
      : !g, tensor<?x8xf64>, tensor<8x4x8xf64> -> !h, tensor<?x8xf64>
  %pc, %pv = spconv.pool max <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %r1
      : !g, tensor<?x8xf64> -> !h, tensor<?x8xf64>
  %sum = arith.addf %y2, %pv : tensor<?x8xf64>
  %up = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %c2, %sum, %wu
      : !g, !h, tensor<?x8xf64>, tensor<8x8x8xf64> -> tensor<?x8xf64>
  %cat = tensor.concat dim(1) %up, %r1 : (tensor<?x8xf64>, tensor<?x8xf64>) -> tensor<?x16xf64>
  %oc, %out = spconv.conv <subm, kernel = [1, 1, 1]> %c, %cat, %wp
      : !g, tensor<?x16xf64>, tensor<1x16x4xf64> -> !g, tensor<?x4xf64>
  %d = arith.subf %out, %target : tensor<?x4xf64>
  %sq = arith.mulf %d, %d : tensor<?x4xf64>
  %e = tensor.empty() : tensor<f64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %half = arith.constant 0.5 : f64
  %loss = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
      iterator_types = ["reduction", "reduction"]}
      ins(%sq : tensor<?x4xf64>) outs(%z : tensor<f64>) {
  ^bb0(%v: f64, %acc: f64):
    %s = arith.mulf %v, %half : f64
    %t = arith.addf %acc, %s : f64
    linalg.yield %t : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}

func.func private @net_backward(!g, tensor<?x4xf64>, tensor<27x4x8xf64>, tensor<8xf64>,
                                tensor<8x4x8xf64>, tensor<8x8x8xf64>, tensor<1x16x4xf64>,
                                tensor<?x4xf64>, tensor<f64>)
    -> (tensor<f64>, tensor<?x4xf64>, tensor<27x4x8xf64>, tensor<8xf64>, tensor<8x4x8xf64>,
        tensor<8x8x8xf64>, tensor<1x16x4xf64>, tensor<?x4xf64>)

// The loss and its gradients: the backward function with cotangent 1.
func.func @grads(%c: !g, %x: tensor<?x4xf64>, %w1: tensor<27x4x8xf64>, %b1: tensor<8xf64>,
                 %wd: tensor<8x4x8xf64>, %wu: tensor<8x8x8xf64>, %wp: tensor<1x16x4xf64>,
                 %target: tensor<?x4xf64>)
    -> (tensor<f64>, tensor<?x4xf64>, tensor<27x4x8xf64>, tensor<8xf64>, tensor<8x4x8xf64>,
        tensor<8x8x8xf64>, tensor<1x16x4xf64>, tensor<?x4xf64>) {
  %one = arith.constant dense<1.0> : tensor<f64>
  %r:8 = func.call @net_backward(%c, %x, %w1, %b1, %wd, %wu, %wp, %target, %one)
      : (!g, tensor<?x4xf64>, tensor<27x4x8xf64>, tensor<8xf64>, tensor<8x4x8xf64>,
         tensor<8x8x8xf64>, tensor<1x16x4xf64>, tensor<?x4xf64>, tensor<f64>)
      -> (tensor<f64>, tensor<?x4xf64>, tensor<27x4x8xf64>, tensor<8xf64>, tensor<8x4x8xf64>,
          tensor<8x8x8xf64>, tensor<1x16x4xf64>, tensor<?x4xf64>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7
      : tensor<f64>, tensor<?x4xf64>, tensor<27x4x8xf64>, tensor<8xf64>, tensor<8x4x8xf64>,
        tensor<8x8x8xf64>, tensor<1x16x4xf64>, tensor<?x4xf64>
}
