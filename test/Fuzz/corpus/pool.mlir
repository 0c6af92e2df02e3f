func.func @pools(%c: tensor<?x3xi32, #spconv.grid<[8, 8]>>, %f: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %m:2 = spconv.pool max <regular, kernel = [3, 3], stride = [2, 2], padding = [1, 1]> %c, %f
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>
      -> tensor<?x3xi32, #spconv.grid<[4, 4]>>, tensor<?x4xf32>
  %a:2 = spconv.pool avg <regular, kernel = [2, 2], stride = [2, 2]> %c, %f
      : tensor<?x3xi32, #spconv.grid<[8, 8]>>, tensor<?x4xf32>
      -> tensor<?x3xi32, #spconv.grid<[4, 4]>>, tensor<?x4xf32>
  return %m#1, %a#1 : tensor<?x4xf32>, tensor<?x4xf32>
}
