//===- Passes.td - SpConv transformation passes ------------*- tablegen -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_TRANSFORMS_PASSES_TD
#define SPCONV_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpConvDecomposePass : Pass<"spconv-decompose", "::mlir::func::FuncOp"> {
  let summary = "Decompose convolutions and pooling into rulebook build + compute";
  let description = [{
    Rewrites every high-level op into the rulebook level:

    * `spconv.conv` becomes `spconv.build_rulebook` of its input coordinates
      and geometry, then `spconv.rulebook_conv`;
    * `spconv.pool` becomes a regular `spconv.build_rulebook`, then
      `spconv.rulebook_pool`;
    * `spconv.inverse_conv` reads the rulebook of the regular conv it
      inverts with `spconv.rulebook_conv inverse`. When its source
      coordinates are the output coordinates of that very rulebook (the usual
      encoder/decoder case, once the forward conv is decomposed) the rulebook
      is reused as is. Otherwise the forward rulebook is built and the
      features are first re-ordered onto its output sites through a hash
      lookup (`spconv.gather_rows`); sites missing from the source contribute
      zero.

    Ops are rewritten in program order so that forward convs are decomposed
    before the inverse convs that read their rulebooks. Run
    `spconv-share-rulebooks` afterwards to merge identical builds.

    Example:

    ```mlir
    %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w : ...
    // becomes
    %rb, %oc = spconv.build_rulebook %c : ... -> !spconv.rulebook<...>, ...
    %of = spconv.rulebook_conv %rb, %f, %w : ...
    ```
  }];
  let dependentDialects = ["::mlir::spconv::SpConvDialect"];
  let statistics = [
    Statistic<"numReusedForInverse", "reused-for-inverse",
              "Inverse convs that read their forward conv's rulebook">,
    Statistic<"numRealigned", "realigned",
              "Inverse convs whose features had to be re-ordered">
  ];
}

def SpConvGenerateBackwardPass
    : Pass<"spconv-generate-backward", "::mlir::ModuleOp"> {
  let summary = "Generate the backward (vector-Jacobian product) of functions";
  let description = [{
    For every `func.func @f attributes {spconv.backward = @g}`, defines

    `@g(args of @f..., one cotangent per float tensor result of @f)
       -> (results of @f..., one gradient per float tensor argument of @f)`

    the gradient of `sum over results of <result, cotangent>` with respect to
    each float tensor argument (features, weights, biases; coordinates get
    none), returned with the forward results. A function whose last op is a
    scalar loss (`tensor<f32>`) called with cotangent 1 gives the loss and
    its gradients: one training step's backward. `@g` may be declared
    beforehand (`func.func private @g(...) -> (...)`, so that other functions
    can call it); its type must then be the one above, or the one above
    without `@f`'s results: `@g` then returns the gradients only and leaves
    out the forward ops they do not read (a conv's output is not read by its
    gradients, so a layer's backward does not run its forward again).
    Arguments nothing depends on get zero gradients.

    `@g` is `@f`'s ops followed by the adjoint of each, in reverse order.
    The rules reuse the forward operands, so every conv's gradients read the
    rulebook its forward pass built:

    | forward op | adjoints |
    |---|---|
    | `spconv.rulebook_conv [inverse] [groups g]` | features: the rulebook read the other way with each group's weight block transposed; weight: `spconv.rulebook_weight_grad`; bias: the column sum of the output's adjoint |
    | `spconv.rulebook_pool max\|avg` | `spconv.rulebook_pool_grad` |
    | `spconv.gather_rows` | `spconv.scatter_add_rows` into zeros |
    | `spconv.segment_max` | `spconv.segment_max_grad` into zeros |
    | `spconv.unfold` / `spconv.fold` | `spconv.fold` / `spconv.unfold` |
    | `tensor.concat` | `tensor.extract_slice` of each operand's part |
    | `tensor.cast`, `tensor.collapse_shape`, `tensor.expand_shape` | the inverse reshape |
    | `linalg.matmul` (plain) | `dA = dC B^T`, `dB = A^T dC` as `linalg.matmul`s (vectorized like the forward pointwise convs); the accumulator gets `dC` |
    | `linalg.generic` and other named linalg ops (`map`, `broadcast`, `transpose`, element-wise ops, `reduce` with a sum) | a `linalg.generic` per float input: the body differentiated in forward mode (`arith` add, sub, mul, div, neg, max/min, select, extf/truncf; `math` exp, log, sqrt, tanh), summed over the dimensions the input does not index |

    The input is at the rulebook level (run `spconv-decompose` first; the
    `spconv-to-*` pipelines run this pass right after it), with calls
    inlined and before `spconv-fuse-epilogues`. Anything else on the path
    from the arguments to the results (control flow, calls, ops without a
    rule, a linalg body that reads its output other than as a sum) is an
    error naming the op.

    Example:

    ```mlir
    func.func @loss(%c: !coords, %x: tensor<?x4xf32>, %w: tensor<27x4x8xf32>)
        -> tensor<f32> attributes {spconv.backward = @loss_backward} { ... }
    // generated:
    func.func @loss_backward(%c: !coords, %x: tensor<?x4xf32>, %w: tensor<27x4x8xf32>,
                             %seed: tensor<f32>)
        -> (tensor<f32>, tensor<?x4xf32>, tensor<27x4x8xf32>)
    ```
  }];
  let dependentDialects = [
    "::mlir::spconv::SpConvDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let statistics = [
    Statistic<"numGenerated", "generated", "Backward functions generated">
  ];
}

def SpConvShareRulebooksPass
    : Pass<"spconv-share-rulebooks", "::mlir::func::FuncOp"> {
  let summary = "Merge rulebook builds of the same sites and geometry";
  let description = [{
    Two `spconv.build_rulebook` ops with the same coordinates value and the
    same rulebook type (geometry and grid) compute the same rulebook. This
    pass keeps the first one and replaces every later one that it dominates,
    anywhere in the function, so that e.g. all subm layers on one set of
    sites, and every inverse conv and its forward conv, share one build:
    what spconv asks users to arrange by hand with `indice_key`.
  }];
  let statistics = [
    Statistic<"numShared", "shared-builds",
              "Rulebook builds replaced by an earlier identical build">
  ];
}

def SpConvFuseEpiloguesPass
    : Pass<"spconv-fuse-epilogues", "::mlir::func::FuncOp"> {
  let summary = "Fold element-wise linalg ops on a conv's result into its epilogue";
  let description = [{
    A `spconv.rulebook_conv` whose result is read only by one element-wise
    `linalg` op (`linalg.generic` with parallel loops only, `linalg.map`,
    what `convert-elementwise-to-linalg` makes of `arith` on tensors) takes
    that op's body into its epilogue, so that the lowering applies it as the
    conv's output rows are finished instead of in another pass over memory:
    BatchNorm's scale and shift, ReLU or LeakyReLU, residual adds, any chain
    of them, one op at a time (the fused conv is again a candidate).

    The linalg op must have one result of the conv result's type, written
    through an identity map, and not read its init; each other input must
    be read through the identity map (`rows x Cout`, a row operand) or
    `(d0, d1) -> (d1)` (`Cout`, a channel operand); its body must hold pure
    element-wise ops only, and use values from outside only if constants
    define them (they are copied in). The fused conv takes the linalg op's
    place, where its new operands are all defined; where something reads
    the conv's extents before that (the `tensor.empty` of an init), it
    stays in the conv's place if the new operands are defined there, and
    nothing is fused otherwise. A result with other users than `tensor.dim`
    is left alone: the unfused value would be lost.

    Example:

    ```mlir
    %y = spconv.rulebook_conv %rb, %f, %w : ... -> tensor<?x16xf32>
    %r = linalg.map ins(%y : tensor<?x16xf32>) outs(%init : tensor<?x16xf32>)
        (%v: f32, %unused: f32) {
          %m = arith.maximumf %v, %zero : f32
          linalg.yield %m : f32
        }
    // becomes
    %r = spconv.rulebook_conv %rb, %f, %w : ... -> tensor<?x16xf32> epilogue {
        ^bb0(%v: f32):
          %zero = arith.constant 0.0 : f32
          %m = arith.maximumf %v, %zero : f32
          spconv.yield %m : f32
        }
    ```
  }];
  let dependentDialects = ["::mlir::spconv::SpConvDialect"];
  let statistics = [
    Statistic<"numFused", "fused-ops",
              "Element-wise ops folded into a conv's epilogue">
  ];
}

def SpConvProfilePass : Pass<"spconv-profile", "::mlir::ModuleOp"> {
  let summary = "Time every rulebook build and compute at run time";
  let description = [{
    Brackets every rulebook-level op (`spconv.build_rulebook`,
    `spconv.rulebook_conv`, `spconv.rulebook_pool`, `spconv.gather_rows`)
    and every `linalg.matmul` on tensors (what canonicalization makes of a
    pointwise subm conv) with calls of the runtime's `spconv_rt_profile_begin(id)` and
    `spconv_rt_profile_end(id, rows)`, where `rows` is the number of rows
    the op produced (output sites for a build). Run it after
    `spconv-decompose` and `spconv-share-rulebooks`, so that a shared
    rulebook is timed once, in the layer that builds it.

    The module gets a `spconv.profile_labels` array whose entry `id`
    describes op `id`: its name, geometry, channels and source location.
    `spconv-run --profile` prints the table after a run.

    Ids are numbered 0, 1, ... over the module. The runtime holds ids below
    `SPCONV_RT_PROFILE_MAX_ENTRIES` (2^20), so a module with more timed ops
    than `max-entries` (at most that bound) is rejected at compile time, at
    the first op past it. The runtime calls return a status, which the
    generated code ignores: a failing call records its error, which the
    caller reads through `spconv_rt_last_error()` like any other.
  }];
  let options = [
    Option<"maxEntries", "max-entries", "int64_t", /*default=*/"1 << 20",
           "Most timed ops a module may have (the runtime's "
           "SPCONV_RT_PROFILE_MAX_ENTRIES, 2^20, or fewer)">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def SpConvParallelizeOuterLoopsPass
    : Pass<"spconv-parallelize-outer-loops", "::mlir::func::FuncOp"> {
  let summary = "Run the outermost affine loop of each nest on threads, if "
                "it is parallel";
  let description = [{
    The CPU pipeline's element-wise ops and reductions (what a conv's
    epilogue did not take: a bias gradient, a standalone activation) are
    affine loop nests from `convert-linalg-to-affine-loops`. Each nest's
    outermost `affine.for` becomes an `affine.parallel` (then OpenMP
    threads) when it carries no dependence; inner loops stay loops, which
    LLVM vectorizes. Unlike upstream's `affine-parallelize{max-nested=1}`,
    a loop under a sequential loop is never made parallel: a column sum
    (`linalg.reduce` over rows, rows outermost) would otherwise open a
    parallel region for its channels once per row, tens of thousands of
    fork-joins a call, which made a bias gradient three times slower on two
    threads than on one. Such a nest runs on the calling thread. Loops
    nested in any other loop (`scf.for`, `scf.parallel`) are left alone
    for the same reason.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect"];
}

def SpConvMatmulToRowLoopsPass
    : Pass<"spconv-matmul-to-row-loops", "::mlir::func::FuncOp"> {
  let summary = "Lower f32 linalg.matmul on buffers to vectorized row loops";
  let description = [{
    A pointwise subm conv canonicalizes to `linalg.matmul` of the features
    `[N x Cin]` by the weight `[Cin x Cout]`. This pass lowers such a matmul
    (f32, after bufferization, a static number of output columns, rows
    contiguous in the weight and the output) to a parallel loop over groups
    of output rows, then one over the rows left over. A group keeps a chunk
    of each of its rows' outputs in vector registers (in chunks that divide
    the column count) and adds one broadcast input channel times a weight
    row per step, in input-channel order: one independent FMA chain per row
    and chunk register, and one weight load serving every row of the group.
    The group's rows and chunk registers are the rulebook convolution's
    (`chooseRowBlocking`: the target's `vector-bits`, `vector-registers`,
    `fma-pipes` and `fma-latency`). Other matmuls are left to linalg's own
    lowering.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Bits of one vector register of the target (128, 256 or 512)">,
    Option<"vectorRegisters", "vector-registers", "int64_t", /*default=*/"32",
           "Architectural vector registers of the target (at least 4)">,
    Option<"fmaPipes", "fma-pipes", "int64_t", /*default=*/"2",
           "FMAs of one vector register's width the target issues per "
           "cycle (at least 1)">,
    Option<"fmaLatency", "fma-latency", "int64_t", /*default=*/"4",
           "Cycles before an FMA's sum feeds the next FMA on the target (at "
           "least 1)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def SpConvGuardAllocationsPass
    : Pass<"spconv-guard-allocations", "::mlir::ModuleOp"> {
  let summary = "Skip the code after a failed allocation, report it, return";
  let description = [{
    A heap allocation that fails returns a null buffer: the runtime's
    allocator records an out-of-memory error and sets a per-thread flag
    (`spconv_rt_alloc_failed()`). The code after it must not run, or it
    writes through the null pointer. This pass splits every block of the
    module's functions at its allocations (`memref.alloc`, and the ops that
    may allocate inside them: calls of the module's functions, ops whose
    regions allocate) into segments, and puts each segment under an
    `scf.if` on the flag. Right after an allocation that failed, the
    runtime's `spconv_rt_memref_report_alloc_failure(what, line)` names
    what the buffer was for (its name location, `loc("the pairs of a
    rulebook"(...))`, which the lowering gives the buffers it makes, and an
    enclosing one, such as a rulebook builder's; else its type) and the
    source line; every later segment then yields placeholders
    (`spconv.null_buffer`, zeros) instead of running, so the function
    returns null buffers and the caller reads the error. A loop that
    allocates runs no more iterations once the flag is set.

    Run it on buffers, before the deallocation pipeline: the deallocations
    it places then free, on the failure path, exactly what was allocated.
    With `after-deallocation`, the pass instead protects what the
    deallocation pipeline allocated itself: the copy into a clone of a
    returned buffer runs only if the clone was allocated, and the small
    fixed-size arrays of the deallocations' bookkeeping move to the stack,
    where allocation cannot fail. An allocation that no guard covers (the
    flag is not read right after it) and that an op other than a copy
    into it, a deallocation, a view or a return uses is then an error, so
    that no allocation escapes the guard unnoticed.

    An allocation inside a parallel loop (it would run on a worker thread,
    whose flag the calling thread cannot see) or inside a region the pass
    does not know is an error naming the op.
  }];
  let options = [
    Option<"afterDeallocation", "after-deallocation", "bool",
           /*default=*/"false",
           "Protect the allocations the deallocation pipeline added (its "
           "clones) and check that no allocation is unguarded">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::spconv::SpConvDialect"
  ];
}

def SpConvCheckInputPass : Pass<"spconv-check-input", "::mlir::ModuleOp"> {
  let summary = "Fail, naming the op, on input the pipelines cannot lower";
  let description = [{
    The first pass of `spconv-to-cpu`, `spconv-to-cuda` and
    `spconv-to-gpu-emulator`. They bufferize their input and free its
    buffers with upstream's ownership-based deallocation, which puts
    ownership constants at the top of every region, inside an
    `omp.wsloop` too, whose region must hold its loop nest alone: the
    module would come out invalid. The pipelines make their own threads
    (`scf.parallel` becomes OpenMP), so an input with OpenMP ops is refused
    here, naming the first one, before any pass runs on it.
  }];
  let options = [
    Option<"pipeline", "pipeline", "std::string", /*default=*/"\"\"",
           "The pipeline named in the error (empty: none)">
  ];
}

def SpConvCheckLoweredPass : Pass<"spconv-check-lowered", "::mlir::ModuleOp"> {
  let summary = "Fail unless only ops that translate to LLVM IR are left";
  let description = [{
    The last pass of `spconv-to-cpu`, `spconv-to-cuda` and
    `spconv-to-gpu-emulator`. Dialect conversion to LLVM is partial: an op
    whose lowering is not registered in the context (an embedder's registry
    without our dialects' conversions, say) stays, and the pipeline would
    succeed with it in the output. This pass fails instead, naming the
    first such op and the pipeline that left it.

    What may remain: `builtin.module`, the LLVM dialect, the OpenMP dialect
    (the CPU's threads; translated to LLVM IR with its runtime calls), and
    the CUDA host code's `gpu.binary` and `gpu.launch_func` (translated by
    the binary's offloading handler).
  }];
  let options = [
    Option<"pipeline", "pipeline", "std::string", /*default=*/"\"\"",
           "The pipeline named in the error (empty: the pass itself)">
  ];
}

def SpConvBufferizeKernelCallsPass
    : Pass<"spconv-bufferize-kernel-calls", "::mlir::ModuleOp"> {
  let summary = "Call kernel declarations with buffers, so that One-Shot "
                "Bufferize need not guess what they alias";
  let description = [{
    A module whose kernels (`spconv-outline-kernels`) are compiled on their
    own holds them as declarations, which One-Shot Bufferize cannot see
    into: it must assume that each result of each call may alias each
    operand, and on a module with hundreds of calls (a training step) that
    made the analysis take seconds. What a kernel does is known: it only
    reads its tensor operands, and each result is a buffer that its caller
    owns (the deallocation pipeline of the kernel's own lowering clones a
    result that would alias an argument).

    So each call of a kernel declaration (a declaration that takes a
    `spconv.source_line` argument) gets its tensor operands through
    `bufferization.to_buffer read_only` and returns buffers, which enter
    tensor land through `bufferization.to_tensor restrict writable`; the
    declaration gets the signature that One-Shot Bufferize's
    `IdentityLayoutMap` function boundaries give the kernel compiled on
    its own (tensors become identity-layout memrefs). Kernels with bodies
    and other functions are left alone. Runs right before One-Shot
    Bufferize in `spconv-to-cpu`.

    Example:

    ```mlir
    %y = call @spconv_kernel_rulebook_conv_1f0c(%line, %in, %x, %w)
        {no_inline} : (i64, tensor<?xi32>, tensor<?x16xf32>,
                       tensor<27x16x16xf32>) -> tensor<?x16xf32>
    // becomes
    %0 = bufferization.to_buffer %in read_only : tensor<?xi32> to memref<?xi32>
    ...
    %1 = call @spconv_kernel_rulebook_conv_1f0c(%line, %0, ...) {no_inline}
        : (i64, memref<?xi32>, ...) -> memref<?x16xf32>
    %y = bufferization.to_tensor %1 restrict writable
        : memref<?x16xf32> to tensor<?x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def SpConvOutlineKernelsPass
    : Pass<"spconv-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Move each layer's rulebook op into a kernel function, "
                "one per distinct layer";
  let description = [{
    Each `spconv.build_rulebook`, `spconv.rulebook_conv`,
    `spconv.rulebook_pool`, `spconv.rulebook_pool_grad` and
    `spconv.rulebook_weight_grad` of the module's functions, each linalg
    op on tensors whose accumulators are fresh (a pointwise conv's
    `linalg.matmul` into a `linalg.fill` or `linalg.broadcast` of a
    `tensor.empty`, BatchNorm's maps and reductions into a `tensor.empty`:
    the ops that make the accumulator move with it, so that the kernel
    allocates its results and writes none of its arguments; a fill used
    elsewhere too keeps the op out) and each `tensor.concat` moves into a
    private function of its own, a *kernel*, called where the op was
    (`func.call` with `no_inline`, so that it stays a function when the
    lowered code is inlined). Ops that are the same but for their location
    (same attributes, operand and result types, epilogue; the same results
    used) share one kernel: a network that repeats a layer lowers and
    compiles its code once. Constants a kernel uses are cloned into it;
    every other value it uses is an argument. A kernel's name is
    `spconv_kernel_<op>_<hash>`, the hash (xxh3, 64 bits) of its text, so
    equal layers of different modules get equal kernels.

    What differs between the layers a kernel serves is passed in, not baked
    in: its first argument (an `i64` marked `spconv.source_line`) is the
    calling op's source line, which the kernel's run-time errors (size
    checks, a failed allocation) report. Its tensor arguments are marked
    `bufferization.access = "read"`: a kernel never writes them, which its
    callers' bufferization needs to know when the kernel is a declaration
    (compiled on its own). Results that are not used are not returned (a
    submanifold build's output coordinates are its input's).

    `spconv-to-cpu` runs it after the front end (`outline-kernels=true`,
    the default). The GPU pipelines do not: where a CUDA buffer lives is
    decided over the inlined host code.

    Example:

    ```mlir
    %y = spconv.rulebook_conv %rb, %x, %w : ... loc("net.mlir":12:8)
    // becomes
    %line = arith.constant 12 : i64
    %y = call @spconv_kernel_rulebook_conv_1f0c3b5e9d2a4c77(%line, %rb, %x, %w)
        {no_inline} : (i64, !spconv.rulebook<...>, tensor<?x16xf32>,
                       tensor<27x16x16xf32>) -> tensor<?x16xf32>
    func.func private @spconv_kernel_rulebook_conv_1f0c3b5e9d2a4c77(
        %line: i64 {spconv.source_line}, %rb: !spconv.rulebook<...>,
        %x: tensor<?x16xf32>, %w: tensor<27x16x16xf32>) -> tensor<?x16xf32> {
      %y = spconv.rulebook_conv %rb, %x, %w : ...
      return %y : tensor<?x16xf32>
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect"
  ];
}

def SpConvHoistOpenMPParallelPass
    : Pass<"spconv-hoist-omp-parallel", "::mlir::func::FuncOp"> {
  let summary = "One thread team for a nest of sequential loops around "
                "parallel ones";
  let description = [{
    `convert-scf-to-openmp` makes each `scf.parallel` an `omp.parallel`
    around an `omp.wsloop`: a team is forked and joined per parallel loop.
    The CPU conv walks its pairs chunk by chunk and, in each chunk, offset by
    offset, each offset's pairs a parallel loop: hundreds of forks and joins
    per layer (189 for a subm 16 -> 16 layer of 100k sites), which cost more
    than a small layer's work on a second thread.

    This pass finds the outermost `scf.for` around a plain `omp.parallel`
    (no clauses, nothing but a work-sharing loop without `nowait`) whose
    bodies hold only such parallel regions, nested loops of the same kind
    and operations that write no memory, and makes it run inside one
    `omp.parallel`: every thread runs the sequential loops and the bound
    computations, and each parallel loop is the same `omp.wsloop` as before,
    whose closing barrier keeps the loops in order. The iterations each
    thread takes are the same, and so is every sum's order.

    Every thread reads what the sequential code reads while others may
    already be in the next work-sharing loop, so the nest is left alone
    where a read may alias what a work-sharing loop writes (MLIR's alias
    analysis), where a work-sharing loop has an operation of unknown
    effects and the sequential code reads, or where a loop carries values.

    Example:

    ```mlir
    scf.for %c = %c0 to %chunks step %c1 {
      %lo = memref.load %offsets[%c] : memref<?xindex>
      omp.parallel {
        omp.wsloop { omp.loop_nest (%i) : index = (%lo) to (%n) step (%c1) {
          ... omp.yield } }
        omp.terminator
      }
    }
    ```

    becomes

    ```mlir
    omp.parallel {
      scf.for %c = %c0 to %chunks step %c1 {
        %lo = memref.load %offsets[%c] : memref<?xindex>
        omp.wsloop { omp.loop_nest (%i) : index = (%lo) to (%n) step (%c1) {
          ... omp.yield } }
      }
      omp.terminator
    }
    ```
  }];
  let dependentDialects = ["::mlir::omp::OpenMPDialect"];
}

def SpConvOutlineOpenMPParallelPass
    : Pass<"spconv-outline-omp-parallel", "::mlir::ModuleOp"> {
  let summary = "Move each omp.parallel into a function of its own";
  let description = [{
    The translation to LLVM IR outlines every `omp.parallel` region into
    the function the OpenMP runtime calls, with LLVM's CodeExtractor, whose
    analysis walks the whole function the region is in, once per region. A
    lowered network is one function with hundreds of parallel regions
    (every loop nest of every layer), so that walk was quadratic: about a
    quarter of a cold compile of MinkUNet's training step.

    This pass moves each outermost `omp.parallel` of an `llvm.func` into a
    private `llvm.func` of its own (`<function>.omp_parallel.<n>`), called
    where the region was with the values it uses from outside. Constants and
    addresses of globals are cloned into the new function instead of passed,
    so that the outlined region sees them as before. The translation then
    walks a function of one region per region; LLVM inlines the small
    functions back. It runs at the end of `spconv-to-cpu` and
    `spconv-to-gpu-emulator` when they use OpenMP.

    Example:

    ```mlir
    llvm.func @f(%n: i64, %p: !llvm.ptr) {
      omp.parallel { ... uses %n, %p ... omp.terminator }
      llvm.return
    }
    // becomes
    llvm.func @f(%n: i64, %p: !llvm.ptr) {
      llvm.call @f.omp_parallel.0(%n, %p) : (i64, !llvm.ptr) -> ()
      llvm.return
    }
    llvm.func internal @f.omp_parallel.0(%n: i64, %p: !llvm.ptr) {
      omp.parallel { ... omp.terminator }
      llvm.return
    }
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def SpConvLowerNDVectorOpsPass : Pass<"spconv-lower-nd-vector-ops"> {
  let summary = "Rewrite n-D from_elements and extract_strided_slice 1-D";
  let description = [{
    `convert-to-llvm` lowers `vector.from_elements` and
    `vector.extract_strided_slice` of one dimension only. Tensor-core
    fragments are 2-D (`nvgpu.mma.sync`'s operands, and the emulator's
    copies of them): a fragment built element by element becomes an n-D
    from_elements once canonicalized, and the halves of an ldmatrix x4 are
    n-D strided slices. This pass rewrites both with upstream's patterns
    (each unrolled along its outer dimension into 1-D ops and
    `vector.insert`s). It runs right before the
    conversion to LLVM in `spconv-to-cpu` and `spconv-to-gpu-emulator`, and
    on the kernels in `spconv-to-cuda`.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def SpConvGPUBf16MmaSyncPass : Pass<"spconv-gpu-bf16-mma-sync"> {
  let summary = "Rewrite bf16 nvgpu.mma.sync as nvvm.mma.sync";
  let description = [{
    Upstream's `convert-nvgpu-to-nvvm` passes an `nvgpu.mma.sync`'s
    operands to `nvvm.mma.sync` as vectors of two elements, from which the
    latter deduces the PTX types: `vector<2xbf16>` is not among them (PTX
    passes bf16 pairs in 32-bit registers) and the conversion fails. This
    pass rewrites the bf16 multiplies (m16n8k16 and m16n8k8, f32
    accumulators) before it: each pair of A and B bitcast to an `i32`, the
    accumulators as `f32` scalars, the PTX types (`bf16`) and layouts
    (`row`, `col`) given, and the result's four floats made the 2 x 2
    fragment again. Other multiplies are left to upstream. The CUDA
    pipeline runs it on the kernels before NVVM.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def SpConvGPUStridedCopiesPass
    : Pass<"spconv-gpu-strided-copies", "::mlir::func::FuncOp"> {
  let summary = "Make copies of strided views parallel loops, for kernels";
  let description = [{
    A `memref.copy` whose source or target has a non-identity layout (a
    concatenation writing a strided view of its result's columns) becomes
    upstream's `linalg.copy` lowered to an `scf.parallel` nest, tagged
    `spconv.kernel = "strided_copy"`, which `spconv-parallel-loops-to-gpu`
    makes a kernel. Left a copy, it would run on the host: both buffers in
    managed memory, and a host wait for the kernels that wrote the source.
    Copies of whole buffers (identity layouts on both sides) stay: they
    become `gpu.memcpy` in `spconv-gpu-memory`. `spconv-to-cpu` runs it
    too: there a strided copy would call the runner library's `memrefCopy`,
    which copies element by element on one thread, while the loops run on
    OpenMP threads.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

//===----------------------------------------------------------------------===//
// The GPU pipelines' transforms around spconv-parallel-loops-to-gpu
// (lib/Transforms/GPU/): before it, the kernels' loop order; after it, the
// host side (memory placement, stream order, runtime calls) and the device
// side (NVPTX's types).
//===----------------------------------------------------------------------===//

def SpConvGPUParallelDimsFirstPass
    : Pass<"spconv-gpu-parallel-dims-first", "::mlir::func::FuncOp"> {
  let summary = "Put the parallel dimensions of linalg ops outside their "
                "reductions, so that one kernel runs each";
  let description = [{
    `convert-linalg-to-parallel-loops` nests an op's loops in the order of
    its iterators and `spconv-parallel-loops-to-gpu` makes a kernel of each
    outermost `scf.parallel`, so an op that reduces over its outer
    dimension (a bias gradient, a sum over rows: iterators `[reduction,
    parallel]`) became a host loop over the rows launching one small
    kernel per row. This pass permutes such an op's iterators
    (`linalg::interchangeGenericOp`, generalizing a named op first) so
    that the parallel ones come first, each group in its order: one
    kernel, one thread per parallel point, each reducing in the original
    order (the same sum, deterministically). An op whose parallel
    dimensions already lead is left as it is.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def SpConvGPUMemoryPass : Pass<"spconv-gpu-memory", "::mlir::ModuleOp"> {
  let summary = "Place the host functions' buffers in device, managed or "
                "host memory";
  let description = [{
    Each `memref.alloc` of the host functions goes where its uses need it,
    following them through views and casts:

    - only the device touches its contents (kernel operands, the runtime's
      CUDA primitives `spconv_rt_cuda_*`): device memory, `gpu.alloc`;
    - a result of a public function counts as device use: the caller
      outside the module copies it explicitly;
    - the host code reads or writes it too (`memref.load` / `store`, the
      CPU runtime), or it escapes otherwise (yielded from a region, passed
      to a function of the module): CUDA managed memory, `gpu.alloc
      host_shared`, one pointer valid on both sides;
    - only the host touches it: it stays host memory.

    Shapes, deallocation and pointer comparisons (`memref.dim`,
    `memref.dealloc`, `memref.extract_aligned_pointer_as_index`) are not
    accesses, nor is a `memref.copy` of whole buffers (identity layouts):
    it becomes a `gpu.memcpy` between whatever memory its ends got (a
    rulebook build's status, read back from device into host memory); a
    copy between host buffers stays a host copy, one of a strided view
    touches both ends on the host. Frees of GPU memory become
    `gpu.dealloc`. The GPU operations
    are synchronous; `spconv-gpu-stream-order` chains them on one stream.

    A constant global that the device reads (`memref.get_global` of a
    `memref.global constant`: a bufferized dense constant, such as a loss's
    seed) is uploaded once per call: a buffer allocated at the function's
    entry, filled by a `gpu.memcpy` from the global and freed before every
    return, placed like the other buffers (device memory, managed if host
    code reads it too or it is passed to a function of the module, which
    may launch kernels on it). Kernels stay free of data, so identical
    ones still deduplicate. A kernel operand that is stack memory
    (`memref.alloca`),
    a mutable global, or a constant global that leaves the function
    (through casts and views) is an error: the device cannot read it.

    A public function's arguments are the caller's device memory (the CUDA
    ABI). Host code that loads from one directly (a scalar read by
    `tensor.extract`) reads a copy in a stack slot, made by a `gpu.memcpy`
    at the function's entry, if the argument is statically shaped and at
    most 4 KiB (a stack slot needs no guard against a failed allocation);
    any other host access to an argument (a larger one's loads, loads
    through a view, a CPU runtime primitive without a CUDA twin) is an
    error naming the argument and the access, since it would fault on a
    GPU though the emulator's host memory hides it.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def SpConvGPUStreamOrderPass
    : Pass<"spconv-gpu-stream-order", "::mlir::ModuleOp"> {
  let summary = "Chain the host functions' GPU work on one stream";
  let description = [{
    Every GPU operation of a host function (`gpu.launch_func`, device
    `gpu.alloc`, `gpu.dealloc`, `gpu.memcpy`, `gpu.memset`) becomes
    asynchronous and depends on the one before it: the function is one
    token chain, started by a `gpu.wait async` at its entry, so its work
    runs in program order on one stream with no synchronisation between
    launches. Tokens cross `scf.if` (an extra result) and `scf.for` (an
    extra iteration argument); GPU work inside any other region operation
    is an error.

    The host waits for the stream, through a call of
    `spconv_rt_cuda_stream_synchronize(token)`, only where work may be in
    flight and it must:

    - before host code that reads or writes device-visible memory (a
      `gpu.alloc` buffer, a function argument, anything not traced to
      `memref.alloc`, `memref.alloca` or `memref.get_global`), or an
      operation with regions containing such code;
    - before a call that takes device-visible memory, a call of another
      function of the module (it runs its own chain) and the profiling
      timers (`spconv_rt_profile_*`);
    - right after a `gpu.memcpy` into host memory (a read-back, such as a
      rulebook build's status), whose destination the host reads next;
    - before returning, so that the caller finds the results complete.

    The runtime's CUDA primitives (`spconv_rt_cuda_memref_*`) enqueue their
    work on the chain's stream and need no wait before them.
    Scalar-only calls (the runtime's error reports) do not wait. Managed
    allocations (`gpu.alloc host_shared`) stay synchronous: CUDA allocates
    them without a stream. The input's GPU operations must be synchronous.

    A call rather than `gpu.wait`: upstream's `gpu-to-llvm` lowers a token
    that reaches `gpu.wait` through a block argument (as every token that
    crossed an `scf.if` does) as an event, not as the stream it is.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def SpConvGPURuntimeCallsPass
    : Pass<"spconv-gpu-runtime-calls", "::mlir::ModuleOp"> {
  let summary = "Call the runtime's CUDA primitives from the host code";
  let description = [{
    Redirects the host code's calls of the runtime's data-parallel
    primitives to their CUDA twins in `libspconv_runtime_cuda`:
    `spconv_rt_memref_{hash_build, unique, exclusive_scan_i32,
    exclusive_scan_i64}` become `spconv_rt_cuda_memref_*`, with the same
    descriptors and results (the hash table follows the same layout
    contract, so the kernels' inline probes find the same rows). The
    other runtime calls (coordinate validation, error reports) stay on the
    CPU, reading managed memory.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def SpConvGPUCheckNVPTXTypesPass
    : Pass<"spconv-gpu-check-nvptx-types", "::mlir::ModuleOp"> {
  let summary = "Reject kernels computing in floats NVPTX cannot compile";
  let description = [{
    LLVM's NVPTX back end has no arithmetic for `f80` or `f128`: a kernel
    using them would end in an LLVM fatal error while the module is
    compiled to a binary. This check names the first such operation (its
    results, or its regions' arguments, of that type or shaped over it) in
    every `gpu.module`. The CUDA pipeline runs it before NVVM.
  }];
}

def SpConvGPUDynamicSharedMemoryPass
    : Pass<"spconv-gpu-dynamic-shared-memory", "::mlir::ModuleOp"> {
  let summary = "Move kernels' workgroup buffers past 48 KiB into dynamic "
                "shared memory";
  let description = [{
    CUDA gives a block at most 48 KiB of static shared memory; more must be
    dynamic, sized at the launch and opted into per function (the runtime's
    `mgpuLaunchKernel` does the latter). A kernel whose workgroup
    attributions take more than 48 KiB in all gets them as `memref.view`s
    of one `gpu.dynamic_shared_memory` buffer instead, each at a multiple
    of 128 bytes (the kernel rounds the buffer's start up to one: upstream
    declares it 16-byte aligned, WMMA fragments need 32), and every
    `gpu.launch_func` of it passes their size plus that slack, which the
    kernel records as
    `spconv.dynamic_shared_memory` (ptxas -v counts static shared memory
    only; scripts/kernel_reports.py reads it). Kernels within 48 KiB keep
    static buffers.

    Kernels are written with static workgroup buffers, which the emulator
    (spconv-gpu-kernels-to-cpu) runs as they are; this pass is the CUDA
    pipeline's, before NVVM. A kernel past `max-bytes` is an error naming
    it and its size, as is one whose launches already pass dynamic shared
    memory.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"101376",
           "The most shared memory a block may take: 99 KiB, what every "
           "sm_80-or-later chip grants (sm_86, sm_89 and sm_120 grant no "
           "more; sm_80 163 KiB, sm_90 227 KiB)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

#endif // SPCONV_TRANSFORMS_PASSES_TD
