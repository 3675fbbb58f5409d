"""The loss functions PyTorch runs as ops of their own (``MseLossBackward0``,
``NllLossBackward0``, ``BinaryCrossEntropyBackward0`` ...).

``reduction`` is PyTorch's code: 0 ``"none"``, 1 ``"mean"``, 2 ``"sum"``.  The front ends
(:mod:`symgrad.nn.functional.loss`) check shapes and targets and compose the losses that
PyTorch composes (``cross_entropy`` is ``nll_loss`` of ``log_softmax``).
"""
from __future__ import annotations

import numpy as np

from . import dtype_rules as R
from .compare import LT
from .elementwise import ABS, LOG, SIGMOID
from .activations import SOFTPLUS
from .functions import CLAMP_MIN
from .kernels import _sympy
from .record import Op

__all__ = ["MSE_LOSS", "MSE_LOSS_BACKWARD", "SMOOTH_L1_LOSS", "SMOOTH_L1_LOSS_BACKWARD",
           "HUBER_LOSS", "HUBER_LOSS_BACKWARD", "BINARY_CROSS_ENTROPY",
           "BINARY_CROSS_ENTROPY_BACKWARD", "BINARY_CROSS_ENTROPY_WITH_LOGITS", "NLL_LOSS",
           "NLL_LOSS_BACKWARD", "REDUCTIONS"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# clip(...) and the reduction, which the rules apply in Python.

REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduce(values, reduction: int):
    if reduction == 0:
        return values
    total = np.sum(values)
    if reduction == 1:
        total = total / max(np.size(values), 1) if np.size(values) else np.nan
    return np.asarray(total)


def _scaled(m, grad, like, reduction: int, other=None):
    """The incoming gradient for each element: as it is (none, sum), or over N (mean),
    N the number of elements of ``like`` (broadcast with ``other``)."""
    if reduction == 1:
        shape = m.shape(like) if other is None else np.broadcast_shapes(m.shape(like),
                                                                        m.shape(other))
        return m.div_scalar(grad, max(int(np.prod(shape)), 1))
    return grad


def _count(a, b) -> int:
    """The number of elements a mean divides by (``a`` broadcast with ``b``)."""
    return max(int(np.prod(np.broadcast_shapes(np.shape(a), np.shape(b)))), 1)


def _norm(a, b, reduction: int, per: float = 1.0):
    return per / _count(a, b) if reduction == 1 else per


def _ones_like(m, a):
    return m.add_scalar(m.zeros_like(a), 1)


def _pointwise(name: str, loss, d_self, dd_self, attrs=(), local: str = "", local2: str = ""):
    """A loss that is a sum (or mean) of ``loss(np_, self, target, *attrs)`` per element, and
    its gradient as PyTorch records it: an op ``<name>_backward`` of its own
    (``MseLossBackwardBackward0`` in a double-backward graph) computing
    ``grad_output · d_self(np_, self, target, *attrs)`` (over N for a mean), the target's
    gradient being the same op with self and target swapped (the losses are functions
    of ``self - target``).  ``dd_self(m, g, self, target, *attrs)`` is ``g`` times the
    second derivative (PyTorch's ``*_double_backward``)."""
    def grad_self(m, grad, reduction, self, target, *rest):
        return m.call(backward, grad, self, target, *rest, reduction)

    def grad_target(m, grad, reduction, self, target, *rest):
        return m.call(backward, grad, target, self, *rest, reduction)

    def dd(m, g, self, target, rest, reduction):
        out = dd_self(m, g, self, target, *rest)
        return m.div_scalar(out, _count(self, target)) if reduction == 1 else out

    def grad_grad_output(m, grad, grad_output, reduction, self, target, *rest):
        if reduction == 0:
            return m.call(backward, grad, self, target, *rest, reduction)
        r = m.call(backward, _ones_like(m, grad_output), self, target, *rest, reduction)
        return m.sum_to(r * grad, m.shape(grad_output))  # (a 0-d grad_output: a full sum)

    backward = Op(
        f"{name}_backward", inputs=("grad_output", "self", "target"),
        attrs=attrs + ("reduction",), broadcasts=True, dtype=R.promote,
        saves=("grad_output", "reduction", "self", "target") + attrs,
        forward=lambda g, a, t, *rest: g * d_self(np, a, t, *rest[:-1]) * _norm(a, t, rest[-1]),
        sym=lambda g, a, t, *rest: g * np.frompyfunc(
            lambda x, y: d_self(_SymNp, x, y, *rest[:-1]), 2, 1)(a, t) * _norm(a, t, rest[-1]),
        grads=(lambda m, grad, grad_output, reduction, self, target, *rest:
               grad_grad_output(m, grad, grad_output, reduction, self, target, *rest),
               lambda m, grad, grad_output, reduction, self, target, *rest:
               dd(m, grad * grad_output, self, target, rest, reduction),
               lambda m, grad, grad_output, reduction, self, target, *rest:
               -dd(m, grad * grad_output, self, target, rest, reduction)),
        local=(local, local2, f"-({local2})"), doc=f"{name}'s gradient")
    loss_op = Op(name, inputs=("self", "target"), attrs=attrs + ("reduction",),
                 broadcasts=True, dtype=R.promote, saves=("reduction", "self", "target") + attrs,
                 forward=lambda a, t, *rest: _reduce(loss(np, a, t, *rest[:-1]), rest[-1]),
                 sym=lambda a, t, *rest: _reduce(np.frompyfunc(
                     lambda x, y: loss(_SymNp, x, y, *rest[:-1]), 2, 1)(a, t), rest[-1]),
                 grads=(grad_self, grad_target),
                 local=(local, "-(" + local + ")"), functional=name)
    return loss_op, backward


class _SymNp:
    """numpy's names for the few functions the losses use, on SymPy scalars."""

    @staticmethod
    def where(c, a, b):
        return _sympy().Piecewise((a, c), (b, True))

    @staticmethod
    def abs(x):
        return _sympy().Abs(x)

    @staticmethod
    def sign(x):
        return _sympy().sign(x)

    @staticmethod
    def clip(x, lo, hi):
        sp = _sympy()
        return sp.Max(lo, sp.Min(x, hi))


MSE_LOSS, MSE_LOSS_BACKWARD = _pointwise(
    "mse_loss", lambda np_, a, t: (a - t) ** 2,
    lambda np_, s, t: 2 * (s - t),
    lambda m, g, s, t: m.mul_scalar(m.broadcast_to(g, np.broadcast_shapes(
        m.shape(g), m.shape(s), m.shape(t))), 2),
    local="2({self} - {target})", local2="2·{grad_output}")
SMOOTH_L1_LOSS, SMOOTH_L1_LOSS_BACKWARD = _pointwise(
    "smooth_l1_loss",
    lambda np_, a, t, beta: np_.where(np_.abs(a - t) < beta, 0.5 * (a - t) ** 2 / beta,
                                      np_.abs(a - t) - 0.5 * beta)
    if beta else np_.abs(a - t),
    lambda np_, s, t, beta: np_.clip((s - t) / beta, -1, 1) if beta else np_.sign(s - t),
    lambda m, g, s, t, beta: m.div_scalar(g * m.call(LT, m.call(ABS, s - t), beta), beta) if beta
    else m.zeros_like(g * s),
    attrs=("beta",), local="clip(({self} - {target})/β, -1, 1)",
    local2="{grad_output}·[|{self} - {target}| < β]/β")
HUBER_LOSS, HUBER_LOSS_BACKWARD = _pointwise(
    "huber_loss", lambda np_, a, t, delta: np_.where(np_.abs(a - t) <= delta, 0.5 * (a - t) ** 2,
                                       delta * (np_.abs(a - t) - 0.5 * delta)),
    lambda np_, s, t, delta: np_.clip(s - t, -delta, delta),
    lambda m, g, s, t, delta: g * m.call(LT, m.call(ABS, s - t), delta),
    attrs=("delta",), local="clip({self} - {target}, -δ, δ)",
    local2="{grad_output}·[|{self} - {target}| < δ]")


# -- binary cross-entropy -----------------------------------------------------------------
def _bce(p, t, w, reduction):
    # PyTorch clamps each log at -100, so that a probability of 0 or 1 costs 100.
    with np.errstate(divide="ignore"):
        out = -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log1p(-p), -100))
    return _reduce(out if w is None else out * w, reduction)


def _bce_sym(p, t, w, reduction):
    sp = _sympy()
    out = np.frompyfunc(lambda a, b: -(b * sp.log(a) + (1 - b) * sp.log(1 - a)), 2, 1)(p, t)
    return _reduce(out if w is None else out * w, reduction)


def _weighted(g, w):
    return g if w is None else g * w


_EPS = 1e-12  # PyTorch's EPSILON: keeps the denominators from 0


def _bce_backward(g, p, t, w, reduction):
    out = g * (p - t) / np.maximum((1 - p) * p, _EPS)
    out = out if w is None else out * w
    return out / np.size(p) if reduction == 1 else out


def _bce_backward_sym(g, p, t, w, reduction):
    out = g * (p - t) / ((1 - p) * p)
    out = out if w is None else out * w
    return out / np.size(p) if reduction == 1 else out


def _over_n(m, x, like, reduction):
    return m.div_scalar(x, max(int(np.prod(m.shape(like))), 1)) if reduction == 1 else x


def _bce_gg_output(m, grad, grad_output, reduction, self, target, weight):
    # d/d(grad_output): (self - target)/(self(1 - self)) · grad, summed for a reduction
    ggo = _weighted((self - target) / ((self + _EPS) * (1 - self + _EPS)) * grad, weight)
    if reduction == 0:
        return ggo
    return _over_n(m, m.sum_to(ggo, m.shape(grad_output)), self, reduction)


def _bce_gg_self(m, grad, grad_output, reduction, self, target, weight):
    gi = (self * self - 2 * self * target + target) / (
        (self + _EPS) ** 2 * (1 - self + _EPS) ** 2) * (grad * grad_output)
    return _over_n(m, _weighted(gi, weight), self, reduction)


def _bce_gg_target(m, grad, grad_output, reduction, self, target, weight):
    res = _weighted(-grad * grad_output, weight) / m.call(CLAMP_MIN, (1 - self) * self, _EPS)
    return _over_n(m, res, target, reduction)


BINARY_CROSS_ENTROPY_BACKWARD = Op(
    "binary_cross_entropy_backward", inputs=("grad_output", "self", "target"),
    attrs=("weight", "reduction"), dtype=R.promote, forward=_bce_backward,
    sym=_bce_backward_sym, domain=(0, 1),
    saves=("grad_output", "reduction", "self", "target", "weight"),
    grads=(_bce_gg_output, _bce_gg_self, _bce_gg_target),
    local=("({self} - {target})/({self}(1 - {self}))",
           "{grad_output}·({self}² - 2{self}{target} + {target})/({self}(1 - {self}))²",
           "-{grad_output}/({self}(1 - {self}))"),
    doc="binary_cross_entropy's gradient")
BINARY_CROSS_ENTROPY = Op(
    "binary_cross_entropy", functional="binary_cross_entropy", inputs=("self", "target"),
    attrs=("weight", "reduction"), dtype=R.promote, forward=_bce, sym=_bce_sym, domain=(0, 1),
    saves=("reduction", "self", "target", "weight"),
    grads=(lambda m, grad, reduction, self, target, weight: m.call(
        BINARY_CROSS_ENTROPY_BACKWARD, grad, self, target, weight, reduction),
           lambda m, grad, reduction, self, target, weight: _weighted(
        _scaled(m, grad, self, reduction) * (m.call(LOG, 1 - self) - m.call(LOG, self)), weight)),
    local=("({self} - {target})/({self}(1 - {self}))", "log(1 - {self}) - log({self})"))


def _bce_logits(x, t, w, pw, reduction):
    lw = 1 if pw is None else 1 + (pw - 1) * t
    out = (1 - t) * x + lw * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
    return _reduce(out if w is None else out * w, reduction)


def _bce_logits_sym(x, t, w, pw, reduction):
    sp = _sympy()
    lw = 1 if pw is None else 1 + (pw - 1) * t
    out = (1 - t) * x + lw * np.frompyfunc(lambda e: sp.log(1 + sp.exp(-e)), 1, 1)(x)
    return _reduce(out if w is None else out * w, reduction)


def _bce_logits_grad_self(m, grad, pos_weight, reduction, self, target, weight):
    s = m.call(SIGMOID, self)
    if pos_weight is None:
        d = s - target
    else:  # d/dx [(1 - t) x + (1 + (pw - 1) t) softplus(-x)], as PyTorch writes it
        t = pos_weight * target
        d = (t + 1 - target) * s - t
    return _over_n(m, _weighted(d * grad, weight), self, reduction)


def _bce_logits_grad_target(m, grad, pos_weight, reduction, self, target, weight):
    g = _scaled(m, grad, self, reduction)
    d = -self
    if pos_weight is not None:
        d = d + (pos_weight - 1) * m.call(SOFTPLUS, -self, 1, 20)
    return _weighted(g * d, weight)


BINARY_CROSS_ENTROPY_WITH_LOGITS = Op(
    "binary_cross_entropy_with_logits", functional="binary_cross_entropy_with_logits",
    inputs=("self", "target"),
    attrs=("weight", "pos_weight", "reduction"), dtype=R.promote, forward=_bce_logits,
    sym=_bce_logits_sym, saves=("pos_weight", "reduction", "self", "target", "weight"),
    grads=(_bce_logits_grad_self, _bce_logits_grad_target),
    local=("σ({self}) - {target}", "-{self}"))


# -- negative log-likelihood ----------------------------------------------------------------
def _picked(target, n_classes: int, weight, ignore_index: int, dtype):
    """The per-entry weights nll_loss puts on its input: ``w[t]`` at (i, t_i), 0 elsewhere
    and on ignored rows."""
    t = np.asarray(target)
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    w = np.ones(n_classes) if weight is None else np.asarray(weight, dtype=float)
    out = np.zeros(t.shape + (n_classes,), dtype=dtype)
    np.put_along_axis(out, safe[..., None], (w[safe] * keep)[..., None], axis=-1)
    return np.moveaxis(out, -1, 1) if out.ndim > 2 else out


def _nll(x, target, weight, reduction, ignore_index):
    classes = x.shape[1] if x.ndim > 1 else x.shape[0]
    picked = _picked(target, classes, weight, ignore_index,
                     x.dtype if x.dtype != object else float)
    per = -np.sum(x * picked, axis=1 if x.ndim > 1 else 0)
    if reduction == 0:
        return per
    total = np.sum(per)
    if reduction == 1:
        return np.asarray(total / np.sum(picked))
    return np.asarray(total)


def _total_weight(arrays, attrs):
    # (PyTorch computes it for a reduction or a single sample; 0 otherwise)
    x, target = arrays
    weight, reduction, ignore_index = attrs
    if reduction == 0 and np.ndim(x) > 1:
        return np.zeros((), dtype=x.dtype if getattr(x, "dtype", object) != object else float)
    classes = np.shape(x)[1] if np.ndim(x) > 1 else np.shape(x)[0]
    return np.asarray(np.sum(_picked(target, classes, weight, ignore_index, float)),
                      dtype=x.dtype if getattr(x, "dtype", object) != object else float)


def _nll_backward(grad, x, target, weight, reduction, ignore_index, total_weight):
    classes = np.shape(x)[1] if np.ndim(x) > 1 else np.shape(x)[0]
    # (-w at each target, +0.0 elsewhere: zeros keep their sign as in PyTorch's kernel)
    picked = _picked(target, classes, weight, ignore_index, float)
    minus = np.where(picked != 0, -picked, 0.0)
    if reduction == 0:
        g = np.expand_dims(grad, 1) if np.ndim(x) > 1 else grad
    elif reduction == 1:
        g = grad / total_weight
    else:
        g = grad
    out = g * minus
    return out.astype(np.result_type(x), copy=False) if np.result_type(x) != object else out


NLL_LOSS_BACKWARD = Op(
    "nll_loss_backward", inputs=("grad_output", "self", "target"),
    attrs=("weight", "reduction", "ignore_index", "total_weight"), dtype=R.same,
    forward=_nll_backward, sym=_nll_backward,
    saves=("ignore_index", "reduction", "target", "weight"),
    # (linear in grad_output, constant in self: its gradient there is zeros, an edge
    # nonetheless, so that a second derivative of a loss is zeros rather than an error)
    grads=(lambda m, grad, ignore_index, reduction, target, weight:
           m.call(NLL_LOSS, grad, target, weight, reduction, ignore_index),
           lambda m, grad, ignore_index, reduction, target, weight: m.zeros_like(grad),
           None),
    local=("-w[{target}]", "0", None), doc="nll_loss's gradient")
NLL_LOSS = Op("nll_loss", functional="nll_loss", inputs=("self", "target"),
              attrs=("weight", "reduction", "ignore_index"), dtype=R.same, forward=_nll,
              sym=_nll, saves=("ignore_index", "reduction", "self", "target", "total_weight",
                               "weight"),
              derive={"total_weight": _total_weight},
              grads=(lambda m, grad, ignore_index, reduction, self, target, total_weight,
                     weight: m.call(NLL_LOSS_BACKWARD, grad, self, target, weight, reduction,
                                    ignore_index, total_weight), None),
              )


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

# (the *_loss_backward ops reduce grad_output's part in its rule: not element-wise; their
# JVP is the transposed gradient rule, see symgrad.api.forward)
_JVP.register(_fwd.LINEAR, NLL_LOSS, NLL_LOSS_BACKWARD)
_JVP.register(_fwd.REDUCTION, MSE_LOSS, SMOOTH_L1_LOSS, HUBER_LOSS, BINARY_CROSS_ENTROPY,
              BINARY_CROSS_ENTROPY_WITH_LOGITS)
