// RUN: spconv-opt %s -spconv-gpu-dynamic-shared-memory -split-input-file -verify-diagnostics | FileCheck %s

// Past 48 KiB: the buffers become views of the dynamic shared memory, each
// at a multiple of 128 bytes from the first 128-byte boundary in it, and the
// launch passes their size with the slack for that rounding (40000 bytes of
// f32, then 9200 of f16 from 40064: 49264 > 49152; + 112).
// CHECK-LABEL: func.func @large
// CHECK: %[[SIZE:.*]] = arith.constant 49376 : i32
// CHECK: gpu.launch_func @kernels::@large_kernel {{.*}} dynamic_shared_memory_size %[[SIZE]]
// CHECK: gpu.func @large_kernel(%{{.*}}: memref<?xf32>) kernel attributes {spconv.dynamic_shared_memory = 49376 : i64} {
// CHECK-NOT: workgroup(
// CHECK: %[[BASE:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[BASE]]
// CHECK: %[[NEGATED:.*]] = arith.subi %{{.*}}, %[[ADDRESS]]
// CHECK: %[[START:.*]] = arith.andi %[[NEGATED]], %{{.*}} : index
// CHECK: %[[AT0:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK: %[[A:.*]] = memref.view %[[BASE]][%[[AT0]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<10000xf32, #gpu.address_space<workgroup>>
// CHECK: %[[C40064:.*]] = arith.constant 40064 : index
// CHECK: %[[AT1:.*]] = arith.addi %[[START]], %[[C40064]] : index
// CHECK: %[[B:.*]] = memref.view %[[BASE]][%[[AT1]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4600xf16, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
module attributes {gpu.container_module} {
  func.func @large(%a: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@large_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @large_kernel(%a: memref<?xf32>)
        workgroup(%x: memref<10000xf32, #gpu.address_space<workgroup>>,
                  %y: memref<4600xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<?xf32>
      memref.store %v, %x[%c0] : memref<10000xf32, #gpu.address_space<workgroup>>
      %h = arith.truncf %v : f32 to f16
      memref.store %h, %y[%c0] : memref<4600xf16, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// Within 48 KiB (49152 bytes exactly): static buffers, as written.
// CHECK-LABEL: gpu.func @small_kernel
// CHECK-SAME: workgroup(%{{.*}} : memref<12288xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: gpu.dynamic_shared_memory
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @small_kernel(%a: memref<?xf32>)
        workgroup(%x: memref<12288xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<?xf32>
      memref.store %v, %x[%c0] : memref<12288xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// More than any block may take: named, with its size.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{spconv-gpu-dynamic-shared-memory: kernel 'huge_kernel' needs 160112 bytes of shared memory, more than a block may take (101376, max-bytes)}}
    gpu.func @huge_kernel()
        workgroup(%x: memref<40000xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

// A launch that sizes dynamic shared memory itself is not combined.
module attributes {gpu.container_module} {
  func.func @sized() {
    %c1 = arith.constant 1 : index
    %smem = arith.constant 128 : i32
    // expected-error @+1 {{spconv-gpu-dynamic-shared-memory: the launch of 'sized_kernel' already passes dynamic shared memory}}
    gpu.launch_func @kernels::@sized_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) dynamic_shared_memory_size %smem
    return
  }
  gpu.module @kernels {
    gpu.func @sized_kernel()
        workgroup(%x: memref<20000xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}
