"""Forward mode with a batch of tangents: every column of ``jacfwd`` in one pass.

A forward-mode level can be *batched* (``DUAL.batched[level]`` is a :class:`Tangents`):
every tangent at that level has a leading dimension of ``size`` rows, one basis tangent
per row, and :mod:`symgrad.api.forward` hands each op's tangents to
:meth:`Tangents.propagate` instead of running the op's JVP once per row.  The JVP rules
(:mod:`symgrad.ops.jvp`) are written against a backend, so they run unchanged on the
batched backend of :mod:`.batched` (the tangents wrapped as :class:`~.batched.Batch`):

* point-wise steps and arithmetic run once on all rows;
* the structural and matrix ops the rules call (views, transposes, ``sum`` along dims,
  ``mm``, ``mv``, ``dot``, ``matmul``, ...) run once with their dimensions shifted past
  the batch dimension (:data:`_RULES`);
* any other op runs row by row (numpy calls, stacked);
* a rule the batched backend cannot run (it reads a tangent's values, calls a method a
  :class:`~.batched.Batch` lacks) and an op with no JVP of its own (forward mode
  transposes its gradient rule) run the plain rule on each row and stack the rows.

What the batch does not model raises :class:`~.batched.NotBatchable` (an in-place op on a
tensor with a tangent, a custom ``Function``'s ``jvp``): ``jacfwd`` then runs one pass per
column.  The rules are linear in the tangents, so the rows are the columns one pass each
would give.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.func import jacfwd
>>> jacfwd(lambda x: (x ** 2).sum(0))(torch.tensor([[1., 2.], [3., 4.]]))
tensor([[[2., 0.],
         [6., 0.]],
<BLANKLINE>
        [[0., 4.],
         [0., 8.]]])
"""
from __future__ import annotations

import numpy as np

from .. import ops as O
from ..api.apply import apply, saved_values
from ..api.core import Tensor
from ..api.forward import result_tangent
from ..api.functional import stack
from ..api.recorded import TENSOR
from ..ops.jvp import jvp_of
from .batched import Batch, NotBatchable, _Batched, fold_matmul

__all__ = ["Tangents"]


def _shift(dim: int, ndim: int) -> int:
    """A sample's dimension ``dim`` (of ``ndim``) in the batched data."""
    return dim % ndim + 1


def _view_size(args):
    a, size = args
    return Batch(a.data.reshape((a.size_,) + tuple(size)))


def _expand(args):
    a, size = args
    size = tuple(size)
    data = a.data
    if len(size) > a.ndim:
        data = data.reshape((a.size_,) + (1,) * (len(size) - a.ndim) + a.shape)
    return Batch(data.expand((a.size_,) + size))


def _t(args):
    (a,) = args
    return Batch(a.data.transpose(1, 2) if a.ndim == 2 else a.data)


def _transpose(args):
    a, d0, d1 = args
    if not a.ndim:
        return Batch(a.data)
    return Batch(a.data.transpose(_shift(d0, a.ndim), _shift(d1, a.ndim)))


def _permute(args):
    a, dims = args
    return Batch(a.data.permute((0,) + tuple(_shift(d, a.ndim) for d in dims)))


def _unsqueeze(args):
    a, dim = args
    return Batch(a.data.unsqueeze(_shift(dim, a.ndim + 1)))


def _squeeze(args):
    (a,) = args
    return Batch(a.data.reshape((a.size_,) + tuple(n for n in a.shape if n != 1)))


def _with_dim(op):
    """An op whose first attribute is one dimension (``select``, ``slice``, ...)."""
    def rule(args):
        a, dim, *rest = args
        if not a.ndim:
            return None
        return Batch(apply(op, (a.data,), (_shift(dim, a.ndim),) + tuple(rest)))
    return rule


def _same(op):
    """An op with no dimension to shift (``clone``, ``alias``, ``_to_copy``)."""
    def rule(args):
        a, *attrs = args
        return Batch(apply(op, (a.data,), tuple(attrs)))
    return rule


def _with_dims(op):
    """An op whose one attribute is a list of dimensions (``flip``, ``squeeze`` of dims)."""
    def rule(args):
        a, dims = args
        if not a.ndim:
            return None
        return Batch(apply(op, (a.data,), (tuple(_shift(d, a.ndim) for d in dims),)))
    return rule


def _backward_data(op):
    """``_softmax_backward_data(grad, output, dim)`` with the grad batched: the output
    expanded to the batch, the dimension shifted."""
    def rule(args):
        a, output, dim = args
        if isinstance(output, Batch) or not a.ndim:
            return None
        return Batch(apply(op, (a.data, output.expand((a.size_,) + a.shape)),
                           (_shift(dim, a.ndim),)))
    return rule


def _masked_fill(args):
    a, mask, value = args
    return Batch(apply(O.MASKED_FILL_SCALAR, (a.data,), (
        np.broadcast_to(np.asarray(mask), (a.size_,) + a.shape), value)))


def _reduce(op):
    """``sum``/``mean`` along dims (all of a sample's dims when none are given)."""
    def rule(args):
        a, dim, keepdim = args
        if not a.ndim:
            return None
        if dim is None or (isinstance(dim, (tuple, list)) and not len(dim)):
            dims = tuple(range(1, a.ndim + 1))
        else:
            dims = tuple(_shift(d, a.ndim) for d in (
                dim if isinstance(dim, (tuple, list)) else (dim,)))
        return Batch(apply(op, (a.data,), (dims, bool(keepdim))))
    return rule


def _reduce_all(op):
    def rule(args):
        (a,) = args
        if not a.ndim:
            return None
        return Batch(apply(op, (a.data,), (tuple(range(1, a.ndim + 1)), False)))
    return rule


def _rank(x) -> int:
    return x.ndim if isinstance(x, Batch) else x.dim()


def _matmul(args):
    """``a @ b`` for every row: once, the batch dimension where broadcasting puts it."""
    a, b = args
    if isinstance(a, Batch) and not isinstance(b, Batch):
        if b.dim() <= 2:  # (B, ..., k) @ (k[, m]): the batch is a leading dimension
            return Batch(fold_matmul(a.data, b))
        return None
    if isinstance(b, Batch) and not isinstance(a, Batch):
        if a.dim() > 2:
            return None
        if b.ndim >= 2:  # (n, k) @ (B, ..., k, m)
            return Batch(fold_matmul(a, b.data, batched_right=True))
        # a vector: (B, k) @ aᵀ
        return Batch(b.data @ (a.transpose(0, 1) if a.dim() == 2 else a))
    if a.ndim == b.ndim >= 2:
        return Batch(a.data @ b.data)
    if a.ndim == b.ndim == 1:
        return Batch((a.data * b.data).sum(1))
    return None


_RULES = {
    O.VIEW: _view_size, O.UNSAFE_VIEW: _view_size, O.RESHAPE_ALIAS: _view_size,
    O.EXPAND: _expand, O.T: _t, O.TRANSPOSE: _transpose, O.PERMUTE: _permute,
    O.UNSQUEEZE: _unsqueeze, O.SQUEEZE: _squeeze,
    O.SELECT: _with_dim(O.SELECT), O.SLICE: _with_dim(O.SLICE),
    O.SQUEEZE_DIM: _with_dim(O.SQUEEZE_DIM), O.SQUEEZE_DIMS: _with_dims(O.SQUEEZE_DIMS),
    O.FLIP: _with_dims(O.FLIP), O.CUMSUM: _with_dim(O.CUMSUM),
    O.SOFTMAX: _with_dim(O.SOFTMAX), O.LOG_SOFTMAX: _with_dim(O.LOG_SOFTMAX),
    O.CLONE: _same(O.CLONE), O.CLONE_CONTIGUOUS: _same(O.CLONE_CONTIGUOUS),
    O.ALIAS: _same(O.ALIAS), O.TO_COPY: _same(O.TO_COPY),
    O.SOFTMAX_BACKWARD_DATA: _backward_data(O.SOFTMAX_BACKWARD_DATA),
    O.LOG_SOFTMAX_BACKWARD_DATA: _backward_data(O.LOG_SOFTMAX_BACKWARD_DATA),
    O.MASKED_FILL_SCALAR: _masked_fill,
    O.SUM_DIM: _reduce(O.SUM_DIM), O.MEAN_DIM: _reduce(O.MEAN_DIM),
    O.SUM: _reduce_all(O.SUM_DIM), O.MEAN: _reduce_all(O.MEAN_DIM),
    O.MM: _matmul, O.MV: _matmul, O.DOT: _matmul, O.BMM: _matmul, O.MATMUL: _matmul,
}


class _Forward(_Batched):
    """The batched backend of forward mode: :class:`~.batched._Batched` on recorded tensors
    with the ops of :data:`_RULES` run once on all rows."""

    def call(self, op, *args):
        if any(isinstance(a, Batch) for a in args):
            rule = _RULES.get(op)
            if rule is not None and not any(isinstance(a, Batch) for a in args[len(
                    op.inputs):]):
                got = rule(args)
                if got is not None:
                    return got
        return super().call(op, *args)


FORWARD = _Forward(TENSOR)
_ROWS = object()  # (the batched rule could not run: one row at a time)


class Tangents:
    """The rules of a forward-mode level whose tangents carry ``size`` rows."""

    def __init__(self, size: int) -> None:
        self.size = size

    def refuse(self, what: str):
        """Raise :class:`~.batched.NotBatchable` (``jacfwd`` runs a pass per column)."""
        raise NotBatchable(f"{what} with batched tangents")

    def view(self, op, t: Tensor, attrs: tuple) -> Tensor:
        """The tangent of a view ``op(x, *attrs)`` of ``x``, whose tangent is ``t``."""
        got = FORWARD.call(op, Batch(t), *attrs)
        return got.data if isinstance(got, Batch) else got

    def propagate(self, op, args: tuple, attrs: tuple, out: Tensor, tangents: tuple):
        """The batched tangent of ``out = op(*args, *attrs)`` (``None``: it has none)."""
        rule = jvp_of(op)
        if rule is not None and getattr(rule, "unsupported", None):
            rule(FORWARD, tangents, args, attrs, out, ())  # PyTorch's NotImplementedError
        got = _ROWS
        if rule is not None:
            saved = tuple(saved_values(op, args, attrs, out))
            batched = tuple(None if t is None else Batch(t) for t in tangents)
            try:
                got = rule(FORWARD, batched, args, attrs, out, saved)
            except (NotBatchable, AttributeError, TypeError):
                got = _ROWS
        if got is _ROWS:
            got = self._rows(op, args, attrs, out, tangents)
        if got is None:
            return None
        t = self._fit(got, out)
        if not op.view and any(tt is not None and np.may_share_memory(t._data, tt._data)
                               for tt in tangents):
            t = t.clone()  # (an in-place change of an operand must not reach it)
        if t.dtype is not out.dtype and all(
                tt is None or tt.dtype is a.dtype for a, tt in zip(args, tangents)):
            t = t.to(out.dtype)
        return t

    def _rows(self, op, args, attrs, out, tangents):
        """The plain rule on each row, stacked."""
        rows = []
        for b in range(self.size):
            r = result_tangent(op, args, attrs, out,
                               tuple(None if t is None else t[b] for t in tangents))
            if r is None:
                return None
            rows.append(r if isinstance(r, Tensor) and tuple(r.shape) == tuple(out.shape)
                        else self._fit_row(r, out))
        return Batch(stack(rows)) if rows else None

    @staticmethod
    def _fit_row(r, out: Tensor) -> Tensor:
        if not isinstance(r, Tensor):
            return out.new_full(tuple(out.shape), r)
        return r.expand(tuple(out.shape))

    def _fit(self, got, out: Tensor) -> Tensor:
        """A tangent as the result's: ``(size, *out.shape)``."""
        shape = (self.size,) + tuple(out.shape)
        if isinstance(got, Batch):
            data = got.data
            if tuple(data.shape) == shape:
                return data
            pad = out.dim() - got.ndim
            if pad > 0:
                data = data.reshape((self.size,) + (1,) * pad + got.shape)
            return data.expand(shape).clone()
        if not isinstance(got, Tensor):  # a number: the same for every row
            return out.new_full(shape, got)
        return got.expand(shape).clone()
