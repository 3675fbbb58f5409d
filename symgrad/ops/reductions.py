"""Reductions: sum, mean, max, min, norm, softmax and their gradient ops."""
from __future__ import annotations

import operator
import warnings
from typing import Callable

import numpy as np

from .kernels import total, _dims, _sym_map, _sym_reduce, _sympy, sym_first_true, sym_indicator
from . import dtype_rules as R
from .compare import EQ, LOGICAL_OR, NE
from .elementwise import ABS, EXP, SGN
from .indexing import MASKED_FILL, MASKED_FILL_SCALAR
from .record import Op
from . import shape_rules as W
from .tables import COMPOSES, HOMOGENEOUS, ROLES, WORK

__all__ = ["SUM", "SUM_DIM", "MEAN", "MEAN_DIM", "SUM_DTYPE", "SUM_DIM_DTYPE", "MEAN_DTYPE",
           "MEAN_DIM_DTYPE", "MAX", "MIN", "MAX_DIM", "MIN_DIM", "NORM", "SOFTMAX", "LOG_SOFTMAX",
           "SOFTMAX_BACKWARD_DATA", "LOG_SOFTMAX_BACKWARD_DATA", "NUMEL"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# words and named quantities (max, ‖x‖, n), and the reductions' dims, which the rules use in
# Python.


def _sum(a, dim, keepdim):
    return np.sum(a, axis=_dims(dim, np.ndim(a)), keepdims=keepdim)


def _mean(a, dim=None, keepdim=False):
    axis = None if dim is None else _dims(dim, np.ndim(a))
    if np.size(a) == 0:
        # the mean of nothing is NaN, without numpy's warnings (PyTorch gives none)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.mean(a, axis=axis, keepdims=keepdim)
    return np.mean(a, axis=axis, keepdims=keepdim)


def refuse_empty(name: str, a, dim, whole: type = RuntimeError) -> None:
    """PyTorch's errors for a reduction with no identity (amax, argmax) of no elements:
    ``whole`` over all dims, IndexError naming an empty reduced dim."""
    if np.size(a) or np.asarray(a).dtype == object:
        return
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        message = f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
        if whole is RuntimeError:
            message += " Specify the reduction dim with the 'dim' argument."
        raise whole(message)
    shape = np.shape(a)
    for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
        if -len(shape) <= d < len(shape) and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _empty(a):
    # softmax and log_softmax of an empty tensor: an empty result of its shape
    return np.asarray(a, dtype=np.result_type(a, np.float32)).copy()


def _softmax(a, dim):
    if np.size(a) == 0:
        return _empty(a)
    e = np.exp(a - np.max(a, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax(a, dim):
    if np.size(a) == 0:
        return _empty(a)
    s = a - np.max(a, axis=dim, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=dim, keepdims=True))


def _norm(a, ord, dim, keepdim):
    axis = None if dim is None else _dims(dim, np.ndim(a))
    if ord == 2:
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
    if ord == float("inf"):
        return np.max(np.abs(a), axis=axis, keepdims=keepdim)
    if ord == 1:
        return np.sum(np.abs(a), axis=axis, keepdims=keepdim)
    if ord == 0:  # the number of non-zero elements
        return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(np.result_type(a))
    if ord == -float("inf"):
        return np.min(np.abs(a), axis=axis, keepdims=keepdim)
    return np.sum(np.abs(a) ** ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)


def _keep(g, shape, dim, keepdim):
    """Re-insert reduced axes into ``g`` so that it broadcasts against ``shape``."""
    if keepdim or not shape:
        return g
    if hasattr(g, "unsqueeze"):  # a recorded gradient: one unsqueeze per dim, as PyTorch
        if isinstance(dim, (tuple, list)) and not dim:
            return g  # dim=(): PyTorch expands the 0-d gradient as it is
        for d in _dims(dim, len(shape)):
            g = g.unsqueeze(d)
        return g
    out = [1 if i in _dims(dim, len(shape)) else n for i, n in enumerate(shape)]
    # SymPy scalars (symbolic layer) have no .reshape; numpy arrays do.
    return g.reshape(tuple(out)) if hasattr(g, "reshape") else np.reshape(g, tuple(out))


def _evenly(m, grad, x, result):
    # Ties share the gradient evenly, as PyTorch's evenly_distribute_backward: zeros with
    # grad / count filled in where the extreme is (the NaN entries for a NaN extreme).
    mask = m.call(NE, x, x) if bool(result != result) else m.call(EQ, x, result)
    # PyTorch's evenly_distribute_backward: masked_fill_ with a 0-d tensor (Backward1).
    return m.call(MASKED_FILL, m.new_zeros(grad, m.shape(x)), grad / total(m, mask, None, False),
                  mask)


def _extreme_indices(kind: str) -> Callable:
    """max(dim)'s (``kind`` "Max") or min(dim)'s indices, from the operand and (dim, keepdim).

    On SymPy values (the symbolic layer) which entry is the extreme is not a number: the
    indicators of the first extreme entry stand for the indices there (the SYMPY backend's
    ``value_selecting_backward`` takes them so)."""
    arg = np.argmax if kind == "Max" else np.argmin

    def indices(arrays, attrs):
        a, (dim, keepdim) = arrays[0], attrs
        if np.ndim(a) == 0:
            return np.zeros((), dtype=np.int64)
        a = np.asarray(a)
        if a.dtype == object:
            eq = np.frompyfunc(lambda x, m: sym_indicator(_sympy().Eq(x, m)), 2, 1)
            return sym_first_true(eq(a, _sym_reduce(kind, a, dim, True)), dim)
        return np.asarray(arg(a, axis=dim, keepdims=keepdim), dtype=np.int64)
    return indices


def _norm_grad(m, grad, self, ord, dim, result, keepdim):
    # PyTorch's norm_backward, zero norms and zero entries included; the branches and the
    # order of operations are PyTorch's (same roundings, signed zeros, same graph).
    shape = m.shape(self)
    if dim is None:  # all dims: PyTorch unsqueezes nothing (its dim list is empty)
        g, r = grad, result
    else:
        g, r = _keep(grad, shape, dim, keepdim), _keep(result, shape, dim, keepdim)
    if ord == 0:
        return None  # PyTorch's gradient is undefined: the leaf's .grad stays None
    if ord == 1:
        return m.call(SGN, self) * g
    if ord == 2:
        return g * m.call(MASKED_FILL_SCALAR, self / r, m.call(EQ, r, 0), 0.0)
    if ord in (float("inf"), -float("inf")):
        size = m.call(ABS, self)
        # the extremes, and NaNs
        mask = m.call(LOGICAL_OR, m.call(EQ, size, r), m.call(NE, size, size))
        return m.call(SGN, self) * ((g / total(m, mask, dim, True)) * mask)
    p = float(ord)  # PyTorch's p is a double: PowBackward0 saves 1.0, not 1
    if p < 1:
        scaled = m.call(SGN, self) * m.call(MASKED_FILL_SCALAR, m.call(ABS, self) ** (p - 1),
                                                   m.call(EQ, self, 0), 0.0)
        return scaled * g * r ** (1 - p)
    scale = m.call(MASKED_FILL_SCALAR, g / r ** (p - 1), m.call(EQ, r, 0), 0.0)
    if p < 2:
        return m.call(SGN, self) * m.call(ABS, self) ** (p - 1) * scale
    return self * m.call(ABS, self) ** (p - 2) * scale


def _sym_norm(a, ord, dim, keepdim):
    axis = None if dim is None else _dims(dim, np.ndim(a))
    size = _sym_map("Abs", a)
    if ord == float("inf"):
        return _sym_reduce("Max", size, axis, keepdim)
    if ord == -float("inf"):
        return _sym_reduce("Min", size, axis, keepdim)
    return np.sum(size ** ord, axis=axis, keepdims=keepdim) ** (1 / _sym_map("S", ord))


def _sym_softmax(a, dim):
    e = _sym_map("exp", a)
    return e / np.sum(e, axis=dim, keepdims=True)


def _sym_log_softmax(a, dim):
    return a - _sym_map("log", np.sum(_sym_map("exp", a), axis=dim, keepdims=True))


SUM = Op("sum", linear=True, forward=lambda a: np.sum(a), saves=("self_sym_sizes",),
         dtype=R.sum_dtype,
         grads=(lambda m, grad, self_sym_sizes: m.broadcast_to(grad, self_sym_sizes),),
         method="sum", function="sum", expr="sum")


SUM_DIM = Op("sum", 1, attrs=("dim", "keepdim"), forward=_sum, dtype=R.sum_dtype,
             saves=("self_sym_sizes", "dim", "keepdim"),
             grads=(lambda m, grad, self_sym_sizes, dim, keepdim:
                    m.broadcast_to(_keep(grad, self_sym_sizes, dim, keepdim), self_sym_sizes),),
             local=("1",),
             symbol="sum dim={dim}")


MEAN = Op("mean", forward=lambda a: _mean(a), saves=("self_sym_sizes", "self_sym_numel"),
          grads=(lambda m, grad, self_sym_sizes, self_sym_numel:
                 m.div_scalar(m.broadcast_to(grad, self_sym_sizes), self_sym_numel),),
          method="mean", function="mean", expr="mean")


# The expression language's numel(x): the number of elements, constant in x (a zero
# gradient; recorded, so that the matrix algebra reads it as a size, not as the traced
# number).  It is what a mean divides by, written for every size: the gradient of
# mean(exp(x)) is exp(x) / numel(x).  (No Python surface: PyTorch's numel returns an int.)
NUMEL = Op("numel", dtype=R.floating,
           forward=lambda a: np.asarray(np.size(a), dtype=np.result_type(a, np.float32)),
           sym=lambda a: np.asarray(_sympy().Integer(np.size(a)), dtype=object),
           saves=("self_sym_sizes",),
           grads=(lambda m, grad, self_sym_sizes:
                  m.broadcast_to(m.mul_scalar(grad, 0), self_sym_sizes),),
           expr="numel", doc="the number of elements of self")


MEAN_DIM = Op("mean", 1, attrs=("dim", "keepdim"), forward=_mean,
              saves=("self_sym_sizes", "self_sym_numel", "dim", "keepdim"),
              grads=(lambda m, grad, self_sym_sizes, self_sym_numel, dim, keepdim:
                     m.div_scalar(m.broadcast_to(_keep(grad, self_sym_sizes, dim, keepdim),
                                           self_sym_sizes),
                                  int(np.prod([self_sym_sizes[d] for d in
                                               _dims(dim, len(self_sym_sizes))]))),),
              local=("1/n",),
              symbol="mean dim={dim}")


def _in_dtype(op: Op) -> Op:
    """``op`` computed in the dtype its last attribute names (``x.sum(dtype=float64)``):
    the same node, saves and gradient rules (the engine casts the gradient back)."""
    def forward(a, *attrs):
        a = np.asarray(a)
        if a.dtype != object:  # SymPy values (the symbolic layer) have no dtype to change
            a = a.astype(attrs[-1].np)
        return op.forward(a, *attrs[:-1])
    return Op(op.name, op.overload, inputs=op.inputs, attrs=op.attrs + ("dtype",),
              forward=forward, grads=op.grads, saves=op.saves, local=op.local,
              symbol=op.symbol, infix=op.infix, commutative=op.commutative,
              dtype=R.last_attr, key=op.key + "_dtype", doc=f"{op.key}(dtype=...)")


SUM_DTYPE, SUM_DIM_DTYPE, MEAN_DTYPE, MEAN_DIM_DTYPE = map(_in_dtype, (SUM, SUM_DIM, MEAN,
                                                                         MEAN_DIM))


def _extremes(name: str, whole: Callable, sym: str) -> tuple:
    """``max``/``min`` of all elements (``MaxBackward1``: the gradient shared evenly among
    ties) and along one dim (``MaxBackward0``: to the index it returns), by ``whole``
    (``np.max``)."""
    of_all = Op(name, 1, forward=lambda a: whole(a), saves=("self", "result"),
                sym=lambda a: _sym_reduce(sym, a, None, False),
                grads=(lambda m, grad, self, result: _evenly(m, grad, self, result),),
                local=(f"[{{self}} = {name}]",),
                method=name, function=name)
    along = Op(name, 0, attrs=("dim", "keepdim"), key=f"{name}_dim",
               # one dim (an int), never None or several
               forward=lambda a, dim, keepdim:
               whole(a, axis=operator.index(dim), keepdims=keepdim),
               sym=lambda a, dim, keepdim: _sym_reduce(sym, a, dim, keepdim),
               saves=("dim", "indices", "keepdim", "self_sym_sizes"),
               derive={"indices": _extreme_indices(sym)},
               grads=(lambda m, grad, dim, indices, keepdim, self_sym_sizes:
                      m.value_selecting_backward(grad, dim, indices, self_sym_sizes,
                                                 keepdim),),
               local=(f"[{{self}} = {name}]",),
               symbol=f"{name} dim={{dim}}")
    return of_all, along


MAX, MAX_DIM = _extremes("max", np.max, "Max")
MIN, MIN_DIM = _extremes("min", np.min, "Min")


NORM = Op("linalg_vector_norm", attrs=("ord", "dim", "keepdim"), dtype=R.floating,
          forward=_norm, sym=_sym_norm, saves=("self", "ord", "dim", "result", "keepdim"),
          grads=(_norm_grad,),
          local=("{self}/‖{self}‖",),
          symbol="norm",
          method="norm", function="norm", expr="norm")


SOFTMAX = Op("_softmax", functional="softmax", attrs=("dim",), dtype=R.floating, forward=_softmax,
             sym=_sym_softmax,
             saves=("result", "dim"), node="SoftmaxBackward0",
             grads=(lambda m, grad, result, dim: m.call(SOFTMAX_BACKWARD_DATA, grad, result, dim),),
             method="softmax", function="softmax", expr="softmax", expr_args=(-1,))


LOG_SOFTMAX = Op("_log_softmax", functional="log_softmax", attrs=("dim",), dtype=R.floating,
                 forward=_log_softmax,
                 sym=_sym_log_softmax,
                 saves=("result", "dim"), node="LogSoftmaxBackward0",
                 grads=(lambda m, grad, result, dim:
                        m.call(LOG_SOFTMAX_BACKWARD_DATA, grad, result, dim),),
                 method="log_softmax", function="log_softmax", expr="log_softmax", expr_args=(-1,))


# The softmaxes' gradients as their own ops, as in PyTorch (SoftmaxBackwardDataBackward0,
# LogSoftmaxBackwardDataBackward0), with PyTorch's double-backward formulas.
SOFTMAX_BACKWARD_DATA = Op(
    "_softmax_backward_data", inputs=("grad_output", "output"), attrs=("dim",),
    forward=lambda g, y, dim: y * (g - np.sum(g * y, axis=dim, keepdims=True)),
    saves=("grad_output", "output", "dim"),
    grads=(lambda m, grad, grad_output, output, dim:
           m.call(SOFTMAX_BACKWARD_DATA, grad, output, dim),
           lambda m, grad, grad_output, output, dim:
           grad_output * grad - total(m, output * grad_output, dim, True) * grad
           - grad_output * total(m, output * grad, dim, True)),
    local=("diag(s) - s sᵀ", "∂/∂s"), doc="output * (grad_output - Σ grad_output * output)")


LOG_SOFTMAX_BACKWARD_DATA = Op(
    "_log_softmax_backward_data", inputs=("grad_output", "output"), attrs=("dim",),
    forward=lambda g, y, dim: g - np.exp(y) * np.sum(g, axis=dim, keepdims=True),
    sym=lambda g, y, dim: g - _sym_map("exp", y) * np.sum(g, axis=dim, keepdims=True),
    saves=("grad_output", "output", "dim"),
    grads=(lambda m, grad, grad_output, output, dim:
           grad - total(m, grad * m.call(EXP, output), dim, True),
           lambda m, grad, grad_output, output, dim:
           -total(m, grad_output, dim, True) * m.call(EXP, output) * grad),
    local=("I - softmax", "∂/∂s"), doc="grad_output - exp(output) * Σ grad_output")


# What the matrix algebra knows of them (symgrad.ops.tables): the sum of all elements, the
# count, mean's constant factor, and exp(log_softmax(x)) = softmax(x).
ROLES.total = SUM
ROLES.total_along = SUM_DIM
ROLES.count = NUMEL
HOMOGENEOUS.register(True, MEAN)
COMPOSES.register({LOG_SOFTMAX: SOFTMAX}, EXP)

# The work they ask for (symgrad.symbolic.budget): all elements into one, or along the
# last axis.
WORK.register(W.reduce_all, SUM, MEAN, NUMEL, NORM)
WORK.register(W.last_axis, SOFTMAX, LOG_SOFTMAX)


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.LINEAR, SUM_DIM, MEAN, MEAN_DIM, SUM_DTYPE, SUM_DIM_DTYPE, MEAN_DTYPE,
              MEAN_DIM_DTYPE)


def _along(dim):
    """A dim attribute as the sum along dims takes it (an int in a tuple)."""
    return dim if dim is None or isinstance(dim, tuple) else (dim,)


def _softmax_jvp(m, tangents, args, attrs, result, saved):
    # softmax's Jacobian is symmetric: its JVP is its VJP (PyTorch's _softmax_jvp).
    return m.call(SOFTMAX_BACKWARD_DATA, tangents[0], result, attrs[0])


def _log_softmax_jvp(m, tangents, args, attrs, result, saved):
    # t - sum(softmax * t) along dim (PyTorch's _log_softmax_jvp)
    t = tangents[0]
    return t - m.call(SUM_DIM, m.call(EXP, result) * t, _along(attrs[0]), True)


_JVP.register(_softmax_jvp, SOFTMAX)
_JVP.register(_log_softmax_jvp, LOG_SOFTMAX)
_fwd._SUM_DIM[0] = SUM_DIM
_JVP.register(_fwd.REDUCTION, MAX, MIN, MAX_DIM, MIN_DIM, NORM)


def _softmax_backward_jvp(m, tangents, args, attrs, result, saved):
    # y (g - S(g y)): linear in g; in y, ẏ (g - S(g y)) - y S(g ẏ), S the sum along dim
    (g, y), (tg, ty), dim = args, tangents, attrs[0]
    total = None if tg is None else m.call(SOFTMAX_BACKWARD_DATA, tg, y, dim)
    if ty is not None:
        part = ty * (g - m.call(SUM_DIM, g * y, _along(dim), True)) \
            - y * m.call(SUM_DIM, g * ty, _along(dim), True)
        total = part if total is None else total + part
    return total


def _log_softmax_backward_jvp(m, tangents, args, attrs, result, saved):
    # g - exp(y) S(g): linear in g; in y, -exp(y) ẏ S(g)
    (g, y), (tg, ty), dim = args, tangents, attrs[0]
    total = None if tg is None else m.call(LOG_SOFTMAX_BACKWARD_DATA, tg, y, dim)
    if ty is not None:
        part = -(m.call(EXP, y) * ty * m.call(SUM_DIM, g, _along(dim), True))
        total = part if total is None else total + part
    return total


_JVP.register(_softmax_backward_jvp, SOFTMAX_BACKWARD_DATA)
_JVP.register(_log_softmax_backward_jvp, LOG_SOFTMAX_BACKWARD_DATA)


# -- vmap (symgrad.ops.batching): each op once on a batch, its dimensions past the batch's ----
from . import batching as _vmap  # noqa: E402
from .tables import BATCHING as _BATCHING  # noqa: E402

for _op in (SOFTMAX, LOG_SOFTMAX):
    _BATCHING.register(_vmap.with_dim(_op), _op)
for _op in (SOFTMAX_BACKWARD_DATA, LOG_SOFTMAX_BACKWARD_DATA):
    _BATCHING.register(_vmap.backward_data(_op), _op)
for _op in (SUM_DIM, MEAN_DIM):
    _BATCHING.register(_vmap.reduce_dims(_op), _op)
_BATCHING.register(_vmap.reduce_all(SUM_DIM), SUM)
_BATCHING.register(_vmap.reduce_all(MEAN_DIM), MEAN)
