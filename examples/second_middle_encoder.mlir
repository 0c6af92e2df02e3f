// SECOND's sparse middle encoder (OpenPCDet VoxelBackBone8x) on the KITTI grid.
//
// Input: voxels of a LiDAR scan on the [41, 1600, 1408] grid (z, y, x at
// 0.1 / 0.05 / 0.05 m), 4 features per voxel. BatchNorm is folded into the
// conv biases (inference), ReLU follows every conv. The output, 128 channels
// on the [2, 200, 176] grid, is what the BEV head densifies.

!kitti = tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
!kitti_s2 = tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>
!kitti_s4 = tensor<?x4xi32, #spconv.grid<[11, 400, 352]>>
!kitti_s8 = tensor<?x4xi32, #spconv.grid<[5, 200, 176]>>
!kitti_out = tensor<?x4xi32, #spconv.grid<[2, 200, 176]>>

func.func @second_middle_encoder(
    %coords: !kitti,
    %features: tensor<?x4xf32>,
    %w_conv_input: tensor<27x4x16xf32>,
    %b_conv_input: tensor<16xf32>,
    %w_conv1: tensor<27x16x16xf32>,
    %b_conv1: tensor<16xf32>,
    %w_conv2_down: tensor<27x16x32xf32>,
    %b_conv2_down: tensor<32xf32>,
    %w_conv2_a: tensor<27x32x32xf32>,
    %b_conv2_a: tensor<32xf32>,
    %w_conv2_b: tensor<27x32x32xf32>,
    %b_conv2_b: tensor<32xf32>,
    %w_conv3_down: tensor<27x32x64xf32>,
    %b_conv3_down: tensor<64xf32>,
    %w_conv3_a: tensor<27x64x64xf32>,
    %b_conv3_a: tensor<64xf32>,
    %w_conv3_b: tensor<27x64x64xf32>,
    %b_conv3_b: tensor<64xf32>,
    %w_conv4_down: tensor<27x64x64xf32>,
    %b_conv4_down: tensor<64xf32>,
    %w_conv4_a: tensor<27x64x64xf32>,
    %b_conv4_a: tensor<64xf32>,
    %w_conv4_b: tensor<27x64x64xf32>,
    %b_conv4_b: tensor<64xf32>,
    %w_conv_out: tensor<3x64x128xf32>,
    %b_conv_out: tensor<128xf32>)
    -> (!kitti_out, tensor<?x128xf32>) {
  // conv_input and conv1: submanifold 3x3x3 on the full grid [41, 1600, 1408].
  %conv_input:2 = spconv.conv <subm, kernel = [3, 3, 3]> %coords, %features, %w_conv_input bias %b_conv_input
      : !kitti, tensor<?x4xf32>, tensor<27x4x16xf32>, tensor<16xf32> -> !kitti, tensor<?x16xf32>
  %conv_input_r = func.call @relu16(%conv_input#1) : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %conv1:2 = spconv.conv <subm, kernel = [3, 3, 3]> %coords, %conv_input_r, %w_conv1 bias %b_conv1
      : !kitti, tensor<?x16xf32>, tensor<27x16x16xf32>, tensor<16xf32> -> !kitti, tensor<?x16xf32>
  %conv1_r = func.call @relu16(%conv1#1) : (tensor<?x16xf32>) -> tensor<?x16xf32>
  // conv2: stride-2 downsampling to [21, 800, 704], then two subm blocks.
  %conv2_down:2 = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %coords, %conv1_r, %w_conv2_down bias %b_conv2_down
      : !kitti, tensor<?x16xf32>, tensor<27x16x32xf32>, tensor<32xf32> -> !kitti_s2, tensor<?x32xf32>
  %conv2_down_r = func.call @relu32(%conv2_down#1) : (tensor<?x32xf32>) -> tensor<?x32xf32>
  %conv2_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %conv2_down#0, %conv2_down_r, %w_conv2_a bias %b_conv2_a
      : !kitti_s2, tensor<?x32xf32>, tensor<27x32x32xf32>, tensor<32xf32> -> !kitti_s2, tensor<?x32xf32>
  %conv2_a_r = func.call @relu32(%conv2_a#1) : (tensor<?x32xf32>) -> tensor<?x32xf32>
  %conv2_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %conv2_down#0, %conv2_a_r, %w_conv2_b bias %b_conv2_b
      : !kitti_s2, tensor<?x32xf32>, tensor<27x32x32xf32>, tensor<32xf32> -> !kitti_s2, tensor<?x32xf32>
  %conv2_b_r = func.call @relu32(%conv2_b#1) : (tensor<?x32xf32>) -> tensor<?x32xf32>
  // conv3: to [11, 400, 352].
  %conv3_down:2 = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %conv2_down#0, %conv2_b_r, %w_conv3_down bias %b_conv3_down
      : !kitti_s2, tensor<?x32xf32>, tensor<27x32x64xf32>, tensor<64xf32> -> !kitti_s4, tensor<?x64xf32>
  %conv3_down_r = func.call @relu64(%conv3_down#1) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %conv3_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %conv3_down#0, %conv3_down_r, %w_conv3_a bias %b_conv3_a
      : !kitti_s4, tensor<?x64xf32>, tensor<27x64x64xf32>, tensor<64xf32> -> !kitti_s4, tensor<?x64xf32>
  %conv3_a_r = func.call @relu64(%conv3_a#1) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %conv3_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %conv3_down#0, %conv3_a_r, %w_conv3_b bias %b_conv3_b
      : !kitti_s4, tensor<?x64xf32>, tensor<27x64x64xf32>, tensor<64xf32> -> !kitti_s4, tensor<?x64xf32>
  %conv3_b_r = func.call @relu64(%conv3_b#1) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  // conv4: padding (0, 1, 1) gives [5, 200, 176].
  %conv4_down:2 = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [0, 1, 1]> %conv3_down#0, %conv3_b_r, %w_conv4_down bias %b_conv4_down
      : !kitti_s4, tensor<?x64xf32>, tensor<27x64x64xf32>, tensor<64xf32> -> !kitti_s8, tensor<?x64xf32>
  %conv4_down_r = func.call @relu64(%conv4_down#1) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %conv4_a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %conv4_down#0, %conv4_down_r, %w_conv4_a bias %b_conv4_a
      : !kitti_s8, tensor<?x64xf32>, tensor<27x64x64xf32>, tensor<64xf32> -> !kitti_s8, tensor<?x64xf32>
  %conv4_a_r = func.call @relu64(%conv4_a#1) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %conv4_b:2 = spconv.conv <subm, kernel = [3, 3, 3]> %conv4_down#0, %conv4_a_r, %w_conv4_b bias %b_conv4_b
      : !kitti_s8, tensor<?x64xf32>, tensor<27x64x64xf32>, tensor<64xf32> -> !kitti_s8, tensor<?x64xf32>
  %conv4_b_r = func.call @relu64(%conv4_b#1) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  // conv_out: a (3, 1, 1) / (2, 1, 1) conv squeezes z to [2, 200, 176].
  %conv_out:2 = spconv.conv <regular, kernel = [3, 1, 1], stride = [2, 1, 1]> %conv4_down#0, %conv4_b_r, %w_conv_out bias %b_conv_out
      : !kitti_s8, tensor<?x64xf32>, tensor<3x64x128xf32>, tensor<128xf32> -> !kitti_out, tensor<?x128xf32>
  %conv_out_r = func.call @relu128(%conv_out#1) : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %conv_out#0, %conv_out_r : !kitti_out, tensor<?x128xf32>
}

func.func private @relu16(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %init = tensor.empty(%n) : tensor<?x16xf32>
  %y = linalg.map ins(%x : tensor<?x16xf32>) outs(%init : tensor<?x16xf32>)
      (%v: f32, %unused: f32) {
        %m = arith.maximumf %v, %zero : f32
        linalg.yield %m : f32
      }
  return %y : tensor<?x16xf32>
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
