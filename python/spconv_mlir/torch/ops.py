"""The sparse convolutions as torch custom ops (`torch.library.custom_op`).

Three forward ops and one backward op, each running the kernel set that
`kernels.py` compiled for the op's `ConvSpec` (passed as its JSON text, so
that the schema is plain tensors and a string):

| op | arguments | results |
|---|---|---|
| `spconv_mlir::subm_conv` | indices, features, weight, bias?, spec | features |
| `spconv_mlir::sparse_conv` | indices, features, weight, bias?, spec | out indices, features |
| `spconv_mlir::inverse_conv` | fine indices, coarse indices, features, weight, bias?, spec | features |
| `spconv_mlir::conv_backward` | the forward's inputs, output gradient, spec | d features, d weight, d bias |
| `spconv_mlir::sparse_pool` | indices, features, spec | out indices, features |
| `spconv_mlir::pool_backward` | indices, features, output gradient, spec | d features |

Weights are in the compiler's layout, `K x Cin/groups x Cout`; the modules
(`modules.py`) hold spconv 2.x's and rearrange them with torch ops, whose
gradients torch knows. Autograd goes through `register_autograd`; each
forward op has a fake implementation, so `torch.compile` traces through
them (a strided conv's number of output sites is data-dependent: an
unbacked size). CPU tensors only for now: the CUDA half is issue 38's next
step.
"""
from typing import List, Optional, Tuple

import torch

from .kernels import ConvSpec, kernel_set


def _spec(spec):
    return ConvSpec.from_json(spec)


def _contiguous(*tensors):
    return [t.contiguous() for t in tensors]


def _forward_inputs(indices, features, weight, bias):
    inputs = _contiguous(indices, features, weight)
    if bias is not None:
        inputs.append(bias.contiguous())
    return inputs


@torch.library.custom_op("spconv_mlir::subm_conv", mutates_args=())
def subm_conv(indices: torch.Tensor, features: torch.Tensor, weight: torch.Tensor,
              bias: Optional[torch.Tensor], spec: str) -> torch.Tensor:
    (out,) = kernel_set(_spec(spec)).forward(*_forward_inputs(indices, features, weight, bias))
    return out


@subm_conv.register_fake
def _(indices, features, weight, bias, spec):
    return features.new_empty((features.shape[0], _spec(spec).out_channels))


@torch.library.custom_op("spconv_mlir::sparse_conv", mutates_args=())
def sparse_conv(indices: torch.Tensor, features: torch.Tensor, weight: torch.Tensor,
                bias: Optional[torch.Tensor], spec: str) -> Tuple[torch.Tensor, torch.Tensor]:
    out_indices, out = kernel_set(_spec(spec)).forward(
        *_forward_inputs(indices, features, weight, bias))
    return out_indices, out


@sparse_conv.register_fake
def _(indices, features, weight, bias, spec):
    s = _spec(spec)
    # BatchNorm, which follows most strided convs, branches on its input
    # being empty and (training) on one value per channel: guards that
    # torch.compile cannot take on an unbacked size. At least two sites
    # decides both; a compiled model fails a runtime assertion on a strided
    # conv's output of fewer (eager mode has no such limit).
    sites = torch.library.get_ctx().new_dynamic_size(min=2)
    return (indices.new_empty((sites, s.ndim + 1)),
            features.new_empty((sites, s.out_channels)))


@torch.library.custom_op("spconv_mlir::inverse_conv", mutates_args=())
def inverse_conv(fine: torch.Tensor, coarse: torch.Tensor, features: torch.Tensor,
                 weight: torch.Tensor, bias: Optional[torch.Tensor], spec: str) -> torch.Tensor:
    inputs = _contiguous(fine) + _forward_inputs(coarse, features, weight, bias)
    (out,) = kernel_set(_spec(spec)).forward(*inputs)
    return out


@inverse_conv.register_fake
def _(fine, coarse, features, weight, bias, spec):
    return features.new_empty((fine.shape[0], _spec(spec).out_channels))


@torch.library.custom_op("spconv_mlir::conv_backward", mutates_args=())
def conv_backward(coords: List[torch.Tensor], features: torch.Tensor, weight: torch.Tensor,
                  bias: Optional[torch.Tensor], grad: torch.Tensor,
                  spec: str) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The gradients of a conv's features, weight and bias (zeros of the
    bias's shape without one) for the gradient `grad` of its output
    features. `coords` are the forward's coordinate arguments (one, or for
    an inverse conv the fine and the coarse ones)."""
    inputs = _contiguous(*coords) + _contiguous(features, weight)
    if bias is not None:
        inputs.append(bias.contiguous())
    grads = kernel_set(_spec(spec)).backward(*inputs, grad.contiguous())
    if bias is None:
        grads.append(weight.new_zeros((weight.shape[2],)))
    return grads[0], grads[1], grads[2]


@conv_backward.register_fake
def _(coords, features, weight, bias, grad, spec):
    return (features.new_empty(features.shape), weight.new_empty(weight.shape),
            weight.new_empty((weight.shape[2],)))


def _save(ctx, coords, features, weight, bias, spec):
    ctx.save_for_backward(*coords, features, weight, bias)
    ctx.coords = len(coords)
    ctx.has_bias = bias is not None
    ctx.spec = spec


def _grads(ctx, grad):
    saved = ctx.saved_tensors
    coords = list(saved[:ctx.coords])
    features, weight, bias = saved[ctx.coords:]
    d_features, d_weight, d_bias = conv_backward(coords, features, weight, bias, grad,
                                                 ctx.spec)
    return d_features, d_weight, (d_bias if ctx.has_bias else None)


def _setup_single(ctx, inputs, output):
    indices, features, weight, bias, spec = inputs
    _save(ctx, [indices], features, weight, bias, spec)


def _backward_subm(ctx, grad):
    d_features, d_weight, d_bias = _grads(ctx, grad)
    return None, d_features, d_weight, d_bias, None


def _backward_sparse(ctx, grad_indices, grad):
    d_features, d_weight, d_bias = _grads(ctx, grad)
    return None, d_features, d_weight, d_bias, None


def _setup_inverse(ctx, inputs, output):
    fine, coarse, features, weight, bias, spec = inputs
    _save(ctx, [fine, coarse], features, weight, bias, spec)


def _backward_inverse(ctx, grad):
    d_features, d_weight, d_bias = _grads(ctx, grad)
    return None, None, d_features, d_weight, d_bias, None


@torch.library.custom_op("spconv_mlir::sparse_pool", mutates_args=())
def sparse_pool(indices: torch.Tensor, features: torch.Tensor,
                spec: str) -> Tuple[torch.Tensor, torch.Tensor]:
    """Max or average pooling (spec kind `maxpool`, `avgpool`) over the
    regular conv's rulebook of the window."""
    out_indices, out = kernel_set(_spec(spec)).forward(*_contiguous(indices, features))
    return out_indices, out


@sparse_pool.register_fake
def _(indices, features, spec):
    # As sparse_conv's: BatchNorm may follow.
    sites = torch.library.get_ctx().new_dynamic_size(min=2)
    return (indices.new_empty((sites, indices.shape[1])),
            features.new_empty((sites, features.shape[1])))


@torch.library.custom_op("spconv_mlir::pool_backward", mutates_args=())
def pool_backward(indices: torch.Tensor, features: torch.Tensor, grad: torch.Tensor,
                  spec: str) -> torch.Tensor:
    (d_features,) = kernel_set(_spec(spec)).backward(
        *_contiguous(indices, features, grad))
    return d_features


@pool_backward.register_fake
def _(indices, features, grad, spec):
    return features.new_empty(features.shape)


def _setup_pool(ctx, inputs, output):
    indices, features, spec = inputs
    ctx.save_for_backward(indices, features)
    ctx.spec = spec


def _backward_pool(ctx, grad_indices, grad):
    indices, features = ctx.saved_tensors
    return None, pool_backward(indices, features, grad, ctx.spec), None


sparse_pool.register_autograd(_backward_pool, setup_context=_setup_pool)
subm_conv.register_autograd(_backward_subm, setup_context=_setup_single)
sparse_conv.register_autograd(_backward_sparse, setup_context=_setup_single)
inverse_conv.register_autograd(_backward_inverse, setup_context=_setup_inverse)
