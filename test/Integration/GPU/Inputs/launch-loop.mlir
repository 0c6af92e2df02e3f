// A host loop launching a kernel each iteration (static-allocas.test): 1000
// doublings of a tensor, as a training loop runs its steps.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @steps(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<?x8xf32> {
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<?x8xf32>) outs(%a : tensor<?x8xf32>) {
      ^bb0(%in: f32, %out: f32):
        %d = arith.addf %in, %in : f32
        linalg.yield %d : f32
    } -> tensor<?x8xf32>
    scf.yield %b : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}
