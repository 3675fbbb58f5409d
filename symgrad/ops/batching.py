"""vmap's rule of each op: the op run once on a batch of samples (JAX's batching rules,
``batching.primitive_batchers[p]``), registered beside the op in its family module.

The entries live in the side table :data:`symgrad.ops.tables.BATCHING`: op ->
``rule(m, args, batched)`` giving the op's result for every sample, the batch first, or
``None`` where the rule does not cover the case (a 0-d sample, whose dimensions do not
shift; an operand batched that the rule expects shared): the op then runs sample by
sample.  Its arguments:

- ``m``: the backend the values live on (:class:`symgrad.ir.backends.Backend`; recorded
  tensors under ``vmap(grad)``'s replay and forward mode's batched tangents);
- ``args``: the op's operands, then its attributes, as ``m.call(op, *args)`` takes them,
  each batched operand with the batch dimension first (the attributes are never batched);
- ``batched``: one flag per operand, whether it is batched.

Like gradient rules, batching rules reach other ops only through ``m.call(OP, ...)``,
the backend's shape helpers (``m.reshape``, ``m.broadcast_to``, ``m.shape``) and
arithmetic.  The factories below are the common shapes of a rule (an op whose dimension
attributes move past the batch dimension, a reduction, a view of a new size); the family
modules register them, or a rule of their own, right after the op.  The layer that runs
batches (:mod:`symgrad.func.batched`) reads the table and names no op: where an op has no
entry, point-wise ops run once by broadcasting and any other op sample by sample.

Examples
--------
>>> import numpy as np
>>> from symgrad import ops
>>> from symgrad.ir.backends import NUMPY
>>> from symgrad.ops.tables import BATCHING
>>> rows = np.arange(12.0).reshape(2, 3, 2)       # two samples of shape (3, 2)
>>> BATCHING.get(ops.TRANSPOSE)(NUMPY, (rows, 0, 1), (True,)).shape
(2, 2, 3)
>>> BATCHING.get(ops.SUM_DIM)(NUMPY, (rows, (0,), False), (True,))
array([[ 6.,  9.],
       [24., 27.]])
"""
from __future__ import annotations

from typing import Callable

__all__ = ["shift", "rank", "size_of", "rows", "same", "with_dim", "with_dims",
           "view_size", "expand", "unsqueeze", "squeeze", "reduce_dims", "reduce_all",
           "backward_data", "images"]


def shift(dim: int, ndim: int) -> int:
    """A sample's dimension ``dim`` (of ``ndim``) in the batched data."""
    return dim % ndim + 1


def rank(m, a) -> int:
    """The rank of each sample of the batched ``a``."""
    return len(m.shape(a)) - 1


def size_of(m, args, batched) -> int:
    """The number of samples (the first batched operand's leading size)."""
    return m.shape(args[batched.index(True)])[0]


def rows(m, a, batched: bool, size: int):
    """``a`` with the batch first: a shared operand expanded to one copy per sample."""
    return a if batched else m.broadcast_to(a, (size,) + tuple(m.shape(a)))


def same(op) -> Callable:
    """An op of one operand with no dimension to move (``clone``, ``alias``,
    ``_to_copy``): the op on the batch."""
    def rule(m, args, batched):
        return m.call(op, *args)
    return rule


def with_dim(op) -> Callable:
    """An op whose first attribute is one dimension (``select``, ``slice``, ``softmax``)."""
    def rule(m, args, batched):
        a, dim, *rest = args
        r = rank(m, a)
        return m.call(op, a, shift(dim, r), *rest) if r else None
    return rule


def with_dims(op) -> Callable:
    """An op whose one attribute is a list of dimensions (``flip``, ``squeeze`` of dims)."""
    def rule(m, args, batched):
        a, dims = args
        r = rank(m, a)
        return m.call(op, a, tuple(shift(d, r) for d in dims)) if r else None
    return rule


def view_size(m, args, batched):
    """A view of a new size (``view``, ``_unsafe_view``, ``_reshape_alias``): each sample
    reshaped."""
    a, size = args
    return m.reshape(a, (m.shape(a)[0],) + tuple(size))


def expand(m, args, batched):
    """``expand``: each sample's dimensions lined up on the right, then expanded."""
    a, size = args
    shape, size = tuple(m.shape(a)), tuple(size)
    if len(size) > len(shape) - 1:
        a = m.reshape(a, shape[:1] + (1,) * (len(size) - len(shape) + 1) + shape[1:])
    return m.broadcast_to(a, shape[:1] + size)


def unsqueeze(op) -> Callable:
    """``unsqueeze``: the new dimension counted in the result's rank."""
    def rule(m, args, batched):
        a, dim = args
        return m.call(op, a, shift(dim, rank(m, a) + 1))
    return rule


def squeeze(m, args, batched):
    """``squeeze`` of every dimension of size one (of each sample, never the batch's)."""
    (a,) = args
    shape = tuple(m.shape(a))
    return m.reshape(a, shape[:1] + tuple(n for n in shape[1:] if n != 1))


def reduce_dims(op) -> Callable:
    """``sum``/``mean`` along dims (all of a sample's dimensions when none are given):
    attributes ``(dim, keepdim, ...)``."""
    def rule(m, args, batched):
        a, dim, keepdim = args[:3]
        r = rank(m, a)
        if not r:
            return None
        if dim is None or (isinstance(dim, (tuple, list)) and not len(dim)):
            dims = tuple(range(1, r + 1))
        else:
            dims = tuple(shift(d, r) for d in (dim if isinstance(dim, (tuple, list))
                                               else (dim,)))
        return m.call(op, a, dims, bool(keepdim), *args[3:])
    return rule


def reduce_all(along) -> Callable:
    """A reduction of all elements (``sum``, ``mean``): the op ``along`` dims over each
    sample's dimensions."""
    def rule(m, args, batched):
        (a,) = args
        r = rank(m, a)
        return m.call(along, a, tuple(range(1, r + 1)), False) if r else None
    return rule


def backward_data(op) -> Callable:
    """``_softmax_backward_data(grad, output, dim)`` with the gradient batched: the
    output expanded to the batch, the dimension moved."""
    def rule(m, args, batched):
        a, output, dim = args
        r = rank(m, a)
        if batched[1] or not r:
            return None
        shape = tuple(m.shape(a))
        return m.call(op, a, m.broadcast_to(output, shape), shift(dim, r))
    return rule


def images(op, spatial: int) -> Callable:
    """An op on images ``(N, C, *spatial)`` or ``(C, *spatial)`` (pooling): the batch
    folded into the images' dimension."""
    def rule(m, args, batched):
        x, *attrs = args
        r = rank(m, x)
        if r not in (spatial + 1, spatial + 2) or any(batched[1:]):
            return None
        if r == spatial + 1:  # (C, *spatial) samples: the batch is the images' dimension
            return m.call(op, x, *attrs)
        shape = tuple(m.shape(x))
        out = m.call(op, m.reshape(x, (shape[0] * shape[1],) + shape[2:]), *attrs)
        return m.reshape(out, shape[:2] + tuple(m.shape(out))[1:])
    return rule
