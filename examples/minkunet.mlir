// A MinkUNet (SparseResUNet-style) encoder/decoder for LiDAR segmentation.
//
// Input: voxels on a [1024, 1024, 64] grid, 4 features each. Four encoder
// stages downsample with 2x2x2 / stride-2 convs (32, 64, 128, 256 channels);
// four decoder stages upsample with the matching inverse convs, which land
// exactly on the encoder's sites, so the skip features concatenate row by
// row. Residual blocks project with pointwise subm convs where the width
// changes; a pointwise subm classifier gives 19 logits per voxel.

!g0 = tensor<?x4xi32, #spconv.grid<[1024, 1024, 64]>>
!g1 = tensor<?x4xi32, #spconv.grid<[512, 512, 32]>>
!g2 = tensor<?x4xi32, #spconv.grid<[256, 256, 16]>>
!g3 = tensor<?x4xi32, #spconv.grid<[128, 128, 8]>>
!g4 = tensor<?x4xi32, #spconv.grid<[64, 64, 4]>>

func.func @minkunet(
    %coords: !g0,
    %features: tensor<?x4xf32>,
    %w_stem_a: tensor<27x4x32xf32>,
    %b_stem_a: tensor<32xf32>,
    %w_stem_b: tensor<27x32x32xf32>,
    %b_stem_b: tensor<32xf32>,
    %w_down1: tensor<8x32x32xf32>,
    %b_down1: tensor<32xf32>,
    %w_enc1_a: tensor<27x32x32xf32>,
    %b_enc1_a: tensor<32xf32>,
    %w_enc1_b: tensor<27x32x32xf32>,
    %b_enc1_b: tensor<32xf32>,
    %w_down2: tensor<8x32x32xf32>,
    %b_down2: tensor<32xf32>,
    %w_enc2_a: tensor<27x32x64xf32>,
    %b_enc2_a: tensor<64xf32>,
    %w_enc2_b: tensor<27x64x64xf32>,
    %b_enc2_b: tensor<64xf32>,
    %w_enc2_proj: tensor<1x32x64xf32>,
    %w_down3: tensor<8x64x64xf32>,
    %b_down3: tensor<64xf32>,
    %w_enc3_a: tensor<27x64x128xf32>,
    %b_enc3_a: tensor<128xf32>,
    %w_enc3_b: tensor<27x128x128xf32>,
    %b_enc3_b: tensor<128xf32>,
    %w_enc3_proj: tensor<1x64x128xf32>,
    %w_down4: tensor<8x128x128xf32>,
    %b_down4: tensor<128xf32>,
    %w_enc4_a: tensor<27x128x256xf32>,
    %b_enc4_a: tensor<256xf32>,
    %w_enc4_b: tensor<27x256x256xf32>,
    %b_enc4_b: tensor<256xf32>,
    %w_enc4_proj: tensor<1x128x256xf32>,
    %w_up1: tensor<8x256x256xf32>,
    %b_up1: tensor<256xf32>,
    %w_dec1_a: tensor<27x384x256xf32>,
    %b_dec1_a: tensor<256xf32>,
    %w_dec1_b: tensor<27x256x256xf32>,
    %b_dec1_b: tensor<256xf32>,
    %w_dec1_proj: tensor<1x384x256xf32>,
    %w_up2: tensor<8x256x128xf32>,
    %b_up2: tensor<128xf32>,
    %w_dec2_a: tensor<27x192x128xf32>,
    %b_dec2_a: tensor<128xf32>,
    %w_dec2_b: tensor<27x128x128xf32>,
    %b_dec2_b: tensor<128xf32>,
    %w_dec2_proj: tensor<1x192x128xf32>,
    %w_up3: tensor<8x128x96xf32>,
    %b_up3: tensor<96xf32>,
    %w_dec3_a: tensor<27x128x96xf32>,
    %b_dec3_a: tensor<96xf32>,
    %w_dec3_b: tensor<27x96x96xf32>,
    %b_dec3_b: tensor<96xf32>,
    %w_dec3_proj: tensor<1x128x96xf32>,
    %w_up4: tensor<8x96x96xf32>,
    %b_up4: tensor<96xf32>,
    %w_dec4_a: tensor<27x128x96xf32>,
    %b_dec4_a: tensor<96xf32>,
    %w_dec4_b: tensor<27x96x96xf32>,
    %b_dec4_b: tensor<96xf32>,
    %w_dec4_proj: tensor<1x128x96xf32>,
    %w_classifier: tensor<1x96x19xf32>,
    %b_classifier: tensor<19xf32>)
    -> (!g0, tensor<?x19xf32>) {
  // Stem: two subm 3x3x3 convs on the full grid.
  %stem_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %coords, %features, %w_stem_a bias %b_stem_a
      : !g0, tensor<?x4xf32>, tensor<27x4x32xf32>, tensor<32xf32> -> !g0, tensor<?x32xf32>
  %stem_a_r = func.call @relu32(%stem_a#1) : (tensor<?x32xf32>) -> tensor<?x32xf32>
  %stem_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %coords, %stem_a_r, %w_stem_b bias %b_stem_b
      : !g0, tensor<?x32xf32>, tensor<27x32x32xf32>, tensor<32xf32> -> !g0, tensor<?x32xf32>
  %stem_b_r = func.call @relu32(%stem_b#1) : (tensor<?x32xf32>) -> tensor<?x32xf32>
  // Encoder stage 1: 2x2x2 / stride 2 down to [512, 512, 32], a residual block 32 -> 32.
  %down1:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %coords, %stem_b_r, %w_down1 bias %b_down1
      : !g0, tensor<?x32xf32>, tensor<8x32x32xf32>, tensor<32xf32> -> !g1, tensor<?x32xf32>
  %down1_r = func.call @relu32(%down1#1) : (tensor<?x32xf32>) -> tensor<?x32xf32>
  %enc1_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down1#0, %down1_r, %w_enc1_a bias %b_enc1_a
      : !g1, tensor<?x32xf32>, tensor<27x32x32xf32>, tensor<32xf32> -> !g1, tensor<?x32xf32>
  %enc1_a_r = func.call @relu32(%enc1_a#1) : (tensor<?x32xf32>) -> tensor<?x32xf32>
  %enc1_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down1#0, %enc1_a_r, %w_enc1_b bias %b_enc1_b
      : !g1, tensor<?x32xf32>, tensor<27x32x32xf32>, tensor<32xf32> -> !g1, tensor<?x32xf32>
  %enc1_sum = arith.addf %enc1_b#1, %down1_r : tensor<?x32xf32>
  %enc1_r = func.call @relu32(%enc1_sum) : (tensor<?x32xf32>) -> tensor<?x32xf32>
  // Encoder stage 2: 2x2x2 / stride 2 down to [256, 256, 16], a residual block 32 -> 64.
  %down2:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %down1#0, %enc1_r, %w_down2 bias %b_down2
      : !g1, tensor<?x32xf32>, tensor<8x32x32xf32>, tensor<32xf32> -> !g2, tensor<?x32xf32>
  %down2_r = func.call @relu32(%down2#1) : (tensor<?x32xf32>) -> tensor<?x32xf32>
  %enc2_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down2#0, %down2_r, %w_enc2_a bias %b_enc2_a
      : !g2, tensor<?x32xf32>, tensor<27x32x64xf32>, tensor<64xf32> -> !g2, tensor<?x64xf32>
  %enc2_a_r = func.call @relu64(%enc2_a#1) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %enc2_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down2#0, %enc2_a_r, %w_enc2_b bias %b_enc2_b
      : !g2, tensor<?x64xf32>, tensor<27x64x64xf32>, tensor<64xf32> -> !g2, tensor<?x64xf32>
  %enc2_proj:2 = spconv.conv <subm, kernel = [1, 1, 1]> %down2#0, %down2_r, %w_enc2_proj
      : !g2, tensor<?x32xf32>, tensor<1x32x64xf32> -> !g2, tensor<?x64xf32>
  %enc2_sum = arith.addf %enc2_b#1, %enc2_proj#1 : tensor<?x64xf32>
  %enc2_r = func.call @relu64(%enc2_sum) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  // Encoder stage 3: 2x2x2 / stride 2 down to [128, 128, 8], a residual block 64 -> 128.
  %down3:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %down2#0, %enc2_r, %w_down3 bias %b_down3
      : !g2, tensor<?x64xf32>, tensor<8x64x64xf32>, tensor<64xf32> -> !g3, tensor<?x64xf32>
  %down3_r = func.call @relu64(%down3#1) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %enc3_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down3#0, %down3_r, %w_enc3_a bias %b_enc3_a
      : !g3, tensor<?x64xf32>, tensor<27x64x128xf32>, tensor<128xf32> -> !g3, tensor<?x128xf32>
  %enc3_a_r = func.call @relu128(%enc3_a#1) : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %enc3_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down3#0, %enc3_a_r, %w_enc3_b bias %b_enc3_b
      : !g3, tensor<?x128xf32>, tensor<27x128x128xf32>, tensor<128xf32> -> !g3, tensor<?x128xf32>
  %enc3_proj:2 = spconv.conv <subm, kernel = [1, 1, 1]> %down3#0, %down3_r, %w_enc3_proj
      : !g3, tensor<?x64xf32>, tensor<1x64x128xf32> -> !g3, tensor<?x128xf32>
  %enc3_sum = arith.addf %enc3_b#1, %enc3_proj#1 : tensor<?x128xf32>
  %enc3_r = func.call @relu128(%enc3_sum) : (tensor<?x128xf32>) -> tensor<?x128xf32>
  // Encoder stage 4: 2x2x2 / stride 2 down to [64, 64, 4], a residual block 128 -> 256.
  %down4:2 = spconv.conv <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %down3#0, %enc3_r, %w_down4 bias %b_down4
      : !g3, tensor<?x128xf32>, tensor<8x128x128xf32>, tensor<128xf32> -> !g4, tensor<?x128xf32>
  %down4_r = func.call @relu128(%down4#1) : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %enc4_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down4#0, %down4_r, %w_enc4_a bias %b_enc4_a
      : !g4, tensor<?x128xf32>, tensor<27x128x256xf32>, tensor<256xf32> -> !g4, tensor<?x256xf32>
  %enc4_a_r = func.call @relu256(%enc4_a#1) : (tensor<?x256xf32>) -> tensor<?x256xf32>
  %enc4_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down4#0, %enc4_a_r, %w_enc4_b bias %b_enc4_b
      : !g4, tensor<?x256xf32>, tensor<27x256x256xf32>, tensor<256xf32> -> !g4, tensor<?x256xf32>
  %enc4_proj:2 = spconv.conv <subm, kernel = [1, 1, 1]> %down4#0, %down4_r, %w_enc4_proj
      : !g4, tensor<?x128xf32>, tensor<1x128x256xf32> -> !g4, tensor<?x256xf32>
  %enc4_sum = arith.addf %enc4_b#1, %enc4_proj#1 : tensor<?x256xf32>
  %enc4_r = func.call @relu256(%enc4_sum) : (tensor<?x256xf32>) -> tensor<?x256xf32>
  // Decoder stage 1: the inverse of down4, back onto its input sites; concat the skip; a residual block.
  %up1 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %down3#0, %down4#0, %enc4_r, %w_up1 bias %b_up1
      : !g3, !g4, tensor<?x256xf32>, tensor<8x256x256xf32>, tensor<256xf32> -> tensor<?x256xf32>
  %up1_r = func.call @relu256(%up1) : (tensor<?x256xf32>) -> tensor<?x256xf32>
  %cat1 = tensor.concat dim(1) %up1_r, %enc3_r : (tensor<?x256xf32>, tensor<?x128xf32>) -> tensor<?x384xf32>
  %dec1_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down3#0, %cat1, %w_dec1_a bias %b_dec1_a
      : !g3, tensor<?x384xf32>, tensor<27x384x256xf32>, tensor<256xf32> -> !g3, tensor<?x256xf32>
  %dec1_a_r = func.call @relu256(%dec1_a#1) : (tensor<?x256xf32>) -> tensor<?x256xf32>
  %dec1_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down3#0, %dec1_a_r, %w_dec1_b bias %b_dec1_b
      : !g3, tensor<?x256xf32>, tensor<27x256x256xf32>, tensor<256xf32> -> !g3, tensor<?x256xf32>
  %dec1_proj:2 = spconv.conv <subm, kernel = [1, 1, 1]> %down3#0, %cat1, %w_dec1_proj
      : !g3, tensor<?x384xf32>, tensor<1x384x256xf32> -> !g3, tensor<?x256xf32>
  %dec1_sum = arith.addf %dec1_b#1, %dec1_proj#1 : tensor<?x256xf32>
  %dec1_r = func.call @relu256(%dec1_sum) : (tensor<?x256xf32>) -> tensor<?x256xf32>
  // Decoder stage 2: the inverse of down3, back onto its input sites; concat the skip; a residual block.
  %up2 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %down2#0, %down3#0, %dec1_r, %w_up2 bias %b_up2
      : !g2, !g3, tensor<?x256xf32>, tensor<8x256x128xf32>, tensor<128xf32> -> tensor<?x128xf32>
  %up2_r = func.call @relu128(%up2) : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %cat2 = tensor.concat dim(1) %up2_r, %enc2_r : (tensor<?x128xf32>, tensor<?x64xf32>) -> tensor<?x192xf32>
  %dec2_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down2#0, %cat2, %w_dec2_a bias %b_dec2_a
      : !g2, tensor<?x192xf32>, tensor<27x192x128xf32>, tensor<128xf32> -> !g2, tensor<?x128xf32>
  %dec2_a_r = func.call @relu128(%dec2_a#1) : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %dec2_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down2#0, %dec2_a_r, %w_dec2_b bias %b_dec2_b
      : !g2, tensor<?x128xf32>, tensor<27x128x128xf32>, tensor<128xf32> -> !g2, tensor<?x128xf32>
  %dec2_proj:2 = spconv.conv <subm, kernel = [1, 1, 1]> %down2#0, %cat2, %w_dec2_proj
      : !g2, tensor<?x192xf32>, tensor<1x192x128xf32> -> !g2, tensor<?x128xf32>
  %dec2_sum = arith.addf %dec2_b#1, %dec2_proj#1 : tensor<?x128xf32>
  %dec2_r = func.call @relu128(%dec2_sum) : (tensor<?x128xf32>) -> tensor<?x128xf32>
  // Decoder stage 3: the inverse of down2, back onto its input sites; concat the skip; a residual block.
  %up3 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %down1#0, %down2#0, %dec2_r, %w_up3 bias %b_up3
      : !g1, !g2, tensor<?x128xf32>, tensor<8x128x96xf32>, tensor<96xf32> -> tensor<?x96xf32>
  %up3_r = func.call @relu96(%up3) : (tensor<?x96xf32>) -> tensor<?x96xf32>
  %cat3 = tensor.concat dim(1) %up3_r, %enc1_r : (tensor<?x96xf32>, tensor<?x32xf32>) -> tensor<?x128xf32>
  %dec3_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down1#0, %cat3, %w_dec3_a bias %b_dec3_a
      : !g1, tensor<?x128xf32>, tensor<27x128x96xf32>, tensor<96xf32> -> !g1, tensor<?x96xf32>
  %dec3_a_r = func.call @relu96(%dec3_a#1) : (tensor<?x96xf32>) -> tensor<?x96xf32>
  %dec3_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %down1#0, %dec3_a_r, %w_dec3_b bias %b_dec3_b
      : !g1, tensor<?x96xf32>, tensor<27x96x96xf32>, tensor<96xf32> -> !g1, tensor<?x96xf32>
  %dec3_proj:2 = spconv.conv <subm, kernel = [1, 1, 1]> %down1#0, %cat3, %w_dec3_proj
      : !g1, tensor<?x128xf32>, tensor<1x128x96xf32> -> !g1, tensor<?x96xf32>
  %dec3_sum = arith.addf %dec3_b#1, %dec3_proj#1 : tensor<?x96xf32>
  %dec3_r = func.call @relu96(%dec3_sum) : (tensor<?x96xf32>) -> tensor<?x96xf32>
  // Decoder stage 4: the inverse of down1, back onto its input sites; concat the skip; a residual block.
  %up4 = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> %coords, %down1#0, %dec3_r, %w_up4 bias %b_up4
      : !g0, !g1, tensor<?x96xf32>, tensor<8x96x96xf32>, tensor<96xf32> -> tensor<?x96xf32>
  %up4_r = func.call @relu96(%up4) : (tensor<?x96xf32>) -> tensor<?x96xf32>
  %cat4 = tensor.concat dim(1) %up4_r, %stem_b_r : (tensor<?x96xf32>, tensor<?x32xf32>) -> tensor<?x128xf32>
  %dec4_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %coords, %cat4, %w_dec4_a bias %b_dec4_a
      : !g0, tensor<?x128xf32>, tensor<27x128x96xf32>, tensor<96xf32> -> !g0, tensor<?x96xf32>
  %dec4_a_r = func.call @relu96(%dec4_a#1) : (tensor<?x96xf32>) -> tensor<?x96xf32>
  %dec4_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %coords, %dec4_a_r, %w_dec4_b bias %b_dec4_b
      : !g0, tensor<?x96xf32>, tensor<27x96x96xf32>, tensor<96xf32> -> !g0, tensor<?x96xf32>
  %dec4_proj:2 = spconv.conv <subm, kernel = [1, 1, 1]> %coords, %cat4, %w_dec4_proj
      : !g0, tensor<?x128xf32>, tensor<1x128x96xf32> -> !g0, tensor<?x96xf32>
  %dec4_sum = arith.addf %dec4_b#1, %dec4_proj#1 : tensor<?x96xf32>
  %dec4_r = func.call @relu96(%dec4_sum) : (tensor<?x96xf32>) -> tensor<?x96xf32>
  // Per-voxel classifier over 19 SemanticKITTI classes: a pointwise subm conv.
  %classifier:2 = spconv.conv <subm, kernel = [1, 1, 1]> %coords, %dec4_r, %w_classifier bias %b_classifier
      : !g0, tensor<?x96xf32>, tensor<1x96x19xf32>, tensor<19xf32> -> !g0, tensor<?x19xf32>
  return %coords, %classifier#1 : !g0, tensor<?x19xf32>
}

func.func private @relu32(%x: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x32xf32>
  %init = tensor.empty(%n) : tensor<?x32xf32>
  %y = linalg.map ins(%x : tensor<?x32xf32>) outs(%init : tensor<?x32xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.maximumf %v, %zero : f32
        linalg.yield %m : f32
      }
  return %y : tensor<?x32xf32>
}

func.func private @relu64(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %init = tensor.empty(%n) : tensor<?x64xf32>
  %y = linalg.map ins(%x : tensor<?x64xf32>) outs(%init : tensor<?x64xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.maximumf %v, %zero : f32
        linalg.yield %m : f32
      }
  return %y : tensor<?x64xf32>
}

func.func private @relu96(%x: tensor<?x96xf32>) -> tensor<?x96xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x96xf32>
  %init = tensor.empty(%n) : tensor<?x96xf32>
  %y = linalg.map ins(%x : tensor<?x96xf32>) outs(%init : tensor<?x96xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.maximumf %v, %zero : f32
        linalg.yield %m : f32
      }
  return %y : tensor<?x96xf32>
}

func.func private @relu128(%x: tensor<?x128xf32>) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x128xf32>
  %init = tensor.empty(%n) : tensor<?x128xf32>
  %y = linalg.map ins(%x : tensor<?x128xf32>) outs(%init : tensor<?x128xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.maximumf %v, %zero : f32
        linalg.yield %m : f32
      }
  return %y : tensor<?x128xf32>
}

func.func private @relu256(%x: tensor<?x256xf32>) -> tensor<?x256xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x256xf32>
  %init = tensor.empty(%n) : tensor<?x256xf32>
  %y = linalg.map ins(%x : tensor<?x256xf32>) outs(%init : tensor<?x256xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.maximumf %v, %zero : f32
        linalg.yield %m : f32
      }
  return %y : tensor<?x256xf32>
}
