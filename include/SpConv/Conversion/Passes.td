//===- Passes.td - SpConv conversion passes ----------------*- tablegen -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_CONVERSION_PASSES_TD
#define SPCONV_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSpConvToSCFPass : Pass<"convert-spconv-to-scf", "::mlir::ModuleOp"> {
  let summary = "Lower spconv ops to scf.parallel loops, runtime calls and "
                "(target=gpu) tiled GPU kernels";
  let description = [{
    Lowers the rulebook-level ops and the primitives (run `spconv-decompose`
    first) to loops on memrefs, bridged to the surrounding tensor code with
    `bufferization.to_buffer` / `bufferization.to_tensor`, so that
    `one-shot-bufferize` finishes the job.

    Rulebook construction is specialised per geometry: kernel, stride,
    padding, dilation and grid become constants and the kernel-offset loop
    is fully unrolled. Each distinct (geometry, grid) pair gets one private
    function, `@spconv_build_<kind>_k.._s.._p.._d.._g..`, shared by every
    build that needs it. The builders validate the coordinates through the
    runtime (`spconv_rt_memref_linearize_coords`), build the runtime's hash
    table and probe it inline, following the layout contract of
    `runtime/include/spconv-rt/HashTableLayout.h`:

    * subm, `subm-search=sorted` (the default): sort the site keys once
      (carrying their rows; equal neighbours are duplicate sites) and find
      every neighbour by merging: a neighbour's key is the site's key plus
      a constant per offset, so one pointer per row of offsets (offsets
      that differ only in the last dimension) walks the sorted keys as the
      sites advance, started by a binary search per block. Keys are those of
      the grid padded by the kernel's reach, so neighbours need no bounds
      check (where padded keys would overflow int64, out-of-grid neighbours
      are ruled out from coordinates decoded from the key). The merge runs
      once, in the counting pass, which leaves each site's neighbour rows in
      a transient buffer for the writing pass. With an odd kernel only the
      offsets below the centre are searched (each hit is also the reversed
      pair of the mirrored offset, and the centre is the identity);
    * subm, `subm-search=hash`: probe every site's neighbours in the input
      table, inline (the layout a GPU kernel would probe); with an odd
      kernel only the offsets below the centre are searched (each hit is
      also the reversed pair of the mirrored offset, and the centre is the
      identity), and the counting pass keeps one byte per probe saying
      whether it hit, so the writing pass probes only the hits; the home
      slots of a site's probes are prefetched before the first search;
    * regular: enumerate every input's output box: per dimension, the
      offsets that pair form an arithmetic progression between two bounds,
      so the passes visit only the pairs, whatever the kernel volume;
    * transposed: compute every input's output per offset;
    * regular and transposed then unique the candidate output keys through
      the runtime (which gives the sorted output sites and, through the
      inverse map, each pair's output row).

    All count pairs per block of `block-size` sites first and then write
    them, site by site (every offset unrolled where they test offsets), so
    the rulebook is compact (one entry per pair) and its order is
    deterministic: by offset, then by input row.

    The compute loops over offsets in order and, within an offset, over
    pairs in parallel (on the CPU, in chunks of about `chunk-bytes` of
    feature and accumulator rows, each chunk over all offsets, so that the
    offsets revisit rows still in cache): no two pairs of one offset share an output, so the
    scatter-add needs no atomics and the accumulation order is fixed. With a
    static number of output channels, pairs are taken in groups whose row
    updates keep chunks of their output rows in vector registers
    (broadcast-FMA per input channel, chunks that divide the channel count,
    so no masking, and that are whole registers where wider than one: 48
    channels are three 16-lane chunks on AVX-512, not two ragged 24-lane
    ones), each weight vector load serving the whole group. The group's
    rows and chunk registers come from the target's registers and FMA units
    (`vector-bits`, `vector-registers`, `fma-pipes`, `fma-latency`): chunks
    as wide as the row allows, up to 8 registers, then rows up to 8 that
    fill about three quarters of the registers with accumulators and keep
    at least pipes x latency FMA chains in flight (6 rows x 4 registers for
    64 f32 channels on AVX-512, 3 x 8 for 128; `chooseRowBlocking` in
    `SpConv/Support/VectorWidth.h`). `f16` and `bf16` accumulate in
    `f32`.

    With `target=gpu` the loops are shaped for one GPU thread per item
    (see `spconv-parallel-loops-to-gpu`) and no prefetch hints are emitted.
    A convolution with static channel counts becomes, by default
    (`gpu-conv=implicit-gemm`), an output-stationary implicit GEMM: a
    parallel loop over pairs fills an output-major neighbour table (for
    each output row and offset, the input row or -1), and one `gpu.launch`
    over tiles of output rows x output channels (in a grid-stride loop over
    the tiles) walks the offsets and slices of input channels, stages the
    gathered rows and the weight slice in workgroup-memory allocas between
    `gpu.barrier`s, accumulates a register tile per thread with FMAs and
    writes each output once, bias included. The launch carries its role
    (`spconv.kernel`) and its tile sizes, chosen per channel counts, in a
    `spconv.tile` attribute. A tile table (`gpu-tiles=FILE`, JSON, format
    `spconv-gpu-tiles/1`) overrides that choice: an entry applies to a conv
    whose `cin`, `cout` and element `type` (f16, bf16, f32, f64) it names
    and whose `math` (`fma`, `mma-f16`, `mma-bf16`, `mma-tf32`) is the one
    the built-in choice takes for that type under `gpu-matmul` and
    `gpu-mma-ops`; it gives `rows`, `cols`,
    `depth` and `thread_rows` / `thread_cols` (fma) or `warp_rows` /
    `warp_cols` (tensor cores), the names `spconv.tile` records, and may
    pin the cp.async pipeline with `stages` (1: one stage; 2 or 3: only
    f16 and bf16 tensor-core tiles whose channel counts are multiples of
    8). The
    file is read once per run and every entry is checked (a math the type
    cannot use, tiles the kernels cannot run: rows not whole 32-row
    schedule groups, thread or warp tiles that do not divide the tile,
    warp tiles not whole 16x16 fragments, a depth not whole fragment
    steps, over 1024 threads or 48 KiB of static shared memory (81 KiB
    pipelined), stages the tile cannot have, a repeated entry, an
    unknown key); a bad table fails the pass with a message
    naming the file and the entry. Keys `time_us`, `tflops`, `note` and
    any starting with `_` are notes and ignored. The pass gives
    `gpu.barrier` memory effects (an
    external model), which buffer deallocation needs. Otherwise
    (`gpu-conv=gather-scatter`, dynamic channel counts, groups) the
    convolution is a parallel loop over (pair, output channel) of each
    offset, a scalar dot product each, adding into an accumulator. Each
    form is a pattern set of its target (docs/Compiler.md, "Forms"): the
    tiled set, at a higher benefit, declines what it does not take and the
    per-pair set lowers it. Every parallel loop carries its
    role in a `spconv.kernel` string attribute (`count_pairs`,
    `write_pairs`, `conv_f32_16x32`, ...), after which kernels are named.

    It is a dialect conversion: a `!spconv.rulebook` becomes five values
    (`index` input and output site counts, the `memref<?xi32>` input and
    output rows of the pairs, the `memref<(K+1)xindex>` CSR offsets per
    kernel offset) and a `!spconv.hash_table` its two arrays
    (`memref<?xi64>` keys, `memref<?xi32>` rows). Such values may be chosen
    by `arith.select`, carried by `scf.if` / `scf.for` / `scf.while` and `cf`
    branches, and passed to and returned from functions (calls included):
    the upstream structural conversions carry their buffers. An op of
    another dialect that takes or yields one is reported, as are the
    high-level ops that `spconv-decompose` should have removed.

    A `tensor.concat` of rank-2 features along their channels (dynamic
    rows, static channels) becomes one buffer: a conv whose only user
    (shape queries aside) it is, in the same block, writes its rows
    straight into its columns (a strided `memref.subview`; the first such
    conv allocates the buffer), and the other operands are copied in.
    Every operand's rows are checked against the buffer's (a mismatch is
    reported and its columns are zero). Other concatenations are left to
    bufferization.

    The lowering allocates with `memref.alloc` and frees nothing itself:
    run `buffer-deallocation-pipeline` after bufferization, as the
    `spconv-to-cpu` pipeline does.

    A failed runtime call (bad coordinates, duplicate sites) records its
    message with the runtime (`spconv_rt_last_error`) and the rest of the
    computation sees zero sites, so nothing reads out of bounds; callers
    check the runtime's error after the call.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Sites per block when counting and writing rulebook pairs">,
    Option<"submSearch", "subm-search", "::mlir::spconv::SubmSearch",
           /*default=*/"::mlir::spconv::SubmSearch::Sorted",
           "How subm builders find neighbours: `sorted` (merge the sorted "
           "site keys) or `hash` (probe the runtime's hash table inline)",
           "::mlir::spconv::optionValues<::mlir::spconv::SubmSearch>()">,
    Option<"target", "target", "::mlir::spconv::LoopTarget",
           /*default=*/"::mlir::spconv::LoopTarget::CPU",
           "What runs the parallel loops: `cpu` (threads over blocks of "
           "sites, vectorized row updates) or `gpu` (loops shaped for one "
           "GPU thread per item: scalar dot products per (pair, output "
           "channel), no prefetch hints; needs `subm-search=hash` and is "
           "meant to be followed by `spconv-parallel-loops-to-gpu`)",
           "::mlir::spconv::optionValues<::mlir::spconv::LoopTarget>()">,
    Option<"chunkBytes", "chunk-bytes", "int64_t", /*default=*/"2097152",
           "CPU compute: feature and accumulator bytes per chunk of sites "
           "whose pairs are taken over all offsets before the next chunk "
           "(cache blocking; the sums keep a fixed order)">,
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "CPU compute: bits of one vector register of the target (128, "
           "256 or 512); spconv-run and spconv-compile pass their target's">,
    Option<"vectorRegisters", "vector-registers", "int64_t",
           /*default=*/"32",
           "CPU compute: vector registers of the target (x86 with AVX-512 "
           "32, with AVX 16); a group of output rows keeps its chunks in "
           "them">,
    Option<"fmaPipes", "fma-pipes", "int64_t", /*default=*/"2",
           "CPU compute: FMAs of one vector register's width the target "
           "issues per cycle; with fma-latency, the independent FMA chains "
           "a row update keeps in flight at least (spconv-run and "
           "spconv-compile pass their target's, from LLVM's scheduling "
           "model)">,
    Option<"fmaLatency", "fma-latency", "int64_t", /*default=*/"4",
           "CPU compute: cycles before an FMA's sum feeds the next FMA on "
           "the target">,
    Option<"maxUnrolledOffsets", "max-unrolled-offsets", "int64_t",
           /*default=*/"125",
           "Kernels of at most this many offsets (5x5x5) get their offset "
           "loops unrolled (offsets as constants); larger ones loop over "
           "their offsets, so IR size and compile time stay linear in the "
           "kernel volume (subm then searches the hash table, whatever "
           "`subm-search` says)">,
    Option<"gpuConv", "gpu-conv", "::mlir::spconv::GPUConv",
           /*default=*/"::mlir::spconv::GPUConv::ImplicitGemm",
           "With `target=gpu`, how a convolution with static channel counts "
           "is computed: `implicit-gemm` (one tiled gpu.launch per layer "
           "over an output-major neighbour table, workgroup-memory staging, "
           "each output written once) or `gather-scatter` (per offset, one "
           "thread per (pair, output channel)); dynamic channel counts "
           "always gather and scatter",
           "::mlir::spconv::optionValues<::mlir::spconv::GPUConv>()">,
    Option<"gpuMatmul", "gpu-matmul", "::mlir::spconv::GPUMatmul",
           /*default=*/"::mlir::spconv::GPUMatmul::TensorCores",
           "With `gpu-conv=implicit-gemm`, how a tile multiplies: "
           "`tensor-cores` (f16 and bf16 on tensor cores, f32 "
           "accumulation; f32 and f64 on fused multiply-adds), `tf32` (as "
           "`tensor-cores`, and f32 too, "
           "its inputs rounded to TF32: about 3 significant digits per "
           "product) or `fma` (every type on fused multiply-adds)",
           "::mlir::spconv::optionValues<::mlir::spconv::GPUMatmul>()">,
    Option<"gpuMmaOps", "gpu-mma-ops", "::mlir::spconv::GPUMmaOps",
           /*default=*/"::mlir::spconv::GPUMmaOps::Auto",
           "With tensor-core tiles, which ops multiply a warp's fragments: "
           "`mma-sync` (nvgpu.ldmatrix and nvgpu.mma.sync, m16n8k16 for "
           "f16 and bf16, m16n8k8 for tf32, in PTX's lane layouts: each "
           "lane's offsets computed once per tile), `subgroup-mma` "
           "(gpu.subgroup_mma_*, WMMA's opaque 16x16 fragments, whose "
           "addresses every load recomputes; it has no bf16 fragments, "
           "bf16 multiplies as tf32 there) or `auto` (mma-sync for "
           "every fragment type: it halves the instructions of a tf32 "
           "step, and f16 64 -> 64 and 128 -> 128 steps fit their "
           "register budget with it, not with WMMA). The same products "
           "and sums either way",
           "::mlir::spconv::optionValues<::mlir::spconv::GPUMmaOps>()">,
    Option<"gpuTiles", "gpu-tiles", "std::string", /*default=*/"\"\"",
           "With `target=gpu`, a JSON tile table (format "
           "`spconv-gpu-tiles/1`) whose entries replace the built-in tile "
           "choice of the implicit GEMM for the (Cin, Cout, element type, "
           "math) they list; empty for none">
  ];
}

def SpConvParallelLoopsToGPUPass
    : Pass<"spconv-parallel-loops-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Make a GPU kernel of every outermost scf.parallel";
  let description = [{
    Outlines every outermost `scf.parallel` of the host functions (on
    buffers, after bufferization) into a `gpu.func` kernel of one
    `gpu.module`, and replaces the loop by a `gpu.launch_func`:

    * the kernel's threads walk the loop's iterations, linearised with the
      last dimension fastest, in a grid-stride loop (`first = blockIdx.x *
      blockDim.x + threadIdx.x`, `step = gridDim.x * blockDim.x`), so any
      grid covers the whole range; the host launches
      `min(ceil(iterations / block-size), max-blocks)` blocks of
      `block-size` threads, and nothing when there are no iterations;
    * constants used by the loop are cloned into the kernel, so geometry,
      grid extents and unrolled offsets stay folded; everything else
      (buffers, bounds, sizes) becomes a kernel argument;
    * parallel loops nested in the kernel run sequentially on the thread
      that reaches them;
    * kernels are named after the role that `convert-spconv-to-scf` gives
      each loop (the `spconv.kernel` attribute): a loop of a rulebook
      builder gives `<builder>_<role>`, e.g.
      `spconv_build_subm_k3x3x3_s1x1x1_p1x1x1_d1x1x1_g41x1600x1408_count_pairs`
      (the builder is specialised per geometry, so is the kernel), any
      other `spconv_<role>`, e.g. `spconv_conv_f32_16x32`;
    * structurally identical kernels are emitted once and launched from
      every place that needs them; different kernels of one role get
      numbered names;
    * functions that kernels call (the inline hash probe) are copied into
      the kernel module; calling a function without a body is an error.
    * the kernel module carries a data layout (`dlti.dl_spec`) with NVPTX's
      8-byte alignment of i64, so 64-bit keys are loaded and stored whole.
    * a `gpu.launch` of the lowering (the tiled convolution) is outlined
      into the same module, named and de-duplicated by its `spconv.kernel`
      role, its workgroup-memory allocas made workgroup attributions, its
      `spconv.tile` kept, its block size kept, its grid capped by
      `max-blocks` (its body walks the tiles in a grid-stride loop), and no
      known block size set (ptxas reads `.maxntid` as a register budget).

    Loops with reductions are rejected.
  }];
  let dependentDialects = [
    "::mlir::DLTIDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect"
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (1 to 1024)">,
    Option<"maxBlocks", "max-blocks", "int64_t", /*default=*/"65535",
           "Most blocks per launch, 0 for no cap; the grid-stride loop "
           "covers the rest (tests set it small to exercise that path)">,
    Option<"kernelModule", "kernel-module", "std::string",
           /*default=*/"\"spconv_kernels\"",
           "Name of the gpu.module that holds the kernels">
  ];
}

def SpConvGPUKernelsToCPUPass
    : Pass<"spconv-gpu-kernels-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Run GPU kernels on the CPU, block by block (a test lowering)";
  let description = [{
    Emulates `gpu.func` kernels with CUDA's semantics, so that the IR which
    becomes PTX, with its index math, grid-stride loops, bounds guards,
    shared-memory tiles and warp-level ops, runs on a machine without a GPU
    (docs/GPU.md, "What the emulator proves"):

    * each kernel becomes a private `func.func` that runs one block; it takes,
      after the kernel's own arguments, the block id, block size and grid
      size, each for x, y and z;
    * the kernel body is split at every `gpu.barrier` and warp-level op into
      phases, and each phase is a loop over the threads of the block
      (linear id `x + dx * (y + dy * z)`), so no thread starts a phase before
      all have finished the previous one. Per-thread values that a later
      phase uses are recomputed there (pure functions of the thread id) or
      kept in per-thread storage; workgroup attributions are allocated once
      per block;
    * `scf.for` and `scf.if` around a barrier or warp op run once per block:
      their bounds and conditions must not depend on the thread or on
      memory, or the pass reports a barrier in divergent control flow; an
      `scf.if` around warp ops only may differ between warps (both arms run
      predicated per thread; lanes of a warp that disagree fail at run
      time);
    * warps are 32 consecutive threads: `gpu.shuffle` (xor, down, up, idx)
      reads the partner lane's value, `gpu.subgroup_reduce` runs the
      butterfly of upstream's shuffle lowering, and the
      `gpu.subgroup_mma_*` ops give every lane the whole tile (f16 inputs,
      f16 or f32 accumulators, products and sums in f32 in k order). A
      launch of such a kernel whose block is not whole warps is an error at
      run time;
    * each `gpu.launch_func` becomes an `scf.parallel` over the blocks of its
      grid calling the kernel's function; functions copied into the kernel
      module are served by the host's copy.

    * `nvgpu.device_async_copy` (cp.async) queues its copy, zero-fill
      included, in its thread's open group, `nvgpu.device_async_create_group`
      closes the group, and `nvgpu.device_async_wait {numGroups = N}` lands
      all the thread's groups but the N newest, in order: what a thread
      reads of a stage before its wait is what was there before, as on a
      GPU. A copy no thread waited for by the end of its block is an error
      at run time.

    With `race-check`, every load and store through a kernel argument or
    workgroup buffer is reported to the runtime, which fails the run at the
    first two accesses of different threads, one a write, that no barrier
    orders (blocks then run one after another), and at any access to the
    destination of an asynchronous copy before it landed; a landed copy is
    a write by its thread at its wait. Atomics are not checked.

    Not emulated, and reported: private attributions, dynamic shared
    memory, `gpu.all_reduce`, `gpu.printf`, nvvm ops and the other nvgpu
    ops, kernels with unstructured control flow, asynchronous or clustered
    launches.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"raceCheck", "race-check", "bool", /*default=*/"false",
           "Report data races between the threads of a launch at run time "
           "(blocks run one after another)">
  ];
}

def ConvertSpConvNullBuffersToLLVMPass
    : Pass<"convert-spconv-null-buffers-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower spconv.null_buffer to a memref descriptor of nulls";
  let description = [{
    Each `spconv.null_buffer` becomes the LLVM struct of a memref
    descriptor whose allocated and aligned pointers are null, offset 0,
    dynamic sizes 0, static sizes and strides those of its type (strides
    a dynamic size would fix are 0). Its users see it through an
    `unrealized_conversion_cast`, which the conversion of the memref ops to
    LLVM resolves. The pipelines run it right before that conversion.

    It also drops the `spconv.source_line` marks of kernels' arguments
    (spconv-outline-kernels): the lowering has read them, and the
    translation to LLVM IR, which knows no spconv attribute, would warn.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // SPCONV_CONVERSION_PASSES_TD
