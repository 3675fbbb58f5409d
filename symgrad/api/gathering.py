"""Gathering and scattering along a dimension, as PyTorch has them: ``gather``,
``scatter``/``scatter_add`` (and in place), ``index_select``, ``take``,
``take_along_dim``, with PyTorch's checks of the index and its messages.

Each front end checks its arguments and picks an op of the table
(:mod:`symgrad.ops.indexing`); ``take_along_dim`` is, as in PyTorch, ``gather`` on the
operands broadcast against each other (``GatherBackward0``).

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
>>> x.gather(1, torch.tensor([[1], [0]]))
tensor([[2.],
        [3.]], grad_fn=<GatherBackward0>)
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import ops as O
from .apply import apply
from .construct import tensor
from .core import Tensor
from .messages import _SCALAR_NAMES
from .shapes import _broadcast_sizes, _wrap_dim


def _cat(tensors, dim):
    return apply(O.CAT, tuple(tensors), (dim,))

__all__ = ["searchsorted"]  # (the other torch functions are the methods: api.functional)

_INTEGER = ("int64", "int32")


def _require_tensor(name: str, what: str, position: int, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{what}' (position {position}) must be Tensor, "
                        f"not {type(x).__name__}")


def _along_checks(name: str, self: Tensor, dim: int, index: Tensor, src=None, *,
                  reads: bool = False) -> int:
    """PyTorch's gather (``reads``) and scatter shape checks; the dim, wrapped."""
    _require_tensor(name, "index", 3, index)
    d = _wrap_dim(dim, self.ndim)
    if index.dtype.name not in _INTEGER:
        raise RuntimeError(f"{name[:7]}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if builtins.max(index.ndim, 1) != builtins.max(self.ndim, 1):
        what = "input" if reads else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} "
                           "tensor")
    if index.numel() == 0:
        return d
    ishape, sshape = list(index.shape), list(self.shape)
    if reads:
        for k in range(index.ndim):
            if k != d and ishape[k] > sshape[k]:
                raise RuntimeError(f"Size does not match at dimension {k} expected index "
                                   f"{ishape} to be no larger than self {sshape} apart from "
                                   f"dimension {d}")
    elif isinstance(src, Tensor):
        srcshape = list(src.shape)
        if builtins.any((k != d and ishape[k] > sshape[k]) or ishape[k] > srcshape[k]
                        for k in range(index.ndim)):
            raise RuntimeError(f"Expected index {ishape} to be no larger than self {sshape} "
                               f"apart from dimension {d} and to be no larger size than src "
                               f"{srcshape}")
    size = self.shape[d] if self.ndim else 1
    values = np.asarray(index._data).reshape(-1)
    bad = values[(values < 0) | (values >= size)]
    if bad.size:
        raise RuntimeError(f"index {int(bad[0])} is out of bounds for dimension {d} with "
                           f"size {size}")
    return d


def _src_like_index(src: Tensor, index: Tensor) -> Tensor:
    """The part of ``src`` that ``index`` reads (PyTorch takes a larger ``src``)."""
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


class _Gathering:
    """The Tensor methods of this module (attached by :mod:`symgrad.api.tensor`)."""

    def gather(self, dim, index, *, sparse_grad=False):
        """The elements at ``index`` along ``dim`` (``GatherBackward0``)."""
        _along_checks("gather", self, dim, index, reads=True)
        return apply(O.GATHER, (self,), (dim, index))

    def _scatter_args(self, name, dim, index, src, value, reduce, adds=False):
        if reduce is not None and reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if src is None:
            src = value
        if isinstance(src, Tensor):
            _along_checks(name, self, dim, index, src)
            if reduce is None:
                return O.SCATTER_SRC, (_src_like_index(src, index),), (dim, index)
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=3)
            return O.SCATTER_REDUCE_LEGACY, (src,), (dim, index, reduce, (None, None))
        if adds:
            _require_tensor(name, "src", 3, src)
        _along_checks(name, self, dim, index)
        if reduce is not None:
            return O.SCATTER_VALUE_REDUCE_LEGACY, (), (dim, index, src, reduce)
        return O.SCATTER_VALUE, (), (dim, index, src)

    def _scatter_reduce_args(self, dim, index, src, reduce, include_self):
        _require_tensor("scatter_reduce", "src", 3, src)
        if reduce not in O.scattering.REDUCTIONS:
            raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, "
                               f"got {reduce}")
        _along_checks("scatter_reduce", self, dim, index, src)
        return (src,), (dim, index, reduce, bool(include_self))

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        """``self`` with ``src`` reduced into it at ``index`` along ``dim`` (``sum``,
        ``prod``, ``mean``, ``amax``, ``amin``; ``ScatterReduceBackward0``)."""
        others, attrs = self._scatter_reduce_args(dim, index, src, reduce, include_self)
        return apply(O.SCATTER_REDUCE, (self,) + others, attrs)

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        others, attrs = self._scatter_reduce_args(dim, index, src, reduce, include_self)
        return self._in_place(O.SCATTER_REDUCE, others, attrs)

    def scatter(self, dim, index, src=None, value=None, *, reduce=None):
        """``self`` with ``src`` (a tensor: ``ScatterBackward0``, a number:
        ``ScatterBackward1``) written at ``index`` along ``dim``."""
        op, others, attrs = self._scatter_args("scatter", dim, index, src, value, reduce)
        operands = (self,) + others
        if op is O.SCATTER_REDUCE_LEGACY:  # (an edge only for operands that require grad)
            operands, attrs = O.scattering.legacy_operands(operands, attrs)
        return apply(op, operands, attrs)

    def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
        op, others, attrs = self._scatter_args("scatter", dim, index, src, value, reduce)
        return self._in_place(O.scattering.IN_PLACE.get(op, op), others, attrs)

    def scatter_add(self, dim, index, src):
        """``self`` with ``src`` added at ``index`` along ``dim`` (``ScatterAddBackward0``)."""
        _require_tensor("scatter_add", "src", 3, src)
        _along_checks("scatter_add", self, dim, index, src)
        return apply(O.SCATTER_ADD, (self, _src_like_index(src, index)), (dim, index))

    def scatter_add_(self, dim, index, src):
        _require_tensor("scatter_add", "src", 3, src)
        _along_checks("scatter_add", self, dim, index, src)
        return self._in_place(O.SCATTER_ADD, (_src_like_index(src, index),), (dim, index))

    def index_select(self, dim, index):
        """The slices at ``index`` along ``dim`` (``IndexSelectBackward0``)."""
        _require_tensor("index_select", "index", 3, index)
        d = _wrap_dim(dim, self.ndim)
        if index.ndim > 1:
            raise IndexError("index_select(): Index is supposed to be a vector")
        if index.dtype.name not in _INTEGER:
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        size = self.shape[d] if self.ndim else 1
        values = np.asarray(index._data).reshape(-1)
        bad = values[(values < 0) | (values >= size)]
        if bad.size:
            if self.ndim > 1 and d != 0:
                raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad[0])} "
                                   f"axis_dim={size}")
            raise IndexError("index out of range in self")
        return apply(O.INDEX_SELECT, (self,), (dim, index))

    def take(self, index):
        """``self`` flattened, at ``index`` (``TakeBackward0``)."""
        _require_tensor("take", "index", 2, index)
        if index.dtype.name != "int64":
            raise RuntimeError("take(): Expected a long tensor for index, but got "
                               f"{_SCALAR_NAMES[index.dtype.name]}")
        n = self.numel()
        values = np.asarray(index._data).reshape(-1)
        bad = values[(values < -n) | (values >= n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor "
                             f"of {n} elements.")
        return apply(O.TAKE, (self,), (index,))

    def take_along_dim(self, indices, dim=None):
        """``gather`` on ``self`` and ``indices`` broadcast against each other (or on both
        flattened, without ``dim``), as PyTorch (``GatherBackward0``)."""
        _require_tensor("take_along_dim", "indices", 2, indices)
        if indices.dtype.name != "int64":
            raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but "
                               f"got {_SCALAR_NAMES[indices.dtype.name]}")
        if dim is None:
            return self.reshape(-1).gather(0, indices.reshape(-1))
        if self.ndim != indices.ndim:
            raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                               f"number of dimensions, but got {self.ndim} dimensions for "
                               f"input, and {indices.ndim} dimensions for indices")
        d = _wrap_dim(dim, self.ndim)
        sizes = list(self.shape)
        sizes[d] = indices.shape[d]
        indices = indices.expand(*_broadcast_sizes(tuple(sizes), tuple(indices.shape)))
        sizes = list(indices.shape)
        sizes[d] = self.shape[d]
        source = self.expand(*_broadcast_sizes(tuple(sizes), tuple(self.shape)))
        return source.gather(d, indices)


    def nonzero(self, *, as_tuple=False):
        """The indices of the nonzero elements: an ``(n, ndim)`` int64 tensor, or one
        tensor per dimension with ``as_tuple`` (no gradient)."""
        data = np.asarray(self._data)
        if as_tuple:
            return tuple(tensor(ix) for ix in np.nonzero(np.atleast_1d(data)))
        return tensor(np.argwhere(data).astype(np.int64))

    def masked_select(self, mask):
        """The elements where ``mask`` holds, as a 1-D tensor (``MaskedSelectBackward0``);
        ``self`` and ``mask`` broadcast against each other."""
        _require_tensor("masked_select", "mask", 2, mask)
        if mask.dtype.name != "bool":
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        shape = _broadcast_sizes(tuple(mask.shape), tuple(self.shape))
        source = self if tuple(self.shape) == shape else self.expand(*shape)
        return apply(O.MASKED_SELECT, (source,), (mask,))

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        """The ``n``-th forward difference along ``dim`` (slices subtracted, as PyTorch's
        ``SubBackward0`` of two ``SliceBackward0``)."""
        if self.ndim == 0:
            raise RuntimeError("diff expects input to be at least one-dimensional")
        if n < 0:
            raise RuntimeError(f"order must be non-negative but got {n}")
        d = _wrap_dim(dim, self.ndim)
        parts = [t for t in (prepend, self, append) if t is not None]
        out = self if len(parts) == 1 else _cat(parts, d)
        before = (slice(None),) * d
        for _ in range(n):
            if out.shape[d] == 0:
                break
            out = out[before + (slice(1, None),)] - out[before + (slice(None, -1),)]
        return out


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Where ``input``'s values would go in ``sorted_sequence`` (along its last
    dimension) to keep it sorted; no gradient."""
    if side is not None:
        right = side == "right"
    seq = np.asarray(sorted_sequence._data)
    if sorter is not None:
        seq = np.take_along_axis(seq, np.asarray(sorter._data), -1)
    values = np.asarray(input._data if isinstance(input, Tensor) else input)
    how = "right" if right else "left"
    if seq.ndim <= 1:
        out = np.searchsorted(seq, values, side=how)
    else:
        rows, vals = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        out = np.stack([np.searchsorted(r, v, side=how) for r, v in zip(rows, vals)])
        out = out.reshape(values.shape)
    return tensor(np.asarray(out, dtype=np.int32 if out_int32 else np.int64))
