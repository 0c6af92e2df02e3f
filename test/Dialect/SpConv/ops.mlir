// RUN: spconv-opt %s | spconv-opt | FileCheck %s
// RUN: spconv-opt %s --mlir-print-op-generic | spconv-opt | FileCheck %s

!kitti = tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
!kitti2 = tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>

// CHECK-LABEL: func @conv_kinds
func.func @conv_kinds(%c: !kitti, %f: tensor<?x16xf32>, %w: tensor<27x16x16xf32>,
                      %w2: tensor<27x16x32xf32>, %b: tensor<32xf32>,
                      %wt: tensor<8x32x16xf16>, %f16: tensor<?x32xf16>) {
  // CHECK: spconv.conv <subm, kernel = [3, 3, 3]> %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x16xf32> -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>
  %0:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : !kitti, tensor<?x16xf32>, tensor<27x16x16xf32> -> !kitti, tensor<?x16xf32>
  // CHECK: spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} : {{.*}}, tensor<32xf32> -> tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x32xf32>
  %1:2 = spconv.conv <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %c, %f, %w2 bias %b
      : !kitti, tensor<?x16xf32>, tensor<27x16x32xf32>, tensor<32xf32> -> !kitti2, tensor<?x32xf32>
  // CHECK: spconv.conv <transposed, kernel = [2, 2, 2], stride = [2, 2, 2]> {{.*}} -> tensor<?x4xi32, #spconv.grid<[42, 1600, 1408]>>, tensor<?x16xf16>
  %2:2 = spconv.conv <transposed, kernel = [2, 2, 2], stride = [2, 2, 2]> %1#0, %f16, %wt
      : !kitti2, tensor<?x32xf16>, tensor<8x32x16xf16>
      -> tensor<?x4xi32, #spconv.grid<[42, 1600, 1408]>>, tensor<?x16xf16>
  return
}

// Geometry fields are printed only where they differ from their defaults.
// CHECK-LABEL: func @geometry_fields
func.func @geometry_fields(%c: tensor<?x3xi32, #spconv.grid<[64, 64], batch = 4>>,
                           %f: tensor<?x8xf32>, %w: tensor<9x8x8xf32>,
                           %w31: tensor<3x8x8xf32>) {
  // CHECK: spconv.conv <subm, kernel = [3, 3], dilation = [2, 2]>
  // CHECK-SAME: tensor<?x3xi32, #spconv.grid<[64, 64], batch = 4>>
  %0:2 = spconv.conv <subm, kernel = [3, 3], padding = [2, 2], dilation = [2, 2]> %c, %f, %w
      : tensor<?x3xi32, #spconv.grid<[64, 64], batch = 4>>, tensor<?x8xf32>, tensor<9x8x8xf32>
      -> tensor<?x3xi32, #spconv.grid<[64, 64], batch = 4>>, tensor<?x8xf32>
  // Stride 3 with dilation 2: (64 + 2 - 4 - 1) / 3 + 1 = 21.
  // CHECK: spconv.conv <regular, kernel = [3, 3], stride = [3, 3], padding = [1, 1], dilation = [2, 2]>
  // CHECK-SAME: -> tensor<?x3xi32, #spconv.grid<[21, 21], batch = 4>>
  %1:2 = spconv.conv <regular, dilation = [2, 2], kernel = [3, 3], padding = [1, 1], stride = [3, 3]> %c, %f, %w
      : tensor<?x3xi32, #spconv.grid<[64, 64], batch = 4>>, tensor<?x8xf32>, tensor<9x8x8xf32>
      -> tensor<?x3xi32, #spconv.grid<[21, 21], batch = 4>>, tensor<?x8xf32>
  // Non-cubic kernel, output padding: (64 - 1) * 2 - 0 + 2 + 1 + 1 = 130, (64 - 1) + 0 + 1 = 64.
  // CHECK: spconv.conv <transposed, kernel = [3, 1], stride = [2, 1], output_padding = [1, 0]>
  // CHECK-SAME: -> tensor<?x3xi32, #spconv.grid<[130, 64], batch = 4>>
  %2:2 = spconv.conv <transposed, kernel = [3, 1], stride = [2, 1], output_padding = [1, 0]> %c, %f, %w31
      : tensor<?x3xi32, #spconv.grid<[64, 64], batch = 4>>, tensor<?x8xf32>, tensor<3x8x8xf32>
      -> tensor<?x3xi32, #spconv.grid<[130, 64], batch = 4>>, tensor<?x8xf32>
  return
}

// CHECK-LABEL: func @one_and_four_dims
func.func @one_and_four_dims(%c1: tensor<5x2xi32, #spconv.grid<[100]>>, %f1: tensor<5x4xf32>,
                             %w1: tensor<5x4x4xf32>,
                             %c4: tensor<?x5xi32, #spconv.grid<[8, 8, 8, 8]>>, %f4: tensor<?x4xbf16>,
                             %w4: tensor<16x4x4xbf16>) {
  // CHECK: spconv.conv <subm, kernel = [5]> {{.*}} : tensor<5x2xi32, #spconv.grid<[100]>>, tensor<5x4xf32>
  %0:2 = spconv.conv <subm, kernel = [5]> %c1, %f1, %w1
      : tensor<5x2xi32, #spconv.grid<[100]>>, tensor<5x4xf32>, tensor<5x4x4xf32>
      -> tensor<5x2xi32, #spconv.grid<[100]>>, tensor<5x4xf32>
  // CHECK: spconv.conv <regular, kernel = [2, 2, 2, 2], stride = [2, 2, 2, 2]> {{.*}} -> tensor<?x5xi32, #spconv.grid<[4, 4, 4, 4]>>, tensor<?x4xbf16>
  %1:2 = spconv.conv <regular, kernel = [2, 2, 2, 2], stride = [2, 2, 2, 2]> %c4, %f4, %w4
      : tensor<?x5xi32, #spconv.grid<[8, 8, 8, 8]>>, tensor<?x4xbf16>, tensor<16x4x4xbf16>
      -> tensor<?x5xi32, #spconv.grid<[4, 4, 4, 4]>>, tensor<?x4xbf16>
  return
}

// CHECK-LABEL: func @inverse_and_pool
func.func @inverse_and_pool(%fine: tensor<?x4xi32, #spconv.grid<[41, 41, 41]>>,
                            %coarse: tensor<?x4xi32, #spconv.grid<[21, 21, 21]>>,
                            %f: tensor<?x64xf32>, %ff: tensor<?x32xf32>,
                            %w: tensor<27x64x32xf32>, %b: tensor<32xf32>) {
  // CHECK: spconv.inverse_conv <inverse, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} : {{.*}} -> tensor<?x32xf32>
  %0 = spconv.inverse_conv <inverse, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>
      %fine, %coarse, %f, %w bias %b
      : tensor<?x4xi32, #spconv.grid<[41, 41, 41]>>, tensor<?x4xi32, #spconv.grid<[21, 21, 21]>>,
        tensor<?x64xf32>, tensor<27x64x32xf32>, tensor<32xf32> -> tensor<?x32xf32>
  // CHECK: spconv.pool max <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>
  %1:2 = spconv.pool max <regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> %fine, %ff
      : tensor<?x4xi32, #spconv.grid<[41, 41, 41]>>, tensor<?x32xf32>
      -> tensor<?x4xi32, #spconv.grid<[21, 21, 21]>>, tensor<?x32xf32>
  // CHECK: spconv.pool avg <regular, kernel = [2, 2, 2], stride = [2, 2, 2]>
  %2:2 = spconv.pool avg <regular, kernel = [2, 2, 2], stride = [2, 2, 2]> %fine, %ff
      : tensor<?x4xi32, #spconv.grid<[41, 41, 41]>>, tensor<?x32xf32>
      -> tensor<?x4xi32, #spconv.grid<[20, 20, 20]>>, tensor<?x32xf32>
  return
}

// CHECK-LABEL: func @rulebooks
func.func @rulebooks(%c: !kitti, %f: tensor<?x16xf32>, %w: tensor<27x16x16xf32>,
                     %w2: tensor<27x16x32xf32>, %wi: tensor<27x32x16xf32>, %b: tensor<16xf32>) {
  // CHECK: %[[RB:.*]], %{{.*}} = spconv.build_rulebook %{{.*}} : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>, tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
  %rb, %oc = spconv.build_rulebook %c
      : !kitti -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>, !kitti
  // CHECK: spconv.rulebook_conv %[[RB]], %{{.*}}, %{{.*}} bias %{{.*}} : !spconv.rulebook<{{.*}}>, tensor<?x16xf32>, tensor<27x16x16xf32>, tensor<16xf32> -> tensor<?x16xf32>
  %y = spconv.rulebook_conv %rb, %f, %w bias %b
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x16xf32>, tensor<27x16x16xf32>, tensor<16xf32> -> tensor<?x16xf32>
  // CHECK: %[[DOWN:.*]], %{{.*}} = spconv.build_rulebook %{{.*}} : {{.*}} -> !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>, tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>
  %down, %dc = spconv.build_rulebook %c
      : !kitti -> !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>, !kitti2
  // CHECK: spconv.rulebook_conv %[[DOWN]]
  %z = spconv.rulebook_conv %down, %f, %w2
      : !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x16xf32>, tensor<27x16x32xf32> -> tensor<?x32xf32>
  // CHECK: spconv.rulebook_conv inverse %[[DOWN]]
  %u = spconv.rulebook_conv inverse %down, %z, %wi
      : !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x32xf32>, tensor<27x32x16xf32> -> tensor<?x16xf32>
  // CHECK: spconv.rulebook_pool avg %[[DOWN]]
  %p = spconv.rulebook_pool avg %down, %f
      : !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x16xf32> -> tensor<?x16xf32>
  return
}

// The gradients of a conv: its rulebook read backwards with the weights
// transposed, and the weight gradient (also read backwards, for an inverse
// conv).
// CHECK-LABEL: func @gradients
func.func @gradients(%c: !kitti, %f: tensor<?x16xf32>, %g: tensor<?x32xf32>,
                     %wt: tensor<27x32x16xf32>, %dxp: tensor<?x16xf32>) {
  %rb, %oc = spconv.build_rulebook %c
      : !kitti -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>, !kitti
  // CHECK: spconv.rulebook_conv inverse %{{.*}}, %{{.*}}, %{{.*}} : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>, tensor<?x32xf32>, tensor<27x32x16xf32> -> tensor<?x16xf32>
  %dx = spconv.rulebook_conv inverse %rb, %g, %wt
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x32xf32>, tensor<27x32x16xf32> -> tensor<?x16xf32>
  // CHECK: spconv.rulebook_weight_grad %{{.*}}, %{{.*}}, %{{.*}} : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<?x32xf32> -> tensor<27x16x32xf32>
  %dw = spconv.rulebook_weight_grad %rb, %f, %g
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x16xf32>, tensor<?x32xf32> -> tensor<27x16x32xf32>
  %down, %dc = spconv.build_rulebook %c
      : !kitti -> !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[41, 1600, 1408]>>, tensor<?x4xi32, #spconv.grid<[20, 800, 704]>>
  // CHECK: spconv.rulebook_pool_grad max %{{.*}}, %{{.*}}, %{{.*}} : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  %dp = spconv.rulebook_pool_grad max %down, %f, %dxp
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  // CHECK: spconv.rulebook_pool_grad avg
  %da = spconv.rulebook_pool_grad avg %down, %f, %dxp
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  // CHECK: spconv.rulebook_weight_grad inverse %{{.*}} -> tensor<8x32x16xf32>
  %dwi = spconv.rulebook_weight_grad inverse %down, %g, %f
      : !spconv.rulebook<#spconv.geom<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x32xf32>, tensor<?x16xf32> -> tensor<8x32x16xf32>
  return
}

// Grouped convs print `groups` after the geometry (or `inverse`), and only
// when it is not 1.
// CHECK-LABEL: func @grouped
func.func @grouped(%c: !kitti, %f: tensor<?x16xf32>, %w: tensor<27x4x32xf32>,
                   %dw: tensor<27x1x16xf32>, %g: tensor<?x32xf32>, %wt: tensor<27x8x16xf32>,
                   %w1: tensor<27x16x16xf32>) {
  // CHECK: spconv.conv <subm, kernel = [3, 3, 3]> groups 4 %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} tensor<27x4x32xf32> ->
  %oc, %y = spconv.conv <subm, kernel = [3, 3, 3]> groups 4 %c, %f, %w
      : !kitti, tensor<?x16xf32>, tensor<27x4x32xf32> -> !kitti, tensor<?x32xf32>
  // CHECK: spconv.conv <subm, kernel = [3, 3, 3]> groups 16 %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} tensor<27x1x16xf32> ->
  %dc, %d = spconv.conv <subm, kernel = [3, 3, 3]> groups 16 %c, %f, %dw
      : !kitti, tensor<?x16xf32>, tensor<27x1x16xf32> -> !kitti, tensor<?x16xf32>
  // CHECK: spconv.conv <subm, kernel = [3, 3, 3]> %{{.*}}, %{{.*}}, %{{.*}} :
  %pc, %p = spconv.conv <subm, kernel = [3, 3, 3]> groups 1 %c, %f, %w1
      : !kitti, tensor<?x16xf32>, tensor<27x16x16xf32> -> !kitti, tensor<?x16xf32>
  %down, %coarse = spconv.build_rulebook %c
      : !kitti -> !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>, tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>
  %r = spconv.rulebook_conv groups 4 %down, %f, %w
      : !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x16xf32>, tensor<27x4x32xf32> -> tensor<?x32xf32>
  // CHECK: spconv.inverse_conv <inverse, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> groups 4 %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
  %up = spconv.inverse_conv <inverse, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]> groups 4 %c, %coarse, %g, %wt
      : !kitti, tensor<?x4xi32, #spconv.grid<[21, 800, 704]>>, tensor<?x32xf32>, tensor<27x8x16xf32> -> tensor<?x16xf32>
  // CHECK: spconv.rulebook_conv inverse groups 4 %{{.*}}, %{{.*}}, %{{.*}} :
  %dx = spconv.rulebook_conv inverse groups 4 %down, %g, %wt
      : !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x32xf32>, tensor<27x8x16xf32> -> tensor<?x16xf32>
  // CHECK: spconv.rulebook_weight_grad groups 4 %{{.*}} -> tensor<27x4x32xf32>
  %gw = spconv.rulebook_weight_grad groups 4 %down, %f, %g
      : !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x16xf32>, tensor<?x32xf32> -> tensor<27x4x32xf32>
  // CHECK: spconv.rulebook_weight_grad inverse groups 4 %{{.*}} -> tensor<27x8x16xf32>
  %gwi = spconv.rulebook_weight_grad inverse groups 4 %down, %g, %f
      : !spconv.rulebook<#spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2, 2], padding = [1, 1, 1]>, #spconv.grid<[41, 1600, 1408]>>,
        tensor<?x32xf32>, tensor<?x16xf32> -> tensor<27x8x16xf32>
  return
}

// CHECK-LABEL: func @primitives
func.func @primitives(%c: !kitti, %q: tensor<?xi64>) {
  // CHECK: spconv.linearize %{{.*}} : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>> -> tensor<?xi64>
  %keys = spconv.linearize %c : !kitti -> tensor<?xi64>
  // CHECK: spconv.delinearize %{{.*}} : tensor<?xi64> -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>
  %back = spconv.delinearize %keys : tensor<?xi64> -> !kitti
  // CHECK: spconv.sort_unique %{{.*}} : tensor<?xi64> -> tensor<?xi64>, tensor<?xi32>, tensor<?xi32>
  %u, %first, %inv = spconv.sort_unique %keys : tensor<?xi64> -> tensor<?xi64>, tensor<?xi32>, tensor<?xi32>
  // Static sizes that agree: the unique count is checked at run time.
  // CHECK: spconv.sort_unique %{{.*}} : tensor<5xi64> -> tensor<3xi64>, tensor<3xi32>, tensor<5xi32>
  %k5 = tensor.cast %keys : tensor<?xi64> to tensor<5xi64>
  %u3:3 = spconv.sort_unique %k5 : tensor<5xi64> -> tensor<3xi64>, tensor<3xi32>, tensor<5xi32>
  // CHECK: spconv.sort_unique %{{.*}} : tensor<?xi64> -> tensor<5xi64>, tensor<?xi32>, tensor<5xi32>
  %u5:3 = spconv.sort_unique %keys : tensor<?xi64> -> tensor<5xi64>, tensor<?xi32>, tensor<5xi32>
  // CHECK: spconv.sort_unique %{{.*}} : tensor<0xi64> -> tensor<0xi64>, tensor<0xi32>, tensor<0xi32>
  %k0 = tensor.cast %keys : tensor<?xi64> to tensor<0xi64>
  %u0:3 = spconv.sort_unique %k0 : tensor<0xi64> -> tensor<0xi64>, tensor<0xi32>, tensor<0xi32>
  // CHECK: %[[T:.*]] = spconv.hash_build %{{.*}} : tensor<?xi64> -> !spconv.hash_table
  %t = spconv.hash_build %keys : tensor<?xi64> -> !spconv.hash_table
  // CHECK: spconv.hash_lookup %[[T]], %{{.*}} : !spconv.hash_table, tensor<?xi64> -> tensor<?xi32>
  %rows = spconv.hash_lookup %t, %q : !spconv.hash_table, tensor<?xi64> -> tensor<?xi32>
  return
}

// CHECK-LABEL: func @dense
func.func @dense(%x: tensor<2x4x8x8xf32>, %x3: tensor<1x2x5x6x7xf16>, %d: tensor<2x64x1024xf32>,
                 %i: tensor<2x1024xi64>) {
  // CHECK: spconv.unfold <regular, kernel = [3, 3], padding = [1, 1]> %{{.*}} : tensor<2x4x8x8xf32> -> tensor<2x36x64xf32>
  %cols = spconv.unfold <regular, kernel = [3, 3], padding = [1, 1]> %x
      : tensor<2x4x8x8xf32> -> tensor<2x36x64xf32>
  // CHECK: spconv.fold <regular, kernel = [3, 3], padding = [1, 1]> %{{.*}} : tensor<2x36x64xf32> -> tensor<2x4x8x8xf32>
  %back = spconv.fold <regular, kernel = [3, 3], padding = [1, 1]> %cols
      : tensor<2x36x64xf32> -> tensor<2x4x8x8xf32>
  // 3-D, stride 2 and dilation 2: blocks (5-3)/2+1 = 2, (6-3)/2+1 = 2, (7-3)/2+1 = 3.
  // CHECK: spconv.unfold <regular, kernel = [2, 2, 2], stride = [2, 2, 2], dilation = [2, 2, 2]> %{{.*}} : tensor<1x2x5x6x7xf16> -> tensor<1x16x12xf16>
  %c3 = spconv.unfold <regular, kernel = [2, 2, 2], stride = [2, 2, 2], dilation = [2, 2, 2]> %x3
      : tensor<1x2x5x6x7xf16> -> tensor<1x16x12xf16>
  // Dynamic extents are checked at run time.
  // CHECK: spconv.unfold <regular, kernel = [3, 3]> %{{.*}} : tensor<?x4x?x8xf32> -> tensor<?x36x?xf32>
  %dyn = tensor.cast %x : tensor<2x4x8x8xf32> to tensor<?x4x?x8xf32>
  %cd = spconv.unfold <regular, kernel = [3, 3]> %dyn : tensor<?x4x?x8xf32> -> tensor<?x36x?xf32>
  // CHECK: spconv.segment_max %{{.*}}, %{{.*}} : tensor<2x64x1024xf32>, tensor<2x1024xi64> -> tensor<2x64x128xf32>, tensor<2x64x128xi32>
  %m, %a = spconv.segment_max %d, %i
      : tensor<2x64x1024xf32>, tensor<2x1024xi64> -> tensor<2x64x128xf32>, tensor<2x64x128xi32>
  return
}

// CHECK-LABEL: func @gather_rows
func.func @gather_rows(%f: tensor<?x64xf32>, %rows: tensor<?xi32>) -> tensor<?x64xf32> {
  // CHECK: spconv.gather_rows %{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
  %0 = spconv.gather_rows %f, %rows : tensor<?x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// The adjoints of gather_rows and segment_max.
// CHECK-LABEL: func @gradient_primitives
func.func @gradient_primitives(%g: tensor<?x64xf32>, %rows: tensor<?xi32>, %z: tensor<?x64xf32>,
                               %gv: tensor<2x64x128xf32>, %pos: tensor<2x64x128xi32>,
                               %zd: tensor<2x64x1024xf32>) {
  // CHECK: spconv.scatter_add_rows %{{.*}}, %{{.*}} into %{{.*}} : tensor<?x64xf32>, tensor<?xi32> into tensor<?x64xf32>
  %0 = spconv.scatter_add_rows %g, %rows into %z : tensor<?x64xf32>, tensor<?xi32> into tensor<?x64xf32>
  // CHECK: spconv.segment_max_grad %{{.*}}, %{{.*}} into %{{.*}} : tensor<2x64x128xf32>, tensor<2x64x128xi32> into tensor<2x64x1024xf32>
  %1 = spconv.segment_max_grad %gv, %pos into %zd
      : tensor<2x64x128xf32>, tensor<2x64x128xi32> into tensor<2x64x1024xf32>
  return
}

!subm8 = !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[8, 8, 8]>>

// CHECK-LABEL: func @epilogues
func.func @epilogues(%rb: !subm8, %f: tensor<?x4xf32>, %w: tensor<27x4x8xf32>,
                     %res: tensor<?x8xf32>, %scale: tensor<8xf32>, %mask: tensor<?x8xi8>,
                     %fh: tensor<?x4xf16>, %wh: tensor<27x4x8xf16>) {
  // CHECK: spconv.rulebook_conv %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> tensor<?x8xf32> epilogue {
  // CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
  // CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT: %[[RELU:.*]] = arith.maximumf %[[V]], %[[ZERO]] : f32
  // CHECK-NEXT: spconv.yield %[[RELU]] : f32
  %relu = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue {
      ^bb0(%v: f32):
        %zero = arith.constant 0.0 : f32
        %r = arith.maximumf %v, %zero : f32
        spconv.yield %r : f32
      }
  // Row and channel operands, of any int or float element type.
  // CHECK: epilogue(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<8xf32>, tensor<?x8xi8>) {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: i8):
  // CHECK: arith.select
  // CHECK: spconv.yield
  %all = spconv.rulebook_conv %rb, %f, %w : !subm8, tensor<?x4xf32>, tensor<27x4x8xf32> -> tensor<?x8xf32>
      epilogue(%res, %scale, %mask : tensor<?x8xf32>, tensor<8xf32>, tensor<?x8xi8>) {
      ^bb0(%v: f32, %r: f32, %s: f32, %m: i8):
        %scaled = arith.mulf %v, %s : f32
        %sum = arith.addf %scaled, %r : f32
        %zero = arith.constant 0 : i8
        %keep = arith.cmpi ne, %m, %zero : i8
        %out = arith.select %keep, %sum, %scaled : f32
        spconv.yield %out : f32
      }
  // f16 results: the epilogue sees f16 elements.
  // CHECK: -> tensor<?x8xf16> epilogue {
  // CHECK-NEXT: ^bb0(%{{.*}}: f16):
  %half = spconv.rulebook_conv %rb, %fh, %wh : !subm8, tensor<?x4xf16>, tensor<27x4x8xf16> -> tensor<?x8xf16>
      epilogue {
      ^bb0(%v: f16):
        %n = arith.negf %v : f16
        spconv.yield %n : f16
      }
  return
}

// A rulebook's pairs as tensors, and a rulebook of them again.
// CHECK-LABEL: func.func @rulebook_pairs
// CHECK-SAME: (%[[RB:.*]]: !spconv.rulebook
func.func @rulebook_pairs(%rb: !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>,
                          %n: index) -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>> {
  // CHECK: %[[IN:.*]], %[[OUT:.*]], %[[OFF:.*]] = spconv.rulebook_pairs %[[RB]] : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>> -> tensor<?xi32>, tensor<?xi32>, tensor<28xi64>
  %in, %out, %off = spconv.rulebook_pairs %rb
      : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>
      -> tensor<?xi32>, tensor<?xi32>, tensor<28xi64>
  // CHECK: spconv.rulebook_from_pairs %[[IN]], %[[OUT]], %[[OFF]], %{{.*}}, %{{.*}} : tensor<?xi32>, tensor<?xi32>, tensor<28xi64> -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>
  %again = spconv.rulebook_from_pairs %in, %out, %off, %n, %n
      : tensor<?xi32>, tensor<?xi32>, tensor<28xi64>
      -> !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>
  return %again : !spconv.rulebook<#spconv.geom<subm, kernel = [3, 3, 3]>, #spconv.grid<[41, 1600, 1408]>>
}
