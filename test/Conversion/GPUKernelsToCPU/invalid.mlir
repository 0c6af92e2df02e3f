// RUN: spconv-opt %s -spconv-gpu-kernels-to-cpu -split-input-file -verify-diagnostics

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sync(%a: memref<?xf32>) kernel {
      // expected-error @+1 {{kernel @sync uses 'gpu.barrier', which the sequential threads of this emulation cannot run}}
      gpu.barrier
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{kernel @shared uses workgroup or private memory and cannot be emulated}}
    gpu.func @shared(%a: memref<?xf32>) workgroup(%tile : memref<32xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @host(%a: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    // expected-error @+1 {{only launches with one-dimensional grids and blocks are emulated}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c2, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
