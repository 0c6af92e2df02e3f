func.func @branchy(%flag: i1, %n: index, %c: tensor<?x3xi32, #spconv.grid<[8, 8]>>, %f: tensor<?x4xf32>,
                   %w: tensor<9x4x4xf32>) -> tensor<?x4xf32> {
  %r = scf.if %flag -> (tensor<?x4xf32>) {
    %0:2 = spconv.conv <subm, kernel = [3, 3]> %c, %f, %w
        : tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>, tensor<9x4x4xf32>
        -> tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>
    scf.yield %0#1 : tensor<?x4xf32>
  } else {
    scf.yield %f : tensor<?x4xf32>
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r) -> (tensor<?x4xf32>) {
    %1:2 = spconv.conv <subm, kernel = [3, 3]> %c, %acc, %w
        : tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>, tensor<9x4x4xf32>
        -> tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>
    scf.yield %1#1 : tensor<?x4xf32>
  }
  return %l : tensor<?x4xf32>
}
