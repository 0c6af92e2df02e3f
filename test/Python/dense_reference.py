"""Sparse convolutions computed densely with PyTorch, from DESIGN.md's
semantics: the features scattered into a zero volume, `conv` or
`conv_transpose` over it, the result sampled at the output sites, which are
the input sites (subm), the sites the window reaches from an active site
(regular, transposed), or the strided conv's input sites (inverse). Shared
by torch_ops.py (each op) and torch_dense_models.py (whole models).
"""
import math

import torch
import torch.nn.functional as F

DENSE = {1: (F.conv1d, F.conv_transpose1d), 2: (F.conv2d, F.conv_transpose2d),
         3: (F.conv3d, F.conv_transpose3d)}


def sites(grid, batch, count, seed):
    """`count` distinct random sites per batch element, sorted by key."""
    g = torch.Generator().manual_seed(seed)
    rows = []
    for b in range(batch):
        volume = math.prod(grid)
        keys = torch.randperm(volume, generator=g)[:count].sort().values
        coords = []
        for size in reversed(grid):
            coords.insert(0, keys % size)
            keys = keys // size
        rows.append(torch.stack([torch.full_like(coords[0], b)] + coords, 1))
    return torch.cat(rows).int()


def dense(indices, features, batch, grid):
    """`batch x C x grid`, the features at their sites, zeros elsewhere."""
    out = features.new_zeros([batch] + list(grid) + [features.shape[1]])
    index = tuple(indices[:, i].long() for i in range(indices.shape[1]))
    out = out.index_put(index, features)
    return out.permute(0, len(grid) + 1, *range(1, len(grid) + 1))


def sample(volume, indices):
    """The columns of `volume` (`batch x C x grid`) at `indices`, N x C."""
    n = indices.shape[1] - 1
    index = tuple(indices[:, i].long() for i in range(n + 1))
    return volume.permute(0, *range(2, n + 2), 1)[index]


def active(volume):
    """The sites where channel 0 of `volume` is positive, sorted by key."""
    found = torch.nonzero(volume[:, 0] > 0.5)
    return found.int()


def torch_weight(layer, transposed):
    """The layer's weight as dense PyTorch takes it, from the compiler's
    `K x Cin/g x Cout` (a function of the parameter, so that gradients
    reach it)."""
    k = list(layer.kernel_size)
    m = layer.kernel_matrix().reshape(k + [layer.in_channels // layer.groups,
                                           layer.out_channels])
    n = len(k)
    order = (n, n + 1) if transposed else (n + 1, n)
    return m.permute(*order, *range(n))


def dense_conv(layer, indices, features, batch, grid, fine=None):
    """`layer` (a spconv_mlir.torch conv) applied densely to the sparse
    input (`indices`, `features`, `batch`, `grid`): (output indices, output
    features, output grid). An inverse conv takes `fine`: the indices, grid,
    stride, padding and dilation of the strided conv it inverts."""
    n = layer.ndim
    conv, conv_t = DENSE[n]
    s, p, d = list(layer.stride), list(layer.padding), list(layer.dilation)
    if layer.kind == "subm":
        p = [k_ // 2 * d_ for k_, d_ in zip(layer.kernel_size, d)]
    xin = dense(indices, features, batch, grid)
    ones = dense(indices, torch.ones(indices.shape[0], 1, dtype=features.dtype), batch, grid)
    kernel_ones = torch.ones([1, 1] + list(layer.kernel_size), dtype=features.dtype)
    if layer.kind in ("subm", "regular"):
        out = conv(xin, torch_weight(layer, False), layer.bias, s, p, d, layer.groups)
        reach = conv(ones, kernel_ones, None, s, p, d)
        out_indices = indices if layer.kind == "subm" else active(reach)
    elif layer.kind == "transposed":
        op = list(layer.output_padding)
        out = conv_t(xin, torch_weight(layer, True), layer.bias, s, p, op, layer.groups, d)
        reach = conv_t(ones, kernel_ones, None, s, p, op, 1, d)
        out_indices = active(reach)
    else:  # inverse: back onto the strided conv's input sites
        fine_indices, fine_grid, s, p, d = fine
        base = [(o - 1) * s_ - 2 * p_ + d_ * (k_ - 1) + 1 for o, s_, p_, d_, k_ in
                zip(grid, s, p, d, layer.kernel_size)]
        op = [f - b for f, b in zip(fine_grid, base)]
        out = conv_t(xin, torch_weight(layer, True), layer.bias, s, p, op, layer.groups, d)
        out_indices = fine_indices
    return out_indices.int(), sample(out, out_indices), list(out.shape[2:])
