#!/usr/bin/env python3
# ===- spconv2_networks.py - The example networks in spconv.pytorch -------=== #
#
# Part of the spconv-mlir project.
#
# ===----------------------------------------------------------------------=== #
"""Runs an example network (examples/*.mlir) with spconv 2.x's own
PyTorch modules, on the same inputs and weights as ours, and times it.

usage: VENV/bin/python bench/baselines/spconv2_networks.py MODEL.mlir ENTRY
           --input arg0.npy --input arg1.npy ... [--threads T] [--repeat R]
           [--device cpu|cuda] [--out-dir DIR]

The inputs are scripts/make_inputs.py's files, in the entry's argument
order (coordinates, features, then weights and biases), as spconv-run takes
them. Networks: second_middle_encoder (OpenPCDet's VoxelBackBone8x) and
minkunet (the SparseResUNet42-like MinkUNet). Each is written here with
spconv.pytorch modules the way those projects write them: SubMConv3d /
SparseConv3d / SparseInverseConv3d without bias, each followed by
BatchNorm1d (eval mode) and ReLU, subm layers sharing rulebooks through
indice_key. Our examples fold BatchNorm into the conv biases; here each
BatchNorm1d holds that bias as its beta with mean 0, variance 1 - eps and
gamma 1, so both compute the same function and the outputs can be checked.

Every call builds a fresh SparseConvTensor (so every rulebook is built, as
in inference on a new scan) under torch.no_grad(). Prints like the other
baselines: total_ms (median of --repeat calls after the first), _min, _max,
_last, _first (the cold first call), out_sites. --device cuda runs the
modules on the GPU (spconv's GPU wheel, a CUDA torch), the inputs already
there, every call bracketed by torch.cuda.synchronize(). --out-dir writes
out0.npy (output coordinates) and out1.npy (output features), as spconv-run.
"""
import argparse
import os
import re
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("entry", choices=["second_middle_encoder", "minkunet"])
    p.add_argument("--input", action="append", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=2,
                   help="timed calls after the first (cold) one")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--out-dir")
    return p.parse_args()


ARGS = parse_args()
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import spconv  # noqa: E402
import spconv.pytorch as sp  # noqa: E402

torch.set_num_threads(ARGS.threads)
EPS = 1e-3


def arg_names(model, entry):
    """The entry's argument names, in order."""
    text = open(model).read()
    match = re.search(r"func\.func @%s\((.*?)\)\s*->" % re.escape(entry), text, re.S)
    return re.findall(r"%([\w.]+)\s*:", match.group(1))


class Net:
    """Builds modules from our weights: conv(name, ...) returns a module
    (conv, then BatchNorm holding our bias, when there is one)."""

    def __init__(self, params):
        self.params = params

    def conv(self, name, kind, kernel, stride=1, padding=0, key=None):
        w = self.params["w_" + name]  # K x Cin x Cout, K row-major (z, y, x)
        cin, cout = w.shape[1], w.shape[2]
        kernel = [kernel] * 3 if isinstance(kernel, int) else list(kernel)
        if kind == "subm":
            m = sp.SubMConv3d(cin, cout, kernel, bias=False, indice_key=key)
        elif kind == "regular":
            m = sp.SparseConv3d(cin, cout, kernel, stride=stride, padding=padding,
                                bias=False, indice_key=key)
        else:
            m = sp.SparseInverseConv3d(cin, cout, kernel, bias=False, indice_key=key)
        shape = tuple(m.weight.shape)
        if getattr(m, "conv1x1", False):
            # spconv 2.3.8 runs a 1x1x1 conv as features @ weight.view(Cin,
            # Cout) when its weights are KRSC (conv.py, FILTER_HWIO False):
            # it reads the (Cout, 1, 1, 1, Cin) parameter's memory as Cin x
            # Cout. Our [1, Cin, Cout] bytes, as they are, give our function.
            wt = w.reshape(shape)
        elif shape == (cout, *kernel, cin):  # KRSC, spconv 2.x's default
            wt = w.transpose(2, 0, 1).reshape(cout, *kernel, cin)
        elif shape == (*kernel, cin, cout):  # RSCK
            wt = w.reshape(*kernel, cin, cout)
        else:
            sys.exit("error: unexpected weight shape %s for %s" % (shape, name))
        with torch.no_grad():
            m.weight.copy_(torch.from_numpy(np.ascontiguousarray(wt)))
        layers = [m]
        if "b_" + name in self.params:
            bn = torch.nn.BatchNorm1d(cout, eps=EPS, momentum=0.01)
            with torch.no_grad():
                bn.weight.fill_(1.0)
                bn.bias.copy_(torch.from_numpy(self.params["b_" + name]))
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - EPS)
            layers.append(bn)
        return layers


def relu(x):
    return x.replace_feature(torch.relu(x.features))


def feat(x, f):
    return x.replace_feature(f)


class VoxelBackBone8x(torch.nn.Module):
    """OpenPCDet's VoxelBackBone8x (as examples/second_middle_encoder.mlir)."""

    def __init__(self, net):
        super().__init__()

        def block(*args, **kw):
            return sp.SparseSequential(*net.conv(*args, **kw), torch.nn.ReLU())

        self.conv_input = block("conv_input", "subm", 3, key="subm1")
        self.conv1 = block("conv1", "subm", 3, key="subm1")
        self.conv2 = sp.SparseSequential(
            block("conv2_down", "regular", 3, 2, 1, key="spconv2"),
            block("conv2_a", "subm", 3, key="subm2"), block("conv2_b", "subm", 3, key="subm2"))
        self.conv3 = sp.SparseSequential(
            block("conv3_down", "regular", 3, 2, 1, key="spconv3"),
            block("conv3_a", "subm", 3, key="subm3"), block("conv3_b", "subm", 3, key="subm3"))
        self.conv4 = sp.SparseSequential(
            block("conv4_down", "regular", 3, 2, (0, 1, 1), key="spconv4"),
            block("conv4_a", "subm", 3, key="subm4"), block("conv4_b", "subm", 3, key="subm4"))
        self.conv_out = block("conv_out", "regular", (3, 1, 1), (2, 1, 1), 0, key="spconv_down2")

    def forward(self, x):
        x = self.conv1(self.conv_input(x))
        return self.conv_out(self.conv4(self.conv3(self.conv2(x))))


class MinkUNet(torch.nn.Module):
    """The SparseResUNet42-like MinkUNet of examples/minkunet.mlir."""

    def __init__(self, net):
        super().__init__()
        c = lambda *a, **k: sp.SparseSequential(*net.conv(*a, **k))  # noqa: E731
        self.m = torch.nn.ModuleDict()
        self.m["stem_a"] = c("stem_a", "subm", 3, key="s0")
        self.m["stem_b"] = c("stem_b", "subm", 3, key="s0")
        for i, (lvl, proj) in enumerate([(1, False), (2, True), (3, True), (4, True)], 1):
            self.m["down%d" % i] = c("down%d" % i, "regular", 2, 2, 0, key="down%d" % i)
            self.m["enc%d_a" % i] = c("enc%d_a" % i, "subm", 3, key="s%d" % i)
            self.m["enc%d_b" % i] = c("enc%d_b" % i, "subm", 3, key="s%d" % i)
            if proj:
                self.m["enc%d_proj" % i] = c("enc%d_proj" % i, "subm", 1, key="p%d" % i)
        for i in range(1, 5):
            level = 4 - i  # up1 inverts down4, back onto level 3's sites
            self.m["up%d" % i] = c("up%d" % i, "inverse", 2, key="down%d" % (level + 1))
            self.m["dec%d_a" % i] = c("dec%d_a" % i, "subm", 3, key="s%d" % level)
            self.m["dec%d_b" % i] = c("dec%d_b" % i, "subm", 3, key="s%d" % level)
            self.m["dec%d_proj" % i] = c("dec%d_proj" % i, "subm", 1, key="p%d" % level)
        self.m["classifier"] = c("classifier", "subm", 1, key="p0")

    def forward(self, x):
        m = self.m
        x = relu(m["stem_b"](relu(m["stem_a"](x))))
        skips = [x]
        for i in range(1, 5):
            d = relu(m["down%d" % i](x))
            b = m["enc%d_b" % i](relu(m["enc%d_a" % i](d)))
            p = m["enc%d_proj" % i](d).features if ("enc%d_proj" % i) in m else d.features
            x = relu(feat(b, b.features + p))
            skips.append(x)
        for i in range(1, 5):
            skip = skips[4 - i]
            u = relu(m["up%d" % i](x))
            cat = feat(u, torch.cat([u.features, skip.features], dim=1))
            b = m["dec%d_b" % i](relu(m["dec%d_a" % i](cat)))
            x = relu(feat(b, b.features + m["dec%d_proj" % i](cat).features))
        return m["classifier"](x)


def main():
    a = ARGS
    names = arg_names(a.model, a.entry)
    if len(names) != len(a.input):
        sys.exit("error: @%s takes %d arguments, got %d --input" % (a.entry, len(names),
                                                                   len(a.input)))
    params = {n: np.load(p) for n, p in zip(names, a.input)}
    coords = np.ascontiguousarray(params.pop(names[0]), dtype=np.int32)
    feats = np.ascontiguousarray(params.pop(names[1]), dtype=np.float32)
    # The input's grid: the file's first #spconv.grid (the coordinates' type).
    grid = [int(v) for v in re.search(r"#spconv\.grid<\[([\d, ]+)\]",
                                      open(a.model).read()).group(1).split(",")]
    net = Net(params)
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("error: --device cuda: torch sees no CUDA device")
    model = (VoxelBackBone8x if a.entry == "second_middle_encoder" else MinkUNet)(net)
    model = model.to(a.device).eval()
    batch = int(coords[:, 0].max()) + 1 if len(coords) else 1
    tf = torch.from_numpy(feats).to(a.device)
    tc = torch.from_numpy(coords).to(a.device)
    print("# spconv %s torch %s, %d threads%s" % (
        spconv.__version__, torch.__version__, torch.get_num_threads(),
        ", " + torch.cuda.get_device_name() if a.device == "cuda" else ""))
    # A GPU call is done when the device is: synchronise around each one.
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    print("sites %d" % len(coords))
    print("grid %d,%d,%d" % tuple(grid))
    times, out = [], None
    with torch.no_grad():
        for _ in range(a.repeat + 1):
            sync()
            t0 = time.perf_counter()
            out = model(sp.SparseConvTensor(tf, tc, grid, batch))
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
    timed = sorted(times[1:])
    print("total_ms %.3f" % timed[(len(timed) - 1) // 2])
    print("total_ms_min %.3f" % timed[0])
    print("total_ms_max %.3f" % timed[-1])
    print("total_ms_last %.3f" % times[-1])
    print("total_ms_first %.3f" % times[0])
    print("out_sites %d" % out.features.shape[0])
    if a.out_dir:
        os.makedirs(a.out_dir, exist_ok=True)
        np.save(os.path.join(a.out_dir, "out0.npy"), out.indices.cpu().numpy().astype(np.int32))
        np.save(os.path.join(a.out_dir, "out1.npy"),
                np.ascontiguousarray(out.features.cpu().numpy(), dtype=np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
