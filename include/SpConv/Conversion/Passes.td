//===- Passes.td - SpConv conversion passes ----------------*- tablegen -*-===//
//
// Part of the spconv-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_CONVERSION_PASSES_TD
#define SPCONV_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSpConvToSCFPass : Pass<"convert-spconv-to-scf", "::mlir::ModuleOp"> {
  let summary = "Lower spconv ops to scf.parallel loops and runtime calls";
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
      sites advance, started by a binary search per block; out-of-grid
      neighbours are ruled out from coordinates decoded from the key. With
      an odd kernel only the offsets below the centre are searched (each hit
      is also the reversed pair of the mirrored offset, and the centre is
      the identity);
    * subm, `subm-search=hash`: probe every site's neighbours in the input
      table, inline (the layout a GPU kernel would probe); with an odd
      kernel only the offsets below the centre are searched (each hit is
      also the reversed pair of the mirrored offset, and the centre is the
      identity), and the counting pass keeps one byte per probe saying
      whether it hit, so the writing pass probes only the hits; the home
      slots of a site's probes are prefetched before the first search;
    * regular and transposed: compute every input's valid outputs per
      offset, unique their keys through the runtime (which gives the sorted
      output sites and, through the inverse map, each pair's output row).

    Both count pairs per block of `block-size` sites first and then write
    them, site by site with every offset unrolled, so the rulebook is compact
    (one entry per pair) and its order is deterministic: by offset, then by
    input row.

    The compute loops over offsets in order and, within an offset, over
    pairs in parallel: no two pairs of one offset share an output, so the
    scatter-add needs no atomics and the accumulation order is fixed. With a
    static number of output channels, pairs are taken in groups of 8 whose
    row updates keep chunks of their output rows in vector registers
    (broadcast-FMA per input channel, chunks that divide the channel count,
    so no masking), each weight vector load serving the whole group. `f16` and `bf16`
    accumulate in `f32`.

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
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Sites per block when counting and writing rulebook pairs">,
    Option<"submSearch", "subm-search", "std::string", /*default=*/"\"sorted\"",
           "How subm builders find neighbours: `sorted` (merge the sorted "
           "site keys) or `hash` (probe the runtime's hash table inline)">
  ];
}

#endif // SPCONV_CONVERSION_PASSES_TD
