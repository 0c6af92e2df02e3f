func.func @primitives(%c: tensor<?x3xi32, #spconv.grid<[16, 16], batch = 2>>, %q: tensor<?xi64>,
                      %f: tensor<?x4xf32>)
    -> (tensor<?xi64>, tensor<?xi32>, tensor<?xi32>, tensor<?x3xi32, #spconv.grid<[16, 16], batch = 2>>, tensor<?x4xf32>) {
  %keys = spconv.linearize %c : tensor<?x3xi32, #spconv.grid<[16, 16], batch = 2>> -> tensor<?xi64>
  %u, %first, %inv = spconv.sort_unique %keys : tensor<?xi64> -> tensor<?xi64>, tensor<?xi32>, tensor<?xi32>
  %t = spconv.hash_build %keys : tensor<?xi64> -> !spconv.hash_table
  %rows = spconv.hash_lookup %t, %q : !spconv.hash_table, tensor<?xi64> -> tensor<?xi32>
  %back = spconv.delinearize %u : tensor<?xi64> -> tensor<?x3xi32, #spconv.grid<[16, 16], batch = 2>>
  %g = spconv.gather_rows %f, %rows : tensor<?x4xf32>, tensor<?xi32> -> tensor<?x4xf32>
  return %u, %inv, %rows, %back, %g : tensor<?xi64>, tensor<?xi32>, tensor<?xi32>, tensor<?x3xi32, #spconv.grid<[16, 16], batch = 2>>, tensor<?x4xf32>
}
