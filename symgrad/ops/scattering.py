"""Scattering with a reduction, as PyTorch 2.13 has it: ``scatter_reduce`` (``sum``,
``prod``, ``mean``, ``amax``, ``amin``, with or without ``self``'s values;
``ScatterReduceBackward0`` with PyTorch's ``scatter_reduce_backward``) and the older
``scatter(..., reduce='add' | 'multiply')``, whose node is ``NotImplemented`` (its backward
raises PyTorch's error).

Layer 1: numpy only.
"""
from __future__ import annotations

import numpy as np

from .compare import EQ, LOGICAL_AND
from .elementwise import WHERE
from .indexing import GATHER, MASKED_FILL_SCALAR, SCATTER_ADD, SCATTER_VALUE, _along
from .joint import gradient
from .record import Op, not_implemented

__all__ = ["SCATTER_REDUCE", "SCATTER_REDUCE_LEGACY", "SCATTER_VALUE_REDUCE_LEGACY",
           "SCATTER_REDUCE_LEGACY_", "SCATTER_VALUE_REDUCE_LEGACY_", "DELAYED_ERROR"]

#: scatter_reduce's reductions, as PyTorch names them (``ops.scattering.REDUCTIONS``; the
#: ``ops`` namespace's ``REDUCTIONS`` is the losses').
REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_AT = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.fmax,
       "amin": np.fmin, "add": np.add, "multiply": np.multiply}


def _identity(reduce: str, dtype):
    if reduce in ("amax", "amin"):
        big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
        return -big if reduce == "amax" else big
    return 1 if reduce == "prod" else 0


def _scatter_reduce(a, src, dim, index, reduce, include_self):
    """``a`` with ``src`` reduced into it at ``index`` along ``dim`` (PyTorch's kernel)."""
    a = np.asarray(a)
    out = np.array(a, copy=True).reshape(a.shape or (1,))
    index = np.asarray(index).reshape(np.shape(index) or (1,))
    src = np.asarray(src).reshape(np.shape(src) or (1,))
    src = src[tuple(slice(0, n) for n in index.shape)]
    ix = _along(out.shape, dim, index)
    if not include_self:
        out[ix] = _identity(reduce, out.dtype)
    at = _AT[reduce]
    if reduce in ("amax", "amin"):  # (a NaN wins, as PyTorch's)
        at = np.maximum if reduce == "amax" else np.minimum
    at.at(out, ix, src)
    if reduce == "mean":
        count = np.full(out.shape, 1 if include_self else 0, dtype=np.int64)
        np.add.at(count, ix, 1)
        count[count == 0] = 1
        out = out // count if out.dtype.kind in "iub" else (out / count).astype(out.dtype)
    return out.reshape(a.shape)


def _constant(m, like, shape, value):
    """A constant of ``like``'s dtype (no edge of the graph)."""
    zeros = m.new_zeros(like, shape)
    return zeros if value == 0 else m.add_scalar(zeros, value)


def _rule(which: int):
    """Input ``which``'s gradient: output ``which`` of one call of :func:`_backward` for
    both (under create_graph the two share their intermediate values, as PyTorch's)."""
    def rule(m, grad, dim, include_self, index, reduce, result, self, src):
        _check_src(m, src, index, reduce, which)
        return gradient(m, _backward, which, (grad, self, src, result),
                        (dim, index, reduce, include_self), (True, True), run=_backward)
    rule.__name__ = ("grad_self", "grad_src")[which]
    return rule


def _check_src(m, src, index, reduce, which):
    """PyTorch's errors for a src larger than the index (its forward takes it, its
    backward does not): a gradient of the index's shape, or the formula's broadcast."""
    got, want = tuple(np.shape(index)), tuple(m.shape(src))
    if got == want:
        return
    if reduce in ("sum", "mean"):
        if which == 1:
            raise RuntimeError(f"Function ScatterReduceBackward0 returned an invalid gradient "
                               f"at index 1 - got {list(got)} but expected shape compatible "
                               f"with {list(want)}")
        return
    for k in range(1, min(len(got), len(want)) + 1):
        a, b = want[-k], got[-k]
        if a != b and a != 1 and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                               f"({b}) at non-singleton dimension {len(want) - k}")


def _backward(m, grad, self, src, result, dim, index, reduce, include_self, mask=None):
    """PyTorch's ``scatter_reduce_backward``: ``(grad_self, grad_src)``."""
    shape, ishape = m.shape(self), tuple(np.shape(index))
    if reduce == "sum":
        grad_self, grad_src = grad, m.call(GATHER, grad, dim, index)
    elif reduce == "mean":
        n = m.call(SCATTER_ADD, _constant(m, grad, shape, 1.0 if include_self else 0.0),
                   _constant(m, grad, ishape, 1.0), dim, index)
        n = m.call(MASKED_FILL_SCALAR, n, m.call(EQ, n, 0), 1.0)
        grad_self = grad / n
        grad_src = m.call(GATHER, grad, dim, index) / m.call(GATHER, n, dim, index)
    elif reduce in ("amax", "amin"):
        # the gradient shared evenly among the values equal to the extreme
        value = m.call(GATHER, result, dim, index)
        self_is, src_is = m.call(EQ, self, result), m.call(EQ, src, value)
        count = _scatter_sum(m, _indicator(m, grad, self_is, shape),
                             _indicator(m, grad, src_is, m.shape(src_is)), dim, index)
        shared = grad / count
        grad_self = self_is * shared
        grad_src = src_is * m.call(GATHER, shared, dim, index)
    else:  # prod: the products of the others, zeros handled apart
        masked_self = m.call(MASKED_FILL_SCALAR, self, m.call(EQ, self, 0), 1.0)
        masked_result = m.call(SCATTER_REDUCE, masked_self, src, dim, index, reduce,
                               include_self)
        grad_self = grad * masked_result / masked_self
        src_zero = m.call(EQ, src, 0)
        zeros = m.call(GATHER, _scatter_sum(m, _constant(m, grad, shape, 0.0),
                                            _indicator(m, grad, src_zero, m.shape(src)), dim,
                                            index), dim, index)
        single = m.call(LOGICAL_AND, src_zero, m.call(EQ, zeros, 1))
        masked_src = m.call(MASKED_FILL_SCALAR, src, single, 1.0)
        masked_src_result = m.call(SCATTER_REDUCE, self, masked_src, dim, index, reduce,
                                   include_self)
        grad_src = m.call(WHERE, single, m.call(GATHER, grad * masked_src_result, dim, index),
                          m.call(GATHER, grad * result, dim, index)
                          / m.call(MASKED_FILL_SCALAR, src, src_zero, 1.0))
        if m.records and bool((zeros > 1).any()):
            # (that gradient's own gradient would be wrong there: a node that raises)
            grad_src = m.call(DELAYED_ERROR, grad_src, _PROD_ZEROS)
    if not include_self:
        grad_self = m.call(SCATTER_VALUE, grad_self, dim, index, 0.0)
    return grad_self, grad_src


def _scatter_sum(m, base, src, dim, index):
    """``base.scatter_add(dim, index, src)``, which reads the index's part of a larger
    src (as PyTorch's; the table's scatter_add takes src of the index's shape)."""
    if tuple(m.shape(src)) == tuple(np.shape(index)):
        return m.call(SCATTER_ADD, base, src, dim, index)
    return m.call(SCATTER_REDUCE, base, src, dim, index, "sum", True)


def _indicator(m, like, mask, shape):
    """1 where ``mask`` holds, else 0, in ``like``'s dtype (a constant)."""
    return m.call(MASKED_FILL_SCALAR, m.new_zeros(like, shape), mask, 1.0)


_PROD_ZEROS = ("scatter_reduce(): Double backward is unsupported for src when >1 zeros in src "
               "are scattered to the same position in self")


def _raise_delayed(m, grad, message):
    raise RuntimeError(message)


_raise_delayed.not_implemented = "the message saved"

# PyTorch's DelayedError: its input's values on a node (``Error``) that raises when a
# later pass reaches it (a gradient formula that cannot be differentiated there).
DELAYED_ERROR = Op("delayed_error", attrs=("message",), node="torch::autograd::Error",
                   forward=lambda a, message: np.asarray(a), saves=("_message",),
                   grads=(_raise_delayed,), symbol="error",
                   doc="self, on a node whose backward raises message")


SCATTER_REDUCE = Op(
    "scatter_reduce", 2, inputs=("self", "src"), attrs=("dim", "index", "reduce", "include_self"),
    forward=_scatter_reduce,
    saves=("dim", "include_self", "index", "reduce", "result", "self", "src"),
    grads=(_rule(0), _rule(1)), node="ScatterReduceBackward0",
    local=("[reduced into]", "[reduced at index]"), symbol="scatter_reduce {reduce}",
    doc="self with src reduced into it at index along dim")


_LEGACY = not_implemented("derivative for aten::scatter is not implemented", RuntimeError)

def _legacy(*args):
    """scatter(reduce=)'s forward: ``(*tensors, dim, index, reduce, operands)``, operands
    ``(self, src)`` each a constant or None (the next of the tensors)."""
    *tensors, dim, index, reduce, operands = args
    given = iter(tensors)
    a, src = (next(given) if o is None else o for o in operands)
    return _scatter_reduce(a, src, dim, index, reduce, True)


# scatter(dim, index, src, reduce='add' | 'multiply'): no derivative in PyTorch, whose
# NotImplemented node has an edge for each operand that requires grad (its inputs: those
# operands; the others are constants of ``operands``).
SCATTER_REDUCE_LEGACY = Op(
    "scatter", 2, key="scatter_reduce_legacy", inputs=("tensors",),
    attrs=("dim", "index", "reduce", "operands"), node="torch::autograd::NotImplemented",
    forward=_legacy, grads=(_LEGACY,), symbol="scatter {reduce}",
    doc="self with src added (multiplied) at index along dim")


def legacy_operands(operands: tuple, attrs: tuple) -> tuple:
    """``(operands, attrs)`` for :data:`SCATTER_REDUCE_LEGACY` (and its in-place twin) on
    ``operands`` (self, src; tensors): only those that require grad stay operands
    (PyTorch's node has an edge for each of them alone), the others' values become
    constants of ``attrs``' last entry."""
    if not any(t.requires_grad for t in operands):
        return operands, attrs
    consts = tuple(None if t.requires_grad else t._data for t in operands)
    return tuple(t for t in operands if t.requires_grad), attrs[:-1] + (consts,)


SCATTER_VALUE_REDUCE_LEGACY = Op(
    "scatter", 3, key="scatter_value_reduce_legacy", attrs=("dim", "index", "value", "reduce"),
    node="torch::autograd::NotImplemented",
    forward=lambda a, dim, index, value, reduce: _scatter_reduce(
        a, np.full(np.shape(index), value, np.result_type(a)), dim, index, reduce, True),
    grads=(_LEGACY,), symbol="scatter {reduce}",
    doc="self with value added (multiplied) at index along dim")

# scatter_(..., reduce=) records the same, its backward names aten::scatter_.
_LEGACY_ = not_implemented("derivative for aten::scatter_ is not implemented", RuntimeError)
SCATTER_REDUCE_LEGACY_ = Op(
    "scatter", 2, key="scatter_reduce_legacy_", inputs=("tensors",),
    attrs=("dim", "index", "reduce", "operands"), node="torch::autograd::NotImplemented",
    forward=_legacy, grads=(_LEGACY_,), symbol="scatter {reduce}",
    doc="self with src added (multiplied) at index along dim, in place")
SCATTER_VALUE_REDUCE_LEGACY_ = Op(
    "scatter", 3, key="scatter_value_reduce_legacy_",
    attrs=("dim", "index", "value", "reduce"), node="torch::autograd::NotImplemented",
    forward=SCATTER_VALUE_REDUCE_LEGACY.forward, grads=(_LEGACY_,), symbol="scatter {reduce}",
    doc="self with value added (multiplied) at index along dim, in place")

#: The op ``scatter_`` records for the op ``scatter`` does (their backward's message).
IN_PLACE = {SCATTER_REDUCE_LEGACY: SCATTER_REDUCE_LEGACY_,
            SCATTER_VALUE_REDUCE_LEGACY: SCATTER_VALUE_REDUCE_LEGACY_}


# -- forward mode (symgrad.ops.jvp) ---------------------------------------------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402


def _scatter_reduce_jvp(m, tangents, args, attrs, result, saved):
    """PyTorch's scatter_reduce_jvp: the op on the tangents (sum, mean: linear); at the
    extremes the tangents of the entries equal to them, averaged; none for prod."""
    (t_self, t_src), (self, src) = tangents, args
    dim, index, reduce, include_self = attrs
    t_self = m.zeros_like(self) if t_self is None else t_self
    t_src = m.new_zeros(self, np.shape(index)) if t_src is None else t_src
    if reduce in ("sum", "mean"):
        return m.call(SCATTER_REDUCE, t_self, t_src, dim, index, reduce, include_self)
    if reduce == "prod":
        return None
    self_is = _indicator(m, self, m.call(EQ, self, result), m.shape(self))
    src_is = m.call(EQ, src, m.call(GATHER, result, dim, index))
    src_is = _indicator(m, self, src_is, m.shape(src_is))
    count = _scatter_sum(m, self_is, src_is, dim, index)
    return _scatter_sum(m, t_self * self_is, t_src * src_is, dim, index) / count


_JVP.register(_scatter_reduce_jvp, SCATTER_REDUCE)
_JVP.register(_fwd.LINEAR, DELAYED_ERROR)
_JVP.register(_fwd._raising("Trying to use forward AD with aten::scatter that does not "
                            "support it."), SCATTER_REDUCE_LEGACY, SCATTER_VALUE_REDUCE_LEGACY,
               SCATTER_REDUCE_LEGACY_, SCATTER_VALUE_REDUCE_LEGACY_)
