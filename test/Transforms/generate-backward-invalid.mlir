// RUN: spconv-opt %s -spconv-generate-backward -split-input-file -verify-diagnostics

// expected-error @+1 {{'func.func' op spconv.backward must name the function to generate, as a symbol reference (@name), got "g"}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {spconv.backward = "g"} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op is declared with type '(tensor<4xf32>) -> tensor<4xf32>', but the backward function of f has type '(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)' (or '(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>', the gradients only)}}
func.func private @g(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {spconv.backward = @g} {
  return %x : tensor<4xf32>
}

// -----

func.func @g(%x: tensor<4xf32>, %d: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  return %x, %d : tensor<4xf32>, tensor<4xf32>
}
// expected-error @+1 {{'func.func' op names @g as its backward function, which already has a body}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {spconv.backward = @g} {
  return %x : tensor<4xf32>
}

// -----

func.func @f(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %x: tensor<?x4xf32>, %w: tensor<27x4x8xf32>)
    -> tensor<?x8xf32> attributes {spconv.backward = @g} {
  // expected-error @+1 {{'spconv.conv' op is differentiated at the rulebook level: run spconv-decompose before spconv-generate-backward}}
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x8xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>
#none = affine_map<(d0) -> ()>
func.func @f(%x: tensor<4xf32>) -> tensor<f32> attributes {spconv.backward = @g} {
  %e = tensor.empty() : tensor<f32>
  // expected-error @+1 {{'linalg.generic' op reads its output other than as a sum (out + f(inputs)) and cannot be differentiated (spconv-generate-backward)}}
  %m = linalg.generic {indexing_maps = [#map, #none], iterator_types = ["reduction"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %m : tensor<f32>
}

// -----

#map = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {spconv.backward = @g} {
  %e = tensor.empty() : tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    // expected-error @+1 {{'math.sin' op in a linalg body has no derivative rule (spconv-generate-backward)}}
    %r = math.sin %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

func.func private @h(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {spconv.backward = @g} {
  // expected-error @+1 {{'func.call' op has no gradient rule (spconv-generate-backward)}}
  %y = func.call @h(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
