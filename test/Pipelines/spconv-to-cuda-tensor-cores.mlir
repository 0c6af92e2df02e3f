// The tensor-core conv through the whole CUDA pipeline to PTX: f16 layers
// multiply with ldmatrix and mma.sync m16n8k16 (gpu-mma-ops=auto), f32
// accumulation from shared memory; f32 layers stay on fused multiply-adds
// unless gpu-matmul=tf32 asks for tf32, which multiplies with ldmatrix and
// mma.sync m16n8k8; gpu-mma-ops=subgroup-mma puts either type on WMMA
// (m16n16k16, m16n16k8) instead; gpu-matmul=fma keeps f16 off the tensor
// cores too. (The kernels' loops become blocks before the NVVM pipeline,
// whose convert-nvgpu-to-nvvm cannot convert loops carrying
// !gpu.mma_matrix.)
// RUN: spconv-opt %s --spconv-to-cuda="format=isa" | FileCheck %s --check-prefixes=CHECK,MMA-SYNC --implicit-check-not=wmma --implicit-check-not=m16n8k8
// RUN: spconv-opt %s --spconv-to-cuda="format=isa gpu-mma-ops=subgroup-mma" | FileCheck %s --check-prefixes=CHECK,WMMA --implicit-check-not=m16n16k8 --implicit-check-not=m16n8k
// RUN: spconv-opt %s --spconv-to-cuda="format=isa gpu-matmul=tf32" | FileCheck %s --check-prefixes=TF32,MMA-SYNC --implicit-check-not=wmma
// RUN: spconv-opt %s --spconv-to-cuda="format=isa gpu-matmul=tf32 gpu-mma-ops=subgroup-mma" | FileCheck %s --check-prefix=WMMA-TF32 --implicit-check-not=m16n8k
// RUN: spconv-opt %s --spconv-to-cuda="format=isa gpu-matmul=fma" | FileCheck %s --check-prefix=FMA --implicit-check-not=wmma --implicit-check-not=mma.sync

// WMMA-DAG: wmma.load.a.sync.aligned.row.m16n16k16.shared.f16
// WMMA-DAG: wmma.load.b.sync.aligned.row.m16n16k16.shared.f16
// WMMA-DAG: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
// WMMA-DAG: wmma.store.d.sync.aligned.row.m16n16k16.shared.f32
// The f16 rows and weights are staged by 16-byte cp.async (L2 only, a
// source count that zero-fills) in a two-stage pipeline, one group per step
// and a wait for the next step's; its buffers (past 48 KiB) are dynamic
// shared memory. The TF32 tiles stay static, 32-byte aligned for WMMA.
// CHECK-DAG: .shared .align 16 .b8 __dynamic_shmem__0;
// CHECK-DAG: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}{{(\+[0-9]+)?}}], 16, {{%r[0-9]+|16}};
// CHECK-DAG: cp.async.commit_group;
// CHECK-DAG: cp.async.wait_group {{.*}}0;
// TF32-DAG: .shared .align 32
// TF32-DAG: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// WMMA-TF32-DAG: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
// WMMA-TF32-DAG: wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32
// f16 on mma.sync: A by ldmatrix, B by ldmatrix .trans from the row-major
// weights, m16n8k16 with f32 accumulators.
// MMA-SYNC-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// MMA-SYNC-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// MMA-SYNC-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// FMA: fma.rn.f32

// Register budgets are PTX's .maxnreg: two blocks of 256 threads per SM
// for the 64-channel layer, whose warps own 4 x 2 fragments, and for the
// 32-channel one, whose pipeline's shared memory holds two blocks per SM
// (ptxas would take what it likes and might fit one); f32 on FMA has none.
// RUN: spconv-opt %s --spconv-to-cuda="format=isa" | FileCheck %s --check-prefix=BUDGET
// BUDGET: .entry spconv_conv_f16_32x32({{[^{]*}}\0A.maxnreg 128\0A{
// BUDGET: .entry spconv_conv_f32_32x32(
// BUDGET-NOT: .maxnreg
// BUDGET: .entry spconv_conv_f16_64x64({{[^{]*}}\0A.maxnreg 128\0A{

!coords = tensor<?x4xi32, #spconv.grid<[16, 16, 16]>>
func.func @layers(%c: !coords, %h: tensor<?x32xf16>, %wh: tensor<27x32x32xf16>,
                  %x: tensor<?x32xf32>, %w: tensor<27x32x32xf32>,
                  %g: tensor<?x64xf16>, %wg: tensor<27x64x64xf16>)
    -> (tensor<?x32xf16>, tensor<?x32xf32>, tensor<?x64xf16>) {
  %c1, %h1 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %h, %wh
      : !coords, tensor<?x32xf16>, tensor<27x32x32xf16> -> !coords, tensor<?x32xf16>
  %c2, %x1 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %x, %w
      : !coords, tensor<?x32xf32>, tensor<27x32x32xf32> -> !coords, tensor<?x32xf32>
  %c3, %g1 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %g, %wg
      : !coords, tensor<?x64xf16>, tensor<27x64x64xf16> -> !coords, tensor<?x64xf16>
  return %h1, %x1, %g1 : tensor<?x32xf16>, tensor<?x32xf32>, tensor<?x64xf16>
}
