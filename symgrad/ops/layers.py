"""The layers PyTorch runs as ops of their own: ``embedding`` (``EmbeddingBackward0``,
whose gradient is ``embedding_dense_backward``: rows added back at their indices),
``native_layer_norm`` (``NativeLayerNormBackward0``), ``constant_pad_nd``
(``F.pad``'s constant mode; its gradient is the pad undone, a crop) and ``_trilinear``
(``F.bilinear``'s product of three tensors, ``TrilinearBackward0``).

Layer norm over the last dims ``D`` (``normalized_shape``), ``N`` elements each:
``x̂ = (x - mean) · rstd``, ``rstd = 1/sqrt(var + eps)``, ``y = x̂ · weight + bias``, and

    dx = rstd/N · (N·g - Σ_D g - x̂ · Σ_D(g · x̂)),   g = dy · weight,
    dweight = Σ_batch dy · x̂,   dbias = Σ_batch dy.
"""
from __future__ import annotations

import numpy as np

from . import dtype_rules as R
from .functions import RSQRT
from .kernels import _sym_map, total
from .record import Op

__all__ = ["EMBEDDING", "EMBEDDING_DENSE_BACKWARD", "NATIVE_LAYER_NORM", "CONSTANT_PAD_ND",
           "TRILINEAR"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# words and named statistics (rstd, x̂).


# -- embedding --------------------------------------------------------------------------------
def _dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    grad, idx = np.asarray(grad), np.asarray(indices)
    out = np.zeros((num_weights,) + grad.shape[idx.ndim:], dtype=grad.dtype)
    g = grad.reshape((-1,) + out.shape[1:])
    flat = idx.reshape(-1)
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        g = g / counts[flat].reshape((-1,) + (1,) * (g.ndim - 1))
    np.add.at(out, flat, g)
    if 0 <= padding_idx < num_weights:
        out[padding_idx] = 0
    return out


def _padding_zeroed(rows, indices, padding_idx):
    if padding_idx < 0:
        return rows
    keep = (np.asarray(indices) != padding_idx).reshape(
        np.shape(indices) + (1,) * (np.ndim(rows) - np.ndim(indices)))
    return rows * keep


EMBEDDING = Op("embedding", inputs=("weight", "indices"),
               attrs=("padding_idx", "scale_grad_by_freq", "sparse"),
               forward=lambda w, idx, padding_idx, scale, sparse: np.asarray(w)[np.asarray(idx)],
               saves=("indices", "padding_idx", "scale_grad_by_freq", "sparse",
                      "weight_sym_argsize_0"),
               derive={"weight_sym_argsize_0": lambda arrays, attrs: int(np.shape(arrays[0])[0])},
               grads=(lambda m, grad, indices, padding_idx, scale, sparse, num_weights:
                      m.call(EMBEDDING_DENSE_BACKWARD, grad, indices, num_weights, padding_idx,
                             scale), None),
               local=("1 at the looked-up rows",), symbol="embedding",
               functional="embedding")
EMBEDDING_DENSE_BACKWARD = Op(
    "embedding_dense_backward", inputs=("grad_output", "indices"),
    attrs=("num_weights", "padding_idx", "scale_grad_by_freq"), forward=_dense_backward,
    saves=("indices", "padding_idx"),
    grads=(lambda m, grad, indices, padding_idx:
           _padding_zeroed(m.call(EMBEDDING, grad, indices, -1, False, False), indices,
                           padding_idx), None),
    local=("rows added back",), symbol="embedding backward")


# -- layer norm -------------------------------------------------------------------------------
def _axes(x, normalized_shape) -> tuple:
    nd = np.ndim(x)
    return tuple(range(nd - len(normalized_shape), nd))


def _moments(x, normalized_shape, eps):
    """mean and rstd over the normalized dims, kept (PyTorch's result1, result2)."""
    x = np.asarray(x)
    axes = _axes(x, normalized_shape)
    n = int(np.prod(normalized_shape))
    mean = np.sum(x, axis=axes, keepdims=True) / n
    var = np.sum((x - mean) ** 2, axis=axes, keepdims=True) / n
    if x.dtype == object:
        return mean, _sym_map("sqrt", var + eps) ** -1
    return mean.astype(x.dtype), (1 / np.sqrt(var + eps)).astype(x.dtype)


def _layer_norm(x, weight, bias, normalized_shape, eps):
    mean, rstd = _moments(x, normalized_shape, eps)
    y = (np.asarray(x) - mean) * rstd
    if weight is not None:
        y = y * np.asarray(weight)
    if bias is not None:
        y = y + np.asarray(bias)
    return y


def _xhat(m, input, normalized_shape, eps):
    """x̂ and rstd recomputed from ``input`` with the backend's ops, so that under
    ``create_graph`` they depend on it (the saved mean and rstd are numbers)."""
    axes = _axes(np.empty(m.shape(input), dtype=bool), normalized_shape)
    n = float(np.prod(normalized_shape))
    centred = input - m.div_scalar(total(m, input, axes, True), n)
    rstd = m.call(RSQRT, m.add_scalar(m.div_scalar(total(m, centred * centred, axes, True), n),
                                      eps))
    return centred * rstd, rstd, axes, n


def _ln_grad_input(m, grad, bias, input, normalized_shape, mean, rstd, weight, eps):
    xhat, rstd, axes, n = _xhat(m, input, normalized_shape, eps)
    g = grad if weight is None else grad * weight
    summed = total(m, g, axes, True)
    along = total(m, g * xhat, axes, True)
    return m.div_scalar(rstd, n) * (m.mul_scalar(g, n) - summed - xhat * along)


def _ln_grad_weight(m, grad, bias, input, normalized_shape, mean, rstd, weight, eps):
    batch = tuple(range(len(m.shape(input)) - len(normalized_shape)))
    out = grad * _xhat(m, input, normalized_shape, eps)[0]
    return total(m, out, batch, False) if batch else out


def _ln_grad_bias(m, grad, bias, input, normalized_shape, mean, rstd, weight, eps):
    batch = tuple(range(len(m.shape(input)) - len(normalized_shape)))
    return total(m, grad, batch, False) if batch else grad


NATIVE_LAYER_NORM = Op(
    "native_layer_norm", functional="layer_norm", inputs=("input", "weight", "bias"),
    attrs=("normalized_shape", "eps"),
    forward=_layer_norm, sym=_layer_norm,
    saves=("bias", "input", "normalized_shape", "result1", "result2", "weight", "_eps"),
    derive={"result1": lambda arrays, attrs: _moments(arrays[0], *attrs)[0],
            "result2": lambda arrays, attrs: _moments(arrays[0], *attrs)[1]},
    grads=(_ln_grad_input, _ln_grad_weight, _ln_grad_bias),
    local=("rstd(g - mean g - x̂ mean(g x̂))", "x̂", "1"), symbol="layer_norm")


# -- constant padding ---------------------------------------------------------------------------
def _constant_pad(a, pad, value):
    """``pad`` as PyTorch gives it: (before, after) pairs from the last dim backwards;
    negative amounts crop."""
    a = np.asarray(a)
    widths = [(0, 0)] * a.ndim
    crops = [slice(None)] * a.ndim
    for k in range(len(pad) // 2):
        d = a.ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        widths[d] = (max(lo, 0), max(hi, 0))
        crops[d] = slice(max(-lo, 0), a.shape[d] - max(-hi, 0))
    return pad_widths(a[tuple(crops)], widths, value)


def pad_widths(a, widths, value=0):
    """``a`` padded by ``value``, numpy's ``(before, after)`` ``widths`` a dim (object
    arrays of SymPy values too)."""
    a = np.asarray(a)
    if a.dtype == object:
        out = np.full(tuple(n + w0 + w1 for n, (w0, w1) in zip(a.shape, widths)), value,
                      dtype=object)
        out[tuple(slice(w0, w0 + n) for n, (w0, _) in zip(a.shape, widths))] = a
        return out
    return np.pad(a, widths, constant_values=value)


CONSTANT_PAD_ND = Op("constant_pad_nd", attrs=("pad", "value"), forward=_constant_pad,
                     saves=("pad",),
                     grads=(lambda m, grad, pad:
                            m.call(CONSTANT_PAD_ND, grad, tuple(-p for p in pad), 0),),
                     local=("1 inside, 0 in the padding",), symbol="pad {pad}")


# -- trilinear ---------------------------------------------------------------------------------
def _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """PyTorch's ``_trilinear``: each input gets new axes at its ``expand`` positions, the
    three are multiplied (broadcasting) and summed over ``sumdim``.  ``F.bilinear`` is
    ``_trilinear(x1, W, x2, (1, 3), (0,), (1, 2), (2, 3))``: (N,1,in1,1)·(1,out,in1,in2)·
    (N,1,1,in2) summed over in1 and in2."""
    a, b, c = (np.expand_dims(np.asarray(x), tuple(e)) if e else np.asarray(x)
               for x, e in ((i1, expand1), (i2, expand2), (i3, expand3)))
    return np.sum(a * b * c, axis=tuple(sumdim))


# The gradient of each input is _trilinear again, with the gradient in its place and its
# expand and sumdim exchanged (PyTorch's _trilinear_backward).
TRILINEAR = Op("_trilinear", inputs=("i1", "i2", "i3"),
               attrs=("expand1", "expand2", "expand3", "sumdim", "unroll_dim"),
               forward=_trilinear, dtype=R.promote,
               saves=("expand1", "expand2", "expand3", "i1", "i2", "i3", "sumdim"),
               grads=(lambda m, grad, e1, e2, e3, i1, i2, i3, sumdim:
                      m.call(TRILINEAR, grad, i2, i3, sumdim, e2, e3, e1, 1),
                      lambda m, grad, e1, e2, e3, i1, i2, i3, sumdim:
                      m.call(TRILINEAR, i1, grad, i3, e1, sumdim, e3, e2, 1),
                      lambda m, grad, e1, e2, e3, i1, i2, i3, sumdim:
                      m.call(TRILINEAR, i1, i2, grad, e1, e2, sumdim, e3, 1)),
               local=("{i2}·{i3}", "{i1}·{i3}", "{i1}·{i2}"), symbol="trilinear",
               doc="Σ over sumdim of i1·i2·i3, each expanded")


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.LINEAR, EMBEDDING, EMBEDDING_DENSE_BACKWARD)
_JVP.register(_fwd.MULTILINEAR, TRILINEAR)


def _pad_jvp(m, tangents, args, attrs, result, saved):
    # affine: the tangent padded with zeros (not with the value)
    return m.call(CONSTANT_PAD_ND, tangents[0], attrs[0], 0.0)


_JVP.register(_pad_jvp, CONSTANT_PAD_ND)


def _layer_norm_jvp(m, tangents, args, attrs, result, saved):
    # y = x̂ w + b; x̂'s Jacobian is symmetric, so its JVP is the input's rule without w
    bias, input, normalized_shape, mean, rstd, weight, eps = saved
    ti, tw, tb = tangents
    total_ = None
    if ti is not None:
        total_ = _ln_grad_input(m, ti, bias, input, normalized_shape, mean, rstd, None, eps)
        if weight is not None:
            total_ = total_ * weight
    if tw is not None:
        part = _xhat(m, input, normalized_shape, eps)[0] * tw
        total_ = part if total_ is None else total_ + part
    if tb is not None:
        part = m.broadcast_to(tb, m.shape(result))
        total_ = part if total_ is None else total_ + part
    return total_


_JVP.register(_layer_norm_jvp, NATIVE_LAYER_NORM)
