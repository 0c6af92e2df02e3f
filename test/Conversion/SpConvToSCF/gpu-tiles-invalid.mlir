// Every entry of a tile table is checked when it is loaded; a bad table
// fails the pass with an error at the module naming the file, the entry
// and what is wrong (one table per kind of error, under Inputs/gpu-tiles).
// RUN: not spconv-opt %s -convert-spconv-to-scf="gpu-tiles=%S/Inputs/gpu-tiles/tuned.json" 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: error: convert-spconv-to-scf: gpu-tiles needs target=gpu (it tunes the GPU's implicit GEMM)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/does-not-exist.json" 2>&1 | FileCheck %s --check-prefix=UNREADABLE
// UNREADABLE: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/does-not-exist.json: cannot read: {{.*}}
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/bad-json.json" 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/bad-json.json: invalid JSON: {{.*}}
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/no-format.json" 2>&1 | FileCheck %s --check-prefix=NOFORMAT
// NOFORMAT: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/no-format.json: missing 'format' (expected "spconv-gpu-tiles/1")
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/wrong-format.json" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/wrong-format.json: 'format' must be "spconv-gpu-tiles/1"
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/no-entries.json" 2>&1 | FileCheck %s --check-prefix=NOENTRIES
// NOENTRIES: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/no-entries.json: missing 'entries'
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/unknown-table-key.json" 2>&1 | FileCheck %s --check-prefix=TABLEKEY
// TABLEKEY: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/unknown-table-key.json: unknown key 'devices' (informational keys are time_us, tflops, note and any key starting with '_')
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/missing-field.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/missing-field.json: entries[1]: missing 'rows'
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/missing-shape.json" 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/missing-shape.json: entries[0]: missing 'thread_cols' (math fma)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/wrong-shape-key.json" 2>&1 | FileCheck %s --check-prefix=SHAPEKEY
// SHAPEKEY: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/wrong-shape-key.json: entries[0]: 'thread_rows' does not apply to math mma-tf32 (it takes warp_rows and warp_cols)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/unknown-key.json" 2>&1 | FileCheck %s --check-prefix=KEY
// KEY: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/unknown-key.json: entries[0]: unknown key 'time_ms' (informational keys are time_us, tflops, note and any key starting with '_')
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/not-positive.json" 2>&1 | FileCheck %s --check-prefix=POSITIVE
// POSITIVE: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/not-positive.json: entries[0]: 'cols' must be an integer in [1, 65536]
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/huge.json" 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/huge.json: entries[0]: 'rows' must be an integer in [1, 65536]
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/bad-type.json" 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/bad-type.json: entries[0]: 'type' must be one of f16, bf16, f32, f64
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/bad-math.json" 2>&1 | FileCheck %s --check-prefix=MATH
// MATH: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/bad-math.json: entries[0]: 'math' must be one of fma, mma-f16, mma-bf16, mma-tf32
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/math-for-type.json" 2>&1 | FileCheck %s --check-prefix=F16MATH
// F16MATH: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/math-for-type.json: entries[0]: math mma-f16 is not possible for f32 (mma-f16 takes f16, mma-bf16 bf16, mma-tf32 f32 and bf16, fma any type)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/bf16-for-f16.json" 2>&1 | FileCheck %s --check-prefix=BF16MATH
// BF16MATH: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/bf16-for-f16.json: entries[0]: math mma-bf16 is not possible for f16 (mma-f16 takes f16, mma-bf16 bf16, mma-tf32 f32 and bf16, fma any type)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/tf32-for-f64.json" 2>&1 | FileCheck %s --check-prefix=TF32MATH
// TF32MATH: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/tf32-for-f64.json: entries[0]: math mma-tf32 is not possible for f64 (mma-f16 takes f16, mma-bf16 bf16, mma-tf32 f32 and bf16, fma any type)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/rows-group.json" 2>&1 | FileCheck %s --check-prefix=GROUP
// GROUP: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/rows-group.json: entries[0]: rows 48 is not a multiple of 32 (the rows of a tile-schedule group)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/thread-tile.json" 2>&1 | FileCheck %s --check-prefix=THREADTILE
// THREADTILE: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/thread-tile.json: entries[0]: thread tile 4x3 does not divide the 64x32 tile
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/warp-fragments.json" 2>&1 | FileCheck %s --check-prefix=FRAGMENTS
// FRAGMENTS: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/warp-fragments.json: entries[0]: 'warp_rows' 24 is not a multiple of 16 (whole 16x16 fragments)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/warp-tile.json" 2>&1 | FileCheck %s --check-prefix=WARPTILE
// WARPTILE: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/warp-tile.json: entries[0]: warp tile 32x32 does not divide the 64x48 tile
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/depth.json" 2>&1 | FileCheck %s --check-prefix=DEPTH
// DEPTH: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/depth.json: entries[0]: depth 8 is not a multiple of 16 (the depth of one mma-f16 fragment)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/bf16-depth.json" 2>&1 | FileCheck %s --check-prefix=BF16DEPTH
// BF16DEPTH: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/bf16-depth.json: entries[0]: depth 8 is not a multiple of 16 (the depth of one mma-bf16 fragment)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/threads.json" 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/threads.json: entries[0]: the tile needs 2048 threads per block, more than CUDA's 1024
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/shared.json" 2>&1 | FileCheck %s --check-prefix=SHARED
// SHARED: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/shared.json: entries[0]: the tile stages 80384 bytes of workgroup memory, more than the 49152 of static shared memory
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/stages-shared.json" 2>&1 | FileCheck %s --check-prefix=STAGESSHARED
// STAGESSHARED: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/stages-shared.json: entries[0]: the tile stages 94720 bytes of workgroup memory, more than the 82944 a pipelined tile may take
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/stages-range.json" 2>&1 | FileCheck %s --check-prefix=STAGESRANGE
// STAGESRANGE: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/stages-range.json: entries[0]: 'stages' must be an integer in [1, 3]
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/stages-math.json" 2>&1 | FileCheck %s --check-prefix=STAGESMATH
// STAGESMATH: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/stages-math.json: entries[0]: 'stages' 2 needs math mma-f16 or mma-bf16 (only 16-bit tensor-core tiles are pipelined; 1 is the one-stage form)
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/stages-channels.json" 2>&1 | FileCheck %s --check-prefix=STAGESCHANNELS
// STAGESCHANNELS: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/stages-channels.json: entries[0]: 'stages' 2 needs cin and cout multiples of 8 (rows of whole 16-byte copies), not 12 and 16
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/threads-mismatch.json" 2>&1 | FileCheck %s --check-prefix=DERIVED
// DERIVED: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/threads-mismatch.json: entries[0]: 'threads' 256 does not match the 128 threads of the tile shape
// RUN: not spconv-opt %s -convert-spconv-to-scf="target=gpu subm-search=hash gpu-tiles=%S/Inputs/gpu-tiles/repeated.json" 2>&1 | FileCheck %s --check-prefix=REPEATED
// REPEATED: error: convert-spconv-to-scf: gpu-tiles: {{.*}}Inputs/gpu-tiles/repeated.json: entries[2]: repeats entries[0] (cin 16, cout 32, f32, fma)

func.func @empty() {
  return
}
