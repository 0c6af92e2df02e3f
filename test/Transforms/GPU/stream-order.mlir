// RUN: spconv-opt %s -spconv-gpu-stream-order -split-input-file -verify-diagnostics | FileCheck %s

// Two layers: every GPU operation joins one chain, started at the entry;
// the host waits only before reading managed memory and before returning
// (here the wait before the load left only a free in flight).
// Host-only memory and scalar-only calls (error reports) need no wait, nor
// does a managed allocation (no stream).
// CHECK-LABEL: func.func @layers
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[A:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] (%{{.*}}) : memref<?xf32>
// CHECK: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@k
// CHECK: %[[B:.*]], %[[T3:.*]] = gpu.alloc async [%[[T2]]] (%{{.*}}) : memref<?xf32>
// CHECK: %[[T4:.*]] = gpu.launch_func async [%[[T3]]] @kernels::@k
// CHECK: %[[T5:.*]] = gpu.dealloc async [%[[T4]]] %[[A]]
// CHECK: %[[HOST:.*]] = memref.alloca() : memref<2xi32>
// CHECK-NEXT: memref.store %{{.*}}, %[[HOST]]
// CHECK-NEXT: call @spconv_rt_report_row_mismatch
// CHECK-NEXT: %[[COUNT:.*]] = gpu.alloc  host_shared () : memref<1xi32>
// CHECK-NEXT: %[[T6:.*]] = gpu.launch_func async [%[[T5]]] @kernels::@count
// CHECK-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[T6]]) : (!gpu.async.token) -> ()
// CHECK-NEXT: memref.load %[[COUNT]]
// CHECK: gpu.dealloc async [%[[T6]]] %[[COUNT]]
// CHECK-NEXT: return
// CHECK: func.func private @spconv_rt_cuda_stream_synchronize(!gpu.async.token)
module attributes {gpu.container_module} {
  func.func private @spconv_rt_report_row_mismatch(i64, i64, i64) -> i32
  func.func @layers(%n: index, %x: memref<?xf32>) -> (memref<?xf32>, i32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c0_i32 = arith.constant 0 : i32
    %c0_i64 = arith.constant 0 : i64
    %a = gpu.alloc (%n) : memref<?xf32>
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>, %a : memref<?xf32>)
    %b = gpu.alloc (%n) : memref<?xf32>
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>, %b : memref<?xf32>)
    gpu.dealloc %a : memref<?xf32>
    %host = memref.alloca() : memref<2xi32>
    memref.store %c0_i32, %host[%c0] : memref<2xi32>
    %r = func.call @spconv_rt_report_row_mismatch(%c0_i64, %c0_i64, %c0_i64) : (i64, i64, i64) -> i32
    %count = gpu.alloc host_shared () : memref<1xi32>
    gpu.launch_func @kernels::@count blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%count : memref<1xi32>)
    %v = memref.load %count[%c0] : memref<1xi32>
    gpu.dealloc %count : memref<1xi32>
    return %b, %v : memref<?xf32>, i32
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>, %b: memref<?xf32>) kernel {
      gpu.return
    }
    gpu.func @count(%a: memref<1xi32>) kernel {
      gpu.return
    }
  }
}

// -----

// A copy into host memory is a read-back: the host waits right after it
// (the loads that follow read host memory, which by itself would not ask
// for a wait). A copy between device buffers just joins the chain. Frees
// leave nothing a caller waits for: the return does not wait for them.
// CHECK-LABEL: func.func @read_back
// CHECK: gpu.wait async
// CHECK: gpu.launch_func async [%{{.*}}] @kernels::@status
// CHECK: %[[T2:.*]] = gpu.memcpy async [%{{.*}}] %{{.*}}, %{{.*}} : memref<4xi64>, memref<4xi64>
// CHECK-NOT: spconv_rt_cuda_stream_synchronize
// CHECK: %[[HOST:.*]] = memref.alloc() : memref<4xi64>
// CHECK-NEXT: %[[T3:.*]] = gpu.memcpy async [%[[T2]]] %[[HOST]], %{{.*}} : memref<4xi64>, memref<4xi64>
// CHECK-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[T3]])
// CHECK-NEXT: memref.load %[[HOST]]
// CHECK-NOT: spconv_rt_cuda_stream_synchronize
// CHECK: gpu.dealloc async
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  func.func @read_back() -> i64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %status = gpu.alloc () : memref<4xi64>
    gpu.launch_func @kernels::@status blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%status : memref<4xi64>)
    %copy = gpu.alloc () : memref<4xi64>
    gpu.memcpy %copy, %status : memref<4xi64>, memref<4xi64>
    %host = memref.alloc() : memref<4xi64>
    gpu.memcpy %host, %copy : memref<4xi64>, memref<4xi64>
    %v = memref.load %host[%c0] : memref<4xi64>
    memref.dealloc %host : memref<4xi64>
    gpu.dealloc %status : memref<4xi64>
    return %v : i64
  }
  gpu.module @kernels {
    gpu.func @status(%a: memref<4xi64>) kernel {
      gpu.return
    }
  }
}

// -----

// Consecutive read-backs, and the frees of what they copied, go before one
// wait: the host waits for the stream once for all of them.
// CHECK-LABEL: func.func @read_backs
// CHECK: gpu.memcpy async
// CHECK-NEXT: gpu.dealloc async
// CHECK-NEXT: gpu.memcpy async
// CHECK-NEXT: %[[FREED:.*]] = gpu.dealloc async
// CHECK-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[FREED]])
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.load
// CHECK-NOT: spconv_rt_cuda_stream_synchronize
// CHECK: return
module attributes {gpu.container_module} {
  func.func @read_backs() -> (i64, i64) {
    %c0 = arith.constant 0 : index
    %first = gpu.alloc () : memref<4xi64>
    %second = gpu.alloc () : memref<4xi64>
    %h1 = memref.alloc() : memref<4xi64>
    %h2 = memref.alloc() : memref<4xi64>
    gpu.memcpy %h1, %first : memref<4xi64>, memref<4xi64>
    gpu.dealloc %first : memref<4xi64>
    gpu.memcpy %h2, %second : memref<4xi64>, memref<4xi64>
    gpu.dealloc %second : memref<4xi64>
    %x = memref.load %h1[%c0] : memref<4xi64>
    %y = memref.load %h2[%c0] : memref<4xi64>
    memref.dealloc %h1 : memref<4xi64>
    memref.dealloc %h2 : memref<4xi64>
    return %x, %y : i64, i64
  }
}

// -----

// A rulebook build's error report waits for the stream itself before it
// copies what it names: after it, as after a wait, nothing is in flight.
// CHECK-LABEL: func.func @report
// CHECK: call @spconv_rt_cuda_stream_synchronize
// CHECK: scf.if
// CHECK: func.call @spconv_rt_cuda_memref_report_build_error
// CHECK-NOT: spconv_rt_cuda_stream_synchronize
// CHECK: gpu.dealloc async
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  func.func private @spconv_rt_cuda_memref_report_build_error(memref<?xi64>) -> i32
  func.func @report(%keys: memref<?xi64>) {
    %c0 = arith.constant 0 : index
    %c0_i64 = arith.constant 0 : i64
    %status = gpu.alloc () : memref<4xi64>
    %host = memref.alloc() : memref<4xi64>
    gpu.memcpy %host, %status : memref<4xi64>, memref<4xi64>
    %bad = memref.load %host[%c0] : memref<4xi64>
    %failed = arith.cmpi ne, %bad, %c0_i64 : i64
    scf.if %failed {
      %r = func.call @spconv_rt_cuda_memref_report_build_error(%keys) : (memref<?xi64>) -> i32
    }
    memref.dealloc %host : memref<4xi64>
    gpu.dealloc %status : memref<4xi64>
    return
  }
}

// -----

// The token crosses an scf.if as a result (an if without else gains one
// that passes the token on) and an scf.for as an iteration argument, so no
// region ends with a wait. A branch of host code that reads device-visible
// memory (here the function's argument) waits inside the arm that reads it,
// so the path not taken does not wait; the return still waits.
// CHECK-LABEL: func.func @regions
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[IF:.*]] = scf.if %{{.*}} -> (!gpu.async.token) {
// CHECK-NEXT: %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @kernels::@k
// CHECK-NEXT: scf.yield %[[T1]] : !gpu.async.token
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[T0]] : !gpu.async.token
// CHECK: %[[FOR:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ARG:.*]] = %[[IF]]) -> (!gpu.async.token) {
// CHECK-NEXT: %[[T2:.*]] = gpu.launch_func async [%[[ARG]]] @kernels::@k
// CHECK-NEXT: scf.yield %[[T2]] : !gpu.async.token
// CHECK-NEXT: }
// CHECK-NEXT: scf.if
// CHECK-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[FOR]])
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[FOR]])
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  func.func @regions(%c: i1, %n: index, %x: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %f = arith.constant 1.0 : f32
    scf.if %c {
      gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    }
    scf.for %i = %c0 to %n step %c1 {
      gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    }
    scf.if %c {
      memref.store %f, %x[%c0] : memref<?xf32>
    }
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Runtime calls that take device-visible memory, calls of the module's own
// functions and the profiling timers wait; the chain then goes on. The
// runtime's CUDA primitives run on the chain's stream: no wait before them,
// and their work is in flight after them.
// CHECK-LABEL: func.func @calls
// CHECK: %[[T1:.*]] = gpu.launch_func async
// CHECK-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[T1]])
// CHECK-NEXT: call @spconv_rt_profile_begin
// CHECK-NEXT: %[[T2:.*]] = gpu.launch_func async [%[[T1]]]
// CHECK-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[T2]])
// CHECK-NEXT: call @spconv_rt_memref_exclusive_scan_i32
// CHECK-NEXT: %[[T3:.*]] = gpu.launch_func async [%[[T2]]]
// CHECK-NEXT: call @spconv_rt_cuda_memref_exclusive_scan_i32
// CHECK-NEXT: call @spconv_rt_cuda_stream_synchronize(%[[T3]])
// CHECK-NEXT: call @helper
module attributes {gpu.container_module} {
  func.func private @spconv_rt_profile_begin(i64)
  func.func private @spconv_rt_memref_exclusive_scan_i32(memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32
  func.func private @spconv_rt_cuda_memref_exclusive_scan_i32(memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32
  func.func private @helper() {
    return
  }
  func.func @calls(%n: index, %x: memref<?xi32>) {
    %c1 = arith.constant 1 : index
    %c0_i64 = arith.constant 0 : i64
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xi32>)
    func.call @spconv_rt_profile_begin(%c0_i64) : (i64) -> ()
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xi32>)
    %s = func.call @spconv_rt_memref_exclusive_scan_i32(%x, %x, %x) : (memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xi32>)
    %t = func.call @spconv_rt_cuda_memref_exclusive_scan_i32(%x, %x, %x) : (memref<?xi32>, memref<?xi32>, memref<?xi32>) -> i32
    func.call @helper() : () -> ()
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xi32>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @while_loop(%n: index, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %true = arith.constant true
    // expected-error @+1 {{spconv-gpu-stream-order: GPU work inside this operation cannot join the stream's chain}}
    scf.while : () -> () {
      scf.condition(%true)
    } do {
      gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
      scf.yield
    }
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
  func.func @already_async(%n: index, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{spconv-gpu-stream-order: expected synchronous GPU operations, which this pass chains}}
    %t = gpu.wait async
    %t2 = gpu.launch_func async [%t] @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
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
  // expected-error @+1 {{spconv-gpu-stream-order: expected structured control flow (one block) in a function with GPU work}}
  func.func @blocks(%n: index, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    cf.br ^next
  ^next:
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
