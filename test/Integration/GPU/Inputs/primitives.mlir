// Every runtime primitive the lowering calls, as a public function: for
// --target cuda each becomes its CUDA twin (cuda-runtime-twins.test).
func.func @primitives(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %q: tensor<?xi64>)
    -> (tensor<?xi64>, tensor<?xi32>, tensor<?xi32>, tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>) {
  %keys = spconv.linearize %c : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>> -> tensor<?xi64>
  %u, %first, %inv = spconv.sort_unique %keys : tensor<?xi64> -> tensor<?xi64>, tensor<?xi32>, tensor<?xi32>
  %t = spconv.hash_build %keys : tensor<?xi64> -> !spconv.hash_table
  %rows = spconv.hash_lookup %t, %q : !spconv.hash_table, tensor<?xi64> -> tensor<?xi32>
  %back = spconv.delinearize %u : tensor<?xi64> -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
  return %u, %inv, %rows, %back : tensor<?xi64>, tensor<?xi32>, tensor<?xi32>, tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
}
