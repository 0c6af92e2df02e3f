// Convs followed by the element-wise ops that spconv-fuse-epilogues folds
// into them (epilogues.py runs them against the reference).
!g = tensor<?x4xi32, #spconv.grid<[16, 16, 8]>>
!d = tensor<?x4xi32, #spconv.grid<[8, 8, 4]>>

#rows = affine_map<(d0, d1) -> (d0, d1)>
#channels = affine_map<(d0, d1) -> (d1)>

// leaky_relu(batchnorm(subm(x)) + residual), BatchNorm as scale and shift.
func.func @subm_bn_residual_leaky(%c: !g, %x: tensor<?x8xf32>,
    %w: tensor<27x8x16xf32>, %b: tensor<16xf32>, %scale: tensor<16xf32>,
    %shift: tensor<16xf32>, %residual: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w bias %b
      : !g, tensor<?x8xf32>, tensor<27x8x16xf32>, tensor<16xf32> -> !g, tensor<?x16xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?x16xf32>
  %init = tensor.empty(%n) : tensor<?x16xf32>
  %bn = linalg.generic {indexing_maps = [#rows, #channels, #channels, #rows],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y, %scale, %shift : tensor<?x16xf32>, tensor<16xf32>, tensor<16xf32>)
      outs(%init : tensor<?x16xf32>) {
    ^bb0(%v: f32, %s: f32, %t: f32, %unused: f32):
      %m = arith.mulf %v, %s : f32
      %a = arith.addf %m, %t : f32
      linalg.yield %a : f32
  } -> tensor<?x16xf32>
  %sum = arith.addf %bn, %residual : tensor<?x16xf32>
  %alpha = arith.constant 0.1 : f32
  %zero = arith.constant 0.0 : f32
  %leaky = linalg.map ins(%sum : tensor<?x16xf32>) outs(%init : tensor<?x16xf32>)
      (%v: f32, %unused: f32) {
        %positive = arith.cmpf ogt, %v, %zero : f32
        %scaled = arith.mulf %v, %alpha : f32
        %r = arith.select %positive, %v, %scaled : f32
        linalg.yield %r : f32
      }
  return %leaky : tensor<?x16xf32>
}

// relu(regular 2x2x2 / 2 conv), 5 output channels (no vector width
// divides them but 5 itself).
func.func @regular_relu(%c: !g, %x: tensor<?x8xf32>, %w: tensor<8x8x5xf32>,
    %b: tensor<5xf32>) -> (!d, tensor<?x5xf32>) {
  %oc, %y = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %x, %w bias %b
      : !g, tensor<?x8xf32>, tensor<8x8x5xf32>, tensor<5xf32> -> !d, tensor<?x5xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?x5xf32>
  %init = tensor.empty(%n) : tensor<?x5xf32>
  %zero = arith.constant 0.0 : f32
  %r = linalg.map ins(%y : tensor<?x5xf32>) outs(%init : tensor<?x5xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.maximumf %v, %zero : f32
        linalg.yield %m : f32
      }
  return %oc, %r : !d, tensor<?x5xf32>
}

// relu(subm(x)) in f16: the epilogue sees the sum rounded to f16.
func.func @subm_relu_f16(%c: !g, %x: tensor<?x8xf16>, %w: tensor<27x8x16xf16>)
    -> tensor<?x16xf16> {
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !g, tensor<?x8xf16>, tensor<27x8x16xf16> -> !g, tensor<?x16xf16>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?x16xf16>
  %init = tensor.empty(%n) : tensor<?x16xf16>
  %zero = arith.constant 0.0 : f16
  %r = linalg.map ins(%y : tensor<?x16xf16>) outs(%init : tensor<?x16xf16>)
      (%v: f16, %unused: f16) {
        %m = arith.maximumf %v, %zero : f16
        linalg.yield %m : f16
      }
  return %r : tensor<?x16xf16>
}

// [relu(subm_a(x)), x, subm_c(x), subm_b(x)]: the convs whose only user is
// the concatenation write their rows into its columns (a and b; relu(a)
// only once fused), x and c (which is returned too) are copied in.
func.func @concat_in_place(%c: !g, %x: tensor<?x8xf32>,
    %wa: tensor<27x8x16xf32>, %ba: tensor<16xf32>, %wb: tensor<27x8x5xf32>,
    %wc: tensor<27x8x3xf32>) -> (tensor<?x32xf32>, tensor<?x3xf32>) {
  %oa, %a = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %wa bias %ba
      : !g, tensor<?x8xf32>, tensor<27x8x16xf32>, tensor<16xf32> -> !g, tensor<?x16xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x16xf32>
  %init = tensor.empty(%n) : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %ra = linalg.map ins(%a : tensor<?x16xf32>) outs(%init : tensor<?x16xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.maximumf %v, %zero : f32
        linalg.yield %m : f32
      }
  %ob, %b = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %wb
      : !g, tensor<?x8xf32>, tensor<27x8x5xf32> -> !g, tensor<?x5xf32>
  %oc, %cc = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %wc
      : !g, tensor<?x8xf32>, tensor<27x8x3xf32> -> !g, tensor<?x3xf32>
  %cat = tensor.concat dim(1) %ra, %x, %cc, %b
      : (tensor<?x16xf32>, tensor<?x8xf32>, tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x32xf32>
  return %cat, %cc : tensor<?x32xf32>, tensor<?x3xf32>
}

// [subm(x), skip] in f16: the conv rounds its f32 sums into its columns.
func.func @concat_f16(%c: !g, %x: tensor<?x8xf16>, %w: tensor<27x8x16xf16>,
    %skip: tensor<?x4xf16>) -> tensor<?x20xf16> {
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !g, tensor<?x8xf16>, tensor<27x8x16xf16> -> !g, tensor<?x16xf16>
  %cat = tensor.concat dim(1) %y, %skip
      : (tensor<?x16xf16>, tensor<?x4xf16>) -> tensor<?x20xf16>
  return %cat : tensor<?x20xf16>
}

// Two convs into one concatenation, on site sets that must have as many
// sites: the second conv checks its rows against the joint buffer's.
func.func @concat_two_site_sets(%c: !g, %x: tensor<?x8xf32>, %c2: !g,
    %x2: tensor<?x8xf32>, %w: tensor<27x8x16xf32>, %w2: tensor<27x8x5xf32>)
    -> tensor<?x21xf32> {
  %o1, %y1 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !g, tensor<?x8xf32>, tensor<27x8x16xf32> -> !g, tensor<?x16xf32>
  %o2, %y2 = spconv.conv <subm, kernel = [3, 3, 3]> %c2, %x2, %w2
      : !g, tensor<?x8xf32>, tensor<27x8x5xf32> -> !g, tensor<?x5xf32>
  %cat = tensor.concat dim(1) %y1, %y2
      : (tensor<?x16xf32>, tensor<?x5xf32>) -> tensor<?x21xf32>
  return %cat : tensor<?x21xf32>
}
