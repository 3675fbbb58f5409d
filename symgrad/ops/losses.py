"""The loss functions PyTorch runs as ops of their own (``MseLossBackward0``,
``NllLossBackward0``, ``BinaryCrossEntropyBackward0`` ...).

``reduction`` is PyTorch's code: 0 ``"none"``, 1 ``"mean"``, 2 ``"sum"``.  The front ends
(:mod:`symgrad.nn.functional.loss`) check shapes and targets and compose the losses that
PyTorch composes (``cross_entropy`` is ``nll_loss`` of ``log_softmax``).
"""
from __future__ import annotations

import numpy as np

from . import dtype_rules as R
from .activations import SOFTPLUS
from .elementwise import SIGMOID
from .functions import CLAMP_MIN
from .kernels import _sympy
from .record import Op

__all__ = ["MSE_LOSS", "SMOOTH_L1_LOSS", "HUBER_LOSS", "BINARY_CROSS_ENTROPY",
           "BINARY_CROSS_ENTROPY_WITH_LOGITS", "NLL_LOSS", "REDUCTIONS"]

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


def _pointwise(name: str, loss, d_self, attrs=(), local: str = ""):
    """A loss that is a sum (or mean) of ``loss(self, target, *attrs)`` per element, with
    the derivative ``d_self`` in ``self`` (and ``-d_self`` in ``target``)."""
    return Op(name, inputs=("self", "target"), attrs=attrs + ("reduction",),
              broadcasts=True, dtype=R.promote, saves=("reduction", "self", "target") + attrs,
              forward=lambda a, t, *rest: _reduce(loss(np, a, t, *rest[:-1]), rest[-1]),
              sym=lambda a, t, *rest: _reduce(np.frompyfunc(
                  lambda x, y: loss(_SymNp, x, y, *rest[:-1]), 2, 1)(a, t), rest[-1]),
              grads=(lambda m, grad, reduction, self, target, *rest:
                     _scaled(m, grad, self, reduction, target) * d_self(m, self, target, *rest),
                     lambda m, grad, reduction, self, target, *rest:
                     -(_scaled(m, grad, self, reduction, target)
                       * d_self(m, self, target, *rest))),
              local=(local, "-(" + local + ")"), functional=name)


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


MSE_LOSS = _pointwise("mse_loss", lambda np_, a, t: (a - t) ** 2,
                      lambda m, s, t: m.mul_scalar(s - t, 2), local="2({self} - {target})")
SMOOTH_L1_LOSS = _pointwise(
    "smooth_l1_loss",
    lambda np_, a, t, beta: np_.where(np_.abs(a - t) < beta, 0.5 * (a - t) ** 2 / beta,
                                      np_.abs(a - t) - 0.5 * beta)
    if beta else np_.abs(a - t),
    lambda m, s, t, beta: m.where(m.lt(m.abs(s - t), beta), m.div_scalar(s - t, beta),
                                  m.sign(s - t)) if beta else m.sign(s - t),
    attrs=("beta",), local="clip(({self} - {target})/β, -1, 1)")
HUBER_LOSS = _pointwise(
    "huber_loss",
    lambda np_, a, t, delta: np_.where(np_.abs(a - t) <= delta, 0.5 * (a - t) ** 2,
                                       delta * (np_.abs(a - t) - 0.5 * delta)),
    lambda m, s, t, delta: m.where(m.le(m.abs(s - t), delta), s - t,
                                   m.mul_scalar(m.sign(s - t), delta)),
    attrs=("delta",), local="clip({self} - {target}, -δ, δ)")


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


BINARY_CROSS_ENTROPY = Op(
    "binary_cross_entropy", functional="binary_cross_entropy", inputs=("self", "target"), attrs=("weight", "reduction"),
    dtype=R.promote, forward=_bce, sym=_bce_sym, domain=(0, 1),
    saves=("reduction", "self", "target", "weight"),
    grads=(lambda m, grad, reduction, self, target, weight: _weighted(
        _scaled(m, grad, self, reduction) * (self - target)
        / m.call(CLAMP_MIN, (1 - self) * self, 1e-12), weight),
           lambda m, grad, reduction, self, target, weight: _weighted(
        _scaled(m, grad, self, reduction) * (m.log(1 - self) - m.log(self)), weight)),
    local=("({self} - {target})/({self}(1 - {self}))", "log(1 - {self}) - log({self})"))
# (the denominator is kept from 0 as PyTorch's EPSILON, 1e-12, does)

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
    g = _scaled(m, grad, self, reduction)
    s = m.call(SIGMOID, self)
    if pos_weight is None:
        d = s - target
    else:  # d/dx [(1 - t) x + (1 + (pw - 1) t) softplus(-x)]
        d = (1 - target) - (1 + (pos_weight - 1) * target) * (1 - s)
    return _weighted(g * d, weight)


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


def _nll_grad(m, grad, ignore_index, reduction, self, target, total_weight, weight):
    classes = m.shape(self)[1] if len(m.shape(self)) > 1 else m.shape(self)[0]
    # (-w at each target, +0.0 elsewhere: zeros keep their sign as in PyTorch's kernel)
    picked = _picked(target, classes, weight, ignore_index, float)
    minus = np.where(picked != 0, -picked, 0.0)
    if reduction == 0:
        g = m.unsqueeze(grad, 1) if len(m.shape(self)) > 1 else grad
    elif reduction == 1:
        g = grad / total_weight
    else:
        g = grad
    return g * minus


NLL_LOSS = Op("nll_loss", functional="nll_loss", inputs=("self", "target"),
              attrs=("weight", "reduction", "ignore_index"), dtype=R.same, forward=_nll,
              sym=_nll, saves=("ignore_index", "reduction", "self", "target", "total_weight",
                               "weight"),
              derive={"total_weight": _total_weight},
              grads=(_nll_grad, None), local=("-w[{target}]", None))
