"""The sparse convolutions as torch custom ops (`torch.library.custom_op`).

A rulebook is built by one op and read by the others, forward and backward,
as three tensors (`in_rows`, `out_rows`: the input and output row of each
pair, grouped by kernel offset; `offsets`: the K + 1 CSR offsets of the
groups); each op runs the kernels that `kernels.py` compiled for its spec
(passed as JSON text, so that the schemas are tensors and a string):

| op | arguments | results |
|---|---|---|
| `spconv_mlir::subm_rulebook` | indices, spec | in_rows, out_rows, offsets |
| `spconv_mlir::strided_rulebook` | indices, spec | out indices, in_rows, out_rows, offsets |
| `spconv_mlir::rulebook_conv` | pairs, sites, features, weight, bias?, spec | features |
| `spconv_mlir::rulebook_pool` | pairs, sites, features, spec | features |
| `spconv_mlir::rulebook_backward` | pairs, sites, features, weight?, bias?, grad, spec | d features, d weight, d bias |

`sites` are the output sites (for an inverse conv, the input sites of the
strided conv whose rulebook it reads backwards), read for their count.
Weights are in the compiler's layout, `K x Cin/groups x Cout`; the modules
(`modules.py`) hold spconv 2.x's and rearrange them with torch ops, whose
gradients torch knows. Autograd goes through `register_autograd`; every op
has a fake implementation, so `torch.compile` traces through them (the
pairs and a strided build's output sites are unbacked sizes). CPU tensors
run kernels compiled for the CPU; CUDA tensors run kernels compiled for
CUDA, on torch's current stream with torch's caching allocator
(`cuda_call.py`).
"""
from typing import Optional, Tuple

import torch

from .kernels import (ConvSpec, RulebookSpec, compute_kernel, prefetch_backward,
                      rulebook_kernel)


def _contiguous(*tensors):
    return [t.contiguous() for t in tensors if t is not None]


@torch.library.custom_op("spconv_mlir::subm_rulebook", mutates_args=())
def subm_rulebook(indices: torch.Tensor,
                  spec: str) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    in_rows, out_rows, offsets = rulebook_kernel(RulebookSpec.from_json(spec),
                                                 indices.device)(indices.contiguous())
    return in_rows, out_rows, offsets


@subm_rulebook.register_fake
def _(indices, spec):
    pairs = torch.library.get_ctx().new_dynamic_size()
    volume = RulebookSpec.from_json(spec).volume
    return (indices.new_empty((pairs,)), indices.new_empty((pairs,)),
            indices.new_empty((volume + 1,), dtype=torch.int64))


@torch.library.custom_op("spconv_mlir::strided_rulebook", mutates_args=())
def strided_rulebook(indices: torch.Tensor, spec: str) -> Tuple[
        torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    out_indices, in_rows, out_rows, offsets = rulebook_kernel(
        RulebookSpec.from_json(spec), indices.device)(indices.contiguous())
    return out_indices, in_rows, out_rows, offsets


@strided_rulebook.register_fake
def _(indices, spec):
    ctx = torch.library.get_ctx()
    # BatchNorm, which follows most strided convs, branches on its input
    # being empty and (training) on one value per channel: guards that
    # torch.compile cannot take on an unbacked size. At least two sites
    # decides both; a compiled model fails a runtime assertion on a strided
    # output of fewer (eager mode has no such limit).
    sites = ctx.new_dynamic_size(min=2)
    pairs = ctx.new_dynamic_size()
    volume = RulebookSpec.from_json(spec).volume
    return (indices.new_empty((sites, indices.shape[1])), indices.new_empty((pairs,)),
            indices.new_empty((pairs,)), indices.new_empty((volume + 1,), dtype=torch.int64))


def _inputs(in_rows, out_rows, offsets, sites, features, weight=None, bias=None):
    return _contiguous(in_rows, out_rows, offsets, sites, features, weight, bias)


@torch.library.custom_op("spconv_mlir::rulebook_conv", mutates_args=())
def rulebook_conv(in_rows: torch.Tensor, out_rows: torch.Tensor, offsets: torch.Tensor,
                  sites: torch.Tensor, features: torch.Tensor, weight: torch.Tensor,
                  bias: Optional[torch.Tensor], spec: str) -> torch.Tensor:
    return compute_kernel(ConvSpec.from_json(spec), features.device).forward(
        *_inputs(in_rows, out_rows, offsets, sites, features, weight, bias))


@rulebook_conv.register_fake
def _(in_rows, out_rows, offsets, sites, features, weight, bias, spec):
    return features.new_empty((sites.shape[0], ConvSpec.from_json(spec).out_channels))


@torch.library.custom_op("spconv_mlir::rulebook_pool", mutates_args=())
def rulebook_pool(in_rows: torch.Tensor, out_rows: torch.Tensor, offsets: torch.Tensor,
                  sites: torch.Tensor, features: torch.Tensor, spec: str) -> torch.Tensor:
    """Max or average pooling (spec op `maxpool`, `avgpool`) over a regular
    rulebook."""
    return compute_kernel(ConvSpec.from_json(spec), features.device).forward(
        *_inputs(in_rows, out_rows, offsets, sites, features))


@rulebook_pool.register_fake
def _(in_rows, out_rows, offsets, sites, features, spec):
    return features.new_empty((sites.shape[0], features.shape[1]))


@torch.library.custom_op("spconv_mlir::rulebook_backward", mutates_args=())
def rulebook_backward(in_rows: torch.Tensor, out_rows: torch.Tensor, offsets: torch.Tensor,
                      sites: torch.Tensor, features: torch.Tensor, weight: Optional[torch.Tensor],
                      bias: Optional[torch.Tensor], grad: torch.Tensor,
                      spec: str) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The gradients of a rulebook conv's or pool's features, weight and
    bias for the gradient `grad` of its output features; zeros of their
    shapes for what the op lacks (a pool's weight and bias, a bias-free
    conv's bias)."""
    s = ConvSpec.from_json(spec)
    grads = compute_kernel(s, features.device).backward(
        *_inputs(in_rows, out_rows, offsets, sites, features, weight, bias), grad.contiguous())
    shapes = [s.weight_shape() if not s.is_pool else (0,), (s.out_channels,)]
    while len(grads) < 3:
        grads.append(features.new_zeros(shapes[len(grads) - 1]))
    return grads[0], grads[1], grads[2]


@rulebook_backward.register_fake
def _(in_rows, out_rows, offsets, sites, features, weight, bias, grad, spec):
    s = ConvSpec.from_json(spec)
    return (features.new_empty(features.shape),
            features.new_empty(s.weight_shape() if not s.is_pool else (0,)),
            features.new_empty((s.out_channels,)))


def _save(ctx, tensors, spec, has_weight, has_bias):
    ctx.save_for_backward(*tensors)
    ctx.spec, ctx.has_weight, ctx.has_bias = spec, has_weight, has_bias
    # Autograd records this op, so its backward will run: its kernels
    # compile now beside the forward's next ones (kernels.py).
    prefetch_backward(ConvSpec.from_json(spec), tensors[4].device)


def _grads(ctx, grad):
    in_rows, out_rows, offsets, sites, features, weight, bias = ctx.saved_tensors
    d_features, d_weight, d_bias = rulebook_backward(
        in_rows, out_rows, offsets, sites, features, weight, bias, grad, ctx.spec)
    return (d_features, d_weight if ctx.has_weight else None,
            d_bias if ctx.has_bias else None)


def _setup_conv(ctx, inputs, output):
    in_rows, out_rows, offsets, sites, features, weight, bias, spec = inputs
    _save(ctx, (in_rows, out_rows, offsets, sites, features, weight, bias), spec, True,
          bias is not None)


def _backward_conv(ctx, grad):
    d_features, d_weight, d_bias = _grads(ctx, grad)
    return None, None, None, None, d_features, d_weight, d_bias, None


def _setup_pool(ctx, inputs, output):
    in_rows, out_rows, offsets, sites, features, spec = inputs
    _save(ctx, (in_rows, out_rows, offsets, sites, features, None, None), spec, False, False)


def _backward_pool(ctx, grad):
    d_features, _, _ = _grads(ctx, grad)
    return None, None, None, None, d_features, None


rulebook_conv.register_autograd(_backward_conv, setup_context=_setup_conv)
rulebook_pool.register_autograd(_backward_pool, setup_context=_setup_pool)
