// RUN: spconv-opt %s -spconv-gpu-bf16-mma-sync -split-input-file | FileCheck %s
// The kernels' bf16 multiplies then convert to NVVM and PTX with the rest,
// which upstream's convert-nvgpu-to-nvvm alone fails to type.
// RUN: spconv-opt %s -spconv-gpu-bf16-mma-sync -convert-nvgpu-to-nvvm -split-input-file | FileCheck %s --check-prefix=NVVM
// RUN: spconv-opt %s -spconv-gpu-bf16-mma-sync -convert-nvgpu-to-nvvm -spconv-lower-nd-vector-ops -convert-to-llvm -reconcile-unrealized-casts -split-input-file | mlir-translate --split-input-file --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// m16n8k16 in bf16, f32 sums: A's four pairs and B's two bitcast to i32,
// the four accumulators as scalars, row-major A and column-major B, the
// result's floats the 2 x 2 fragment in order.
// CHECK-LABEL: func.func @m16n8k16
// CHECK-SAME: (%[[A:.*]]: vector<4x2xbf16>, %[[B:.*]]: vector<2x2xbf16>, %[[C:.*]]: vector<2x2xf32>)
// CHECK-DAG: %[[C00:.*]] = vector.extract %[[C]][0, 0] : f32 from vector<2x2xf32>
// CHECK-DAG: %[[C11:.*]] = vector.extract %[[C]][1, 1] : f32 from vector<2x2xf32>
// CHECK-DAG: %[[A0:.*]] = vector.extract %[[A]][0] : vector<2xbf16> from vector<4x2xbf16>
// CHECK-DAG: %[[A0W:.*]] = vector.bitcast %[[A0]] : vector<2xbf16> to vector<1xi32>
// CHECK-DAG: %[[A0I:.*]] = vector.extract %[[A0W]][0] : i32 from vector<1xi32>
// CHECK-DAG: %[[A3:.*]] = vector.extract %[[A]][3] : vector<2xbf16> from vector<4x2xbf16>
// CHECK-DAG: %[[B1:.*]] = vector.extract %[[B]][1] : vector<2xbf16> from vector<2x2xbf16>
// CHECK: %[[D:.*]] = nvvm.mma.sync A[%[[A0I]], %{{.*}}, %{{.*}}, %{{.*}}] B[%{{.*}}, %{{.*}}] C[%[[C00]], %{{.*}}, %{{.*}}, %[[C11]]]
// CHECK-SAME: layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-SAME: (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[D0:.*]] = llvm.extractvalue %[[D]][0]
// CHECK: %[[D1:.*]] = llvm.extractvalue %[[D]][1]
// CHECK: %[[D2:.*]] = llvm.extractvalue %[[D]][2]
// CHECK: %[[D3:.*]] = llvm.extractvalue %[[D]][3]
// CHECK: %[[R:.*]] = vector.from_elements %[[D0]], %[[D1]], %[[D2]], %[[D3]] : vector<2x2xf32>
// CHECK: return %[[R]]
// CHECK-NOT: nvgpu.mma.sync
// NVVM-LABEL: func.func @m16n8k16
// NVVM: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// LLVM: call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32 %{{.*}}, i32 %{{.*}}, i32 %{{.*}}, i32 %{{.*}}, i32 %{{.*}}, i32 %{{.*}}, float %{{.*}}, float %{{.*}}, float %{{.*}}, float %{{.*}})
func.func @m16n8k16(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>,
                    %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]}
      : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}

// -----

// Other types are upstream's to convert: f16 stays an nvgpu.mma.sync.
// CHECK-LABEL: func.func @f16
// CHECK: nvgpu.mma.sync
// CHECK-NOT: nvvm.mma.sync
// NVVM-LABEL: func.func @f16
// NVVM: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32)
// LLVM: call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half>
func.func @f16(%a: vector<4x2xf16>, %b: vector<2x2xf16>,
               %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]}
      : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}
