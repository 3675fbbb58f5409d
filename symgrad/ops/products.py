"""Products with an added term and distances: ``addmv``, ``baddbmm``, ``dist``; and the
cumulative ``logcumsumexp``, ``cummax``, ``cummin``.

Gradients as PyTorch's ``derivatives.yaml`` writes them, through other ops of the table
(``m.call``), so that one rule serves every backend and every order.
"""
from __future__ import annotations

import numpy as np

from . import dtype_rules as R
from .arithmetic import _maybe_multiply
from .elementwise import EXP
from .indexing import GATHER, SCATTER_ADD
from .kernels import _sympy
from .linalg import BMM, MV, _matmul, plus_scaled_self
from .matrices import OUTER
from .record import Op, not_implemented
from .reductions import _norm, _norm_grad, _sym_norm
from .shapes import T, TRANSPOSE
from .statistics import CUMSUM, _reversed_cumsum

__all__ = ["ADDMV", "BADDBMM", "DIST", "LOGCUMSUMEXP", "CUMMAX", "CUMMIN", "LINALG_CROSS",
           "UNIQUE2", "UNIQUE_DIM", "CDIST", "CDIST_BACKWARD"]


def _ranks(name, *pairs) -> None:
    for a, rank in pairs:
        if np.ndim(a) != rank:
            raise ValueError(f"{name}: an operand of rank {np.ndim(a)}, not {rank}")


# beta * self + alpha * (mat @ vec), self broadcast (AddmvBackward0).
ADDMV = Op("addmv", inputs=("self", "mat", "vec"), attrs=("beta", "alpha"),
           forward=lambda b, mat, vec, beta, alpha: _ranks("addmv", (mat, 2), (vec, 1))
           or beta * b + alpha * _matmul(mat, vec),
           saves=("alpha", "beta", "mat", "vec"), broadcasts=True, dtype=R.promote_strict,
           saved_for={"mat": ("vec",), "vec": ("mat",)},
           ranks=((0, 1), (2,), (1,)),
           grads=(lambda m, grad, alpha, beta, mat, vec: _maybe_multiply(m, grad, beta),
                  lambda m, grad, alpha, beta, mat, vec:
                  _maybe_multiply(m, m.call(OUTER, grad, vec), alpha),
                  lambda m, grad, alpha, beta, mat, vec:
                  _maybe_multiply(m, m.call(MV, m.call(T, mat), grad), alpha)),
           local=("β", "α {vec}ᵀ", "α {mat}ᵀ"), symbol="addmv",
           doc="beta * self + alpha * (mat @ vec)")


# beta * self + alpha * (batch1 @ batch2), batch by batch (BaddbmmBackward0).
BADDBMM = Op("baddbmm", inputs=("self", "batch1", "batch2"), attrs=("beta", "alpha"),
             forward=lambda b, b1, b2, beta, alpha: _ranks("baddbmm", (b1, 3), (b2, 3))
             or beta * b + alpha * _matmul(b1, b2),
             saves=("alpha", "batch1", "batch2", "beta"), broadcasts=True,
             dtype=R.promote_strict, saved_for={"batch1": ("batch2",), "batch2": ("batch1",)},
             ranks=((0, 1, 2, 3), (3,), (3,)),
             grads=(lambda m, grad, alpha, batch1, batch2, beta:
                    _maybe_multiply(m, grad, beta),
                    lambda m, grad, alpha, batch1, batch2, beta: _maybe_multiply(
                        m, m.call(BMM, grad, m.call(TRANSPOSE, batch2, 1, 2)), alpha),
                    lambda m, grad, alpha, batch1, batch2, beta: _maybe_multiply(
                        m, m.call(BMM, m.call(TRANSPOSE, batch1, 1, 2), grad), alpha)),
             local=("β", "α {batch2}ᵀ", "α {batch1}ᵀ"), symbol="baddbmm",
             doc="beta * self + alpha * (batch1 @ batch2)")


def _dist(a, b, p):
    return _norm(np.asarray(a) - np.asarray(b), p, None, False)


def _sym_dist(a, b, p):
    d = np.asarray(a - b, dtype=object)
    if p == 0:  # the number of non-zero entries
        sp = _sympy()
        return np.array(sum((sp.Piecewise((0, sp.Eq(e, 0)), (1, True)) for e in d.ravel()),
                            sp.Integer(0)), dtype=object)
    return _sym_norm(d, p, None, False)


def _sym_logcumsumexp(a, dim):
    sp = _sympy()
    a = np.asarray(a, dtype=object)
    if a.ndim == 0:
        return a.copy()
    return np.frompyfunc(sp.log, 1, 1)(np.cumsum(np.frompyfunc(sp.exp, 1, 1)(a), axis=dim))


def _dist_grad(m, grad, other, p, result, self):
    """PyTorch's norm_backward on self - other (undefined for p = 0)."""
    return _norm_grad(m, grad, self - other, p, None, result, False)


def _dist_grad_other(m, grad, other, p, result, self):
    """Minus self's: PyTorch negates an undefined tensor for p = 0, which fails."""
    g = _dist_grad(m, grad, other, p, result, self)
    if g is None:
        raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in "
                           "C++) for argument #0 'self'")
    return -g


# ||self - other||_p, operands broadcast (DistBackward0).
DIST = Op("dist", inputs=("self", "other"), attrs=("p",), broadcasts=True, dtype=R.promote,
          forward=_dist, saves=("other", "p", "result", "self"), sym=_sym_dist,
          grads=(_dist_grad, _dist_grad_other),
          local=("(x - y)/‖x - y‖", "-(x - y)/‖x - y‖"), symbol="dist",
          doc="the p-norm of self - other")


def _logcumsumexp(a, dim):
    a = np.asarray(a)
    if a.ndim == 0:
        return np.array(a, copy=True)
    return np.logaddexp.accumulate(a, axis=dim)


# log(cumsum(exp(self))) along dim (LogcumsumexpBackward0): each input's gradient is the
# sum over later outputs of grad * exp(self - result).
LOGCUMSUMEXP = Op("logcumsumexp", attrs=("dim",), forward=_logcumsumexp, dtype=R.floating,
                  sym=_sym_logcumsumexp,
                  saves=("dim", "result", "self"),
                  grads=(lambda m, grad, dim, result, self: grad if not m.shape(self) else
                         m.call(EXP, self) * _reversed_cumsum(
                             m, grad * m.call(EXP, -result), dim),),
                  local=("softmax of earlier",), symbol="logcumsumexp dim={dim}",
                  doc="log of the cumulative sum of exp(self) along dim")


def _cumulative_extreme(kind: str):
    """cummax's (``kind`` "max") or cummin's (values, indices) along dim, as PyTorch's
    kernel: a tie takes the later index, a NaN stays."""
    def run(a, dim):
        a = np.asarray(a)
        if a.ndim == 0:
            return np.array(a, copy=True), np.zeros((), dtype=np.int64)
        x = np.moveaxis(a, dim, -1)
        values, indices = np.empty_like(x), np.zeros(x.shape, dtype=np.int64)
        best, at = x[..., 0], np.zeros(x.shape[:-1], dtype=np.int64)
        for i in range(x.shape[-1]):
            v = x[..., i]
            better = v >= best if kind == "max" else v <= best
            if x.dtype.kind == "f":
                better = np.isnan(v) | (~np.isnan(best) & better)
            best, at = np.where(better, v, best), np.where(better, i, at)
            values[..., i], indices[..., i] = best, at
        return np.moveaxis(values, -1, dim), np.moveaxis(indices, -1, dim)
    return run


def _cumulative_op(kind: str) -> Op:
    run = _cumulative_extreme(kind)
    return Op(f"cum{kind}", attrs=("dim",), forward=lambda a, dim: run(a, dim)[0],
              saves=("dim", "indices", "self"),
              derive={"indices": lambda arrays, attrs: run(arrays[0], attrs[0])[1]},
              # PyTorch's cummaxmin_backward: zeros(self).scatter_add_(dim, indices, grad)
              grads=(lambda m, grad, dim, indices, self: grad if not m.shape(self) else
                     m.call(SCATTER_ADD, m.zeros_like(self), grad, dim, indices),),
              local=(f"[{{self}} = running {kind}]",), symbol=f"cum{kind} dim={{dim}}",
              doc=f"the running {kind} along dim")


CUMMAX, CUMMIN = _cumulative_op("max"), _cumulative_op("min")
INDICES = {"max": _cumulative_extreme("max"), "min": _cumulative_extreme("min")}


def _cross(a, b, dim):
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    if np.shape(a)[dim] != 3:
        raise ValueError("cross: the dimension must have length 3")
    x, y = np.moveaxis(a, dim, -1), np.moveaxis(b, dim, -1)
    out = np.stack([x[..., 1] * y[..., 2] - x[..., 2] * y[..., 1],
                    x[..., 2] * y[..., 0] - x[..., 0] * y[..., 2],
                    x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]], axis=-1)
    return np.moveaxis(out, -1, dim)


# The vector product along dim (LinalgCrossBackward0): bilinear, each gradient a product.
LINALG_CROSS = Op("linalg_cross", inputs=("self", "other"), attrs=("dim",), broadcasts=True,
                  dtype=R.promote, forward=_cross, saves=("dim", "other", "self"),
                  saved_for={"other": ("self",), "self": ("other",)},
                  grads=(lambda m, grad, dim, other, self: m.call(LINALG_CROSS, other, grad, dim),
                         lambda m, grad, dim, other, self: m.call(LINALG_CROSS, grad, self, dim)),
                  local=("{other} ×", "× {self}"), symbol="×",
                  doc="the vector product of self and other along dim")


# unique: values only; PyTorch records a node whose backward raises.
UNIQUE2 = Op("_unique2", attrs=("sorted", "return_inverse", "return_counts"),
             forward=lambda a, *flags: np.unique(np.asarray(a)),
             grads=(not_implemented("the derivative for '_unique2' is not implemented."),),
             local=("—",), doc="the distinct values of self, sorted")
UNIQUE_DIM = Op("unique_dim", attrs=("dim", "sorted", "return_inverse", "return_counts"),
                forward=lambda a, dim, *flags: np.unique(np.asarray(a), axis=dim),
                grads=(not_implemented("the derivative for 'unique_dim' is not implemented."),),
                local=("—",), doc="the distinct slices of self along dim, sorted")


def _pairwise(x1, x2):
    x1, x2 = np.asarray(x1), np.asarray(x2)
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ValueError("cdist: two batches of row vectors of one length")
    return x1[..., :, None, :] - x2[..., None, :, :]


def _cdist(x1, x2, p):
    d = np.abs(_pairwise(x1, x2))
    if p == float("inf"):
        return np.max(d, axis=-1)
    if p == 0:
        return np.sum(d != 0, axis=-1).astype(d.dtype)
    return np.sum(d ** p, axis=-1) ** (1.0 / p)


def _cdist_backward(grad, x1, x2, cdist, p):
    diff = _pairwise(x1, x2)
    dist = np.asarray(cdist)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 1:
            scale = np.sign(diff)
        elif p == float("inf"):
            scale = np.sign(diff) * (np.abs(diff) == dist)
        elif p == 0:
            scale = np.zeros_like(diff)
        else:
            scale = diff * np.abs(diff) ** (p - 2) / dist ** (p - 1)
        scale = np.where(dist == 0, 0.0, scale)
    return np.sum(np.asarray(grad)[..., None] * scale, axis=-2)


_NO_CDIST_DOUBLE = not_implemented("the derivative for '_cdist_backward' is not implemented.")

# The distances between rows of x1 and rows of x2 (CdistBackward0); its gradient is an op of
# its own without a derivative (CdistBackwardBackward0), as in PyTorch.
CDIST = Op("cdist", inputs=("x1", "x2"), attrs=("p",), dtype=R.promote, forward=_cdist,
           saves=("p", "result", "x1", "x2"),
           grads=(lambda m, grad, p, result, x1, x2:
                  m.call(CDIST_BACKWARD, grad, x1, x2, result, p),
                  lambda m, grad, p, result, x1, x2:
                  m.call(CDIST_BACKWARD, m.call(TRANSPOSE, grad, -1, -2), x2, x1,
                         m.call(TRANSPOSE, result, -1, -2), p)),
           local=("(x1 - x2)/d", "(x2 - x1)/d"), symbol="cdist",
           doc="the p-norm distances between the rows of x1 and of x2")
CDIST_BACKWARD = Op("_cdist_backward", inputs=("grad", "x1", "x2", "cdist"), attrs=("p",),
                    dtype=R.promote, forward=_cdist_backward,
                    grads=(_NO_CDIST_DOUBLE,) * 4, local=("—",) * 4,
                    doc="cdist's gradient with respect to x1")


# -- forward mode (symgrad.ops.jvp) ----------------------------------------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402


def _affine_product_jvp(op):
    def jvp(m, tangents, args, attrs, result, saved):
        # beta ṡ + alpha (ȧ b + a ḃ)
        (_, a, b), (ts, ta, tb), (beta, alpha) = args, tangents, attrs
        total = None
        for term in ((m.call(op, ta, b) if ta is not None else None),
                     (m.call(op, a, tb) if tb is not None else None)):
            if term is not None:
                term = m.mul_scalar(term, alpha)
                total = term if total is None else total + term
        return plus_scaled_self(m, total, ts, beta, result)
    return jvp


_JVP.register(_affine_product_jvp(MV), ADDMV)
_JVP.register(_affine_product_jvp(BMM), BADDBMM)
_DIST_JVP = _fwd.reduction(DIST)


def _dist_jvp(m, tangents, args, attrs, result, saved):
    """PyTorch's norm_jvp on self - other: zero for p = 0 (whose gradient is undefined),
    else the reduction's derived JVP."""
    if attrs[0] == 0:
        return m.zeros_like(result)
    return _DIST_JVP(m, tangents, args, attrs, result, saved)


_JVP.register(_dist_jvp, DIST)
_JVP.register(_fwd.MULTILINEAR, LINALG_CROSS)
_JVP.register(_fwd.not_yet("_unique2"), UNIQUE2)
_JVP.register(_fwd.not_yet("unique_dim"), UNIQUE_DIM)
_JVP.register(_fwd.not_yet("_cdist_forward"), CDIST)
_JVP.register(_fwd.not_yet("_cdist_backward"), CDIST_BACKWARD)
# (the tangent at the running extreme's index)
for _op in (CUMMAX, CUMMIN):
    _JVP.register(lambda m, tangents, args, attrs, result, saved: tangents[0]
                  if not m.shape(result) else
                  m.call(GATHER, tangents[0], attrs[0], saved[1]), _op)
# (the tangent: cumsum(ṫ exp(self)) exp(-result))
_JVP.register(lambda m, tangents, args, attrs, result, saved:
              tangents[0] if not m.shape(result) else
              m.call(CUMSUM, tangents[0] * m.call(EXP, args[0]), attrs[0])
              * m.call(EXP, -result), LOGCUMSUMEXP)
