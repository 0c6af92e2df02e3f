// RUN: spconv-opt %s -spconv-gpu-kernels-to-cpu=race-check=1 -canonicalize | FileCheck %s

// With race-check, a launch runs its blocks in order between the runtime's
// begin and end calls, which get the kernel's and its buffers' names; every
// load and store through an argument (buffer 0) or workgroup buffer
// (buffer 1) first reports its address, element size, count, whether it
// writes, and the block and thread; each barrier reports itself.
// CHECK-DAG: memref.global "private" constant @__spconv_emulated_copy : memref<97xi8>
// CHECK-DAG: func.func private @spconv_rt_emu_access(i64, i64, i64, i64, i64, i64, i64, i64) -> i32
// CHECK-LABEL: func.func @host
// CHECK: %[[NAMES:.*]] = memref.get_global @__spconv_emulated_copy
// CHECK: call @spconv_rt_emu_launch_begin(
// CHECK: scf.for
// CHECK: func.call @copy(
// CHECK-NOT: scf.parallel
// CHECK: call @spconv_rt_emu_launch_end()
// CHECK-LABEL: func.func private @copy
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: scf.for
// CHECK: func.call @spconv_rt_emu_access(%[[ZERO]], %{{.*}}, %{{.*}}, %[[FOUR]], %[[ONE]], %[[ZERO]],
// CHECK: memref.load
// CHECK: func.call @spconv_rt_emu_access(%[[ONE]], %{{.*}}, %{{.*}}, %[[FOUR]], %[[ONE]], %[[ONE]],
// CHECK: memref.store
// CHECK: }
// CHECK: call @spconv_rt_emu_barrier()
module attributes {gpu.container_module} {
  func.func @host(%a: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @kernels::@copy blocks in (%c4, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @copy(%a: memref<?xf32>) workgroup(%tile : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<?xf32>
      memref.store %x, %tile[%t] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      gpu.return
    }
  }
}
