// RUN: spconv-opt %s -split-input-file -verify-diagnostics

func.func @conv_inverse_kind(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>, %w: tensor<8x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op takes a subm, regular or transposed geometry; inverse convolutions are spconv.inverse_conv}}
  %0:2 = spconv.conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<8x4x4xf32> -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>
  return
}

// -----

func.func @conv_no_grid(%c: tensor<?x4xi32>, %f: tensor<?x4xf32>, %w: tensor<27x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op coordinates must carry a #spconv.grid encoding, got 'tensor<?x4xi32>'}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32>, tensor<?x4xf32>, tensor<27x4x4xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
  return
}

// -----

func.func @conv_columns(%c: tensor<?x3xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>, %w: tensor<27x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op coordinates must have 1 + 3 columns (batch, then one per spatial dimension of [8, 8, 8]), got 3}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x3xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
      -> tensor<?x3xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  return
}

// -----

func.func @conv_dynamic_columns(%c: tensor<?x?xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>, %w: tensor<27x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op coordinates must have 1 + 3 columns (batch, then one per spatial dimension of [8, 8, 8]), got ?}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x?xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x4xf32>
      -> tensor<?x?xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  return
}

// -----

func.func @conv_result_no_grid(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>, %w: tensor<8x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op result coordinates must carry a #spconv.grid encoding, got 'tensor<?x4xi32>'}}
  %0:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<8x4x4xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
  return
}

// -----

func.func @conv_rank(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>, %w: tensor<9x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op geometry has 2 spatial dimensions but the input grid [8, 8, 8] has 3}}
  %0:2 = spconv.conv <regular, kernel = [3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<9x4x4xf32> -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>
  return
}

// -----

func.func @conv_empty_grid(%c: tensor<?x2xi32, #spconv.grid<[4]>>, %f: tensor<?x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op the output grid is empty in dimension 0: input extent 4 + 2 * padding 0 is smaller than the dilated kernel extent 7}}
  %0:2 = spconv.conv <regular, kernel = [3], dilation = [3]> %c, %f, %w
      : tensor<?x2xi32, #spconv.grid<[4]>>, tensor<?x4xf32>, tensor<3x4x4xf32>
      -> tensor<?x2xi32, #spconv.grid<[1]>>, tensor<?x4xf32>
  return
}

// -----

// A layer fed a grid that disagrees with its producer.
func.func @conv_grid_mismatch(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x16xf32>, %w: tensor<27x16x32xf32>) {
  // expected-error @+1 {{'spconv.conv' op result grid [20, 800, 704] disagrees with the grid [21, 800, 704] that the geometry computes from the input grid [41, 1600, 1408]}}
  %0:2 = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x32xf32>
      -> tensor<?x4xi32, #spconv.grid<[20, 800, 704]>>, tensor<?x32xf32>
  return
}

// -----

func.func @conv_batch(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8], batch = 2>>, %f: tensor<?x4xf32>, %w: tensor<8x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op result grid must keep the batch size of the input grid}}
  %0:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8], batch = 2>>, tensor<?x4xf32>, tensor<8x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>
  return
}

// -----

func.func @conv_subm_type(%c: tensor<10x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<10x4xf32>, %w: tensor<27x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op subm result coordinates must have the type of the input coordinates, 'tensor<10x4xi32, #spconv.grid<[8, 8, 8]>>'}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<10x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<10x4xf32>, tensor<27x4x4xf32>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<10x4xf32>
  return
}

// -----

func.func @conv_rows(%c: tensor<10x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<9x4xf32>, %w: tensor<27x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op coordinate rows (10) and feature rows (9) must agree}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<10x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<9x4xf32>, tensor<27x4x4xf32>
      -> tensor<10x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<9x4xf32>
  return
}

// -----

func.func @conv_result_rows(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>, %w: tensor<8x4x4xf32>) {
  // expected-error @+1 {{'spconv.conv' op result coordinate rows (3) and result feature rows (4) must agree}}
  %0:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<8x4x4xf32>
      -> tensor<3x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<4x4xf32>
  return
}

// -----

func.func @conv_weight_offsets(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf32>, %w: tensor<26x16x16xf32>) {
  // expected-error @+1 {{'spconv.conv' op weight has 26 kernel offsets but the kernel [3, 3, 3] has 27}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>, tensor<26x16x16xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>
  return
}

// -----

func.func @conv_weight_cin(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf32>, %w: tensor<27x8x16xf32>) {
  // expected-error @+1 {{'spconv.conv' op weight input channels (8) and feature channels (16) must agree}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>, tensor<27x8x16xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>
  return
}

// -----

func.func @conv_weight_cout(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf32>, %w: tensor<27x16x32xf32>) {
  // expected-error @+1 {{'spconv.conv' op weight output channels (32) and result channels (16) must agree}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>, tensor<27x16x32xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>
  return
}

// -----

func.func @conv_bias(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf32>, %w: tensor<27x16x32xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'spconv.conv' op bias size (16) and weight output channels (32) must agree}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w bias %b
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>, tensor<27x16x32xf32>, tensor<16xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x32xf32>
  return
}

// -----

func.func @conv_element_types(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf16>, %w: tensor<27x16x16xf32>) {
  // expected-error @+1 {{'spconv.conv' op features, weight, bias and results must share one element type, got 'f16' and 'f32'}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf16>, tensor<27x16x16xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf16>
  return
}

// -----

func.func @conv_bias_type(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf32>, %w: tensor<27x16x16xf32>, %b: tensor<16xf64>) {
  // expected-error @+1 {{'spconv.conv' op features, weight, bias and results must share one element type, got 'f32' and 'f64'}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w bias %b
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>, tensor<27x16x16xf32>, tensor<16xf64> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>
  return
}

// -----

func.func @conv_integer_features(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xi32>, %w: tensor<27x16x16xf32>) {
  // expected-error @+1 {{'spconv.conv' op operand #1 must be 2D tensor of f16, bf16, f32 or f64 values}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xi32>, tensor<27x16x16xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>
  return
}

// -----

// Found by the fuzzer: f80 features reached the CUDA back end, which cannot
// select them (LLVM ERROR). Only the element types every target computes in
// verify.
func.func @conv_f80_features(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf80>, %w: tensor<27x16x16xf80>) {
  // expected-error @+1 {{'spconv.conv' op operand #1 must be 2D tensor of f16, bf16, f32 or f64 values}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf80>, tensor<27x16x16xf80> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf80>
  return
}

// -----

func.func @gather_rows_f128(%f: tensor<?x4xf128>, %rows: tensor<?xi32>) {
  // expected-error @+1 {{'spconv.gather_rows' op operand #0 must be 2D tensor of f16, bf16, f32 or f64 values}}
  %0 = spconv.gather_rows %f, %rows : tensor<?x4xf128>, tensor<?xi32> -> tensor<?x4xf128>
  return
}

// -----

func.func @conv_weight_rank(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf32>, %w: tensor<27x16xf32>) {
  // expected-error @+1 {{'spconv.conv' op operand #2 must be 3D tensor of f16, bf16, f32 or f64 values}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>, tensor<27x16xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>
  return
}

// -----

func.func @conv_coords_type(%c: tensor<?x4xi64, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf32>, %w: tensor<27x16x16xf32>) {
  // expected-error @+1 {{'spconv.conv' op operand #0 must be 2D tensor of 32-bit signless integer values}}
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi64, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>, tensor<27x16x16xf32>
      -> tensor<?x4xi64, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf32>
  return
}

// -----

func.func @inverse_kind(%fine: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %coarse: tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, %f: tensor<?x4xf32>, %w: tensor<8x4x4xf32>) {
  // expected-error @+1 {{'spconv.inverse_conv' op takes an inverse geometry, got regular}}
  %0 = spconv.inverse_conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %fine, %coarse, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>, tensor<8x4x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @inverse_source_grid(%fine: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %coarse: tensor<?x4xi32, #spconv.grid<[3, 4, 4]>>, %f: tensor<?x4xf32>, %w: tensor<8x4x4xf32>) {
  // expected-error @+1 {{'spconv.inverse_conv' op source (forward conv output) grid [3, 4, 4] disagrees with the grid [4, 4, 4] that the geometry computes from the input grid [8, 8, 8]}}
  %0 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %fine, %coarse, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[3, 4, 4]>>, tensor<?x4xf32>, tensor<8x4x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @inverse_source_rows(%fine: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %coarse: tensor<5x4xi32, #spconv.grid<[4, 4, 4]>>, %f: tensor<6x4xf32>, %w: tensor<8x4x4xf32>) {
  // expected-error @+1 {{'spconv.inverse_conv' op source coordinate rows (5) and feature rows (6) must agree}}
  %0 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %fine, %coarse, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<5x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<6x4xf32>, tensor<8x4x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @inverse_result_rows(%fine: tensor<7x4xi32, #spconv.grid<[8, 8, 8]>>, %coarse: tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, %f: tensor<?x4xf32>, %w: tensor<8x4x4xf32>) {
  // expected-error @+1 {{'spconv.inverse_conv' op coordinate rows (7) and result feature rows (8) must agree}}
  %0 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %fine, %coarse, %f, %w
      : tensor<7x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>, tensor<8x4x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @inverse_weight(%fine: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %coarse: tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, %f: tensor<?x4xf32>, %w: tensor<27x4x4xf32>) {
  // expected-error @+1 {{'spconv.inverse_conv' op weight has 27 kernel offsets but the kernel [2, 2, 2] has 8}}
  %0 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %fine, %coarse, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>, tensor<27x4x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @pool_kind(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.pool' op takes a regular geometry, got subm}}
  %0:2 = spconv.pool max <subm, kernel = [3, 3, 3]> %c, %f : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>
  return
}

// -----

func.func @pool_grid(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.pool' op result grid [4, 4, 4] disagrees with the grid [8, 8, 8] that the geometry computes from the input grid [8, 8, 8]}}
  %0:2 = spconv.pool max <regular, kernel = [3, 3, 3], padding = [1, 1, 1]> %c, %f : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32> -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf32>
  return
}

// -----

func.func @pool_channels(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.pool' op feature channels (4) and result channels (8) must agree}}
  %0:2 = spconv.pool avg <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %f : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32> -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x8xf32>
  return
}

// -----

func.func @pool_rows(%c: tensor<3x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.pool' op result coordinate rows (2) and result feature rows (5) must agree}}
  %0:2 = spconv.pool avg <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %f
      : tensor<3x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32> -> tensor<2x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<5x4xf32>
  return
}

// -----

func.func @pool_element_type(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.pool' op features, weight, bias and results must share one element type, got 'f32' and 'f16'}}
  %0:2 = spconv.pool avg <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %c, %f : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32> -> tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x4xf16>
  return
}

// -----

func.func @build_input_grid(%c: tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>) {
  // expected-error @+1 {{'spconv.build_rulebook' op rulebook input grid #spconv.grid<[8, 8, 8]> differs from the coordinates' grid #spconv.grid<[4, 4, 4]>}}
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x4xi32, #spconv.grid<[4, 4, 4]>> -> !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>
  return
}

// -----

func.func @build_output_grid(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>) {
  // expected-error @+1 {{'spconv.build_rulebook' op result coordinates grid #spconv.grid<[8, 8, 8]> differs from the rulebook's output grid #spconv.grid<[4, 4, 4]>}}
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>> -> !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  return
}

// -----

func.func @build_subm_type(%c: tensor<5x4xi32, #spconv.grid<[8, 8, 8]>>) {
  // expected-error @+1 {{'spconv.build_rulebook' op subm result coordinates must have the type of the input coordinates, 'tensor<5x4xi32, #spconv.grid<[8, 8, 8]>>'}}
  %rb, %oc = spconv.build_rulebook %c
      : tensor<5x4xi32, #spconv.grid<[8, 8, 8]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  return
}

// -----

func.func @build_no_grid(%c: tensor<?x4xi32>) {
  // expected-error @+1 {{'spconv.build_rulebook' op coordinates must carry a #spconv.grid encoding, got 'tensor<?x4xi32>'}}
  %rb, %oc = spconv.build_rulebook %c
      : tensor<?x4xi32> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
  return
}

// -----

func.func @pool_grad_subm(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
                          %f: tensor<?x4xf32>, %g: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.rulebook_pool_grad' op pools over the rulebook of a regular geometry, got subm}}
  %0 = spconv.rulebook_pool_grad max %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @pool_grad_channels(%rb: !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>,
                              %f: tensor<?x4xf32>, %g: tensor<?x5xf32>) {
  // expected-error @+1 {{'spconv.rulebook_pool_grad' op output gradient channels (5) and feature channels (4) must agree}}
  %0 = spconv.rulebook_pool_grad avg %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<?x5xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @pool_grad_rows(%rb: !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>,
                          %f: tensor<10x4xf32>, %g: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.rulebook_pool_grad' op result rows (11) and feature rows (10) must agree}}
  %0 = spconv.rulebook_pool_grad avg %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<10x4xf32>, tensor<?x4xf32> -> tensor<11x4xf32>
  return
}

// -----

func.func @weight_grad_offsets(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
                               %f: tensor<?x4xf32>, %g: tensor<?x8xf32>) {
  // expected-error @+1 {{'spconv.rulebook_weight_grad' op weight gradient has 9 kernel offsets but the kernel [3, 3, 3] has 27}}
  %0 = spconv.rulebook_weight_grad %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<9x4x8xf32>
  return
}

// -----

func.func @weight_grad_in_channels(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
                                   %f: tensor<?x4xf32>, %g: tensor<?x8xf32>) {
  // expected-error @+1 {{'spconv.rulebook_weight_grad' op weight gradient input channels (5) and feature channels (4) must agree}}
  %0 = spconv.rulebook_weight_grad %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x5x8xf32>
  return
}

// -----

func.func @weight_grad_out_channels(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
                                    %f: tensor<?x4xf32>, %g: tensor<?x8xf32>) {
  // expected-error @+1 {{'spconv.rulebook_weight_grad' op weight gradient output channels (7) and output gradient channels (8) must agree}}
  %0 = spconv.rulebook_weight_grad %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x4x7xf32>
  return
}

// -----

func.func @weight_grad_types(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
                             %f: tensor<?x4xf32>, %g: tensor<?x8xf64>) {
  // expected-error @+1 {{'spconv.rulebook_weight_grad' op features, weight, bias and results must share one element type, got 'f32' and 'f64'}}
  %0 = spconv.rulebook_weight_grad %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<?x8xf64> -> tensor<27x4x8xf32>
  return
}

// -----

func.func @rulebook_conv_weight(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
                                %f: tensor<?x4xf32>, %w: tensor<9x4x4xf32>) {
  // expected-error @+1 {{'spconv.rulebook_conv' op weight has 9 kernel offsets but the kernel [3, 3, 3] has 27}}
  %0 = spconv.rulebook_conv %rb, %f, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<9x4x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @rulebook_pool_subm(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.rulebook_pool' op pools over the rulebook of a regular geometry, got subm}}
  %0 = spconv.rulebook_pool max %rb, %f
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @rulebook_pool_channels(%rb: !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.rulebook_pool' op feature channels (4) and result channels (3) must agree}}
  %0 = spconv.rulebook_pool max %rb, %f
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32> -> tensor<?x3xf32>
  return
}

// -----

func.func @rulebook_pool_type(%rb: !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.rulebook_pool' op features, weight, bias and results must share one element type, got 'f32' and 'bf16'}}
  %0 = spconv.rulebook_pool max %rb, %f
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32> -> tensor<?x4xbf16>
  return
}

// -----

func.func @linearize_rows(%c: tensor<5x4xi32, #spconv.grid<[8, 8, 8]>>) {
  // expected-error @+1 {{'spconv.linearize' op coordinate rows (5) and key count (4) must agree}}
  %0 = spconv.linearize %c : tensor<5x4xi32, #spconv.grid<[8, 8, 8]>> -> tensor<4xi64>
  return
}

// -----

func.func @linearize_no_grid(%c: tensor<5x4xi32>) {
  // expected-error @+1 {{'spconv.linearize' op coordinates must carry a #spconv.grid encoding, got 'tensor<5x4xi32>'}}
  %0 = spconv.linearize %c : tensor<5x4xi32> -> tensor<5xi64>
  return
}

// -----

func.func @linearize_key_type(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>) {
  // expected-error @+1 {{'spconv.linearize' op result #0 must be 1D tensor of 64-bit signless integer values}}
  %0 = spconv.linearize %c : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>> -> tensor<?xi32>
  return
}

// -----

func.func @delinearize_rows(%k: tensor<5xi64>) {
  // expected-error @+1 {{'spconv.delinearize' op key count (5) and result coordinate rows (6) must agree}}
  %0 = spconv.delinearize %k : tensor<5xi64> -> tensor<6x4xi32, #spconv.grid<[8, 8, 8]>>
  return
}

// -----

func.func @delinearize_columns(%k: tensor<?xi64>) {
  // expected-error @+1 {{'spconv.delinearize' op result coordinates must have 1 + 2 columns (batch, then one per spatial dimension of [8, 8]), got 4}}
  %0 = spconv.delinearize %k : tensor<?xi64> -> tensor<?x4xi32, #spconv.grid<[8, 8]>>
  return
}

// -----

func.func @sort_unique_first(%k: tensor<?xi64>) {
  // expected-error @+1 {{'spconv.sort_unique' op unique key count (3) and first-occurrence count (4) must agree}}
  %0:3 = spconv.sort_unique %k : tensor<?xi64> -> tensor<3xi64>, tensor<4xi32>, tensor<?xi32>
  return
}

// -----

func.func @sort_unique_inverse(%k: tensor<6xi64>) {
  // expected-error @+1 {{'spconv.sort_unique' op key count (6) and inverse map size (5) must agree}}
  %0:3 = spconv.sort_unique %k : tensor<6xi64> -> tensor<?xi64>, tensor<?xi32>, tensor<5xi32>
  return
}

// -----

func.func @sort_unique_count(%k: tensor<6xi64>) {
  // expected-error @+1 {{'spconv.sort_unique' op cannot have more unique keys (7) than keys (6)}}
  %0:3 = spconv.sort_unique %k : tensor<6xi64> -> tensor<7xi64>, tensor<7xi32>, tensor<6xi32>
  return
}

// -----

// The key count can come from the inverse map, the unique count from the
// first occurrences.
func.func @sort_unique_count_from_other_results(%k: tensor<?xi64>) {
  // expected-error @+1 {{'spconv.sort_unique' op cannot have more unique keys (5) than keys (4)}}
  %0:3 = spconv.sort_unique %k : tensor<?xi64> -> tensor<?xi64>, tensor<5xi32>, tensor<4xi32>
  return
}

// -----

func.func @sort_unique_none(%k: tensor<3xi64>) {
  // expected-error @+1 {{'spconv.sort_unique' op has at least one unique key for 3 keys, not 0}}
  %0:3 = spconv.sort_unique %k : tensor<3xi64> -> tensor<0xi64>, tensor<0xi32>, tensor<3xi32>
  return
}

// -----

func.func @hash_lookup_size(%t: !spconv.hash_table, %q: tensor<8xi64>) {
  // expected-error @+1 {{'spconv.hash_lookup' op query count (8) and result size (7) must agree}}
  %0 = spconv.hash_lookup %t, %q : !spconv.hash_table, tensor<8xi64> -> tensor<7xi32>
  return
}

// -----

func.func @hash_build_keys(%k: tensor<8xi32>) {
  // expected-error @+1 {{'spconv.hash_build' op operand #0 must be 1D tensor of 64-bit signless integer values}}
  %0 = spconv.hash_build %k : tensor<8xi32> -> !spconv.hash_table
  return
}

// -----

func.func @unfold_kind(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'spconv.unfold' op takes a regular geometry, got subm}}
  %0 = spconv.unfold <subm, kernel = [3, 3]> %x : tensor<1x2x8x8xf32> -> tensor<1x18x64xf32>
  return
}

// -----

func.func @unfold_input_rank(%x: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'spconv.unfold' op geometry has 2 spatial dimensions, so the input must have rank 4 (N x C x spatial), got 3}}
  %0 = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x2x8xf32> -> tensor<1x18x36xf32>
  return
}

// -----

func.func @unfold_result_rank(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'spconv.unfold' op result must have rank 3 (N x C*K x L), got 2}}
  %0 = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x2x8x8xf32> -> tensor<18x36xf32>
  return
}

// -----

func.func @unfold_element_type(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'spconv.unfold' op input and result must share one element type}}
  %0 = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x2x8x8xf32> -> tensor<1x18x36xf16>
  return
}

// -----

// Found by the fuzzer: the lowering of unfold / fold assumed floats
// (index elements crashed it, i8 made it emit invalid IR, complex aborted).
func.func @unfold_index(%x: tensor<1x2x8x8xindex>) {
  // expected-error @+1 {{'spconv.unfold' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values}}
  %0 = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x2x8x8xindex> -> tensor<1x18x36xindex>
  return
}

// -----

func.func @fold_i8(%x: tensor<1x18x36xi8>) {
  // expected-error @+1 {{'spconv.fold' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values}}
  %0 = spconv.fold <regular, kernel = [3, 3]> %x : tensor<1x18x36xi8> -> tensor<1x2x8x8xi8>
  return
}

// -----

func.func @unfold_complex_result(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'spconv.unfold' op result #0 must be ranked tensor of f16, bf16, f32 or f64 values}}
  %0 = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x2x8x8xf32> -> tensor<1x18x36xcomplex<f32>>
  return
}

// -----

func.func @segment_max_tf32(%d: tensor<2x4x16xtf32>, %i: tensor<2x16xi32>) {
  // expected-error @+1 {{'spconv.segment_max' op operand #0 must be 3D tensor of f16, bf16, f32 or f64 values}}
  %0:2 = spconv.segment_max %d, %i : tensor<2x4x16xtf32>, tensor<2x16xi32> -> tensor<2x4x8xtf32>, tensor<2x4x8xi32>
  return
}

// -----

func.func @unfold_batch(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'spconv.unfold' op input batch (1) and result batch (2) must agree}}
  %0 = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x2x8x8xf32> -> tensor<2x18x36xf32>
  return
}

// -----

func.func @unfold_rows(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'spconv.unfold' op result rows (9) and input channels x kernel volume (18) must agree}}
  %0 = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x2x8x8xf32> -> tensor<1x9x36xf32>
  return
}

// -----

func.func @unfold_columns(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'spconv.unfold' op result columns (64) and window positions [6, 6] (36) must agree}}
  %0 = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x2x8x8xf32> -> tensor<1x18x64xf32>
  return
}

// -----

func.func @unfold_empty(%x: tensor<1x2x2x8xf32>) {
  // expected-error @+1 {{'spconv.unfold' op the output grid is empty in dimension 0: input extent 2 + 2 * padding 0 is smaller than the dilated kernel extent 3}}
  %0 = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x2x2x8xf32> -> tensor<1x18x0xf32>
  return
}

// -----

// A static extent too small for the window is rejected even when another
// one is dynamic (that one is checked at run time).
func.func @unfold_empty_partly_dynamic(%x: tensor<1x2x?x2xf32>) {
  // expected-error @+1 {{'spconv.unfold' op the output grid is empty in dimension 1: input extent 2 + 2 * padding 0 is smaller than the dilated kernel extent 5}}
  %0 = spconv.unfold <regular, kernel = [3, 3], dilation = [1, 2]> %x : tensor<1x2x?x2xf32> -> tensor<1x18x?xf32>
  return
}

// -----

// Padding counts on both sides: 1 + 2 * 1 = 3 holds a kernel of 3, so only
// the second dimension (1 + 2 * 0 < 3) is empty.
func.func @unfold_empty_padding(%x: tensor<1x2x1x1xf32>) {
  // expected-error @+1 {{'spconv.unfold' op the output grid is empty in dimension 1: input extent 1 + 2 * padding 0 is smaller than the dilated kernel extent 3}}
  %0 = spconv.unfold <regular, kernel = [3, 3], padding = [1, 0]> %x : tensor<1x2x1x1xf32> -> tensor<1x18x1xf32>
  return
}

// -----

// fold's output size has no window position for this kernel.
func.func @fold_empty(%x: tensor<1x18x?xf32>) {
  // expected-error @+1 {{'spconv.fold' op the output grid is empty in dimension 0: input extent 2 + 2 * padding 0 is smaller than the dilated kernel extent 3}}
  %0 = spconv.fold <regular, kernel = [3, 3]> %x : tensor<1x18x?xf32> -> tensor<1x2x2x8xf32>
  return
}

// -----

func.func @fold_dynamic_size(%x: tensor<1x18x36xf32>) {
  // expected-error @+1 {{'spconv.fold' op needs a static spatial result shape (the output size), got 'tensor<1x2x?x8xf32>'}}
  %0 = spconv.fold <regular, kernel = [3, 3]> %x : tensor<1x18x36xf32> -> tensor<1x2x?x8xf32>
  return
}

// -----

func.func @fold_columns(%x: tensor<1x18x36xf32>) {
  // expected-error @+1 {{'spconv.fold' op input columns (36) and window positions [8, 8] (64) must agree}}
  %0 = spconv.fold <regular, kernel = [3, 3], padding = [1, 1]> %x : tensor<1x18x36xf32> -> tensor<1x2x8x8xf32>
  return
}

// -----

func.func @fold_rows(%x: tensor<1x35x36xf32>) {
  // expected-error @+1 {{'spconv.fold' op input rows (35) must be a multiple of the kernel volume 9}}
  %0 = spconv.fold <regular, kernel = [3, 3]> %x : tensor<1x35x36xf32> -> tensor<1x?x8x8xf32>
  return
}

// -----

func.func @fold_result_rank(%x: tensor<1x18x36xf32>) {
  // expected-error @+1 {{'spconv.fold' op geometry has 2 spatial dimensions, so the result must have rank 4 (N x C x spatial), got 5}}
  %0 = spconv.fold <regular, kernel = [3, 3]> %x : tensor<1x18x36xf32> -> tensor<1x2x8x8x1xf32>
  return
}

// -----

func.func @segment_max_type(%d: tensor<2x4x16xf32>, %i: tensor<2x16xi32>) {
  // expected-error @+1 {{'spconv.segment_max' op data and values must share one element type}}
  %0:2 = spconv.segment_max %d, %i : tensor<2x4x16xf32>, tensor<2x16xi32> -> tensor<2x4x8xf16>, tensor<2x4x8xi32>
  return
}

// -----

func.func @segment_max_positions(%d: tensor<2x4x16xf32>, %i: tensor<2x16xi32>) {
  // expected-error @+1 {{'spconv.segment_max' op positions must have the shape of values, [2, 4, 8]}}
  %0:2 = spconv.segment_max %d, %i : tensor<2x4x16xf32>, tensor<2x16xi32> -> tensor<2x4x8xf32>, tensor<2x4x7xi32>
  return
}

// -----

func.func @segment_max_dynamic(%d: tensor<2x4x16xf32>, %i: tensor<2x16xi32>) {
  // expected-error @+1 {{'spconv.segment_max' op needs a static number of segments (the last result dimension)}}
  %0:2 = spconv.segment_max %d, %i : tensor<2x4x16xf32>, tensor<2x16xi32> -> tensor<2x4x?xf32>, tensor<2x4x?xi32>
  return
}

// -----

func.func @segment_max_zero(%d: tensor<2x4x16xf32>, %i: tensor<2x16xi32>) {
  // expected-error @+1 {{'spconv.segment_max' op needs at least one segment}}
  %0:2 = spconv.segment_max %d, %i : tensor<2x4x16xf32>, tensor<2x16xi32> -> tensor<2x4x0xf32>, tensor<2x4x0xi32>
  return
}

// -----

func.func @segment_max_index_batch(%d: tensor<2x4x16xf32>, %i: tensor<3x16xi32>) {
  // expected-error @+1 {{'spconv.segment_max' op data batch (2) and index batch (3) must agree}}
  %0:2 = spconv.segment_max %d, %i : tensor<2x4x16xf32>, tensor<3x16xi32> -> tensor<2x4x8xf32>, tensor<2x4x8xi32>
  return
}

// -----

func.func @segment_max_points(%d: tensor<2x4x16xf32>, %i: tensor<2x15xi32>) {
  // expected-error @+1 {{'spconv.segment_max' op data points (16) and index points (15) must agree}}
  %0:2 = spconv.segment_max %d, %i : tensor<2x4x16xf32>, tensor<2x15xi32> -> tensor<2x4x8xf32>, tensor<2x4x8xi32>
  return
}

// -----

func.func @segment_max_result_batch(%d: tensor<2x4x16xf32>, %i: tensor<?x16xi32>) {
  // expected-error @+1 {{'spconv.segment_max' op data batch (2) and result batch (1) must agree}}
  %0:2 = spconv.segment_max %d, %i : tensor<2x4x16xf32>, tensor<?x16xi32> -> tensor<1x4x8xf32>, tensor<1x4x8xi32>
  return
}

// -----

func.func @segment_max_channels(%d: tensor<2x4x16xf32>, %i: tensor<2x16xi32>) {
  // expected-error @+1 {{'spconv.segment_max' op data channels (4) and result channels (5) must agree}}
  %0:2 = spconv.segment_max %d, %i : tensor<2x4x16xf32>, tensor<2x16xi32> -> tensor<2x5x8xf32>, tensor<2x5x8xi32>
  return
}

// -----

func.func @segment_max_index_type(%d: tensor<2x4x16xf32>, %i: tensor<2x16xf32>) {
  // expected-error @+1 {{'spconv.segment_max' op operand #1 must be 2D tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0:2 = spconv.segment_max %d, %i : tensor<2x4x16xf32>, tensor<2x16xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xi32>
  return
}

// -----

func.func @gather_rows_count(%f: tensor<?x4xf32>, %rows: tensor<5xi32>) {
  // expected-error @+1 {{'spconv.gather_rows' op index count (5) and result rows (6) must agree}}
  %0 = spconv.gather_rows %f, %rows : tensor<?x4xf32>, tensor<5xi32> -> tensor<6x4xf32>
  return
}

// -----

func.func @gather_rows_channels(%f: tensor<?x4xf32>, %rows: tensor<?xi32>) {
  // expected-error @+1 {{'spconv.gather_rows' op feature channels (4) and result channels (8) must agree}}
  %0 = spconv.gather_rows %f, %rows : tensor<?x4xf32>, tensor<?xi32> -> tensor<?x8xf32>
  return
}

// -----

func.func @gather_rows_type(%f: tensor<?x4xf32>, %rows: tensor<?xi32>) {
  // expected-error @+1 {{'spconv.gather_rows' op features, weight, bias and results must share one element type, got 'f32' and 'f16'}}
  %0 = spconv.gather_rows %f, %rows : tensor<?x4xf32>, tensor<?xi32> -> tensor<?x4xf16>
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_operands_without_block(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>,
                                           %s: tensor<8xf32>) {
  // expected-error @+1 {{'spconv.rulebook_conv' op has 1 epilogue operands but no epilogue}}
  %0 = "spconv.rulebook_conv"(%rb, %f, %w, %s) ({}) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>}
      : (!subm8, tensor<?x4xf32>, tensor<27x4x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_arguments(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{'spconv.rulebook_conv' op epilogue block has 1 arguments, expected 2 (the element, then one per epilogue operand)}}
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue(%s : tensor<8xf32>) {
      ^bb0(%v: f32):
        spconv.yield %v : f32
      }
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_element_type(%rb: !subm8, %f: tensor<?x4xf16>, %w: tensor<27x4x8xf16>) {
  // expected-error @+1 {{'spconv.rulebook_conv' op epilogue's first argument must be the result's element type 'f16', got 'f32'}}
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf16>, tensor<27x4x8xf16> -> tensor<?x8xf16>
      epilogue {
      ^bb0(%v: f32):
        %h = arith.truncf %v : f32 to f16
        spconv.yield %h : f16
      }
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_operand_type(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %s: tensor<8xf16>) {
  // expected-error @+1 {{'spconv.rulebook_conv' op epilogue argument #1 must be epilogue operand #0's element type 'f16', got 'f32'}}
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue(%s : tensor<8xf16>) {
      ^bb0(%v: f32, %x: f32):
        spconv.yield %v : f32
      }
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_channels(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'spconv.rulebook_conv' op epilogue operand #0 channels (4) and result channels (8) must agree}}
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue(%s : tensor<4xf32>) {
      ^bb0(%v: f32, %x: f32):
        spconv.yield %v : f32
      }
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_rows(%rb: !subm8, %f: tensor<10x4xf32>, %w: tensor<27x4x8xf32>, %r: tensor<9x8xf32>) {
  // expected-error @+1 {{'spconv.rulebook_conv' op epilogue operand #0 rows (9) and result rows (10) must agree}}
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<10x4xf32>, tensor<27x4x8xf32> -> tensor<10x8xf32>
      epilogue(%r : tensor<9x8xf32>) {
      ^bb0(%v: f32, %x: f32):
        spconv.yield %v : f32
      }
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_operand_rank(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %r: tensor<2x?x8xf32>) {
  // expected-error @+1 {{operand #3 must be variadic of 1D/2D tensor}}
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue(%r : tensor<2x?x8xf32>) {
      ^bb0(%v: f32, %x: f32):
        spconv.yield %v : f32
      }
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_not_elementwise(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>) {
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue {
      ^bb0(%v: f32):
        // expected-error @+1 {{'memref.alloca' op cannot be in an epilogue: only pure element-wise ops and constants can}}
        %m = memref.alloca() : memref<f32>
        spconv.yield %v : f32
      }
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_vector_constant(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>) {
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue {
      ^bb0(%v: f32):
        // expected-error @+1 {{'arith.constant' op in an epilogue must compute scalars, got 'vector<4xf32>'}}
        %c = arith.constant dense<1.0> : vector<4xf32>
        spconv.yield %v : f32
      }
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_yield_type(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>) {
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue {
      ^bb0(%v: f32):
        %d = arith.extf %v : f32 to f64
        // expected-error @+1 {{'spconv.yield' op must yield the result's element type 'f32', got 'f64'}}
        spconv.yield %d : f64
      }
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_isolated(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %x: f32) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue {
      ^bb0(%v: f32):
        // expected-error @+1 {{using value defined outside the region}}
        %s = arith.addf %v, %x : f32
        spconv.yield %s : f32
      }
  return
}

// -----

func.func @yield_outside(%x: f32) {
  // expected-error @+1 {{'spconv.yield' op expects parent op 'spconv.rulebook_conv'}}
  spconv.yield %x : f32
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_terminator(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>) {
  // expected-error @+1 {{'spconv.rulebook_conv' op epilogue must end with spconv.yield}}
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue {
      ^bb0(%v: f32):
        llvm.unreachable
      }
  return
}

// -----

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
func.func @epilogue_i1_operand(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>, %m: tensor<?x8xi1>) {
  // expected-error @+1 {{operand #3 must be variadic of 1D/2D tensor of 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue(%m : tensor<?x8xi1>) {
      ^bb0(%v: f32, %x: i1):
        spconv.yield %v : f32
      }
  return
}

// -----

func.func @groups_zero(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>) {
  // expected-error @+1 {{'spconv.conv' op groups must be positive, got 0}}
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> groups 0 %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>
  return
}

// -----

func.func @groups_in_channels(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>) {
  // expected-error @+1 {{'spconv.conv' op feature channels (4) must be groups (2) x weight input channels (4)}}
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> groups 2 %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>
  return
}

// -----

func.func @groups_in_divisible(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x6xf32>, %w: tensor<27x?x8xf32>) {
  // expected-error @+1 {{'spconv.conv' op feature channels (6) are not divisible by groups (4)}}
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> groups 4 %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x6xf32>, tensor<27x?x8xf32> -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>
  return
}

// -----

func.func @groups_out_channels(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
                               %f: tensor<?x8xf32>, %w: tensor<27x2x6xf32>) {
  // expected-error @+1 {{'spconv.rulebook_conv' op weight output channels (6) are not divisible by groups (4)}}
  %0 = spconv.rulebook_conv groups 4 %rb, %f, %w
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x8xf32>, tensor<27x2x6xf32> -> tensor<?x6xf32>
  return
}

// -----

func.func @groups_inverse_conv(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %s: tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>,
                               %f: tensor<?x8xf32>, %w: tensor<8x8x4xf32>) {
  // expected-error @+1 {{'spconv.inverse_conv' op feature channels (8) must be groups (2) x weight input channels (8)}}
  %0 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> groups 2 %c, %s, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x4xi32, #spconv.grid<[4, 4, 4]>>, tensor<?x8xf32>, tensor<8x8x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @groups_weight_grad(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
                              %f: tensor<?x4xf32>, %g: tensor<?x8xf32>) {
  // expected-error @+1 {{'spconv.rulebook_weight_grad' op feature channels (4) must be groups (2) x weight gradient input channels (4)}}
  %0 = spconv.rulebook_weight_grad groups 2 %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<27x4x8xf32>
  return
}

// -----

func.func @groups_weight_grad_out(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>,
                                  %f: tensor<?x4xf32>, %g: tensor<?x6xf32>) {
  // expected-error @+1 {{'spconv.rulebook_weight_grad' op weight gradient output channels (6) are not divisible by groups (4)}}
  %0 = spconv.rulebook_weight_grad groups 4 %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>, tensor<?x4xf32>, tensor<?x6xf32> -> tensor<27x1x6xf32>
  return
}

// -----

func.func @scatter_add_rows_count(%g: tensor<5x4xf32>, %rows: tensor<6xi32>, %z: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.scatter_add_rows' op index count (6) and source rows (5) must agree}}
  %0 = spconv.scatter_add_rows %g, %rows into %z : tensor<5x4xf32>, tensor<6xi32> into tensor<?x4xf32>
  return
}

// -----

func.func @scatter_add_rows_channels(%g: tensor<?x4xf32>, %rows: tensor<?xi32>, %z: tensor<?x8xf32>) {
  // expected-error @+1 {{'spconv.scatter_add_rows' op source channels (4) and destination channels (8) must agree}}
  %0 = spconv.scatter_add_rows %g, %rows into %z : tensor<?x4xf32>, tensor<?xi32> into tensor<?x8xf32>
  return
}

// -----

func.func @scatter_add_rows_types(%g: tensor<?x4xf64>, %rows: tensor<?xi32>, %z: tensor<?x4xf32>) {
  // expected-error @+1 {{'spconv.scatter_add_rows' op features, weight, bias and results must share one element type, got 'f64' and 'f32'}}
  %0 = spconv.scatter_add_rows %g, %rows into %z : tensor<?x4xf64>, tensor<?xi32> into tensor<?x4xf32>
  return
}

// -----

func.func @segment_max_grad_positions(%gv: tensor<2x4x8xf32>, %pos: tensor<2x4x7xi32>, %z: tensor<2x4x50xf32>) {
  // expected-error @+1 {{'spconv.segment_max_grad' op positions extent (7) and values gradient extent (8) must agree}}
  %0 = spconv.segment_max_grad %gv, %pos into %z : tensor<2x4x8xf32>, tensor<2x4x7xi32> into tensor<2x4x50xf32>
  return
}

// -----

func.func @segment_max_grad_channels(%gv: tensor<2x4x8xf32>, %pos: tensor<2x4x8xi32>, %z: tensor<2x5x50xf32>) {
  // expected-error @+1 {{'spconv.segment_max_grad' op values gradient channels (4) and destination channels (5) must agree}}
  %0 = spconv.segment_max_grad %gv, %pos into %z : tensor<2x4x8xf32>, tensor<2x4x8xi32> into tensor<2x5x50xf32>
  return
}

// -----

func.func @segment_max_grad_types(%gv: tensor<2x4x8xf32>, %pos: tensor<2x4x8xi32>, %z: tensor<2x4x50xf16>) {
  // expected-error @+1 {{'spconv.segment_max_grad' op values gradient and destination must share one element type}}
  %0 = spconv.segment_max_grad %gv, %pos into %z : tensor<2x4x8xf32>, tensor<2x4x8xi32> into tensor<2x4x50xf16>
  return
}

// -----

func.func @pairs_offsets_size(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>) {
  // expected-error @+1 {{'spconv.rulebook_pairs' op offsets have 27 elements, but the rulebook's 27 kernel offsets need 28}}
  %0:3 = spconv.rulebook_pairs %rb
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>> -> tensor<?xi32>, tensor<?xi32>, tensor<27xi64>
  return
}

// -----

func.func @from_pairs_offsets_size(%in: tensor<?xi32>, %out: tensor<?xi32>, %off: tensor<9xi64>, %n: index) {
  // expected-error @+1 {{'spconv.rulebook_from_pairs' op offsets have 9 elements, but the rulebook's 27 kernel offsets need 28}}
  %0 = spconv.rulebook_from_pairs %in, %out, %off, %n, %n
      : tensor<?xi32>, tensor<?xi32>, tensor<9xi64> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
  return
}

// -----

func.func @from_pairs_dynamic_offsets(%in: tensor<?xi32>, %out: tensor<?xi32>, %off: tensor<?xi64>, %n: index) {
  // expected-error @+1 {{'spconv.rulebook_from_pairs' op offsets need the static size 9 (the rulebook's 8 kernel offsets and one past them), got a dynamic one}}
  %0 = spconv.rulebook_from_pairs %in, %out, %off, %n, %n
      : tensor<?xi32>, tensor<?xi32>, tensor<?xi64> -> !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[8, 8, 8]>>
  return
}

// -----

func.func @from_pairs_row_type(%in: tensor<?xi64>, %out: tensor<?xi32>, %off: tensor<28xi64>, %n: index) {
  // expected-error @+1 {{'spconv.rulebook_from_pairs' op operand #0 must be 1D tensor of 32-bit signless integer values}}
  %0 = spconv.rulebook_from_pairs %in, %out, %off, %n, %n
      : tensor<?xi64>, tensor<?xi32>, tensor<28xi64> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>
  return
}
