"""Batch and group normalisation as PyTorch records them: ``native_batch_norm``
(``NativeBatchNormBackward0``) and ``native_group_norm`` (``NativeGroupNormBackward0``).

Both normalise ``x`` over a set of axes (batch norm: every axis but the channels, per
channel; group norm: each sample's group of channels) to ``x̂ = (x - mean) · rstd``,
``rstd = 1/sqrt(var + eps)`` (the biased variance), then scale by ``weight`` and shift by
``bias`` per channel.  With ``n`` elements per statistic and ``g = dy · weight``:

    dx = rstd/n · (n·g - Σ g - x̂ · Σ(g · x̂)),   dweight = Σ dy · x̂,   dbias = Σ dy.

In evaluation (batch norm with ``training`` False) the statistics are the running ones,
constants: ``dx = g · rstd``.  The rules recompute ``x̂`` from the input with the
backend's ops, so that gradients of gradients see it depend on the input.  The running
statistics are updated by the front end (``F.batch_norm``), as PyTorch's kernel does.

Layer 1: numpy only.
"""
from __future__ import annotations

import numpy as np

from .functions import RSQRT
from .kernels import _sym_map, total
from .joint import gradient
from .record import Op, not_implemented
from .reductions import MEAN_DIM
from .statistics import UNSQUEEZE_
from .tables import EVERY_OUTPUT

__all__ = ["NATIVE_BATCH_NORM", "NATIVE_BATCH_NORM_BACKWARD", "NATIVE_GROUP_NORM",
           "batch_statistics"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# words and named statistics (rstd, x̂), as layer_norm's.


def _rsqrt(v):
    if np.asarray(v).dtype == object:
        return _sym_map("sqrt", v) ** -1
    return 1 / np.sqrt(v)


def _channel(a, ndim):
    """A per-channel vector shaped to broadcast against ``(N, C, ...)``."""
    return np.asarray(a).reshape((-1,) + (1,) * (ndim - 2))


def _bn_axes(ndim):
    return (0,) + tuple(range(2, ndim))


def batch_statistics(x) -> tuple:
    """The per-channel mean and biased variance of ``x`` ``(N, C, ...)``."""
    x = np.asarray(x)
    axes = _bn_axes(x.ndim)
    n = x.size // x.shape[1] if x.shape[1] else 0
    mean = np.sum(x, axis=axes) / n
    var = np.sum((x - _channel(mean, x.ndim)) ** 2, axis=axes) / n
    return mean, var


def _bn_stats(x, running_mean, running_var, training, eps):
    """The mean and rstd the forward normalises with: the batch's or the running ones."""
    x = np.asarray(x)
    if training:
        mean, var = batch_statistics(x)
    else:
        mean, var = np.asarray(running_mean), np.asarray(running_var)
    rstd = _rsqrt(var + eps)
    if x.dtype != object:
        mean, rstd = mean.astype(x.dtype), np.asarray(rstd).astype(x.dtype)
    return mean, rstd


def _affine(y, weight, bias):
    if weight is not None:
        y = y * _channel(weight, np.ndim(y))
    if bias is not None:
        y = y + _channel(bias, np.ndim(y))
    return y


def _batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps):
    x = np.asarray(x)
    mean, rstd = _bn_stats(x, running_mean, running_var, training, eps)
    return _affine((x - _channel(mean, x.ndim)) * _channel(rstd, x.ndim), weight, bias)


def _bn_saved(k):
    def derive(arrays, attrs):
        x = np.asarray(arrays[0])
        if not attrs[2]:  # evaluation: PyTorch saves empty tensors
            return np.zeros(0, dtype=x.dtype)
        mean, rstd = _bn_stats(x, None, None, True, attrs[4])
        return (mean, rstd)[k]
    return derive


def _normalized(m, x, axes, eps):
    """``x̂`` and ``rstd`` over ``axes`` (kept), recomputed with the backend's ops."""
    shape = m.shape(x)
    n = float(np.prod([shape[a] for a in axes]))
    centred = x - m.div_scalar(total(m, x, axes, True), n)
    rstd = m.call(RSQRT, m.add_scalar(m.div_scalar(total(m, centred * centred, axes, True), n),
                                      eps))
    return centred * rstd, rstd, n


def _dx(m, g, xhat, rstd, axes, n):
    summed = total(m, g, axes, True)
    along = total(m, g * xhat, axes, True)
    return m.div_scalar(rstd, n) * (m.mul_scalar(g, n) - summed - xhat * along)


def _weighted(m, grad, weight):
    if weight is None:
        return grad
    nd = len(m.shape(grad))
    return grad * m.reshape(weight, (m.shape(weight)[0],) + (1,) * (nd - 2))


_BN_SAVES = ("eps", "input", "result1", "result2", "running_mean", "running_var", "training",
             "weight")
_GN_SAVES = ("C", "HxW", "N", "eps", "group", "input", "result1", "result2", "weight")


def _every_save(rule):
    """``rule`` as a rule that reads every saved value: PyTorch's one formula for the three
    inputs keeps them all, whichever inputs require grad."""
    def every(m, grad, *saved):
        return rule(m, grad, *saved)
    every.__name__ = rule.__name__
    return every


def _bn_xhat(m, input, running_mean, running_var, training, eps):
    nd = len(m.shape(input))
    if training:
        return _normalized(m, input, _bn_axes(nd), eps)[0]
    column = (m.shape(running_var)[0],) + (1,) * (nd - 2)
    rstd = m.call(RSQRT, m.add_scalar(running_var, eps))
    return (input - m.reshape(running_mean, column)) * m.reshape(rstd, column)


def _bn_grad(which):
    """The rule of input ``which``: output ``which`` of ``native_batch_norm_backward``
    (one node for the three under ``create_graph``, see symgrad.ops.joint)."""
    def rule(m, grad, eps, input, result1, result2, running_mean, running_var, training,
             weight):
        mask = (_wanted(input), weight is not None and _wanted(weight), True)
        return gradient(m, NATIVE_BATCH_NORM_BACKWARD, which,
                        (grad, input, weight, result1, result2),
                        (running_mean, running_var, training, eps), mask)
    rule.__name__ = ("grad_input", "grad_weight", "grad_bias")[which]
    return rule


def _wanted(saved) -> bool:
    """Whether a saved operand can want a gradient (a recorded tensor that requires none
    cannot)."""
    return bool(getattr(saved, "requires_grad", True))


NATIVE_BATCH_NORM = Op(
    "native_batch_norm", inputs=("input", "weight", "bias"), functional="batch_norm",
    attrs=("running_mean", "running_var", "training", "momentum", "eps"),
    forward=_batch_norm,
    saves=_BN_SAVES,
    derive={"result1": _bn_saved(0), "result2": _bn_saved(1)},
    grads=tuple(_every_save(_bn_grad(k)) for k in range(3)),
    local=("rstd(g - mean g - x̂ mean(g x̂))", "x̂", "1"), symbol="batch_norm",
    doc="each channel normalised over the batch (or by the running statistics)")


# -- its gradients: native_batch_norm_backward (NativeBatchNormBackwardBackward0) --------------
def _bn_backward(grad_out, input, weight, save_mean, save_invstd, running_mean, running_var,
                 train, eps, output_mask):
    """``(dx, dweight, dbias)`` as ``output_mask`` asks (else None), with the batch's
    statistics (training: recomputed, which the forward saved as save_mean and
    save_invstd, so that the op is a function of its input) or the running ones."""
    g, x = np.asarray(grad_out), np.asarray(input)
    nd, axes = x.ndim, _bn_axes(x.ndim)
    mean, rstd = _bn_stats(x, running_mean, running_var, train, eps)
    rstd = _channel(rstd, nd)
    xhat = (x - _channel(mean, nd)) * rstd
    out = [None, None, None]
    if output_mask[0]:
        gw = g if weight is None else g * _channel(weight, nd)
        if train:
            n = x.size // x.shape[1] if x.shape[1] else 1
            mean_g = np.sum(gw, axis=axes, keepdims=True) / n
            mean_gx = np.sum(gw * xhat, axis=axes, keepdims=True) / n
            out[0] = rstd * (gw - mean_g - xhat * mean_gx)
        else:
            out[0] = gw * rstd
    if output_mask[1]:
        out[1] = np.sum(g * xhat, axis=axes)
    if output_mask[2]:
        out[2] = np.sum(g, axis=axes)
    return tuple(out)


def _column(m, a, nd):
    return m.reshape(a, (m.shape(a)[0],) + (1,) * (nd - 2))


def _bnbb_statistics(m, input, running_mean, running_var, train, eps):
    """x̂, rstd (a column, or kept dims), n, the axes: recomputed from the input in
    training (so that a further order sees them depend on it)."""
    nd = len(m.shape(input))
    axes = _bn_axes(nd)
    if train:
        xhat, rstd, n = _normalized(m, input, axes, eps)
        return xhat, rstd, n, axes
    # (the running statistics are constants: arrays, as the node keeps its attributes)
    rstd = _channel(_rsqrt(np.asarray(running_var) + eps), nd)
    return (input - _channel(running_mean, nd)) * rstd, rstd, None, axes


def _project(m, g, statistics, train):
    """P(g): the first order's map of a gradient ``g`` of the output to the input's
    (``rstd·g`` with the running statistics)."""
    xhat, rstd, n, axes = statistics
    return _dx(m, g, xhat, rstd, axes, n) if train else g * rstd


def _plus(sum_, term):
    return term if sum_ is None else sum_ + term


def _bnbb_grad_out(m, grads, eps, grad_out, input, running_mean, running_var, save_invstd,
                   save_mean, train, weight):
    """w·P(ggI) + ggW·x̂ + ggB, P the first order's map of g to dx (self-adjoint)."""
    ggI, ggW, ggB = grads
    statistics = _bnbb_statistics(m, input, running_mean, running_var, train, eps)
    out = None if ggI is None else _weighted(m, _project(m, ggI, statistics, train), weight)
    if ggW is not None:
        out = _plus(out, _column(m, ggW, len(m.shape(input))) * statistics[0])
    if ggB is not None:
        out = _plus(out, m.broadcast_to(_column(m, ggB, len(m.shape(input))),
                                        m.shape(grad_out)))
    return out


def _bnbb_input(m, grads, eps, grad_out, input, running_mean, running_var, save_invstd,
                save_mean, train, weight):
    """ggW·P(dy) + P(c) - K·rstd²·x̂/n in training (c and K below); ggW·rstd·dy in eval."""
    ggI, ggW, _ = grads
    statistics = _bnbb_statistics(m, input, running_mean, running_var, train, eps)
    xhat, rstd, n, axes = statistics
    out = None
    if ggW is not None:
        out = _column(m, ggW, len(m.shape(input))) * _project(m, grad_out, statistics, train)
    if ggI is not None and train:
        # L = Σ ggI·dx = rstd·K, K = Σ ggI·g - Σ ggI·Σ g/n - Σ ggI·x̂·Σ g·x̂/n: through x̂
        # (cotangent c) and through rstd (d rstd/dx = -rstd²·x̂/n)
        g = _weighted(m, grad_out, weight)
        s_i, s_g = total(m, ggI, axes, True), total(m, g, axes, True)
        s_ix, s_gx = total(m, ggI * xhat, axes, True), total(m, g * xhat, axes, True)
        c = m.mul_scalar(m.div_scalar(rstd, n) * (s_gx * ggI + s_ix * g), -1.0)
        k = total(m, ggI * g, axes, True) - m.div_scalar(s_i * s_g + s_ix * s_gx, n)
        out = _plus(out, _dx(m, c, xhat, rstd, axes, n)
                    - m.div_scalar(k * rstd * rstd * xhat, n))
    return out


def _bnbb_weight(m, grads, eps, grad_out, input, running_mean, running_var, save_invstd,
                 save_mean, train, weight):
    """Σ dy·P(ggI) per channel (dx alone reads the weight)."""
    ggI = grads[0]
    if ggI is None:
        return None
    statistics = _bnbb_statistics(m, input, running_mean, running_var, train, eps)
    return total(m, grad_out * _project(m, ggI, statistics, train), statistics[3], False)


NATIVE_BATCH_NORM_BACKWARD = Op(
    "native_batch_norm_backward",
    inputs=("grad_out", "input", "weight", "save_mean", "save_invstd"),
    attrs=("running_mean", "running_var", "train", "eps", "output_mask"),
    outputs=("grad_input", "grad_weight", "grad_bias"), forward=_bn_backward,
    saves=("eps", "grad_out", "input", "running_mean", "running_var", "save_invstd",
           "save_mean", "train", "weight"),
    grads=(_bnbb_grad_out, _bnbb_input, _bnbb_weight,
           not_implemented("the derivative for 'native_batch_norm_backward save_mean' is "
                           "not implemented."),
           not_implemented("the derivative for 'native_batch_norm_backward save_invstd' is "
                           "not implemented.")),
    local=("w·P(·) + x̂ (·) + (·)", "∂dx/∂x (·)", "Σ dy P(·)", None, None),
    symbol="batch_norm backward",
    doc="batch norm's gradients in input, weight and bias (those output_mask asks for): "
        "one node with three outputs")
EVERY_OUTPUT.register(True, NATIVE_BATCH_NORM_BACKWARD)


# -- group norm ---------------------------------------------------------------------------------
def _group_stats(x, N, group, eps):
    x = np.asarray(x)
    flat = x.reshape(N, group, -1)
    n = flat.shape[-1]
    mean = np.sum(flat, axis=-1, keepdims=True) / n
    var = np.sum((flat - mean) ** 2, axis=-1, keepdims=True) / n
    rstd = _rsqrt(var + eps)
    if x.dtype != object:
        mean, rstd = mean.astype(x.dtype), np.asarray(rstd).astype(x.dtype)
    return flat, mean, rstd


def _gn_forward(x, weight, bias, N, C, HxW, group, eps, output_mask):
    """The output, each group's mean and rstd ``(N, group)`` (PyTorch's three outputs)."""
    x = np.asarray(x)
    flat, mean, rstd = _group_stats(x, N, group, eps)
    y = _affine(((flat - mean) * rstd).reshape(x.shape), weight, bias)
    return tuple(o if wanted else None for o, wanted in
                 zip((y, mean.reshape(N, group), rstd.reshape(N, group)), output_mask))


def _gn_saved(k):
    def derive(arrays, attrs):
        N, C, HxW, group, eps, _ = attrs
        _, mean, rstd = _group_stats(arrays[0], N, group, eps)
        return (mean, rstd)[k].reshape(N, group)
    return derive


def _var_mean_backward(m, dvar, dmean, X, n):
    """PyTorch's var_mean_backward over dims 2 and 3 (kept), correction 0."""
    part = m.mul_scalar(dvar, 2.0 / n) * (X - m.call(MEAN_DIM, X, (2, 3), True))
    return part + m.div_scalar(m.broadcast_to(dmean, m.shape(X)), n)


def _gn_backward(m, dY, dmean, drstd, input, result1, result2, weight, N, C, HxW, group,
                 eps, mask):
    """PyTorch's ``infinitely_differentiable_native_group_norm_backward``, op for op (its
    graph under ``create_graph``): ``(dX, dgamma, dbeta)`` as ``mask`` asks.  The mean and
    rstd are the node's outputs 1 and 2 (its saved ``result1`` and ``result2``: the node
    saves its own outputs), through which a further order reaches the input (``dmean``,
    ``drstd``)."""
    G, D = group, C // group
    s = 1.0 / (D * HxW)
    if m.records and not hasattr(result1, "grad_fn"):
        # (statistics derived from the operands, not the node's outputs: recomputed, so
        # that a further order sees them depend on the input)
        centred = m.reshape(input, (N, G, -1))
        result1 = m.div_scalar(total(m, centred, 2, False), D * HxW)
        centred = centred - m.reshape(result1, (N, G, 1))
        result2 = m.call(RSQRT, m.add_scalar(
            m.div_scalar(total(m, centred * centred, 2, False), D * HxW), eps))
    X = m.reshape(input, (N, G, D, HxW))
    mean, rstd = m.reshape(result1, (N, G, 1, 1)), m.reshape(result2, (N, G, 1, 1))
    gamma_shape = (C,) if weight is not None or not m.records else (0,)
    dX = dgamma = dbeta = None
    if dY is not None:
        dY = m.reshape(dY, (N, G, D, HxW))
        ds = m.call(UNSQUEEZE_, total(m, dY * X, 3, False), -1)
        db = m.call(UNSQUEEZE_, total(m, dY, 3, False), -1)
    both = dmean is not None and drstd is not None
    if mask[0]:
        gamma = None if weight is None else m.reshape(weight, (1, G, D, 1))
        rstd_cube = rstd * rstd * rstd
        if both:
            dvar = m.mul_scalar(rstd_cube, -0.5) * m.reshape(drstd, (N, G, 1, 1))
            extra = _var_mean_backward(m, dvar, m.reshape(dmean, (N, G, 1, 1)), X, D * HxW)
        if dY is not None:
            a = rstd if gamma is None else rstd * gamma
            b = m.call(UNSQUEEZE_, total(m, ds if gamma is None else ds * gamma, 2, False), -2)
            c = m.call(UNSQUEEZE_, total(m, db if gamma is None else db * gamma, 2, False), -2)
            b = m.mul_scalar((c * mean - b) * rstd_cube, s)
            c = -b * mean - m.mul_scalar(c * rstd, s)
            dX = a * dY + b * X + c
            if both:
                dX = dX + extra
            dX = m.reshape(dX, m.shape(input))
        elif both:
            dX = m.reshape(extra, m.shape(input))
    if mask[1] and dY is not None:
        dgamma = m.reshape(total(m, (ds - db * mean) * rstd, 0, False), gamma_shape)
    if mask[2] and dY is not None:
        if weight is None and not m.records:  # (PyTorch's kernel, given no weight)
            raise RuntimeError("tensor does not have a device")
        dbeta = m.reshape(total(m, db, 0, False), gamma_shape)
    return dX, dgamma, dbeta


def _gn_grad(which):
    """The rule of input ``which``: output ``which`` of :func:`_gn_backward` (one
    computation for the three under ``create_graph``, see symgrad.ops.joint)."""
    def rule(m, grads, C, HxW, N, eps, group, input, result1, result2, weight):
        # (the bias is not saved: its rule, when it runs, runs first under create_graph)
        mask = (_wanted(input), weight is not None and _wanted(weight), False)
        return gradient(m, _gn_backward, which,
                        (*grads, input, result1, result2, weight),
                        (N, C, HxW, group, eps), mask, run=_gn_backward)
    rule.__name__ = ("grad_input", "grad_weight", "grad_bias")[which]
    return rule


NATIVE_GROUP_NORM = Op(
    "native_group_norm", inputs=("input", "weight", "bias"), functional="group_norm",
    attrs=("N", "C", "HxW", "group", "eps", "output_mask"), forward=_gn_forward,
    outputs=("result0", "result1", "result2"),
    saves=_GN_SAVES,
    derive={"result1": _gn_saved(0), "result2": _gn_saved(1)},
    grads=tuple(_every_save(_gn_grad(k)) for k in range(3)),
    local=("rstd(g - mean g - x̂ mean(g x̂))", "x̂", "1"), symbol="group_norm",
    doc="each sample's groups of channels normalised, then scaled and shifted per channel; "
        "also each group's mean and rstd (outputs 1 and 2, the node saves them)")
EVERY_OUTPUT.register(True, NATIVE_GROUP_NORM)


# -- forward mode: the JVPs (symgrad.ops.jvp) ---------------------------------------------------
from .tables import JVP as _JVP  # noqa: E402


def _affine_jvp(m, d, xhat, weight, tangents, shape):
    """``d·weight + x̂·ẇ + ḃ`` (``d`` the tangent of x̂, or None), per channel."""
    column = (shape[1],) + (1,) * (len(shape) - 2)
    total = None if d is None else _weighted(m, d, weight)
    for t, times in ((tangents[1], xhat), (tangents[2], None)):
        if t is not None:
            term = m.reshape(t, column)
            term = m.broadcast_to(term, shape) if times is None else times * term
            total = term if total is None else total + term
    return total


def _bn_jvp(m, tangents, args, attrs, result, saved):
    """x̂'s tangent is its gradient rule's formula on ẋ (the normalisation is
    self-adjoint): ``rstd·(ẋ - mean ẋ - x̂·mean(x̂·ẋ))``; the running ``rstd·ẋ`` in eval."""
    input, weight = args[0], args[1]
    running_mean, running_var, training, _, eps = attrs
    shape = m.shape(input)
    xhat = _bn_xhat(m, input, running_mean, running_var, training, eps)
    d = None
    if tangents[0] is not None:
        if training:
            axes = _bn_axes(len(shape))
            xh, rstd, n = _normalized(m, input, axes, eps)
            d = _dx(m, tangents[0], xh, rstd, axes, n)
        else:
            rstd = m.call(RSQRT, m.add_scalar(running_var, eps))
            d = tangents[0] * m.reshape(rstd, (shape[1],) + (1,) * (len(shape) - 2))
    return _affine_jvp(m, d, xhat, weight, tangents, shape)


def _gn_jvp(m, tangents, args, attrs, result, saved):
    """As batch norm's, over each sample's groups; the mean's and rstd's tangents (outputs
    1 and 2): ``mean ẋ`` and ``-rstd²·mean(x̂·ẋ)`` per group."""
    input, weight = args[0], args[1]
    N, C, HxW, group, eps, mask = attrs
    k = mask.index(True)
    shape = m.shape(input)
    flat = m.reshape(input, (N, group, -1))
    xh, rstd, n = _normalized(m, flat, (2,), eps)
    t = None if tangents[0] is None else m.reshape(tangents[0], (N, group, -1))
    if k == 1:
        return None if t is None else m.div_scalar(total(m, t, 2, False), n)
    if k == 2:
        return None if t is None else m.reshape(m.mul_scalar(
            rstd * rstd * m.div_scalar(total(m, xh * t, 2, True), n), -1.0), (N, group))
    d = None if t is None else m.reshape(_dx(m, t, xh, rstd, (2,), n), shape)
    return _affine_jvp(m, d, m.reshape(xh, shape), weight, tangents, shape)


_JVP.register(_bn_jvp, NATIVE_BATCH_NORM)


def _mean(m, a, axes, n):
    return m.div_scalar(total(m, a, axes, True), n)


def _bn_backward_jvp(m, tangents, args, attrs, result, saved):
    """The tangent of the one output the mask asks for (save_mean's and save_invstd's
    tangents are not followed, as PyTorch's): db = Σ dy, dw = Σ dy·x̂ and dx = P(g), with
    g = dy·w and P the normalisation's map (rstd·(g - mean g - x̂·mean(g·x̂)) in training,
    whose rstd and x̂ move with the input)."""
    (t_dy, t_x, t_w), (dy, x, w) = tangents[:3], args[:3]
    running_mean, running_var, train, eps, mask = attrs
    k, nd = mask.index(True), len(m.shape(x))
    if k == 2:
        return None if t_dy is None else total(m, t_dy, _bn_axes(nd), False)
    xhat, rstd, n, axes = _bnbb_statistics(m, x, running_mean, running_var, train, eps)
    t_xhat = None
    if t_x is not None:
        t_xhat = _dx(m, t_x, xhat, rstd, axes, n) if train else t_x * rstd
    if k == 1:
        terms = [dy * t_xhat if t_xhat is not None else None,
                 t_dy * xhat if t_dy is not None else None]
        terms = [t for t in terms if t is not None]
        return None if not terms else total(m, terms[0] if len(terms) == 1 else
                                            terms[0] + terms[1], axes, False)
    t_g = None if t_dy is None else _weighted(m, t_dy, w)
    if t_w is not None:
        term = dy * _column(m, t_w, nd)
        t_g = term if t_g is None else t_g + term
    out = None
    if t_g is not None:
        out = _dx(m, t_g, xhat, rstd, axes, n) if train else t_g * rstd
    if t_x is not None and train:
        g = _weighted(m, dy, w)
        mean_g, mean_gx = _mean(m, g, axes, n), _mean(m, g * xhat, axes, n)
        t_rstd = m.mul_scalar(rstd * rstd * _mean(m, xhat * t_x, axes, n), -1.0)
        term = t_rstd * (g - mean_g - xhat * mean_gx) - rstd * (
            t_xhat * mean_gx + xhat * _mean(m, g * t_xhat, axes, n))
        out = term if out is None else out + term
    return out


_JVP.register(_bn_backward_jvp, NATIVE_BATCH_NORM_BACKWARD)
_JVP.register(_gn_jvp, NATIVE_GROUP_NORM)
