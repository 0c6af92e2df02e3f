// RUN: spconv-opt %s -spconv-gpu-kernels-to-cpu -split-input-file -verify-diagnostics

// A barrier under a condition that depends on the thread: CUDA requires
// every thread of the block to reach it.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @divergent(%a: memref<?xf32>) kernel {
      %c16 = arith.constant 16 : index
      %t = gpu.thread_id x
      %low = arith.cmpi ult, %t, %c16 : index
      // expected-error @+1 {{kernel @divergent: this 'scf.if' contains a barrier, so its condition and bounds must be the same for every thread of the block, but they depend on the thread (a barrier in divergent control flow)}}
      scf.if %low {
        gpu.barrier
      }
      gpu.return
    }
  }
}

// -----

// A loop around a barrier whose trip count differs between threads.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @trip(%a: memref<?xf32>, %n: index) kernel {
      %c1 = arith.constant 1 : index
      %t = gpu.thread_id x
      // expected-error @+1 {{kernel @trip: this 'scf.for' contains a barrier, so its condition and bounds must be the same for every thread of the block, but they depend on the thread}}
      scf.for %i = %t to %n step %c1 {
        gpu.barrier
      }
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @loop(%a: memref<?xf32>, %n: i1) kernel {
      // expected-error @+1 {{kernel @loop: 'scf.while' contains a barrier or warp-level operation; the emulator runs them in straight-line code, scf.for and scf.if only}}
      scf.while : () -> () {
        scf.condition(%n)
      } do {
        gpu.barrier
        scf.yield
      }
      gpu.return
    }
  }
}

// -----

// A per-thread buffer of the thread's own cannot outlive a phase.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scratch(%a: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{kernel @scratch: a value of type 'memref<4xf32>' is used across a barrier or warp-level operation; only scalars and vectors are kept per thread}}
      %s = memref.alloca() : memref<4xf32>
      gpu.barrier
      %x = memref.load %s[%c0] : memref<4xf32>
      memref.store %x, %a[%c0] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{kernel @private uses private memory attributions, which are not emulated}}
    gpu.func @private(%a: memref<?xf32>) private(%p : memref<4xf32, #gpu.address_space<private>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sum(%a: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<?xf32>
      // expected-error @+1 {{kernel @sum uses 'gpu.all_reduce', which the emulator does not model}}
      %s = gpu.all_reduce add %x uniform {} : (f32) -> (f32)
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{kernel @jumps has unstructured control flow (2 blocks); the emulator runs structured (scf) kernels}}
    gpu.func @jumps(%a: memref<?xf32>) kernel {
      cf.br ^next
    ^next:
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @f64(%a: memref<8x8xf64>) kernel {
      %c0 = arith.constant 0 : index
      %m = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 8 : index} : memref<8x8xf64> -> !gpu.mma_matrix<8x4xf64, "AOp">
      %n = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 8 : index} : memref<8x8xf64> -> !gpu.mma_matrix<4x8xf64, "BOp">
      %c = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 8 : index} : memref<8x8xf64> -> !gpu.mma_matrix<8x8xf64, "COp">
      // expected-error @+1 {{kernel @f64: only f16 and tf32 (f32) tensor-core inputs are emulated}}
      %d = gpu.subgroup_mma_compute %m, %n, %c : !gpu.mma_matrix<8x4xf64, "AOp">, !gpu.mma_matrix<4x8xf64, "BOp"> -> !gpu.mma_matrix<8x8xf64, "COp">
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tf32_into_f16(%a: memref<16x16xf32>, %h: memref<16x16xf16>) kernel {
      %c0 = arith.constant 0 : index
      %m = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf32> -> !gpu.mma_matrix<16x8xf32, "AOp">
      %n = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf32> -> !gpu.mma_matrix<8x16xf32, "BOp">
      %c = gpu.subgroup_mma_load_matrix %h[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "COp">
      // expected-error @+1 {{kernel @tf32_into_f16: tf32 (f32) tensor-core inputs accumulate in f32 only}}
      %d = gpu.subgroup_mma_compute %m, %n, %c : !gpu.mma_matrix<16x8xf32, "AOp">, !gpu.mma_matrix<8x16xf32, "BOp"> -> !gpu.mma_matrix<16x16xf16, "COp">
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @host(%a: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %t = gpu.wait async
    // expected-error @+1 {{asynchronous launches, clusters and dynamic shared memory are not emulated}}
    %d = gpu.launch_func async [%t] @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Every lane of an ldmatrix reads the same buffer.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @per_thread_buffer(%out: memref<4x2xf16>) workgroup(%s: memref<16x8xf16, #gpu.address_space<workgroup>>, %t: memref<16x8xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %tid = gpu.thread_id x
      %low = arith.cmpi ult, %tid, %c16 : index
      %m = arith.select %low, %s, %t : memref<16x8xf16, #gpu.address_space<workgroup>>
      // expected-error @+1 {{kernel @per_thread_buffer: ldmatrix from a buffer that differs between threads is not emulated}}
      %f = nvgpu.ldmatrix %m[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x8xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      vector.transfer_write %f, %out[%c0, %c0] : vector<4x2xf16>, memref<4x2xf16>
      gpu.return
    }
  }
}

// -----

// m16n8k8 of f16 is a valid mma.sync, but not one the kernels use.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k8_f16(%a: vector<2x2xf16>, %b: vector<1x2xf16>, %out: memref<2x2xf32>) kernel {
      %c0 = arith.constant 0 : index
      %zero = arith.constant dense<0.0> : vector<2x2xf32>
      // expected-error @+1 {{kernel @k8_f16: only m16n8k16 (f16, bf16) and m16n8k8 (tf32) mma.sync with f32 or f16 accumulators is emulated}}
      %d = nvgpu.mma.sync (%a, %b, %zero) {mmaShape = [16, 8, 8]} : (vector<2x2xf16>, vector<1x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      vector.transfer_write %d, %out[%c0, %c0] : vector<2x2xf32>, memref<2x2xf32>
      gpu.return
    }
  }
}

// -----

// mma.sync's f32 inputs are tf32 only when the op says so.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @f32_without_tf32(%a: vector<4x1xf32>, %b: vector<2x1xf32>, %out: memref<2x2xf32>) kernel {
      %c0 = arith.constant 0 : index
      %zero = arith.constant dense<0.0> : vector<2x2xf32>
      // expected-error @+1 {{kernel @f32_without_tf32: only m16n8k16 (f16, bf16) and m16n8k8 (tf32) mma.sync with f32 or f16 accumulators is emulated}}
      %d = nvgpu.mma.sync (%a, %b, %zero) {mmaShape = [16, 8, 8]} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      vector.transfer_write %d, %out[%c0, %c0] : vector<2x2xf32>, memref<2x2xf32>
      gpu.return
    }
  }
}
