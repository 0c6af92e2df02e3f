// RUN: spconv-opt %s -spconv-gpu-managed-memory -split-input-file -verify-diagnostics | FileCheck %s

// Host buffers become managed memory; frees run on a stream that is waited
// for.
// CHECK-LABEL: func.func @host
// CHECK: %[[BUF:.*]] = gpu.alloc  host_shared (%{{.*}}) : memref<?xf32>
// CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[BUF]] : memref<?xf32>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.dealloc async [%[[T0]]] %[[BUF]] : memref<?xf32>
// CHECK: gpu.wait [%[[T1]]]
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
module attributes {gpu.container_module} {
  func.func @host(%n: index) {
    %c1 = arith.constant 1 : index
    %buf = memref.alloc(%n) : memref<?xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<?xf32>)
    memref.dealloc %buf : memref<?xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @stack() {
    %c1 = arith.constant 1 : index
    %buf = memref.alloca() : memref<4xf32>
    %view = memref.cast %buf : memref<4xf32> to memref<?xf32>
    // expected-error @+1 {{kernel operand is host-only memory (memref.alloca)}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%view : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
