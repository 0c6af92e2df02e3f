"""spconv_mlir.torch's convs against dense PyTorch, the oracle DESIGN.md
names: regular and subm convs equal `conv` (cross-correlation), transposed
and inverse convs `conv_transpose`, sampled at the active output sites, on
small grids; outputs and the gradients of features, weight and bias, in
f64. Then torch.autograd.gradcheck, a network under torch.compile
(fullgraph, aot_eager; also dynamic=True) against eager, forward and backward, two identical
training steps, and bad input as users hit it.

Run with torch 2.4 or later (build/venv-torch): lit's `torch2` feature.
"""
import os

import torch
import torch.nn.functional as F

import spconv_mlir
import spconv_mlir.torch as spconv
from spconv_mlir.errors import InputError, ModelError

from dense_reference import DENSE, active, dense, dense_conv, sample, sites
from report import check, finish


def run_case(name, make, grid, batch=2, count=12, cin=3, seed=0, inverse_of=None):
    torch.manual_seed(seed)
    layer = make().double()
    indices = sites(grid, batch, count, seed)
    features = torch.randn(indices.shape[0], cin, dtype=torch.float64, requires_grad=True)
    x = spconv.SparseConvTensor(features, indices, grid, batch)
    if inverse_of is not None:
        down = inverse_of().double()
        x = down(x)
        x = x.replace_feature(x.features.detach().requires_grad_())
        features = x.features
    y = layer(x)
    cot = torch.randn(y.features.shape, dtype=torch.float64)
    params = [layer.weight] + ([layer.bias] if layer.bias is not None else [])
    ours = torch.autograd.grad((y.features * cot).sum(), [features] + params)

    fine = None
    if layer.kind == "inverse":
        record = x.indice_dict[layer.indice_key]
        fine = (record.in_indices, list(record.spec.grid), list(record.spec.stride),
                list(record.spec.padding), list(record.spec.dilation))
    want_sites, ref, _ = dense_conv(layer, x.indices, features, batch, x.spatial_shape, fine)
    check(name + " sites", torch.equal(y.indices, want_sites.int()),
          "%d sites, expected %d" % (y.indices.shape[0], want_sites.shape[0]))
    if not torch.equal(y.indices, want_sites.int()):
        return
    theirs = torch.autograd.grad((ref * cot).sum(), [features] + params)
    check(name + " output", torch.allclose(y.features, ref, rtol=1e-10, atol=1e-10),
          "max diff %g" % (y.features - ref).abs().max().item())
    for what, a, b in zip(["features", "weight", "bias"], ours, theirs):
        check("%s d%s" % (name, what), torch.allclose(a, b, rtol=1e-10, atol=1e-10),
              "max diff %g" % (a - b).abs().max().item())


def conv_cases():
    run_case("subm3d k3", lambda: spconv.SubMConv3d(3, 4, 3), [6, 7, 5])
    run_case("subm3d k3 d2 no-bias", lambda: spconv.SubMConv3d(3, 4, 3, dilation=2, bias=False),
             [7, 7, 7])
    run_case("subm2d k1 (weight read as a matrix)", lambda: spconv.SubMConv2d(3, 5, 1),
             [9, 9])
    run_case("regular3d k3 s2 p1", lambda: spconv.SparseConv3d(3, 4, 3, stride=2, padding=1),
             [8, 7, 6])
    run_case("regular3d k3 s2 d2 (dilation with stride)",
             lambda: spconv.SparseConv3d(3, 2, 3, stride=2, padding=2, dilation=2), [9, 8, 9])
    run_case("regular2d k2 s2 groups 3",
             lambda: spconv.SparseConv2d(3, 6, 2, stride=2, groups=3), [8, 10], cin=3)
    run_case("regular1d k3 s1", lambda: spconv.SparseConv1d(3, 2, 3), [16], count=6)
    run_case("transposed3d k3 s2", lambda: spconv.SparseConvTranspose3d(3, 4, 3, stride=2),
             [4, 5, 4])
    run_case("transposed2d k3 s2 p1 op1",
             lambda: spconv.SparseConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                  output_padding=1), [5, 6])
    run_case("inverse3d k3 s2 p1",
             lambda: spconv.SparseInverseConv3d(4, 3, 3, indice_key="down"), [9, 8, 7],
             inverse_of=lambda: spconv.SparseConv3d(3, 4, 3, stride=2, padding=1,
                                                    indice_key="down"), cin=3)


def run_pool(name, make, grid, batch=2, count=14, channels=3, seed=0):
    """Pools against dense PyTorch: max over the window's active sites
    (max_pool with the empty sites at -inf), average over them (a sum
    pooling divided by the count of active sites)."""
    torch.manual_seed(seed)
    layer = make()
    n = layer.ndim
    conv = DENSE[n][0]
    indices = sites(grid, batch, count, seed)
    features = torch.randn(indices.shape[0], channels, dtype=torch.float64,
                           requires_grad=True)
    y = layer(spconv.SparseConvTensor(features, indices, grid, batch))
    cot = torch.randn(y.features.shape, dtype=torch.float64)
    (ours,) = torch.autograd.grad((y.features * cot).sum(), [features])
    k, s, p, d = layer.kernel_size, layer.stride, layer.padding, layer.dilation
    ones = dense(indices, torch.ones(indices.shape[0], 1, dtype=torch.float64), batch, grid)
    kernel_ones = torch.ones([1, 1] + list(k), dtype=torch.float64)
    count_at = conv(ones, kernel_ones, None, s, p, d)
    want_sites = active(count_at)
    check(name + " sites", torch.equal(y.indices, want_sites))
    if not torch.equal(y.indices, want_sites):
        return
    xin = dense(indices, features, batch, grid)
    if layer.mode == "max":
        empty = dense(indices, torch.zeros(indices.shape[0], 1, dtype=torch.float64), batch,
                      grid) - ones + 1  # 1 at empty sites, 0 at active ones
        pooled = getattr(F, "max_pool%dd" % n)(xin - empty * 1e30, k, s, p, d)
    else:
        summed = conv(xin, torch.ones([channels, 1] + list(k), dtype=torch.float64), None, s, p,
                      d, channels)
        pooled = summed / count_at.clamp(min=1)
    ref = sample(pooled, y.indices)
    (theirs,) = torch.autograd.grad((ref * cot).sum(), [features])
    check(name + " output", torch.allclose(y.features, ref, rtol=1e-10, atol=1e-10),
          "max diff %g" % (y.features - ref).abs().max().item())
    check(name + " dfeatures", torch.allclose(ours, theirs, rtol=1e-10, atol=1e-10),
          "max diff %g" % (ours - theirs).abs().max().item())


def pool_cases():
    run_pool("maxpool3d k2", lambda: spconv.SparseMaxPool3d(2), [6, 8, 6])
    run_pool("maxpool3d k3 s2 p1", lambda: spconv.SparseMaxPool3d(3, 2, 1), [7, 6, 6])
    run_pool("avgpool2d k3 s2 d2", lambda: spconv.SparseAvgPool2d(3, 2, 2, 2), [10, 9])
    run_pool("avgpool1d k2", lambda: spconv.SparseAvgPool1d(2), [16], count=8)


def gradchecks():
    """torch.autograd.gradcheck: our backward against finite differences of
    our forward, one small layer per kind (4-D too, which has no dense
    torch conv)."""
    cases = [("subm", spconv.SubMConv3d(2, 3, 3), [4, 4, 4]),
             ("regular 4-D", spconv.SparseConv4d(2, 2, 2, stride=2), [4, 4, 2, 4]),
             ("transposed", spconv.SparseConvTranspose2d(2, 3, 3, stride=2), [3, 4])]
    for name, layer, grid in cases:
        layer = layer.double()
        indices = sites(grid, 1, 5, 3)
        features = torch.randn(indices.shape[0], 2, dtype=torch.float64, requires_grad=True)
        weight = layer.weight.detach().clone().requires_grad_()
        bias = layer.bias.detach().clone().requires_grad_()

        def f(feat, weight, bias, layer=layer, indices=indices, grid=grid):
            x = spconv.SparseConvTensor(feat, indices, grid, 1)
            return layer.apply_weights(x, weight, bias).features

        ok = torch.autograd.gradcheck(f, (features, weight, bias), eps=1e-6, atol=1e-7)
        check("gradcheck " + name, ok)


class Backbone(torch.nn.Module):
    """A model in the style of OpenPCDet's backbones: a batch_dict in and
    out, `.int()` on indices, nested SparseSequentials, a strided conv and
    the inverse conv that shares its indice_key, `indices[:, 1:]`,
    `features.view`, `.dim()` and `sum(dim=...)`."""

    def __init__(self):
        super().__init__()
        # OpenPCDet gives its first subm conv padding=1 and the next none,
        # under one key: a subm conv's padding is not part of its rulebook.
        self.conv_input = spconv.SparseSequential(
            spconv.SubMConv3d(4, 8, 3, padding=1, bias=False, indice_key="subm1"),
            torch.nn.BatchNorm1d(8), torch.nn.ReLU(),
            spconv.SubMConv3d(8, 8, 3, bias=False, indice_key="subm1"))
        self.down = spconv.SparseSequential(
            spconv.SparseSequential(
                spconv.SparseConv3d(8, 16, 3, stride=2, padding=1, bias=False,
                                    indice_key="spconv2"),
                torch.nn.BatchNorm1d(16), torch.nn.ReLU()),
            spconv.SubMConv3d(16, 16, 3, padding=1, indice_key="subm2"))
        self.up = spconv.SparseInverseConv3d(16, 8, 3, indice_key="spconv2", bias=False)
        self.head = torch.nn.Linear(8, 2)

    def forward(self, batch_dict):
        x = spconv.SparseConvTensor(batch_dict["voxel_features"],
                                    batch_dict["voxel_coords"].int(),
                                    batch_dict["spatial_shape"], batch_dict["batch_size"])
        x = self.conv_input(x)
        skip = x
        x = self.down(x)
        batch_dict["coarse_xyz"] = x.indices[:, 1:]
        x = self.up(x)
        x = x.replace_feature(x.features + skip.features)
        assert x.features.dim() == 2
        logits = self.head(x.features.view(-1, 8))
        batch_dict["loss"] = logits.square().sum(dim=1).mean()
        return batch_dict


def backbone_inputs(seed, count=40):
    indices = sites([10, 12, 8], 2, count, seed)
    g = torch.Generator().manual_seed(seed)
    return {"voxel_features": torch.randn(indices.shape[0], 4, generator=g),
            "voxel_coords": indices.long(), "spatial_shape": [10, 12, 8], "batch_size": 2}


def compiled_against_eager():
    torch.manual_seed(1)
    eager = Backbone()
    compiled_model = Backbone()
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model, fullgraph=True, backend="aot_eager")
    a = eager(backbone_inputs(5))
    a["loss"].backward()
    b = compiled(backbone_inputs(5))
    b["loss"].backward()
    check("torch.compile(fullgraph, aot_eager) loss equals eager",
          torch.equal(a["loss"], b["loss"]), "%r vs %r" % (a["loss"].item(), b["loss"].item()))
    same = all(torch.equal(p.grad, q.grad) for p, q in
               zip(eager.parameters(), compiled_model.parameters()))
    check("torch.compile(fullgraph, aot_eager) gradients equal eager", same)

    # dynamic=True: the input dict's ints (the grid, the batch size) arrive
    # as symbols; the grid is specialised (the kernels need it constant),
    # the site counts stay symbols: one graph for two scans.
    graphs = []

    def counting(graph, example_inputs):
        graphs.append(graph)
        return graph.forward

    dynamic = torch.compile(compiled_model, fullgraph=True, dynamic=True, backend=counting)
    for seed, count in ((5, 40), (7, 55)):
        want = compiled_model(backbone_inputs(seed, count))["loss"]
        got = dynamic(backbone_inputs(seed, count))["loss"]
        check("torch.compile(fullgraph, dynamic=True) loss equals eager (%d sites)"
              % (2 * count), torch.equal(want, got),
              "%r vs %r" % (want.item(), got.item()))
    check("torch.compile(fullgraph, dynamic=True): one graph", len(graphs) == 1,
          "%d graphs" % len(graphs))


def training_is_deterministic():
    """Two identical SGD runs: bit-identical losses and parameters."""
    runs = []
    for _ in range(2):
        torch.manual_seed(2)
        model = Backbone()
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        losses = []
        for step in range(3):
            opt.zero_grad()
            loss = model(backbone_inputs(10 + step))["loss"]
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs.append((losses, [p.detach().clone() for p in model.parameters()]))
    check("training: losses bit-identical across runs", runs[0][0] == runs[1][0])
    check("training: parameters bit-identical across runs",
          all(torch.equal(p, q) for p, q in zip(runs[0][1], runs[1][1])))
    check("training: the loss falls", runs[0][0][-1] < runs[0][0][0], str(runs[0][0]))


def rulebooks_are_shared():
    """Layers with one indice_key on the same sites build one rulebook, an
    inverse conv reads its strided conv's, and backward builds none."""
    built = []
    originals = (spconv.ops.subm_rulebook, spconv.ops.strided_rulebook)
    from spconv_mlir.torch import modules

    class Counting:
        def __init__(self, op, name):
            self.op, self.name = op, name

        def __call__(self, *args):
            built.append(self.name)
            return self.op(*args)

    modules.ops = type("CountingOps", (), {
        "subm_rulebook": Counting(originals[0], "subm"),
        "strided_rulebook": Counting(originals[1], "strided"),
        "rulebook_conv": spconv.ops.rulebook_conv, "rulebook_pool": spconv.ops.rulebook_pool})
    try:
        torch.manual_seed(4)
        net = spconv.SparseSequential(
            spconv.SubMConv3d(3, 4, 3, indice_key="a"), spconv.SubMConv3d(4, 4, 3, indice_key="a"),
            spconv.SparseConv3d(4, 4, 2, stride=2, indice_key="down"),
            spconv.SparseInverseConv3d(4, 4, 2, indice_key="down"),
            spconv.SubMConv3d(4, 2, 3, indice_key="a"), spconv.SubMConv3d(2, 2, 3))
        indices = sites([8, 8, 8], 2, 20, 5)
        features = torch.randn(indices.shape[0], 3, requires_grad=True)
        y = net(spconv.SparseConvTensor(features, indices, [8, 8, 8], 2))
        forward = list(built)
        y.features.sum().backward()
        check("indice_key: one subm build for three layers (and one for the layer "
              "without a key), one strided build for the conv and its inverse",
              forward == ["subm", "strided", "subm"], str(forward))
        check("backward builds no rulebook", built == forward, str(built))
        expect_error("a key naming another window", ModelError, "indice_key='a' names the "
                     "rulebook of SubMConv3d(3, 4", lambda: spconv.SparseSequential(
                         spconv.SubMConv3d(3, 4, 3, indice_key="a"),
                         spconv.SubMConv3d(4, 4, 5, indice_key="a"))(
                             spconv.SparseConvTensor(features, indices, [8, 8, 8], 2)))
    finally:
        modules.ops = spconv.ops


def backward_runs_no_forward():
    """A conv's backward kernel computes the gradients only: its generated
    vjp holds the data gradient's conv (the rulebook read backwards) and no
    forward conv."""
    import subprocess

    from spconv_mlir.torch import kernels

    spec = next(s for s in kernels.loaded_specs()
                if isinstance(s, kernels.ConvSpec) and s.op == "conv" and s.kind == "subm")
    opt = os.path.join(spconv_mlir.find_toolchain().prefix, "bin", "spconv-opt")
    text = subprocess.run([opt, "-spconv-generate-backward", "-canonicalize"],
                          input=kernels.compute_module(spec, backward=True),
                          capture_output=True, text=True,
                          check=True).stdout
    vjp = text[text.index("@compute_%s_vjp(" % spec.key()):]
    vjp = vjp[:vjp.index("\n  }\n")]
    convs = [line.strip() for line in vjp.splitlines() if "spconv.rulebook_conv" in line]
    check("backward: the data gradient's conv and no forward conv",
          len(convs) == 1 and "rulebook_conv inverse" in convs[0], "\n".join(convs))


def tampered_pairs():
    """Pairs handed to the conv op from outside are checked."""
    torch.manual_seed(6)
    indices = sites([6, 6, 6], 1, 10, 6)
    features = torch.randn(indices.shape[0], 3)
    window = spconv.RulebookSpec("subm", (3, 3, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1), (0, 0, 0),
                                 (6, 6, 6), (6, 6, 6))
    in_rows, out_rows, offsets = spconv.ops.subm_rulebook(indices, window.to_json())
    spec = spconv.ConvSpec(*window, "conv", 3, 4, 1, False, "float32")
    weight = torch.randn(27, 3, 4)
    bad = in_rows.clone()
    bad[0] = 10
    expect_error("a pair's row outside the sites", InputError, "index 10 at position 0 is "
                 "outside [0, 10)", lambda: spconv.ops.rulebook_conv(
                     bad, out_rows, offsets, indices, features, weight, None, spec.to_json()))
    bad = offsets.clone()
    bad[-1] = 1000
    expect_error("more pairs than rows", InputError, "1000 pairs, but the shorter row tensor",
                 lambda: spconv.ops.rulebook_conv(in_rows, out_rows, bad, indices, features,
                                                  weight, None, spec.to_json()))


def expect_error(name, kind, text, call):
    try:
        call()
    except kind as e:
        check(name, text in str(e), "message: %s" % e)
        print("  " + str(e).splitlines()[0])
        return
    except Exception as e:  # noqa: BLE001 - a wrong kind of error is the finding
        check(name, False, "%s: %s" % (type(e).__name__, e))
        return
    check(name, False, "no error")


def bad_input():
    torch.manual_seed(3)
    layer = spconv.SubMConv3d(3, 4, 3)
    grid = [6, 6, 6]
    indices = sites(grid, 1, 10, 4)
    features = torch.randn(indices.shape[0], 3)
    want = layer(spconv.SparseConvTensor(features, indices, grid, 1)).features
    # Column-major indices (np.argwhere(...).astype(np.int32) gives these)
    # and int64 indices: the right answer.
    column_major = indices.t().contiguous().t()
    check("column-major indices: same result",
          torch.equal(layer(spconv.SparseConvTensor(features, column_major, grid, 1)).features,
                      want))
    check("int64 indices: same result",
          torch.equal(layer(spconv.SparseConvTensor(features, indices.long(), grid, 1)).features,
                      want))
    expect_error("features of another dtype", InputError, "the weight is torch.float32",
                 lambda: layer(spconv.SparseConvTensor(features.double(), indices, grid, 1)))
    outside = indices.clone()
    outside[0, 1] = 6
    expect_error("a site outside the grid", InputError, "SubMConv3d(3, 4",
                 lambda: layer(spconv.SparseConvTensor(features, outside, grid, 1)))
    expect_error("wrong channel count", InputError, "in_channels=3",
                 lambda: layer(spconv.SparseConvTensor(features[:, :2], indices, grid, 1)))
    expect_error("an inverse conv without its strided conv", ModelError, "indice_key='nope'",
                 lambda: spconv.SparseInverseConv3d(3, 3, 3, indice_key="nope")(
                     spconv.SparseConvTensor(features, indices, grid, 1)))
    empty = layer(spconv.SparseConvTensor(features[:0], indices[:0], grid, 1))
    check("no sites: an empty result", tuple(empty.features.shape) == (0, 4))
    duplicate = indices.clone()
    duplicate[1] = duplicate[0]
    expect_error("a site given twice", InputError, "duplicate input site",
                 lambda: layer(spconv.SparseConvTensor(features, duplicate, grid, 1)))
    # A batch of two whose second element has no sites: the first's result.
    two = layer(spconv.SparseConvTensor(features, indices, grid, 2)).features
    check("an empty batch element: the other element's result", torch.equal(two, want))
    # Devices (torch's meta device stands in for another one): features
    # and weight apart, indices and features apart, a device with no kernels.
    expect_error("features on another device than the weight", InputError,
                 "features on meta but the weight on cpu",
                 lambda: layer(spconv.SparseConvTensor(features.to("meta"), indices.to("meta"),
                                                       grid, 1)))
    expect_error("indices on another device than the features", InputError,
                 "the indices are on meta but the features on cpu",
                 lambda: layer(spconv.SparseConvTensor(features, indices.to("meta"), grid, 1)))
    meta_layer = spconv.SubMConv3d(3, 4, 3).to("meta")
    expect_error("a device without kernels", InputError,
                 "runs CPU and CUDA tensors, not tensors on meta",
                 lambda: meta_layer(spconv.SparseConvTensor(features.to("meta"),
                                                            indices.to("meta"), grid, 1)))


if __name__ == "__main__":
    conv_cases()
    pool_cases()
    gradchecks()
    compiled_against_eager()
    training_is_deterministic()
    rulebooks_are_shared()
    backward_runs_no_forward()
    tampered_pairs()
    bad_input()
    finish()
