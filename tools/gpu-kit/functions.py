"""The functions a GPU kit carries, and the options each is compiled with.

Shared by the kit's builder (which compiles them here) and its driver
(which finds them by name on the GPU machine): one list, one naming.

Groups:
  matrix   every case of the execution matrix (test/Integration/CPU/
           conv_matrix.py), as written, and the f32 convs again on TF32
           tensor cores (`tf32/<case>`);
  gradient the conv gradients of Inputs/gradients.mlir whose inputs follow
           from their types;
  network  the two example networks (SECOND's encoder, MinkUNet) and the
           MinkUNet training step (forward, loss, generated backward, SGD);
  layer    subm 3x3x3 C -> C on the LiDAR yardstick grid, C in 16, 32, 64,
           128, in f32, tf32, f16 and bf16, plain and with --profile; at 64
           and 128 channels the tensor-core layers again with the other
           family of fragment ops (`_subgroup-mma`: gpu-mma-ops), timed
           beside the default until a GPU has measured both;
  tile     the f16 / f32 / tf32 layers again under other implicit-GEMM tiles
           (one-entry tuning tables), for the tile sweep;
  baseline with build_kit.py --baseline-compiler: the networks and layers
           again (`<name>@baseline`), the same sources compiled by another
           build's spconv-compile, for the A/B phase.

Targets: `cuda-sm_90`, `cuda-sm_80` (cubin and PTX for the chip; the driver
picks by compute capability, and the sm_80 object's PTX is what the driver
JIT-compiles on chips newer than both), `cpu` (the reference build, for a
baseline x86-64), `emu` (the CUDA kernels on the CPU, the stand-in's device)
and `emu-race` (the same under the race detector, the stand-in's sanitizer).
"""
import os

# The yardstick scan's grid (bench/: KITTI, 0.05 m x 0.05 m x 0.1 m voxels).
LIDAR_GRID = [41, 1600, 1408]
LAYER_CHANNELS = [16, 32, 64, 128]
# name -> (MLIR element type, gpu-matmul)
LAYER_TYPES = {"f32": ("f32", "fma"), "tf32": ("f32", "tf32"),
               "f16": ("f16", "tensor-cores"), "bf16": ("bf16", "tensor-cores")}
# The fragment ops gpu-mma-ops=auto does not pick for a kind, and the
# channel counts whose layers the full kit also builds with them.
OTHER_MMA_OPS = {"f16": "subgroup-mma", "tf32": "subgroup-mma", "bf16": "subgroup-mma"}
OTHER_MMA_CHANNELS = [64, 128]

NETWORKS = {
    "second": ("examples/second_middle_encoder.mlir", "second_middle_encoder"),
    "minkunet": ("examples/minkunet.mlir", "minkunet"),
    "minkunet_train": ("examples/minkunet_train.mlir", "minkunet_loss_and_gradients"),
}

# The conv gradients at the rulebook level (data gradient = the rulebook
# read backwards, weight gradient, f64, dynamic channels, tiles wider than
# the GPU's 32 x 32), whose inputs follow from their types: subm, so dL/dout
# has a row per site. The training step covers the generated backward.
GRADIENTS_SOURCE = "test/Integration/CPU/Inputs/gradients.mlir"
GRADIENT_ENTRIES = ["subm_grads", "subm_dilated_grads", "subm_grads_f64", "weight_grad_wide",
                    "subm_weight_grad_dynamic"]

# Matrix cases in the small (CI) kit: one of each op family.
SMALL_MATRIX = ["subm_3d_k3", "subm_3d_f16", "subm_3d_bf16", "regular_3d_k3_s2_p1",
                "transposed_2d_k2_s2", "pool_max_3d_k2_s2", "subm_3d_empty"]
# The matrix's slice under the sanitizers (compute-sanitizer, or the
# emulator's race detector in the stand-in).
SANITIZER_SLICE = ["subm_3d_k3", "subm_3d_f16", "regular_3d_k3_s2_p1"]

ALL_TARGETS = ["cuda-sm_90", "cuda-sm_80", "cpu", "emu", "emu-race"]


class Function:
    """One compiled function: its source, entry and per-target options."""

    def __init__(self, name, group, entry, source=None, text=None, targets=ALL_TARGETS,
                 gpu_options=(), meta=None, compiler=None):
        self.name = name
        self.group = group
        self.entry = entry
        self.source = source  # a file of the source tree
        self.text = text      # or the MLIR itself
        self.targets = list(targets)
        self.gpu_options = list(gpu_options)
        self.meta = meta or {}
        self.compiler = compiler  # None: the kit's own build's spconv-compile

    def directory(self, root):
        return os.path.join(root, "fn", self.name.replace("/", "--"))


def layer_mlir(channels, element):
    """subm 3x3x3 C -> C on the yardstick grid, bias-free."""
    grid = "#spconv.grid<[%s]>" % ", ".join(map(str, LIDAR_GRID))
    coords = "tensor<?x4xi32, %s>" % grid
    feat = "tensor<?x%dx%s>" % (channels, element)
    weight = "tensor<27x%dx%dx%s>" % (channels, channels, element)
    return ("func.func @layer(%%c: %s, %%x: %s, %%w: %s) -> (%s, %s) {\n"
            "  %%oc, %%of = spconv.conv <subm, kernel = [3, 3, 3]> %%c, %%x, %%w\n"
            "      : %s, %s, %s -> %s, %s\n"
            "  return %%oc, %%of : %s, %s\n}\n") % (
        coords, feat, weight, coords, feat, coords, feat, weight, coords, feat, coords, feat)


def layer_name(channels, kind, profile=False):
    return "layer/%s_%dx%d%s" % (kind, channels, channels, "_profile" if profile else "")


def tile_candidates(channels, kind):
    """Tiles the sweep tries for a layer (besides the compiler's own
    choice), in the tuning table's fields."""
    math = {"f32": "fma", "tf32": "mma-tf32", "f16": "mma-f16", "bf16": "mma-bf16"}[kind]
    out = []
    if math == "fma":
        for rows, cols, depth in [(64, 64, 16), (128, 64, 16), (128, 32, 16), (64, 32, 8)]:
            cols = min(cols, max(4, channels))
            out.append({"math": math, "rows": rows, "cols": cols, "depth": depth,
                        "thread_rows": 4, "thread_cols": 4})
    else:
        frag_depth = 8 if math == "mma-tf32" else 16
        for rows, cols, warp_rows, warp_cols, depth in [
                (256, 64, 64, 32, 2 * frag_depth), (128, 64, 32, 32, 2 * frag_depth),
                (128, 32, 32, 32, 2 * frag_depth), (256, 32, 64, 16, frag_depth),
                # 64-row tiles: four times the blocks of the built-in tile,
                # so that the last wave is a smaller share of the conv.
                (64, 64, 32, 32, 2 * frag_depth), (64, 32, 32, 16, 2 * frag_depth)]:
            cols = min(cols, max(16, channels))
            warp_cols = min(warp_cols, cols)
            out.append({"math": math, "rows": rows, "cols": cols, "depth": depth,
                        "warp_rows": warp_rows, "warp_cols": warp_cols})
    unique = []
    for tile in out:
        if tile not in unique:
            unique.append(tile)
    return unique


def kit_functions(small, matrix_cases, cuda_targets):
    """Every function of a kit. `matrix_cases` is conv_matrix.cases();
    `cuda_targets` the CUDA targets to build (the small kit builds one)."""
    emu_targets = ["emu"]
    fns = []
    base = cuda_targets + ["cpu"] + emu_targets
    for case in matrix_cases:
        if small and case.name not in SMALL_MATRIX:
            continue
        targets = base + (["emu-race"] if case.name in SANITIZER_SLICE else [])
        fns.append(Function("matrix/" + case.name, "matrix", "f", text=case.mlir(),
                            targets=targets, meta={"case": case.name}))
        # The f32 convs on TF32 tensor cores, inputs rounded on both sides.
        if (case.dtype == "f32" and case.op in ("subm", "regular", "transposed")
                and not case.dynamic_channels and (not small or case.name == "subm_3d_k3")):
            fns.append(Function("tf32/" + case.name, "matrix", "f", text=case.mlir(),
                                targets=cuda_targets + emu_targets,
                                gpu_options=["--gpu-matmul", "tf32"],
                                meta={"case": case.name, "tf32": True}))
    for entry in GRADIENT_ENTRIES[:1] if small else GRADIENT_ENTRIES:
        fns.append(Function("gradient/" + entry, "gradient", entry, source=GRADIENTS_SOURCE,
                            targets=base))
    for name, (source, entry) in NETWORKS.items():
        if small and name != "second":
            continue
        targets = base + (["emu-race"] if name == "second" else [])
        fns.append(Function("network/" + name, "network", entry, source=source,
                            targets=targets, meta={"network": name}))
    channels = [16] if small else LAYER_CHANNELS
    kinds = ["f32", "f16"] if small else list(LAYER_TYPES)
    for c in channels:
        for kind in kinds:
            element, matmul = LAYER_TYPES[kind]
            options = ["--gpu-matmul", matmul]
            meta = {"channels": c, "kind": kind, "element": element}
            # The CPU build of the f32 layer is every layer's reference.
            targets = base if kind == "f32" else [t for t in base if t != "cpu"]
            fns.append(Function(layer_name(c, kind), "layer", "layer", text=layer_mlir(c, element),
                                targets=targets, gpu_options=options, meta=meta))
            fns.append(Function(layer_name(c, kind, True), "layer", "layer",
                                text=layer_mlir(c, element), targets=cuda_targets + emu_targets,
                                gpu_options=options + ["--profile"], meta=dict(meta, profile=True)))
            ops = OTHER_MMA_OPS.get(kind)
            if ops and not small and c in OTHER_MMA_CHANNELS:
                fns.append(Function(layer_name(c, kind) + "_" + ops, "layer", "layer",
                                    text=layer_mlir(c, element),
                                    targets=cuda_targets + emu_targets,
                                    gpu_options=options + ["--gpu-mma-ops", ops],
                                    meta=dict(meta, mma_ops=ops)))
    return fns


def tile_functions(small, cuda_targets):
    """The tile sweep's variants: (function, tuning-table entry) pairs. Each
    f16 tile, which the compiler pipelines, also runs pinned to one stage
    (`"stages": 1`, suffix `_s1`): the form before the cp.async pipeline,
    timed beside it. Neither wins at every tile (docs/GPU.md, "The second
    GPU day"), so the sweep keeps both and the tuning table takes the
    faster."""
    out = []
    sweep = [(16, "f32"), (16, "f16")] if small else \
        [(c, k) for c in (32, 64, 128) for k in ("f32", "tf32", "f16")]
    for channels, kind in sweep:
        element, matmul = LAYER_TYPES[kind]
        for i, tile in enumerate(tile_candidates(channels, kind)[: 2 if small else 6]):
            entry = dict(tile, cin=channels, cout=channels, type=element)
            variants = [("", entry)]
            if kind == "f16" and (not small or i == 0):
                variants.append(("_s1", dict(entry, stages=1)))
            for suffix, variant in variants:
                name = "tile/%s_%dx%d_t%d%s" % (kind, channels, channels, i, suffix)
                out.append(Function(name, "tile", "layer", text=layer_mlir(channels, element),
                                    targets=cuda_targets + ["emu"],
                                    gpu_options=["--gpu-matmul", matmul],
                                    meta={"channels": channels, "kind": kind, "element": element,
                                          "tile": variant, "layer": layer_name(channels, kind)}))
    return out


BASELINE_SUFFIX = "@baseline"
# The small kit's A/B pairs: a network and a tensor-core layer.
SMALL_BASELINE = ["network/second", "layer/f16_16x16"]


def baseline_functions(fns, compiler, cuda_target):
    """The A/B phase's other side: each network (not the training step) and
    each layer (not the --profile builds, not the other fragment ops) of
    `fns` again, from the same
    source, compiled by `compiler` (another build's spconv-compile), for
    `cuda_target` (the first chip: a GPU day's) and the emulator."""
    out = []
    for fn in fns:
        if fn.group not in ("network", "layer") or fn.meta.get("profile") or \
                fn.meta.get("mma_ops") or fn.name == "network/minkunet_train":
            continue
        out.append(Function(fn.name + BASELINE_SUFFIX, "baseline", fn.entry, source=fn.source,
                            text=fn.text, targets=[cuda_target, "emu"],
                            gpu_options=fn.gpu_options, meta=dict(fn.meta, of=fn.name),
                            compiler=compiler))
    return out
