"""Tensor's view methods: ``view``, ``reshape``, ``t``, ``transpose``, ``permute``,
``squeeze``, ``unsqueeze``, ``expand``, ``flatten``, ``T``, ``mT``, ``contiguous``;
``narrow`` (a slice), ``select``, ``tensor_split``/``hsplit``/``vsplit``/``dsplit``
(slices), ``split``, ``chunk`` and ``unbind`` (one node, an output per piece;
:mod:`symgrad.api.viewmeta` keeps what PyTorch forbids of the pieces),
``diagonal``, ``tril``/``triu``, ``swapaxes``, ``broadcast_to``, ``type_as``.

A view shares its base's data and version counter (``apply`` records that for view ops;
a view whose base changed in place is refreshed there, an in-place op on a view writes
through to its base in :mod:`symgrad.api.inplace`).  These methods check their arguments
as PyTorch does and choose the view op.

Examples
--------
>>> import symgrad as torch
>>> x = torch.ones(2, 3, requires_grad=True)
>>> x.t().shape, x.reshape(-1).grad_fn
(torch.Size([3, 2]), <ViewBackward0 object at ...>)
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import ops as O
from ..ops import dtypes as _dt
from ..ops.splitting import split_bounds
from .apply import _refresh_view, apply
from .core import Tensor, attach
from .construct import tensor as _tensor
from .messages import _LEGACY_NAMES, _SCALAR_NAMES, _warn_once
from .shapes import (_broadcast_sizes, _check_dims, _contiguous, _infer_shape, _shape_args,
                     _viewable, _wrap_dim)
from .viewmeta import RAW_GRAD_FN, mark_pieces, share_piece
from ..ir.node import GRAD_MODE

__all__: list = []


def _pieces(x, op, attrs: tuple, dim: int, bounds: list, select: bool = False) -> tuple:
    """The outputs of the several-output ``op`` (split, unbind): one node whose output
    count is this call's (a class has one; two at least, so that the engine hands the
    rule a list), each piece a view of ``x`` (its data, its version counter)."""
    if not bounds:
        return ()
    outs = apply(op, (x,), attrs + ((True,) * len(bounds),))
    fn = outs[0].grad_fn
    if fn is not None:
        fn._n_outputs = builtins.max(len(bounds), 2)
    for k, (t, (s, e)) in enumerate(zip(outs, bounds)):
        t._vc, t._view_version = x._vc, x._vc[0]
        t._view_of = (x, O.SELECT, (dim, k)) if select else (x, O.SLICE, (dim, s, e, 1))
        if select and not t.ndim:  # (numpy's 0-d piece is a scalar, not the base's memory)
            share_piece(t, x, dim, k)
    mark_pieces(outs)  # (PyTorch refuses in-place changes of these views)
    return outs


def _required(args: tuple, kwargs: dict, method: str, key: str) -> tuple:
    """The positional ``args`` of ``method``, or its keyword argument ``key`` as the one
    positional argument; PyTorch's error where neither is given."""
    if key in kwargs:
        args = (kwargs.pop(key),)
    if not args:
        raise TypeError(f'{method}() missing 1 required positional arguments: "{key}"')
    return args


def _int64(values) -> "Tensor":
    return _tensor(values.tolist(), dtype=_dt.int64)


def _integer(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


_get_grad_fn, _set_grad_fn = RAW_GRAD_FN.__get__, RAW_GRAD_FN.__set__


def _regenerate(v) -> None:
    """PyTorch's ``grad_fn`` of the view ``v`` whose base (or another view of it) changed
    in place since ``v``'s node was made: an ``AsStridedBackward0`` of the base's history,
    made whatever the grad mode (the errors of a view that may not be regenerated, a piece
    of ``split``, a view made in no_grad mode, too); nothing where nothing requires grad."""
    base = v
    while base._view_of is not None:
        base = base._view_of[0]
    if _get_grad_fn(v) is None and not base.requires_grad:
        return
    enabled = GRAD_MODE.enabled
    GRAD_MODE.enabled = True
    try:
        _refresh_view(v)
    finally:
        GRAD_MODE.enabled = enabled


class _Views:
    """Tensor's view methods (attached by ``api.tensor``)."""

    @property
    def grad_fn(self):
        """The node that made this tensor (None for a leaf); a view whose base changed in
        place since gets its node made again first, as PyTorch's."""
        if self._view_of is not None and self._vc[0] != self._view_version:
            _regenerate(self)
        return _get_grad_fn(self)

    @grad_fn.setter
    def grad_fn(self, fn) -> None:
        _set_grad_fn(self, fn)

    def storage_offset(self) -> int:
        """Where this tensor starts in the memory of the tensor its views lead to, in
        elements (0 for a tensor that is no view), as PyTorch's."""
        base = self
        while base._view_of is not None:
            base = base._view_of[0]
        d, b = self._data, base._data
        if base is self or not (d.__class__ is np.ndarray and b.__class__ is np.ndarray
                                and d.size and np.may_share_memory(d, b)):
            return 0
        start = d.__array_interface__["data"][0] - b.__array_interface__["data"][0]
        return start // d.itemsize

    @property
    def T(self) -> "Tensor":
        if self.ndim == 2:
            return apply(O.PERMUTE, (self,), ((1, 0),))
        if self.ndim == 0:
            _warn_once(
                "Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                "these cases. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
                "native/TensorShape.cpp:4321.)")
        if self.ndim != 2 and self.ndim > 0:
            _warn_once(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their "
                "shape is deprecated and it will throw an error in a future release. "
                "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor. "
                "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                "TensorShape.cpp:4314.)")
        return apply(O.PERMUTE, (self,), (tuple(range(self.ndim - 1, -1, -1)),))

    @property
    def mT(self) -> "Tensor":
        if self.ndim == 0:
            _warn_once(
                "Tensor.mT is deprecated on 0-D tensors. This function is the identity in "
                "these cases. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
                "native/TensorShape.cpp:4373.)")
            return self
        if self.ndim == 1:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of "
                               "matrices. Got 1-D tensor.")
        return self.transpose(-2, -1)

    def contiguous(self) -> "Tensor":
        if _contiguous(self._data):
            return self
        return apply(O.CLONE_CONTIGUOUS, (self,))

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return apply(O.T, (self,))

    def transpose(self, dim0, dim1):
        n = builtins.max(self.ndim, 1)
        _wrap_dim(dim0, n), _wrap_dim(dim1, n)
        return apply(O.TRANSPOSE, (self,), (dim0, dim1))

    def permute(self, *dims, **kwargs):
        dims = _required(dims, kwargs, "permute", "dims")  # (or permute(dims=(1, 0)))
        dims = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else dims
        if len(dims) != self.ndim:
            raise RuntimeError(
                "permute(sparse_coo): number of dimensions in the tensor input does not match "
                "the length of the desired ordering of dimensions i.e. input.dim() = "
                f"{self.ndim} is not equal to len(dims) = {len(dims)}")
        if len({_wrap_dim(d, self.ndim) for d in dims}) != len(dims):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        return apply(O.PERMUTE, (self,), (tuple(dims),))

    def movedim(self, source, destination):
        src = (source,) if isinstance(source, int) else tuple(source)
        dst = (destination,) if isinstance(destination, int) else tuple(destination)
        if len(src) != len(dst):
            raise RuntimeError(
                "movedim: Invalid source or destination dims: source "
                f"({list(src)} dims) should contain the same number of dims as destination "
                f"({list(dst)} dims)")
        n = builtins.max(self.ndim, 1)
        src = tuple(_wrap_dim(d, n) for d in src)
        dst = tuple(_wrap_dim(d, n) for d in dst)
        rest = iter(d for d in range(self.ndim) if d not in src)
        where = dict(zip(dst, src))
        order = tuple(where[d] if d in where else next(rest) for d in range(self.ndim))
        return apply(O.PERMUTE, (self,), (order,))

    moveaxis = movedim

    def view(self, *shape, **kwargs):
        if "size" in kwargs:  # view(size=(3, 2))
            shape = (kwargs.pop("size"),)
        shape = _infer_shape(_shape_args(shape), self.numel())
        if not _viewable(self._data, shape):
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least "
                "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                "instead.")
        return apply(O.VIEW, (self,), (shape,))

    def reshape(self, *shape, **kwargs):
        shape = _required(shape, kwargs, "reshape", "shape")  # (or reshape(shape=(3, 2)))
        shape = _infer_shape(_shape_args(shape), self.numel())
        # As PyTorch: a view of a contiguous tensor, an aliasing reshape where the strides
        # allow one, else a contiguous copy.
        if _contiguous(self._data):
            return apply(O.VIEW, (self,), (shape,))
        if _viewable(self._data, shape):
            return apply(O.RESHAPE_ALIAS, (self,), (shape,))
        return apply(O.UNSAFE_VIEW, (apply(O.CLONE_CONTIGUOUS, (self,)),), (shape,))

    def view_as(self, other):
        return self.view(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        s, e = _wrap_dim(start_dim, self.ndim), _wrap_dim(end_dim, self.ndim)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if self.ndim == 0:
            return self.reshape(1)
        if s == e:
            return self
        shape = self.shape[:s] + (-1,) + self.shape[e + 1:]
        return self.reshape(shape)

    def unflatten(self, dim, sizes):
        """Dim ``dim`` viewed as the dims ``sizes`` (one may be -1), as PyTorch's."""
        d = _wrap_dim(dim, self.ndim)
        sizes = tuple(sizes)
        if not sizes:
            raise RuntimeError("unflatten: sizes must be non-empty")
        n = self.shape[d]
        if -1 not in sizes and math.prod(sizes) != n:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to "
                               f"the size of dim {dim} ({n}) in the input tensor")
        return self.view(tuple(self.shape[:d]) + sizes + tuple(self.shape[d + 1:]))

    def squeeze(self, dim=None, *, axis=None):
        dim = dim if axis is None else axis
        if dim is None:
            return apply(O.SQUEEZE, (self,))
        if isinstance(dim, int):
            _wrap_dim(dim, self.ndim)
            return apply(O.SQUEEZE_DIM, (self,), (dim,))
        _check_dims(dim, self.ndim)
        return apply(O.SQUEEZE_DIMS, (self,), (tuple(dim),))

    def unsqueeze(self, dim=None, *, axis=None):
        dim = dim if axis is None else axis
        if dim is None:
            raise TypeError('unsqueeze() missing 1 required positional arguments: "dim"')
        _wrap_dim(dim, self.ndim + 1)
        return apply(O.UNSQUEEZE, (self,), (dim,))

    def expand(self, *sizes, **kwargs):
        sizes = _required(sizes, kwargs, "expand", "size")  # (or expand(size=(2, 3)))
        sizes = _shape_args(sizes)
        lead = len(sizes) - self.ndim
        if lead < 0:
            raise RuntimeError(
                f"expand(torch.{_LEGACY_NAMES[self._dtype.name]}{{{list(self.shape)}}}, "
                f"size={list(sizes)}): the number of sizes provided ({len(sizes)}) must be "
                f"greater or equal to the number of dimensions in the tensor ({self.ndim})")
        target = tuple(self.shape[i - lead] if s == -1 and i >= lead else s
                       for i, s in enumerate(sizes))
        # PyTorch checks from the last dim to the first: existing dims, then new ones.
        for i in range(self.ndim - 1, -1, -1):
            n = self.shape[i]
            if n != 1 and n != target[i + lead]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target[i + lead]}) must match the "
                    f"existing size ({n}) at non-singleton dimension {i + lead}.  Target "
                    f"sizes: {list(sizes)}.  Tensor sizes: {list(self.shape)}")
        for i in range(lead - 1, -1, -1):
            if sizes[i] == -1:
                if self.ndim == 0:
                    raise RuntimeError("numel: integer multiplication overflow")
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
        return apply(O.EXPAND, (self,), (target,))

    def expand_as(self, other):
        return self.expand(other.shape)

    def narrow(self, dim, start, length):
        if isinstance(start, Tensor):
            if start.ndim or start.dtype.is_floating_point:
                raise RuntimeError("start must be an 0-dim integral Tensor.")
            start = int(start.item())
        if not (_integer(dim) and _integer(start) and _integer(length)):
            names = ", ".join(type(a).__name__ for a in (dim, start, length))
            raise TypeError(f"narrow() received an invalid combination of arguments - got "
                            f"({names}), but expected one of:\n * (int dim, Tensor start, "
                            "int length)\n * (int dim, int start, int length)")
        if self.ndim == 0:
            raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        d = _wrap_dim(dim, self.ndim)
        n = self.shape[d]
        if not -n <= start <= n:
            raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], "
                             f"but got {start})")
        if start < 0:
            start += n
        if start + length > n:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                               f"({n}).")
        return apply(O.SLICE, (self,), (dim, start, start + length, 1))  # dim as given

    def split(self, split_size, dim=0):
        if self.ndim == 0:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        d = _wrap_dim(dim, self.ndim)
        n = self.shape[d]
        if not _integer(split_size):
            sizes = [int(s) for s in split_size]
            if builtins.any(s < 0 for s in sizes):
                raise RuntimeError("split_with_sizes expects split_sizes have only "
                                   f"non-negative entries, but got split_sizes={sizes}")
            if builtins.sum(sizes) != n:
                raise RuntimeError(
                    f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                    f"tensor's size at dimension {d}), but got split_sizes={sizes}")
            return _pieces(self, O.SPLIT_WITH_SIZES, (tuple(sizes), dim), d,
                           split_bounds(n, sizes))
        if split_size < 0:
            raise RuntimeError("split expects split_size be non-negative, but got "
                               f"split_size={split_size}")
        if split_size == 0 and n:
            raise RuntimeError("split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        return _pieces(self, O.SPLIT, (int(split_size), dim), d, split_bounds(n, split_size))

    def split_with_sizes(self, split_sizes, dim=0):
        return self.split(list(split_sizes), dim)

    def chunk(self, chunks, dim=0):
        if self.ndim == 0:
            raise RuntimeError("chunk expects at least a 1-dimensional tensor")
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        d = _wrap_dim(dim, self.ndim)
        n = self.shape[d]
        if n == 0:  # PyTorch: chunks empty pieces, split by sizes
            return self.split([0] * chunks, dim)
        return self.split(math.ceil(n / chunks), dim)

    def unbind(self, dim=0):
        if self.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = _wrap_dim(dim, self.ndim)
        return _pieces(self, O.UNBIND, (dim,), d, [(k, k + 1) for k in range(self.shape[d])],
                       select=True)

    def select(self, dim, index):
        if isinstance(index, Tensor) and not index.ndim and not index.dtype.is_floating_point:
            index = int(index.item())
        if not _integer(index):
            raise TypeError("select(): argument 'index' (position 2) must be int, not "
                            f"{type(index).__name__}")
        if self.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        d = _wrap_dim(dim, self.ndim)
        if not -self.shape[d] <= index < self.shape[d]:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(self.shape)} at dimension {d}")
        return apply(O.SELECT, (self,), (dim, index))  # dim and index as given

    def tensor_split(self, indices_or_sections, dim=0):
        if self.ndim == 0:
            raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but "
                               "got a tensor with 0 dims")
        dim = _wrap_dim(dim, self.ndim)  # (saved wrapped, unlike narrow's)
        n = self.shape[dim]
        cuts = indices_or_sections
        if isinstance(cuts, Tensor):
            if cuts.ndim > 1:
                raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                                   "zero-dimensional or one-dimensional tensor, but got a "
                                   f"tensor with {cuts.ndim} dims")
            if cuts.dtype is not _dt.int64:
                raise RuntimeError("tensor_split expected tensor_indices_or_sections to have "
                                   f"dtype of long, but got {_SCALAR_NAMES[cuts.dtype.name]}")
            cuts = cuts.tolist()
        if _integer(cuts):
            if cuts <= 0:
                raise RuntimeError(f"number of sections must be larger than 0, got {cuts}")
            size, extra = divmod(n, cuts)  # (the first `extra` pieces one longer)
            cuts = [k * size + builtins.min(k, extra) for k in range(1, cuts)]
        elif not (isinstance(cuts, (list, tuple)) and builtins.all(map(_integer, cuts))):
            raise TypeError(
                "tensor_split() received an invalid combination of arguments - got "
                f"({type(indices_or_sections).__name__}), but expected one of:\n * (tuple of "
                "ints indices, int dim = 0)\n * (Tensor tensor_indices_or_sections, int dim "
                "= 0)\n * (int sections, int dim = 0)\n")
        ends = [0, *cuts, n]  # (as given: slices as Python's, PyTorch saves them so)
        return tuple(apply(O.SLICE, (self,), (dim, s, e, 1)) for s, e in zip(ends, ends[1:]))

    def hsplit(self, sections):
        return _split_along(self, sections, "hsplit", 1 if self.ndim > 1 else 0, 1)

    def vsplit(self, sections):
        return _split_along(self, sections, "vsplit", 0, 2)

    def dsplit(self, sections):
        return _split_along(self, sections, "dsplit", 2, 3)

    def tril(self, diagonal=0):
        return apply(O.TRIL, (_at_least_2d(self, "tril"),), (int(diagonal),))

    def triu(self, diagonal=0):
        return apply(O.TRIU, (_at_least_2d(self, "triu"),), (int(diagonal),))

    def tril_(self, diagonal=0):
        return _at_least_2d(self, "tril")._in_place(O.TRIL, (), (int(diagonal),))

    def triu_(self, diagonal=0):
        return _at_least_2d(self, "triu")._in_place(O.TRIU, (), (int(diagonal),))

    def diagonal(self, offset=0, dim1=0, dim2=1):
        d1, d2 = _wrap_dim(dim1, self.ndim), _wrap_dim(dim2, self.ndim)
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        return apply(O.DIAGONAL, (self,), (int(offset), dim1, dim2))

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    def swapdims(self, dim0, dim1):
        return self.transpose(dim0, dim1)

    def broadcast_to(self, *size):
        return self.expand(*size)

    def type_as(self, other):
        return self.to(other.dtype)


def _split_along(t, sections, name: str, dim: int, rank: int) -> tuple:
    """``torch.hsplit`` (``name``) and the others: ``tensor_split`` along ``dim`` of a
    tensor of ``rank`` dims at least, a number of sections dividing it evenly."""
    if t.ndim < rank:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {rank} dimension, "
                           f"but got a tensor with {t.ndim} dimensions!")
    if _integer(sections) and (sections == 0 or t.shape[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {t.shape[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return t.tensor_split(sections, dim)


def _at_least_2d(t, name: str):
    if t.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return t


def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their broadcast shape (``ExpandBackward0`` each; a tensor
    of that shape already is returned as it is), as ``torch.broadcast_tensors``."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = ()
    for t in tensors:
        shape = _broadcast_sizes(shape, tuple(t.shape))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


__all__ += ["broadcast_tensors"]


class _Tiling:
    """Tensor's ``repeat``, ``tile``, ``repeat_interleave``, ``roll``, ``rot90``, ``ravel``
    (attached by ``api.tensor`` with the views)."""

    def repeat(self, *sizes, **kwargs):
        if "repeats" in kwargs:
            sizes = (kwargs.pop("repeats"),)
        sizes = _shape_args(sizes)
        if len(sizes) < self.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                               "number of dimensions of tensor")
        shape = (1,) * (len(sizes) - self.ndim) + tuple(self.shape)
        for n, r in zip(shape, sizes):
            if n * r < 0:
                target = [a * b for a, b in zip(shape, sizes)]
                raise RuntimeError(f"Trying to create tensor with negative dimension "
                                   f"{n * r}: {target}")
        return apply(O.REPEAT, (self,), (sizes,))

    def tile(self, *dims):
        dims = _shape_args(dims)
        # PyTorch: fewer dims than the tensor's are padded with ones in front
        return self.repeat((1,) * (self.ndim - len(dims)) + dims)

    def roll(self, shifts, dims=None):
        shifts = (shifts,) if _integer(shifts) else tuple(shifts)
        dims = () if dims is None else (dims,) if _integer(dims) else tuple(dims)
        if not shifts:
            raise RuntimeError("`shifts` required")
        if len(shifts) != len(dims) and (dims or len(shifts) != 1):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:{len(dims)}")
        for d in dims:
            _wrap_dim(d, self.ndim)
        return apply(O.ROLL, (self,), (shifts, dims))

    def rot90(self, k=1, dims=(0, 1)):
        dims = tuple(dims)
        if len(dims) != 2:
            raise RuntimeError(f"expected total rotation dims == 2, but got dims = "
                               f"{len(dims)}")
        if self.ndim < 2:
            raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
        d0, d1 = _wrap_dim(dims[0], self.ndim), _wrap_dim(dims[1], self.ndim)
        if d0 == d1:
            raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} "
                               f"and dim1 = {d1}")
        return apply(O.ROT90, (self,), (int(k), dims))

    def ravel(self):
        return self.contiguous().view(-1)

    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
        if repeats is None:
            raise TypeError(
                "repeat_interleave() received an invalid combination of arguments - got (), "
                "but expected one of:\n * (Tensor repeats, int dim = None, *, int output_size "
                "= None)\n * (int repeats, int dim = None, *, int output_size = None)\n")
        if isinstance(repeats, Tensor):
            if repeats.ndim:
                if dim is None:
                    return self.flatten().repeat_interleave(repeats, 0)
                counts = repeats.tolist()
                if builtins.any(c < 0 for c in counts):
                    raise RuntimeError("repeats can not be negative")
                index = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
                return self.index_select(dim, _int64(index))
            repeats = int(repeats.item())
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        x = self
        if dim is None:
            x, dim = self.flatten(), 0
        d = _wrap_dim(dim, x.ndim)
        shape = list(x.shape)
        shape.insert(d + 1, repeats)
        return x.unsqueeze(d + 1).expand(shape).clone().flatten(d, d + 1)


attach(Tensor, _Tiling)  # (api.tensor attaches _Views; this group goes with it)


def _stack_list(tensors, name: str) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return list(tensors)


def _cat(tensors, dim):
    """``torch.cat`` of tensors of one rank (PyTorch's size check and message)."""
    d = _wrap_dim(dim, tensors[0].ndim)
    for k, t in enumerate(tensors[1:], 1):
        for i, (a, b) in enumerate(zip(tensors[0].shape, t.shape)):
            if i != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {a} but got size {b} for tensor number "
                                   f"{k} in the list.")
    return apply(O.CAT, tuple(tensors), (dim,))


def _at_least(tensors: tuple, rank: int):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_one_at_least(t, rank) for t in tensors[0])
    out = tuple(_one_at_least(t, rank) for t in tensors)
    return out[0] if len(out) == 1 else out


def _one_at_least(t, rank: int):
    if t.ndim >= rank:
        return t
    if t.ndim == 0:
        return t.reshape((1,) * rank)
    if rank == 2 or t.ndim == 2:  # (n,) -> (1, n); (n, k) -> (n, k, 1)
        return t.unsqueeze(0) if rank == 2 else t.unsqueeze(-1)
    return t.unsqueeze(0).unsqueeze(-1)  # (n,) -> (1, n, 1)


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (a 0-d one viewed as (1,)), as ``torch.atleast_1d``."""
    return _at_least(tensors, 1)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims, as ``torch.atleast_2d``."""
    return _at_least(tensors, 2)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims, as ``torch.atleast_3d``."""
    return _at_least(tensors, 3)


def hstack(tensors):
    """``cat`` along dim 1 (dim 0 for vectors) of the tensors made at least 1-d."""
    ts = [_one_at_least(t, 1) for t in _stack_list(tensors, "hstack")]
    return _cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """``cat`` along dim 0 of the tensors made at least 2-d."""
    return _cat([_one_at_least(t, 2) for t in _stack_list(tensors, "vstack")], 0)


def dstack(tensors):
    """``cat`` along dim 2 of the tensors made at least 3-d."""
    return _cat([_one_at_least(t, 3) for t in _stack_list(tensors, "dstack")], 2)


def column_stack(tensors):
    """The tensors as columns (0-d and 1-d ones viewed as (n, 1)), joined along dim 1."""
    ts = _stack_list(tensors, "column_stack")
    return _cat([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in ts], 1)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids (each a view, expanded), as ``torch.meshgrid``; without
    ``indexing``, PyTorch's warning and ``"ij"``."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        _warn_once("torch.meshgrid: in an upcoming release, it will be required to pass the "
                   "indexing argument. (Triggered internally at /__w/pytorch/pytorch/aten/"
                   "src/ATen/native/TensorShape.cpp:4215.)")
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    if builtins.any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("xy", "ij"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        grids.append(t.view(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors):
    """Every combination of the vectors' elements, one per row (``StackBackward0``)."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return apply(O.STACK, tuple(g.flatten() for g in grids), (1,))


def block_diag(*tensors):
    """The tensors (at most 2-d; a vector is a row) as diagonal blocks
    (``BlockDiagBackward0``)."""
    for k, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {k} has {t.ndim} dimensions")
    if not tensors:
        return _tensor(np.zeros((1, 0), dtype=np.float32))
    return apply(O.BLOCK_DIAG, tuple(tensors))


__all__ += ["block_diag", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "dstack",
            "column_stack", "meshgrid", "cartesian_prod"]


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """The last dim of ``input`` as the diagonals of matrices in dims ``dim1``, ``dim2``
    (``DiagEmbedBackward0``)."""
    d1, d2 = _wrap_dim(dim1, input.ndim + 1), _wrap_dim(dim2, input.ndim + 1)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(O.DIAG_EMBED, (input,), (int(offset), dim1, dim2))


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """``torch.repeat_interleave``: ``input.repeat_interleave(repeats, dim)``; given one
    tensor of counts only, the indices repeated by them (``[1, 0, 2]`` -> ``[0, 2, 2]``)."""
    if repeats is not None:
        return input.repeat_interleave(repeats, dim, output_size=output_size)
    if input.dtype.is_floating_point:
        raise NotImplementedError('"repeat_interleave_cpu" not implemented for '
                                  f"'{_LEGACY_NAMES[input.dtype.name][:-6]}'")
    if input.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    counts = input.tolist()
    if builtins.any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    return _int64(np.repeat(np.arange(len(counts), dtype=np.int64), counts))


Tensor.diag_embed = diag_embed
__all__ += ["diag_embed", "repeat_interleave"]
