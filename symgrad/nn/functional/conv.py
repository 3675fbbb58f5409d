"""Convolution, pooling and normalisation of a first deep-learning course: ``conv1d``,
``conv2d``, ``max_pool2d`` (and ``max_pool2d_with_indices``), ``avg_pool2d``,
``adaptive_avg_pool2d`` (and their 1-D forms, the 2-D ops on an unsqueezed input),
``dropout2d``, ``batch_norm``, ``group_norm``, with PyTorch's
signatures, checks, messages and graphs (the ops are ``symgrad.ops.convolution``,
``pooling`` and ``normalization``).

Examples
--------
>>> import symgrad as torch
>>> import symgrad.nn.functional as F
>>> x = torch.arange(16.0).reshape(1, 1, 4, 4)
>>> F.max_pool2d(x, 2)
tensor([[[[ 5.,  7.],
          [13., 15.]]]])
>>> F.conv2d(x, torch.ones(1, 1, 2, 2), stride=2).flatten()
tensor([10., 18., 42., 50.])
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import ops as O
from ...api.apply import apply
from ...api.construct import tensor
from ...api.core import Tensor
from ...api.creation import rand
from ...ops.normalization import batch_statistics
from ...ops.pooling import max_pool2d_indices, pool_output_size
from .layers import pad as _pad

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d",
           "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "dropout2d", "batch_norm", "group_norm"]

_SAME_WARNING = ("Using padding='same' with even kernel lengths and odd dilation may require "
                 "a zero-padded copy of the input be created (Triggered internally at "
                 "/__w/pytorch/pytorch/aten/src/ATen/native/Convolution.cpp:1101.)")
_WARNED: list = []  # the padding='same' warning was given
_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half"}
_SCALAR = {"float32": "Float", "float64": "Double", "float16": "Half"}


def _tuple(value, n: int) -> tuple:
    """An int (or a one-element sequence) for every spatial dim, as PyTorch expands it."""
    if isinstance(value, (tuple, list)):
        value = tuple(int(v) for v in value)
        return value * n if len(value) == 1 else value
    return (int(value),) * n


def _conv_checks(x: Tensor, weight: Tensor, bias, groups: int) -> None:
    """PyTorch's checks of the operands' shapes, then of their dtypes, in its order."""
    shape, wshape = list(x.shape), list(weight.shape)
    if wshape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size [{wshape}] "
                           "instead")
    if wshape[1] * groups != shape[1]:
        raise RuntimeError(f"Given groups={groups}, weight of size {wshape}, expected "
                           f"input{shape} to have {wshape[1] * groups} channels, but got "
                           f"{shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != wshape[0]):
        raise RuntimeError(f"Given weight of size {wshape}, expected bias to be 1-dimensional "
                           f"with {wshape[0]} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    if x.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {_SCALAR.get(x.dtype.name)} but found "
                           f"{_SCALAR.get(weight.dtype.name)}")
    if bias is not None and bias.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({_TYPES.get(x.dtype.name)}) and bias type "
                           f"({_TYPES.get(bias.dtype.name)}) should be the same")


def _padding(padding, stride: tuple, nd: int):
    """``padding`` as a tuple (``'valid'``: ``(0,)``, as PyTorch passes it), or
    ``'same'``; PyTorch's errors."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,)
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        return padding
    padding = _tuple(padding, nd)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    return padding


def _conv(name: str, nd: int, input: Tensor, weight: Tensor, bias, stride, padding,
          dilation, groups: int) -> Tensor:
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if input.ndim == nd + 1:  # unbatched, as PyTorch: a batch of one, squeezed after
        return _conv(name, nd, input.unsqueeze(0), weight, bias, stride, padding, dilation,
                     groups).squeeze(0)
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    padding = _padding(padding, stride, nd)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    _conv_checks(input, weight, bias, groups)
    kernel = tuple(weight.shape[2:])
    output_padding = (0,) if padding == (0,) else (0,) * nd
    if padding == "same":
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        padding = tuple(t // 2 for t in total)
        if any(t % 2 for t in total):
            if not _WARNED:  # (PyTorch's TORCH_WARN_ONCE: once per process)
                _WARNED.append(True)
                warnings.warn(_SAME_WARNING, UserWarning, stacklevel=3)
            extra = []
            for t in reversed(total):
                extra += [0, t % 2]
            input = _pad(input, extra)
    full = padding * nd if len(padding) == 1 else padding
    padded = [n + 2 * p for n, p in zip(input.shape[2:], full)]
    spans = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    if any(s > n for s, n in zip(spans, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, spans))}). Kernel size can't be greater "
                           "than actual input size")
    return apply(O.CONVOLUTION, (input, weight, bias),
                 (stride, padding, dilation, False, output_padding, int(groups)))


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """The 1-D correlation of ``input`` ``(N, C, L)`` with ``weight`` ``(O, C/groups, k)``,
    plus ``bias`` (``ConvolutionBackward0``); ``padding`` may be ``'same'`` or
    ``'valid'``."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """The 2-D correlation of ``input`` ``(N, C, H, W)`` with ``weight``
    ``(O, C/groups, kh, kw)``, plus ``bias`` (``ConvolutionBackward0``)."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(name: str, nd: int, input: Tensor, weight: Tensor, bias, stride, padding,
                    output_padding, groups: int, dilation) -> Tensor:
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if input.ndim == nd + 1:
        return _conv_transpose(name, nd, input.unsqueeze(0), weight, bias, stride, padding,
                               output_padding, groups, dilation).squeeze(0)
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    padding, output_padding = _tuple(padding, nd), _tuple(output_padding, nd)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(o >= max(s, d) for o, s, d in zip(output_padding, stride, dilation)):
        words = ("height", "width") if nd == 2 else ("",) if nd == 1 else ("depth", "height",
                                                                           "width")
        parts = [f"{what}_{w}: {v}".replace("_: ", ": ")
                 for what, vals in (("output_padding", output_padding), ("stride", stride),
                                    ("dilation", dilation))
                 for w, v in zip(words, vals)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, "
                           "but got " + " ".join(parts))
    shape, wshape = list(input.shape), list(weight.shape)
    if wshape[0] != shape[1]:
        raise RuntimeError(f"Given transposed=1, weight of size {wshape}, expected "
                           f"input{shape} to have {wshape[0]} channels, but got {shape[1]} "
                           "channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != wshape[1] * groups):
        raise RuntimeError(f"Given transposed=1, weight of size {wshape}, expected bias to be "
                           f"1-dimensional with {wshape[1] * groups} elements, but got bias "
                           f"of size {list(bias.shape)} instead")
    return apply(O.CONVOLUTION, (input, weight, bias),
                 (stride, padding, dilation, True, output_padding, int(groups)))


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transposed 1-D convolution (the input gradient of ``conv1d``), ``weight``
    ``(C_in, C_out/groups, k)`` (``ConvolutionBackward0``, ``_saved_transposed`` True)."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transposed 2-D convolution (the input gradient of ``conv2d``), ``weight``
    ``(C_in, C_out/groups, kh, kw)``."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


# -- pooling ----------------------------------------------------------------------------------
def _pool_attrs(input: Tensor, kernel_size, stride, padding, dilation, ceil_mode) -> tuple:
    if input.ndim not in (3, 4) or not input.numel():
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    kernel = _tuple(kernel_size, 2)
    stride = () if stride is None or stride == [] else _tuple(stride, 2)
    padding, dilation = _tuple(padding, 2), _tuple(dilation, 2)
    if any(s == 0 for s in (stride or kernel)):
        raise RuntimeError("stride should not be zero")
    for p, k, d in zip(padding, kernel, dilation):
        if p > ((k - 1) * d + 1) / 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    out = [pool_output_size(n, k, s, p, d, bool(ceil_mode)) for n, k, s, p, d in
           zip(input.shape[-2:], kernel, stride or kernel, padding, dilation)]
    if min(out) < 1:
        c = input.shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{input.shape[-2]}x{input.shape[-1]}). "
                           f"Calculated output size: ({c}x{out[0]}x{out[1]}). Output size "
                           "is too small")
    return kernel, stride, padding, dilation, bool(ceil_mode)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = True):
    """The maximum of each window and its flat index in the input's ``H·W`` plane."""
    attrs = _pool_attrs(input, kernel_size, stride, padding, dilation, ceil_mode)
    out = apply(O.MAX_POOL2D_WITH_INDICES, (input,), attrs)
    return out, tensor(max_pool2d_indices(input._data, *attrs))


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each ``kernel_size`` window (``MaxPool2DWithIndicesBackward0``);
    with ``return_indices`` also where it was (int64 indices into each ``H·W`` plane)."""
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                       ceil_mode)
    attrs = _pool_attrs(input, kernel_size, stride, padding, dilation, ceil_mode)
    return apply(O.MAX_POOL2D_WITH_INDICES, (input,), attrs)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each window (``AvgPool2DBackward0``): the padding counted in the
    divisor or not, or ``divisor_override`` instead."""
    kernel, stride, padding, _, ceil_mode = _pool_attrs(input, kernel_size, stride, padding,
                                                        1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return apply(O.AVG_POOL2D, (input,), (kernel, stride, padding, ceil_mode,
                                          bool(count_include_pad), divisor_override))


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """The mean of each of ``output_size`` bins (``AdaptiveAvgPool2DBackward0``; a mean
    over the last two dims for one bin, as PyTorch computes it)."""
    size = (output_size, output_size) if not isinstance(output_size, (tuple, list)) \
        else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    size = tuple(int(n if o is None else o) for n, o in zip(input.shape[-2:], size))
    if size == (1, 1):
        return input.mean((-1, -2), keepdim=True)
    return apply(O.ADAPTIVE_AVG_POOL2D, (input,), (size,))


# -- 1-D pooling: PyTorch runs the 2-D ops on the input unsqueezed at -2 ---------------------
def _one(value) -> int:
    return int(value[0]) if isinstance(value, (tuple, list)) else int(value)


def _dims_1d(input: Tensor, name: str) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for "
                           f"{name})")


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window along the last dim (``MaxPool2DWithIndicesBackward0``
    between an unsqueeze and a squeeze, as PyTorch records it)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional "
                           f"0 dim batch size for input, but got:{list(input.shape)}")
    k, p = _one(kernel_size), _one(padding)
    s = k if stride is None or stride == [] else _one(stride)
    if p > k / 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={p} and kernel_size={k}")
    out = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, _one(dilation)),
                     ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each window along the last dim (``AvgPool2DBackward0`` between an
    unsqueeze and a squeeze)."""
    _dims_1d(input, "avg_pool1d")
    k = _one(kernel_size)
    s = k if stride is None or stride == [] else _one(stride)
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _one(padding)), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """The mean of each of ``output_size`` bins along the last dim."""
    _dims_1d(input, "adaptive_avg_pool1d")
    if isinstance(output_size, (tuple, list)) and len(output_size) != 1:
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain one "
                           f"int (got {len(output_size)})")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one(output_size))).squeeze(-2)


_DROPOUT2D_DIM = ("dropout2d: Received a {}-D input to dropout2d, which is deprecated and will "
                  "result in an error in a future release. To retain the behavior and silence "
                  "this warning, please use dropout instead. Note that dropout2d exists to "
                  "provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
                  "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).")
_DROPOUT2D_3D = ("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
                 "dropout behavior is desired - input is interpreted as shape (N, C, L), where "
                 "C is the channel dim. This behavior will change in a future release to "
                 "interpret the input as one without a batch dimension, i.e. shape (C, H, W). "
                 "To maintain the 1D channel-wise dropout behavior, please switch to using "
                 "dropout1d instead.")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (``MulBackward0`` by a mask of shape ``(N, C, 1, 1)``)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (3, 4):
        warnings.warn(_DROPOUT2D_DIM.format(input.ndim), stacklevel=2)
    if input.ndim == 3:
        warnings.warn(_DROPOUT2D_3D, stacklevel=2)
    if not training or p == 0 or not input.numel():
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    keep = (rand(shape, dtype=input.dtype) >= p).to(input.dtype)
    mask = keep * (0.0 if p == 1 else 1.0 / (1.0 - p))
    return input.mul_(mask) if inplace else input * mask


# -- normalisation ----------------------------------------------------------------------------
def _verify_batch_size(size: list) -> None:
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {size}")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch and the other dims
    (``NativeBatchNormBackward0``), or by the running statistics when not training; while
    training, ``running_mean`` and ``running_var`` (unbiased) move by ``momentum``."""
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    channels = input.shape[1] if input.ndim > 1 else 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean must be defined in evaluation mode")
    out = apply(O.NATIVE_BATCH_NORM, (input, weight, bias),
                (running_mean, running_var, bool(training), momentum, eps))
    if training and running_mean is not None:
        # PyTorch's kernel updates the running statistics in place (no version bump)
        mean, var = batch_statistics(input._data)
        n = input.numel() // channels
        for stat, batch in ((running_mean, mean), (running_var, var * n / max(n - 1, 1))):
            stat._data[...] = (1 - momentum) * stat._data + momentum * batch
    return out


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each sample's ``num_groups`` groups of channels, then scale and shift each
    channel (``NativeGroupNormBackward0``)."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    shape = list(input.shape)
    _verify_batch_size([shape[0] * shape[1] // num_groups, num_groups] + shape[2:])
    if shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {shape} and "
                           f"num_groups={num_groups}")
    hxw = int(np.prod(shape[2:], dtype=np.int64))
    # (the node saves its own outputs 1 and 2, mean and rstd: the record's plan)
    return apply(O.NATIVE_GROUP_NORM, (input, weight, bias),
                 (shape[0], shape[1], hxw, int(num_groups), eps, (True,) * 3))[0]
