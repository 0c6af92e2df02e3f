// RUN: spconv-opt %s -split-input-file -allow-unregistered-dialect -verify-diagnostics

// expected-error @+1 {{unknown convolution kind 'dense'; expected subm, regular, transposed or inverse}}
"test.op"() {g = #spconv.geom<dense, kernel = [3]>} : () -> ()

// -----

// expected-error @+1 {{geometry needs a 'kernel' field}}
"test.op"() {g = #spconv.geom<regular, stride = [2]>} : () -> ()

// -----

// expected-error @+1 {{unknown geometry field 'strides'; expected kernel, stride, padding, dilation or output_padding}}
"test.op"() {g = #spconv.geom<regular, kernel = [3], strides = [2]>} : () -> ()

// -----

// expected-error @+1 {{geometry field 'stride' given twice}}
"test.op"() {g = #spconv.geom<regular, kernel = [3], stride = [2], stride = [2]>} : () -> ()

// -----

// expected-error @+1 {{geometry must have 1 to 4 spatial dimensions, got 5}}
"test.op"() {g = #spconv.geom<regular, kernel = [3, 3, 3, 3, 3]>} : () -> ()

// -----

// expected-error @+1 {{geometry must have 1 to 4 spatial dimensions, got 0}}
"test.op"() {g = #spconv.geom<regular, kernel = []>} : () -> ()

// -----

// expected-error @+1 {{geometry field 'stride' has 2 entries but 'kernel' has 3}}
"test.op"() {g = #spconv.geom<regular, kernel = [3, 3, 3], stride = [2, 2]>} : () -> ()

// -----

// expected-error @+1 {{geometry field 'padding' has 1 entries but 'kernel' has 2}}
"test.op"() {g = #spconv.geom<regular, kernel = [3, 3], padding = [1]>} : () -> ()

// -----

// expected-error @+1 {{geometry field 'dilation' has 3 entries but 'kernel' has 2}}
"test.op"() {g = #spconv.geom<regular, kernel = [3, 3], dilation = [1, 1, 1]>} : () -> ()

// -----

// expected-error @+1 {{geometry field 'output_padding' has 1 entries but 'kernel' has 2}}
"test.op"() {g = #spconv.geom<transposed, kernel = [3, 3], stride = [2, 2], output_padding = [1]>} : () -> ()

// -----

// expected-error @+1 {{geometry field 'kernel' must be positive, got 0 in dimension 1}}
"test.op"() {g = #spconv.geom<regular, kernel = [3, 0, 3]>} : () -> ()

// -----

// expected-error @+1 {{geometry field 'stride' must be positive, got -1 in dimension 0}}
"test.op"() {g = #spconv.geom<regular, kernel = [3], stride = [-1]>} : () -> ()

// -----

// expected-error @+1 {{geometry field 'dilation' must be positive, got 0 in dimension 0}}
"test.op"() {g = #spconv.geom<regular, kernel = [3], dilation = [0]>} : () -> ()

// -----

// expected-error @+1 {{geometry field 'padding' must be nonnegative, got -1 in dimension 2}}
"test.op"() {g = #spconv.geom<regular, kernel = [3, 3, 3], padding = [0, 0, -1]>} : () -> ()

// -----

// expected-error @+1 {{geometry field 'output_padding' must be nonnegative, got -1 in dimension 0}}
"test.op"() {g = #spconv.geom<transposed, kernel = [3], stride = [2], output_padding = [-1]>} : () -> ()

// -----

// expected-error @+1 {{kernel volume overflows int64}}
"test.op"() {g = #spconv.geom<regular, kernel = [4294967296, 4294967296]>} : () -> ()

// -----

// A million offsets: more than the builders can keep pair counts for.
// expected-error @+1 {{kernel volume 1000000 exceeds the supported maximum of 65536 offsets}}
"test.op"() {g = #spconv.geom<subm, kernel = [1000000]>} : () -> ()

// -----

// expected-error @+1 {{kernel volume 68921 exceeds the supported maximum of 65536 offsets}}
"test.op"() {g = #spconv.geom<regular, kernel = [41, 41, 41]>} : () -> ()

// -----

// The largest volume allowed.
"test.op"() {g = #spconv.geom<regular, kernel = [256, 256]>} : () -> ()

// -----

// expected-error @+1 {{subm geometry needs stride 1, got 2 in dimension 0}}
"test.op"() {g = #spconv.geom<subm, kernel = [3], stride = [2]>} : () -> ()

// -----

// expected-error @+1 {{subm geometry has the implied padding kernel / 2 * dilation = 2 in dimension 1, got 1}}
"test.op"() {g = #spconv.geom<subm, kernel = [3, 3], padding = [2, 1], dilation = [2, 2]>} : () -> ()

// -----

// expected-error @+1 {{subm window extent kernel / 2 * dilation overflows int64 in dimension 0}}
"test.op"() {g = #spconv.geom<subm, kernel = [5], dilation = [4611686018427387904]>} : () -> ()

// -----

// expected-error @+1 {{output_padding is only allowed for a transposed geometry}}
"test.op"() {g = #spconv.geom<regular, kernel = [3], stride = [2], output_padding = [1]>} : () -> ()

// -----

// expected-error @+1 {{output_padding 2 in dimension 0 must be smaller than the stride (2) or the dilation (1)}}
"test.op"() {g = #spconv.geom<transposed, kernel = [3], stride = [2], output_padding = [2]>} : () -> ()

// -----

// expected-error @+1 {{grid must have 1 to 4 spatial dimensions, got 5}}
"test.op"() {g = #spconv.grid<[1, 2, 3, 4, 5]>} : () -> ()

// -----

// expected-error @+1 {{grid extent must be positive, got 0 in dimension 1}}
"test.op"() {g = #spconv.grid<[41, 0, 1408]>} : () -> ()

// -----

// expected-error @+1 {{grid batch size must be positive, got 0}}
"test.op"() {g = #spconv.grid<[41, 1600, 1408], batch = 0>} : () -> ()

// -----

// expected-error @+1 {{grid volume [4294967296, 4294967296] overflows int64}}
"test.op"() {g = #spconv.grid<[4294967296, 4294967296]>} : () -> ()

// -----

// expected-error @+1 {{batch size 3 x grid volume 4611686014132420609 overflows int64}}
"test.op"() {g = #spconv.grid<[2147483647, 2147483647], batch = 3>} : () -> ()

// -----

// expected-error @+1 {{a rulebook is built for a subm, regular or transposed geometry; an inverse conv reads the rulebook of its forward conv}}
func.func private @f(!spconv.rulebook<#spconv.geom<inverse, kernel = [2], stride = [2]>, #spconv.grid<[8]>>)

// -----

// expected-error @+1 {{geometry has 2 spatial dimensions but the grid has 3}}
func.func private @f(!spconv.rulebook<#spconv.geom<regular, kernel = [2, 2]>, #spconv.grid<[8, 8, 8]>>)

// -----

// expected-error @+1 {{the output grid is empty in dimension 0: input extent 2 + 2 * padding 0 is smaller than the dilated kernel extent 3}}
func.func private @f(!spconv.rulebook<#spconv.geom<regular, kernel = [3]>, #spconv.grid<[2]>>)

// -----

// Transposed grids grow: the output extent must still fit in int64.
// expected-error @+1 {{the output extent overflows int64 in dimension 0}}
func.func private @f(!spconv.rulebook<#spconv.geom<transposed, kernel = [2], stride = [4611686018427387904]>, #spconv.grid<[4]>>)

// -----

// expected-error @+1 {{the output grid is empty in dimension 0: (I - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1 = -3}}
func.func private @f(!spconv.rulebook<#spconv.geom<transposed, kernel = [1], padding = [2]>, #spconv.grid<[1]>>)

// -----

// The input grid fits, the doubled output grid does not.
// expected-error @+1 {{batch size 3 x grid volume 4035225266123964416 overflows int64}}
func.func private @f(!spconv.rulebook<#spconv.geom<transposed, kernel = [2], stride = [2]>, #spconv.grid<[2017612633061982208], batch = 3>>)
