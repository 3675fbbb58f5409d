"""Forward mode with a batch of tangents: every column of ``jacfwd`` in one pass.

A forward-mode level can be *batched* (``DUAL.batched[level]`` is a :class:`Tangents`):
every tangent at that level has a leading dimension of ``size`` rows, one basis tangent
per row, and :mod:`symgrad.api.forward` hands each op's tangents to
:meth:`Tangents.propagate` instead of running the op's JVP once per row.  The JVP rules
(:mod:`symgrad.ops.jvp`) are written against a backend, so they run unchanged on the
batched backend of :mod:`.batched` (the tangents wrapped as :class:`~.batched.Batch`):

* point-wise steps and arithmetic run once on all rows;
* the ops the rules call that have a batching rule (the side table
  :data:`~symgrad.ops.tables.BATCHING`, registered beside each op in ``symgrad/ops``:
  views, transposes, ``sum`` along dims, ``mm``, ``mv``, ``dot``, ``matmul``,
  convolutions, ...) run once, their dimensions moved past the batch dimension;
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

from ..api.apply import saved_values
from ..api.core import Tensor
from ..api.forward import result_tangent
from ..api.functional import stack
from ..ops.jvp import jvp_of
from .batched import BATCHED_RULES, Batch, NotBatchable

__all__ = ["Tangents"]

FORWARD = BATCHED_RULES  # (the ops' batching rules on recorded tensors)
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
