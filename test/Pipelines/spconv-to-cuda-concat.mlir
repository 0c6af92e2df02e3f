// A concatenation on the CUDA pipeline: its parts are copied into column
// ranges of the result by kernels (spconv-gpu-strided-copies), so every
// buffer is device memory and the host waits only before returning. (As
// host copies into strided views they needed managed buffers and a wait
// before each.) A part whose rows differ from the first's is reported and
// its columns zeroed by a kernel too.
// RUN: spconv-opt %s --spconv-to-cuda="format=isa" -mlir-print-ir-after=spconv-gpu-stream-order -o /dev/null 2>&1 | FileCheck %s

// CHECK-LABEL: func.func @concat
// CHECK-NOT: host_shared
// CHECK-NOT: memref.copy
// CHECK-NOT: spconv_rt_cuda_stream_synchronize
// CHECK: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_strided_copy
// CHECK-NOT: spconv_rt_cuda_stream_synchronize
// CHECK: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_strided_copy
// CHECK: call @spconv_rt_report_size_mismatch
// CHECK-NOT: spconv_rt_cuda_stream_synchronize
// CHECK: gpu.launch_func async [%{{.*}}] @spconv_kernels::@spconv_zero_columns
// CHECK-NOT: memref.copy
// CHECK: call @spconv_rt_cuda_stream_synchronize
// CHECK-NEXT: return
// CHECK: gpu.func @spconv_strided_copy
func.func @concat(%a: tensor<?x16xf32>, %b: tensor<?x8xf32>) -> tensor<?x24xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x16xf32>
  %init = tensor.empty(%n) : tensor<?x16xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x16xf32>) outs(%init : tensor<?x16xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.maximumf %x, %zero : f32
      linalg.yield %y : f32
  } -> tensor<?x16xf32>
  %cat = tensor.concat dim(1) %relu, %b : (tensor<?x16xf32>, tensor<?x8xf32>) -> tensor<?x24xf32>
  return %cat : tensor<?x24xf32>
}
