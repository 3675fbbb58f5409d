"""Pooling as PyTorch records it: ``max_pool2d_with_indices``
(``MaxPool2DWithIndicesBackward0``, whose gradient writes ``grad`` back at the saved
indices: ``max_pool2d_with_indices_backward``), ``avg_pool2d`` (``AvgPool2DBackward0``,
its adjoint ``avg_pool2d_backward``) and ``_adaptive_avg_pool2d``
(``AdaptiveAvgPool2DBackward0``, its adjoint ``_adaptive_avg_pool2d_backward``).

Average pooling, plain or adaptive, is separable: the mean over a rectangle is the mean of
the row means, so it is ``Aₕ · x · Aᵥᵀ`` with two small matrices holding each window's
weights (PyTorch's divisors: the padding counted or not, ``divisor_override``); its
adjoint is ``Aₕᵀ · g · Aᵥ``.  Max pooling takes the windows of the input padded with
-inf (``sliding_window_view``), their arg-max, and the flat index of that element in
its input plane, as PyTorch saves it.

Layer 1: numpy only.
"""
from __future__ import annotations

import numpy as np

from .convolution import _pad
from .indexing import GATHER
from .kernels import _sympy
from .record import Op

__all__ = ["MAX_POOL2D_WITH_INDICES", "MAX_POOL2D_WITH_INDICES_BACKWARD", "AVG_POOL2D",
           "AVG_POOL2D_BACKWARD", "ADAPTIVE_AVG_POOL2D", "ADAPTIVE_AVG_POOL2D_BACKWARD",
           "pool_output_size", "max_pool2d_indices"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# words: a window's maximum or mean, a scatter or gather.


def pool_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int,
                     ceil_mode: bool) -> int:
    """One spatial dim of a pooling's result, as PyTorch's ``pooling_output_shape``."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1  # the last window would start in the right padding
    return out


# -- max pooling --------------------------------------------------------------------------------
def _max_geometry(x, kernel, stride, padding, dilation, ceil_mode):
    """``x`` padded with -inf to exactly the windows' reach, the output size, the stride."""
    stride = tuple(stride) or tuple(kernel)
    sizes = np.shape(x)[-2:]
    out = tuple(pool_output_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
                zip(sizes, kernel, stride, padding, dilation))
    spans = tuple((o - 1) * s + d * (k - 1) + 1 for o, s, d, k in
                  zip(out, stride, dilation, kernel))
    hi = tuple(max(span - n - p, 0) for span, n, p in zip(spans, sizes, padding))
    low = _sympy().S.NegativeInfinity if x.dtype == object else -np.inf
    xp = _pad(x, tuple(padding), hi, low)[(Ellipsis,) + tuple(slice(0, s) for s in spans)]
    return xp, out, stride


def _offsets(xp, kernel, stride, dilation, out):
    """Each kernel offset ``(i, j)`` and the strided view of the elements it reads."""
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            yield (i, j), xp[..., i * dilation[0]:i * dilation[0] + stride[0] * (out[0] - 1) + 1:
                             stride[0],
                             j * dilation[1]:j * dilation[1] + stride[1] * (out[1] - 1) + 1:
                             stride[1]]


# (the values and the indices come from one pass; apply asks for the indices, a saved value,
# right after the values: the last pass is kept for that one call, as one tuple replaced
# whole, so that a pass in another thread cannot mix its indices with these values)
_LAST: list = [(None, None, None)]


def _key(x, kernel, stride, padding, dilation, ceil_mode) -> tuple:
    return (id(x),) + tuple(tuple(v) for v in (kernel, stride, padding, dilation)) + (
        bool(ceil_mode),)


def _max_pool(x, kernel, stride, padding, dilation, ceil_mode):
    """The maximum of each window, its index kept for :func:`max_pool2d_indices`."""
    x = np.asarray(x)
    best, indices = _max_pass(x, kernel, stride, padding, dilation, ceil_mode)
    _LAST[0] = (x, _key(x, kernel, stride, padding, dilation, ceil_mode), indices)
    return best


def _max_pass(x, kernel, stride, padding, dilation, ceil_mode):
    """A running maximum over the kernel's offsets (one vectorised step per offset): the
    first maximum wins, and NaN, as in PyTorch's kernel; and where it was."""
    xp, out, stride = _max_geometry(x, kernel, stride, padding, dilation, ceil_mode)
    views = list(_offsets(xp, kernel, stride, dilation, out))
    if np.isnan(x).any():
        best, where = _running_max_nan(views, kernel)
    else:
        best = views[0][1].copy() if len(views) == 1 else views[0][1]
        for _, view in views[1:]:
            best = np.maximum(best, view)
        # the first offset holding the maximum: offsets visited last to first, each
        # moving ``where`` to itself where it holds the maximum (arithmetic, no masks)
        where = np.zeros(best.shape, dtype=np.int32)
        eq = np.empty(best.shape, dtype=bool)
        for (i, j), view in reversed(views):
            np.equal(view, best, out=eq)
            step = np.int32(i * kernel[1] + j) - where
            step *= eq
            where += step
    ki = where // np.int32(kernel[1])
    kj = where - ki * np.int32(kernel[1])
    rows = (np.arange(out[0]) * stride[0] - padding[0])[:, None] + ki * dilation[0]
    cols = (np.arange(out[1]) * stride[1] - padding[1])[None, :] + kj * dilation[1]
    return best, (rows * x.shape[-1] + cols).astype(np.int64)


def _running_max_nan(views, kernel):
    """PyTorch's running maximum with NaN: a NaN replaces the maximum (the last NaN's
    index is kept)."""
    best = views[0][1].copy()
    where = np.zeros(best.shape, dtype=np.int32)
    for (i, j), view in views[1:]:
        better = (view > best) | np.isnan(view)
        np.copyto(best, view, where=better)
        np.copyto(where, i * kernel[1] + j, where=better)
    return best, where


def max_pool2d_indices(x, kernel, stride, padding, dilation, ceil_mode) -> np.ndarray:
    """The flat index (in its ``H·W`` plane) of each window's maximum, as PyTorch gives it."""
    x = np.asarray(x)
    last = _LAST[0]
    if last[0] is x and last[1] == _key(x, kernel, stride, padding, dilation, ceil_mode):
        return last[2]
    return _max_pass(x, kernel, stride, padding, dilation, ceil_mode)[1]


def _sym_max_pool(x, kernel, stride, padding, dilation, ceil_mode):
    x = np.asarray(x, dtype=object)
    xp, out, stride = _max_geometry(x, kernel, stride, padding, dilation, ceil_mode)
    top = np.frompyfunc(_sympy().Max, 2, 1)
    views = [v for _, v in _offsets(xp, kernel, stride, dilation, out)]
    best = views[0]
    for v in views[1:]:
        best = top(best, v)
    return best


def _scatter_back(g, self_shape, indices):
    """``g`` added into zeros of ``self_shape`` at the flat plane ``indices``."""
    g, indices = np.asarray(g), np.asarray(indices)
    plane = int(np.prod(self_shape[-2:]))
    lead = int(np.prod(self_shape[:-2], dtype=int))
    flat = (np.arange(lead)[:, None] * plane + indices.reshape(lead, -1)).ravel()
    if g.dtype == object:
        out = np.zeros(lead * plane, dtype=object)
        np.add.at(out, flat, g.ravel())
    else:
        out = np.bincount(flat, weights=g.ravel(), minlength=lead * plane).astype(g.dtype)
    return out.reshape(self_shape)


#: The backward ops' input (their second operand) by its sizes.
_SELF_SIZES = {"self_sym_sizes": lambda arrays, attrs: tuple(np.shape(arrays[1]))}


def _zeros(m, grad, *saved):
    """The gradient of a pooling's backward in its input, which it reads for its shape
    only: zeros, as PyTorch's ``zeros_like(self)``."""
    return m.new_zeros(grad, saved[-1])


def _gather_back(m, grad, indices):
    """``grad`` (an input's shape) read at ``indices``: the gradient of the scatter."""
    shape = m.shape(grad)
    idx = np.asarray(indices)
    flat = m.reshape(grad, tuple(shape[:-2]) + (shape[-2] * shape[-1],))
    picked = m.call(GATHER, flat, -1, idx.reshape(idx.shape[:-2] + (-1,)))
    return m.reshape(picked, idx.shape)


_POOL = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

MAX_POOL2D_WITH_INDICES = Op(
    "max_pool2d_with_indices", attrs=_POOL, node="MaxPool2DWithIndicesBackward0",
    functional="max_pool2d_with_indices",
    forward=_max_pool, sym=_sym_max_pool,
    saves=("ceil_mode", "dilation", "kernel_size", "padding", "result1", "self", "stride"),
    derive={"result1": lambda arrays, attrs: max_pool2d_indices(arrays[0], *attrs)},
    grads=(lambda m, grad, ceil_mode, dilation, kernel_size, padding, result1, self, stride:
           m.call(MAX_POOL2D_WITH_INDICES_BACKWARD, grad, self, kernel_size, stride, padding,
                  dilation, ceil_mode, result1),),
    local=("1 at each window's maximum",), symbol="max_pool2d {kernel_size}",
    doc="the maximum of each window (and its index)")

MAX_POOL2D_WITH_INDICES_BACKWARD = Op(
    "max_pool2d_with_indices_backward", inputs=("grad_output", "self"),
    attrs=_POOL + ("indices",), node="MaxPool2DWithIndicesBackwardBackward0",
    forward=lambda g, x, *attrs: _scatter_back(g, np.shape(x), attrs[-1]),
    saves=("indices", "_self_sym_sizes"), derive=_SELF_SIZES,
    grads=(lambda m, grad, indices, sizes: _gather_back(m, grad, indices), _zeros),
    local=("gather at the indices", "0"), symbol="max_pool2d backward",
    doc="grad_output added back at each window's maximum")


# -- average pooling ------------------------------------------------------------------------------
def _avg_matrix(n, k, s, p, ceil_mode, count_include_pad, override, dtype):
    """One dim's window weights ``(out, n)``: 1/divisor inside each window (1 with
    ``divisor_override``, which divides once at the end)."""
    out = pool_output_size(n, k, s, p, 1, ceil_mode)
    start = np.arange(out) * s - p
    end = np.minimum(start + k, n + p)
    size = end - start  # with the padding, as PyTorch counts it
    start, end = np.maximum(start, 0), np.minimum(end, n)
    cells = np.arange(n)
    inside = (cells >= start[:, None]) & (cells < end[:, None])
    if override:
        weight = np.ones(out)
    else:
        weight = 1.0 / (size if count_include_pad else end - start)
    return (inside * weight[:, None]).astype(dtype)


def _adaptive_matrix(n, out, dtype):
    i = np.arange(out)
    start, end = (i * n) // out, -((-(i + 1) * n) // out)
    cells = np.arange(n)
    inside = (cells >= start[:, None]) & (cells < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _dtype(a):
    return np.float64 if a.dtype == object else a.dtype


def _separable(x, rows, cols, scale=None):
    """``rows · x · colsᵀ`` over the last two dims (a tensordot each: object arrays too)."""
    x = np.asarray(x)
    y = np.moveaxis(np.tensordot(rows, x, axes=([1], [x.ndim - 2])), 0, -2)
    y = np.tensordot(y, cols, axes=([y.ndim - 1], [1]))
    return y if scale is None else y / scale


def _avg_matrices(shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                  divisor_override, dtype):
    stride = tuple(stride) or tuple(kernel_size)
    return [_avg_matrix(n, k, s, p, ceil_mode, count_include_pad, divisor_override, dtype)
            for n, k, s, p in zip(shape[-2:], kernel_size, stride, padding)]


def _avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x = np.asarray(x)
    rows, cols = _avg_matrices(x.shape, kernel_size, stride, padding, ceil_mode,
                               count_include_pad, divisor_override, _dtype(x))
    return _separable(x, rows, cols, divisor_override)


def _avg_pool_backward(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override):
    g = np.asarray(g)
    rows, cols = _avg_matrices(np.shape(x), kernel_size, stride, padding, ceil_mode,
                               count_include_pad, divisor_override, _dtype(g))
    return _separable(g, rows.T, cols.T, divisor_override)


_AVG = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
        "divisor_override")
_AVG_SAVES = ("ceil_mode", "count_include_pad", "divisor_override", "kernel_size",
              "padding", "stride")


def _avg_grad(m, grad, ceil_mode, count_include_pad, divisor_override, kernel_size, padding,
              self, stride):
    return m.call(AVG_POOL2D_BACKWARD, grad, self, kernel_size, stride, padding, ceil_mode,
                  count_include_pad, divisor_override)


def _avg_double_grad(m, grad, ceil_mode, count_include_pad, divisor_override, kernel_size,
                     padding, stride, self_sym_sizes):
    return m.call(AVG_POOL2D, grad, kernel_size, stride, padding, ceil_mode,
                  count_include_pad, divisor_override)


AVG_POOL2D = Op(
    "avg_pool2d", attrs=_AVG, node="AvgPool2DBackward0", forward=_avg_pool,
    functional="avg_pool2d",
    saves=_AVG_SAVES[:5] + ("self", "stride"), grads=(_avg_grad,),
    local=("1/(window size) in each window",), symbol="avg_pool2d {kernel_size}",
    doc="the mean of each window")

AVG_POOL2D_BACKWARD = Op(
    "avg_pool2d_backward", inputs=("grad_output", "self"), attrs=_AVG,
    node="AvgPool2DBackwardBackward0", forward=_avg_pool_backward,
    saves=_AVG_SAVES + ("_self_sym_sizes",), derive=_SELF_SIZES,
    grads=(_avg_double_grad, _zeros), local=("avg_pool2d", "0"),
    symbol="avg_pool2d backward", doc="grad_output spread evenly over each window")


# -- adaptive average pooling ---------------------------------------------------------------------
def _adaptive(x, output_size):
    x = np.asarray(x)
    rows, cols = (_adaptive_matrix(n, o, _dtype(x)) for n, o in zip(x.shape[-2:], output_size))
    return _separable(x, rows, cols)


def _adaptive_backward(g, x):
    g = np.asarray(g)
    rows, cols = (_adaptive_matrix(n, o, _dtype(g)) for n, o in
                  zip(np.shape(x)[-2:], g.shape[-2:]))
    return _separable(g, rows.T, cols.T)


ADAPTIVE_AVG_POOL2D = Op(
    "_adaptive_avg_pool2d", attrs=("output_size",), node="AdaptiveAvgPool2DBackward0",
    functional="adaptive_avg_pool2d",
    forward=_adaptive, saves=("self",),
    grads=(lambda m, grad, self: m.call(ADAPTIVE_AVG_POOL2D_BACKWARD, grad, self),),
    local=("1/(bin size) in each bin",), symbol="adaptive_avg_pool2d {output_size}",
    doc="the mean of each of output_size bins")

ADAPTIVE_AVG_POOL2D_BACKWARD = Op(
    "_adaptive_avg_pool2d_backward", inputs=("grad_output", "self"),
    node="AdaptiveAvgPool2DBackwardBackward0", forward=_adaptive_backward,
    saves=("grad_output_sym_argsize_minus_1", "grad_output_sym_argsize_minus_2",
           "_self_sym_sizes"),
    derive={"grad_output_sym_argsize_minus_1": lambda arrays, attrs: np.shape(arrays[0])[-1],
            "grad_output_sym_argsize_minus_2": lambda arrays, attrs: np.shape(arrays[0])[-2],
            **_SELF_SIZES},
    grads=(lambda m, grad, minus_1, minus_2, sizes:
           m.call(ADAPTIVE_AVG_POOL2D, grad, (minus_2, minus_1)), _zeros),
    local=("adaptive_avg_pool2d", "0"), symbol="adaptive_avg_pool2d backward",
    doc="grad_output spread evenly over each bin")


# -- forward mode: the JVPs (symgrad.ops.jvp) ---------------------------------------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402


def _max_pool_jvp(m, tangents, args, attrs, result, saved):
    """The tangent read at each window's maximum (saved ``result1``)."""
    return None if tangents[0] is None else _gather_back(m, tangents[0], saved[4])


_JVP.register(_max_pool_jvp, MAX_POOL2D_WITH_INDICES)
# linear in their one differentiable operand (the backward ops read ``self`` for its shape)
_JVP.register(_fwd.LINEAR, MAX_POOL2D_WITH_INDICES_BACKWARD, AVG_POOL2D, AVG_POOL2D_BACKWARD,
              ADAPTIVE_AVG_POOL2D, ADAPTIVE_AVG_POOL2D_BACKWARD)


# -- vmap (symgrad.ops.batching): the batch folded into the images' dimension ------------------
from . import batching as _vmap  # noqa: E402
from .tables import BATCHING as _BATCHING  # noqa: E402

_BATCHING.register(_vmap.images(MAX_POOL2D_WITH_INDICES, 2), MAX_POOL2D_WITH_INDICES)
_BATCHING.register(_vmap.images(AVG_POOL2D, 2), AVG_POOL2D)
