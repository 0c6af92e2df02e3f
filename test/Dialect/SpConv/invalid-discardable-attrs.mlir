// RUN: spconv-opt %s -split-input-file -allow-unregistered-dialect -verify-diagnostics
// The discardable attributes that pass facts between passes (SpConvBase.td)
// are verified wherever they appear; any other spconv attribute is an error.

// Well-formed: no diagnostic.
module attributes {spconv.profile_labels = ["build_rulebook <subm> at x.mlir:3", "rulebook_conv 16->16"]} {
  func.func private @g(tensor<f32>) -> tensor<f32>
  func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {spconv.backward = @g} {
    "test.op"() {spconv.kernel = "conv_f32_16x32", spconv.tile = {threads = 256 : i64, rows = 64 : i64, cols = 32 : i64, depth = 32 : i64, thread_rows = 4 : i64, thread_cols = 2 : i64, math = "fma"}} : () -> ()
    "test.op"() {spconv.tile = {threads = 128 : i64, warp_rows = 32 : i64, warp_cols = 32 : i64, stages = 2 : i64, max_registers = 128 : i64, math = "mma-f16"}} : () -> ()
    return %x : tensor<f32>
  }
  gpu.module @kernels {
    gpu.func @k() kernel attributes {spconv.dynamic_shared_memory = 70144 : i64} {
      gpu.return
    }
  }
}

// -----

// expected-error @+1 {{spconv.kernel must be a non-empty string of letters, digits and '_' (kernels are named after it), got "count pairs"}}
"test.op"() {spconv.kernel = "count pairs"} : () -> ()

// -----

// expected-error @+1 {{spconv.kernel must be a non-empty string of letters, digits and '_' (kernels are named after it), got 3 : i64}}
"test.op"() {spconv.kernel = 3 : i64} : () -> ()

// -----

// expected-error @+1 {{spconv.tile must be a dictionary, got [64, 32]}}
"test.op"() {spconv.tile = [64, 32]} : () -> ()

// -----

// expected-error @+1 {{spconv.tile has an unknown entry 'buffers'}}
"test.op"() {spconv.tile = {threads = 64 : i64, buffers = 3 : i64}} : () -> ()

// -----

// expected-error @+1 {{spconv.dynamic_shared_memory applies to kernels only}}
"test.op"() {spconv.dynamic_shared_memory = 70144 : i64} : () -> ()

// -----

// expected-error @+1 {{spconv.dynamic_shared_memory must be a positive i64 (bytes), got 0 : i64}}
func.func @f() attributes {spconv.dynamic_shared_memory = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{spconv.tile entry 'rows' must be a positive i64, got 0 : i64}}
"test.op"() {spconv.tile = {rows = 0 : i64}} : () -> ()

// -----

// expected-error @+1 {{spconv.tile entry 'threads' must be a positive i64, got 6.400000e+01 : f32}}
"test.op"() {spconv.tile = {threads = 64.0 : f32}} : () -> ()

// -----

// expected-error @+1 {{spconv.tile entry 'math' must be "fma", "mma-f16", "mma-bf16" or "mma-tf32", got "mma-int8"}}
"test.op"() {spconv.tile = {math = "mma-int8"}} : () -> ()

// -----

// expected-error @+1 {{spconv.backward applies to functions only}}
"test.op"() {spconv.backward = @g} : () -> ()

// -----

// expected-error @+1 {{spconv.backward must name the function to generate, as a symbol reference (@name), got "g"}}
func.func @f() attributes {spconv.backward = "g"} {
  return
}

// -----

// expected-error @+1 {{spconv.profile_labels must be an array of strings, got [1, 2]}}
module attributes {spconv.profile_labels = [1, 2]} {
}

// -----

// expected-error @+1 {{spconv.profile_labels applies to a module only}}
"test.op"() {spconv.profile_labels = ["a"]} : () -> ()

// -----

// expected-error @+1 {{has an unknown spconv attribute 'spconv.kernal' (known: spconv.kernel, spconv.tile, spconv.backward, spconv.profile_labels)}}
"test.op"() {spconv.kernal = "count_pairs"} : () -> ()

// -----

// A kernel's source-line argument (spconv-outline-kernels) is a unit
// attribute on one i64 argument of a function.
func.func private @kernel(%line: i64 {spconv.source_line}, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{spconv.source_line must mark an i64 argument, argument 0 is 'i32'}}
func.func private @kernel(%line: i32 {spconv.source_line}) {
  return
}

// -----

// expected-error @+1 {{spconv.source_line must be a unit attribute, got 3 : i64}}
func.func private @kernel(%line: i64 {spconv.source_line = 3}) {
  return
}

// -----

// expected-error @+1 {{spconv.source_line marks more than one argument (0 and 1)}}
func.func private @kernel(%a: i64 {spconv.source_line}, %b: i64 {spconv.source_line}) {
  return
}

// -----

// expected-error @+1 {{has an unknown spconv argument attribute 'spconv.source_lines' (known: spconv.source_line)}}
func.func private @kernel(%line: i64 {spconv.source_lines}) {
  return
}
