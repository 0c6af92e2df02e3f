// Kernels past the unrolling threshold (125 offsets) loop over their
// offsets; they must still equal the reference, on the CPU and under the
// GPU emulator: a subm 7x7x7 (343 offsets, dilation 2) and a regular 9x9x9
// (729 offsets, stride 2) on a dense-ish 12^3 grid.
// RUN: rm -rf %t && %python %S/Inputs/make_layer.py %t --grid 12,12,12 --sites 300 --cin 3 --cout 5 --volume 343 --seed 11
// RUN: %python %S/Inputs/make_layer.py %t/w9 --grid 12,12,12 --sites 1 --cin 5 --cout 2 --volume 729 --seed 12
// RUN: spconv-ref conv --kind subm --kernel 7,7,7 --dilation 2,2,2 --grid 12,12,12 --coords %t/coords.npy --features %t/feats.npy --weight %t/weight.npy --out-dir %t/subm
// RUN: spconv-run %s --entry f --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --input %t/w9/weight.npy --output-dir %t/cpu
// RUN: spconv-npy-compare %t/cpu/out0.npy %t/subm/out1.npy --rtol 1e-4 --atol 1e-4
// RUN: spconv-ref conv --kind regular --kernel 9,9,9 --stride 2,2,2 --padding 4,4,4 --grid 12,12,12 --coords %t/coords.npy --features %t/cpu/out0.npy --weight %t/w9/weight.npy --out-dir %t/down
// RUN: spconv-npy-compare %t/cpu/out1.npy %t/down/out0.npy
// RUN: spconv-npy-compare %t/cpu/out2.npy %t/down/out1.npy --rtol 1e-4 --atol 1e-4
// RUN: spconv-run %s --entry f --target gpu-emulator --input %t/coords.npy --input %t/feats.npy --input %t/weight.npy --input %t/w9/weight.npy --output-dir %t/emu
// RUN: spconv-npy-compare %t/emu/out0.npy %t/subm/out1.npy --rtol 1e-4 --atol 1e-4
// RUN: spconv-npy-compare %t/emu/out1.npy %t/down/out0.npy
// RUN: spconv-npy-compare %t/emu/out2.npy %t/down/out1.npy --rtol 1e-4 --atol 1e-4

!coords = tensor<?x4xi32, #spconv.grid<[12, 12, 12]>>
!down = tensor<?x4xi32, #spconv.grid<[6, 6, 6]>>
func.func @f(%c: !coords, %x: tensor<?x3xf32>, %w: tensor<343x3x5xf32>, %w9: tensor<729x5x2xf32>)
    -> (tensor<?x5xf32>, !down, tensor<?x2xf32>) {
  %oc, %y = spconv.conv <subm, kernel = [7, 7, 7], dilation = [2, 2, 2]> %c, %x, %w
      : !coords, tensor<?x3xf32>, tensor<343x3x5xf32> -> !coords, tensor<?x5xf32>
  %dc, %z = spconv.conv <regular, kernel = [9, 9, 9], stride = [2, 2, 2], padding = [4, 4, 4]> %c, %y, %w9
      : !coords, tensor<?x5xf32>, tensor<729x5x2xf32> -> !down, tensor<?x2xf32>
  return %y, %dc, %z : tensor<?x5xf32>, !down, tensor<?x2xf32>
}
