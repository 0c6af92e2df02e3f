// RUN: spconv-opt %s -spconv-gpu-check-nvptx-types -split-input-file -verify-diagnostics | FileCheck %s

// f16, bf16, f32 and f64 kernels pass unchanged.
// CHECK-LABEL: gpu.func @f64_kernel
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @f64_kernel(%a: memref<?xf64>, %b: memref<?xbf16>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<?xf64>
      %y = arith.addf %x, %x : f64
      memref.store %y, %a[%c0] : memref<?xf64>
      gpu.return
    }
  }
}

// -----

// x87 floats: named before LLVM's NVPTX back end fails on them.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @f80_kernel(%a: memref<?xf80>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{spconv-gpu-check-nvptx-types: kernel code uses 'f80', which the NVPTX back end cannot compile (kernel floats: f16, bf16, f32, f64)}}
      %x = memref.load %a[%c0] : memref<?xf80>
      gpu.return
    }
  }
}

// -----

// A quad-float argument (a block argument of the kernel's body).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{kernel code uses 'f128'}}
    gpu.func @f128_kernel(%a: f128) kernel {
      gpu.return
    }
  }
}
