// RUN: spconv-opt %s -spconv-gpu-memory -split-input-file -verify-diagnostics | FileCheck %s

// Each buffer goes where its uses need it: a kernel-only buffer (also
// through a view, and read by the runtime's CUDA primitive) is device
// memory; one the host also loads from is managed; one only the host
// touches stays host memory. Frees of GPU memory become gpu.dealloc.
// CHECK-LABEL: func.func @placement
// CHECK: %[[DEVICE:.*]] = gpu.alloc  (%{{.*}}) : memref<?xf32>
// CHECK: %[[MANAGED:.*]] = gpu.alloc  host_shared (%{{.*}}) : memref<?xi32>
// CHECK: %[[HOST:.*]] = memref.alloc() : memref<4xindex>
// CHECK: %[[RUNTIME:.*]] = gpu.alloc  (%{{.*}}) : memref<?xi32>
// CHECK: gpu.launch_func @kernels::@k {{.*}} args(%{{.*}} : memref<?xf32>, %[[MANAGED]] : memref<?xi32>)
// CHECK: memref.load %[[MANAGED]]
// CHECK: memref.store %{{.*}}, %[[HOST]]
// CHECK: gpu.dealloc  %[[DEVICE]] : memref<?xf32>
// CHECK: gpu.dealloc  %[[MANAGED]] : memref<?xi32>
// CHECK: memref.dealloc %[[HOST]] : memref<4xindex>
// CHECK: gpu.dealloc  %[[RUNTIME]] : memref<?xi32>
// CHECK-NOT: gpu.wait
module attributes {gpu.container_module} {
  func.func private @spconv_rt_cuda_memref_exclusive_scan_i32(memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32
  func.func @placement(%n: index) -> index {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %device = memref.alloc(%n) : memref<?xf32>
    %managed = memref.alloc(%n) : memref<?xi32>
    %host = memref.alloc() : memref<4xindex>
    %runtime = memref.alloc(%n) : memref<?xi32>
    %view = memref.subview %device[0] [%n] [1] : memref<?xf32> to memref<?xf32, strided<[1]>>
    %cast = memref.cast %view : memref<?xf32, strided<[1]>> to memref<?xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%cast : memref<?xf32>, %managed : memref<?xi32>)
    %v = memref.load %managed[%c0] : memref<?xi32>
    %i = arith.index_cast %v : i32 to index
    memref.store %i, %host[%c0] : memref<4xindex>
    %total = memref.alloca() : memref<1xi32>
    %total_cast = memref.cast %total : memref<1xi32> to memref<?xi32>
    %status = func.call @spconv_rt_cuda_memref_exclusive_scan_i32(%runtime, %runtime, %total_cast) : (memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32
    %r = memref.load %host[%c0] : memref<4xindex>
    memref.dealloc %device : memref<?xf32>
    memref.dealloc %managed : memref<?xi32>
    memref.dealloc %host : memref<4xindex>
    memref.dealloc %runtime : memref<?xi32>
    return %r : index
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>, %b: memref<?xi32>) kernel {
      gpu.return
    }
  }
}

// -----

// A result of a public function is the caller's to copy (the ABI): device
// memory, like a buffer only kernels touch; the caller outside the module
// does not count as host code. A result the function's own host code reads
// is managed, as is one the CPU runtime reads, and one a private function
// returns (its caller in the module may touch it on either side).
// CHECK-LABEL: func.func @escapes
// CHECK: %[[RESULT:.*]] = gpu.alloc  (%{{.*}}) : memref<?xf32>
// CHECK: %[[READ:.*]] = gpu.alloc  host_shared (%{{.*}}) : memref<?xf32>
// CHECK: %[[KEYS:.*]] = gpu.alloc  host_shared (%{{.*}}) : memref<?xi64>
// CHECK: return %[[RESULT]], %[[READ]]
// CHECK-LABEL: func.func private @helper
// CHECK: %[[INNER:.*]] = gpu.alloc  host_shared (%{{.*}}) : memref<?xf32>
// CHECK: return %[[INNER]]
module attributes {gpu.container_module} {
  func.func private @spconv_rt_memref_unique(memref<?xi64>) -> i32
  func.func @escapes(%n: index) -> (memref<?xf32>, memref<?xf32>, f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %result = memref.alloc(%n) : memref<?xf32>
    %read = memref.alloc(%n) : memref<?xf32>
    %keys = memref.alloc(%n) : memref<?xi64>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%result : memref<?xf32>, %keys : memref<?xi64>)
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%read : memref<?xf32>, %keys : memref<?xi64>)
    %s = func.call @spconv_rt_memref_unique(%keys) : (memref<?xi64>) -> i32
    %first = memref.load %read[%c0] : memref<?xf32>
    memref.dealloc %keys : memref<?xi64>
    return %result, %read, %first : memref<?xf32>, memref<?xf32>, f32
  }
  func.func private @helper(%n: index) -> memref<?xf32> {
    %c1 = arith.constant 1 : index
    %inner = memref.alloc(%n) : memref<?xf32>
    %keys = memref.alloc(%n) : memref<?xi64>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%inner : memref<?xf32>, %keys : memref<?xi64>)
    memref.dealloc %keys : memref<?xi64>
    return %inner : memref<?xf32>
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>, %b: memref<?xi64>) kernel {
      gpu.return
    }
  }
}

// -----

// A copy of whole buffers touches neither side's contents: the status a
// kernel writes stays device memory, the host buffer it is read back into
// stays host memory, and the copy between them becomes a gpu.memcpy. A copy
// between host buffers stays a host copy; one of a strided view (no single
// contiguous block) is a host copy of managed memory.
// CHECK-LABEL: func.func @copies
// CHECK: %[[STATUS:.*]] = gpu.alloc  () : memref<4xi64>
// CHECK: %[[HOST:.*]] = memref.alloc() : memref<4xi64>
// CHECK: %[[OTHER:.*]] = memref.alloc() : memref<4xi64>
// CHECK: %[[WHOLE:.*]] = gpu.alloc  host_shared () : memref<4x4xi64>
// CHECK: %[[PICKED:.*]] = gpu.alloc  host_shared () : memref<4xi64>
// CHECK: gpu.memcpy  %[[HOST]], %[[STATUS]] : memref<4xi64>, memref<4xi64>
// CHECK: memref.copy %[[HOST]], %[[OTHER]]
// CHECK: memref.copy %{{.*}}, %[[PICKED]] : memref<4xi64, strided<[4]>> to memref<4xi64>
module attributes {gpu.container_module} {
  func.func @copies() -> i64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %status = memref.alloc() : memref<4xi64>
    %host = memref.alloc() : memref<4xi64>
    %other = memref.alloc() : memref<4xi64>
    %whole = memref.alloc() : memref<4x4xi64>
    %picked = memref.alloc() : memref<4xi64>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%status : memref<4xi64>, %whole : memref<4x4xi64>)
    memref.copy %status, %host : memref<4xi64> to memref<4xi64>
    memref.copy %host, %other : memref<4xi64> to memref<4xi64>
    %column = memref.subview %whole[0, 0] [4, 1] [1, 1] : memref<4x4xi64> to memref<4xi64, strided<[4]>>
    memref.copy %column, %picked : memref<4xi64, strided<[4]>> to memref<4xi64>
    %v = memref.load %other[%c0] : memref<4xi64>
    %w = memref.load %picked[%c0] : memref<4xi64>
    %sum = arith.addi %v, %w : i64
    return %sum : i64
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xi64>, %b: memref<4x4xi64>) kernel {
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
    // expected-error @+1 {{spconv-gpu-memory: kernel operand is host-only memory (memref.alloca)}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%view : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A constant global that kernels read (a bufferized dense constant: the
// training loss's seed) is uploaded once per call: one buffer at the
// function's entry, however many reads (here two, one in a loop, one
// through a cast), filled by a gpu.memcpy from the global and freed before
// every return. Device memory when only kernels read it; managed when host
// code reads it too. A global only host code reads stays where it is.
// CHECK-LABEL: func.func @constant_globals
// CHECK-DAG: %[[SEED_HOST:.*]] = memref.get_global @seed : memref<f32>
// CHECK-DAG: %[[SEED:.*]] = gpu.alloc  () : memref<f32>
// CHECK-DAG: %[[TABLE_HOST:.*]] = memref.get_global @table : memref<4xi32>
// CHECK-DAG: %[[TABLE:.*]] = gpu.alloc  host_shared () : memref<4xi32>
// CHECK-DAG: gpu.memcpy  %[[SEED]], %[[SEED_HOST]] : memref<f32>, memref<f32>
// CHECK-DAG: gpu.memcpy  %[[TABLE]], %[[TABLE_HOST]] : memref<4xi32>, memref<4xi32>
// CHECK: scf.for
// CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[SEED]] : memref<f32>, %[[TABLE]] : memref<4xi32>)
// CHECK: %[[CAST:.*]] = memref.cast %[[SEED]]
// CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[CAST]] : memref<f32>, %[[TABLE]] : memref<4xi32>)
// CHECK: memref.load %[[TABLE]]
// CHECK: %[[HOST_ONLY:.*]] = memref.get_global @host_only
// CHECK: memref.load %[[HOST_ONLY]]
// CHECK-DAG: gpu.dealloc  %[[SEED]] : memref<f32>
// CHECK-DAG: gpu.dealloc  %[[TABLE]] : memref<4xi32>
// CHECK: return
// CHECK-NOT: memref.get_global
// CHECK-LABEL: func.func @no_kernel_reads
// CHECK-NOT: gpu.alloc
// CHECK: return
// A function of the module that gets a constant global may launch kernels
// on it (the training example's backward gets the loss's seed): the caller
// uploads it, to managed memory, as any buffer passed to such a function.
// CHECK-LABEL: func.func @passed
// CHECK: %[[GLOBAL:.*]] = memref.get_global @seed : memref<f32>
// CHECK: %[[PASSED:.*]] = gpu.alloc  host_shared () : memref<f32>
// CHECK: gpu.memcpy  %[[PASSED]], %[[GLOBAL]]
// CHECK: call @reads_seed(%[[PASSED]])
// CHECK: gpu.dealloc  %[[PASSED]]
// CHECK: return
module attributes {gpu.container_module} {
  memref.global "private" constant @seed : memref<f32> = dense<1.0>
  memref.global "private" constant @table : memref<4xi32> = dense<[1, 2, 3, 4]>
  memref.global "private" constant @host_only : memref<2xi32> = dense<[5, 6]>
  func.func @constant_globals(%n: index) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
      %seed = memref.get_global @seed : memref<f32>
      %table = memref.get_global @table : memref<4xi32>
      gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%seed : memref<f32>, %table : memref<4xi32>)
    }
    %seed = memref.get_global @seed : memref<f32>
    %seed_cast = memref.cast %seed : memref<f32> to memref<f32>
    %table = memref.get_global @table : memref<4xi32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%seed_cast : memref<f32>, %table : memref<4xi32>)
    %v = memref.load %table[%c0] : memref<4xi32>
    %host_only = memref.get_global @host_only : memref<2xi32>
    %w = memref.load %host_only[%c0] : memref<2xi32>
    %sum = arith.addi %v, %w : i32
    return %sum : i32
  }
  func.func @no_kernel_reads() -> i32 {
    %c0 = arith.constant 0 : index
    %table = memref.get_global @table : memref<4xi32>
    %v = memref.load %table[%c0] : memref<4xi32>
    return %v : i32
  }
  func.func @passed() {
    %seed = memref.get_global @seed : memref<f32>
    func.call @reads_seed(%seed) : (memref<f32>) -> ()
    return
  }
  func.func private @reads_seed(%seed: memref<f32>) {
    %c1 = arith.constant 1 : index
    %table = memref.get_global @table : memref<4xi32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%seed : memref<f32>, %table : memref<4xi32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<f32>, %b: memref<4xi32>) kernel {
      gpu.return
    }
  }
}

// -----

// A mutable global cannot be uploaded (the device's copy would not be the
// global), nor a constant one that leaves the function.
module attributes {gpu.container_module} {
  memref.global "private" @state : memref<4xi32> = dense<0>
  memref.global "private" constant @table : memref<4xi32> = dense<[1, 2, 3, 4]>
  func.func @mutable() {
    %c1 = arith.constant 1 : index
    %state = memref.get_global @state : memref<4xi32>
    // expected-error @+1 {{spconv-gpu-memory: kernel operand is host-only memory (memref.get_global @state: a mutable global, which the device cannot share)}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%state : memref<4xi32>)
    return
  }
  func.func @escaping() -> memref<4xi32> {
    %c1 = arith.constant 1 : index
    %table = memref.get_global @table : memref<4xi32>
    // expected-error @+1 {{spconv-gpu-memory: kernel operand is host-only memory (memref.get_global @table: a constant global that leaves the function, so an upload would not be the global)}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%table : memref<4xi32>)
    return %table : memref<4xi32>
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xi32>) kernel {
      gpu.return
    }
  }
}

// -----

// A public function's arguments are the caller's device memory: host code
// that reads one (a load, the CPU runtime) would fault on a GPU. Kernels,
// the runtime's CUDA twins and shape queries may use them; so may a private
// function's host code, whose arguments are the module's own buffers.
module attributes {gpu.container_module} {
  func.func private @spconv_rt_memref_hash_capacity(i64, memref<?xi64>) -> i32
  func.func private @spconv_rt_cuda_memref_exclusive_scan_i32(memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32
  // expected-note @+1 {{function defined here}}
  func.func @loads(%a: memref<?xi32>, %b: memref<?xi32>) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %a, %c0 : memref<?xi32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xi32>)
    %s = func.call @spconv_rt_cuda_memref_exclusive_scan_i32(%a, %a, %a) : (memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32
    %view = memref.subview %b[1] [2] [1] : memref<?xi32> to memref<2xi32, strided<[1], offset: 1>>
    // expected-error @+1 {{spconv-gpu-memory: host code reads argument #1 of @loads, which the caller passes in device memory}}
    %v = memref.load %view[%c0] : memref<2xi32, strided<[1], offset: 1>>
    return %v : i32
  }
  // expected-note @+1 {{function defined here}}
  func.func @runtime(%a: memref<?xi64>) {
    %c1 = arith.constant 1 : i64
    // expected-error @+1 {{spconv-gpu-memory: host code reads argument #0 of @runtime, which the caller passes in device memory (the CPU runtime's spconv_rt_memref_hash_capacity has no CUDA twin)}}
    %s = func.call @spconv_rt_memref_hash_capacity(%c1, %a) : (i64, memref<?xi64>) -> i32
    return
  }
  func.func private @helper(%a: memref<?xi32>) -> i32 {
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<?xi32>
    return %v : i32
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xi32>) kernel {
      gpu.return
    }
  }
}

// -----

// A public function's host code that loads from an argument directly (a
// scalar read by tensor.extract) reads a copy in a stack slot made at the
// entry; an argument of dynamic shape, or over 4 KiB, is not copied.
// CHECK-LABEL: func.func @scalar_argument
// CHECK-SAME: (%[[ARG:.*]]: memref<f32>, %[[TABLE:.*]]: memref<4x8xi32>)
// CHECK: %[[COPY:.*]] = memref.alloca() : memref<f32>
// CHECK: gpu.memcpy  %[[COPY]], %[[ARG]] : memref<f32>, memref<f32>
// CHECK: %[[TABLE_COPY:.*]] = memref.alloca() : memref<4x8xi32>
// CHECK: gpu.memcpy  %[[TABLE_COPY]], %[[TABLE]]
// CHECK: memref.load %[[COPY]][]
// CHECK: memref.load %[[TABLE_COPY]][
// CHECK-NOT: dealloc
// CHECK: return
func.func @scalar_argument(%lr: memref<f32>, %table: memref<4x8xi32>) -> (f32, i32) {
  %c0 = arith.constant 0 : index
  %v = memref.load %lr[] : memref<f32>
  %r = memref.load %table[%c0, %c0] : memref<4x8xi32>
  return %v, %r : f32, i32
}

// -----

// An index argument (a rulebook's CSR offsets passed to a public function)
// is copied too, at 8 bytes an element (a fuzzer finding: its size was
// asked of memref's bit width, which knows no index, and the pass crashed).
// CHECK-LABEL: func.func @index_argument
// CHECK: %[[OFFSETS_COPY:.*]] = memref.alloca() : memref<3xindex>
// CHECK: gpu.memcpy  %[[OFFSETS_COPY]], %{{.*}} : memref<3xindex>, memref<3xindex>
// CHECK: memref.load %[[OFFSETS_COPY]][
func.func @index_argument(%offsets: memref<3xindex>) -> index {
  %c2 = arith.constant 2 : index
  %end = memref.load %offsets[%c2] : memref<3xindex>
  return %end : index
}

// -----

// expected-note @+1 {{function defined here}}
func.func @dynamic_argument(%rows: memref<?xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{spconv-gpu-memory: host code reads argument #0 of @dynamic_argument, which the caller passes in device memory (only a statically shaped argument of at most 4096 bytes is copied to the host)}}
  %r = memref.load %rows[%c0] : memref<?xi32>
  return %r : i32
}
