"""Indexing: ``t[index]`` as PyTorch records it, and ``t[index] = value``.

Integers, slices and ``None`` make views (``select``, ``slice``, ``unsqueeze``); tensor,
list and bool indices then make one ``index`` op at the dims they refer to.  Assignment
is an in-place write (:mod:`symgrad.api.inplace`): ``CopySlices`` into a view,
``index_put_``, ``fill_`` or ``copy_`` into the tensor itself.

Examples
--------
>>> import symgrad as torch
>>> x = torch.arange(6.).reshape(2, 3)
>>> x[1, ::2]
tensor([3., 5.])
>>> x[:, [0, 2]] = 0.
>>> x
tensor([[0., 1., 0.],
        [0., 4., 0.]])
"""
from __future__ import annotations

import builtins
import re

import numpy as np

from .. import ops as O
from ..ops import dtypes as _dt
from ..ir.node import GRAD_MODE
from .apply import apply
from .construct import _as_tensor_arg
from .core import VMAP, Tensor, _make
from .dual import DUAL
from .inplace import _leaf_in_place_error
from .shapes import _INT64_MAX
from .viewmeta import check_in_place, creation

__all__: list = []


def _is_view_index(index, shape: tuple) -> bool:
    """Does assigning at ``index`` write through a view (PyTorch's message says so)?

    Basic indexing that selects (an integer, ``None``, a partial slice) makes a view
    first; full slices, ``...`` and advanced indices alone write into the tensor itself.
    """
    items = index if isinstance(index, tuple) else (index,)

    def width(i):
        if i is None or i is Ellipsis:
            return 0
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            return i.ndim
        return 1

    dim = 0
    for k, i in enumerate(items):
        if i is Ellipsis:
            dim = len(shape) - builtins.sum(width(j) for j in items[k + 1:])
        elif i is None or isinstance(i, (int, np.integer, bool, np.bool_)):
            return True
        elif isinstance(i, np.ndarray) and i.ndim == 0:
            return True
        elif isinstance(i, slice):
            if dim < len(shape) and i.indices(shape[dim]) != (0, shape[dim], 1):
                return True
        dim += width(i)
    return False


def _is_advanced(ix) -> bool:
    return isinstance(ix, (Tensor, list, np.ndarray)) or type(ix) is bool


def _index_array(ix):
    if isinstance(ix, Tensor):
        return ix._data
    return np.asarray(ix)


def _index_width(i) -> int:
    """How many dims of the indexed tensor one index item consumes."""
    if i is None or i is Ellipsis:
        return 0
    if _is_advanced(i):
        a = _index_array(i)
        return a.ndim if a.dtype == np.bool_ else 1
    return 1


def _slice_args(s: slice) -> tuple:
    """PyTorch's slice arguments: as given, with 0, INT64_MAX and 1 for the missing ones."""
    step = 1 if s.step is None else int(s.step)
    if step <= 0:
        raise ValueError("step must be greater than zero" if step else
                         "slice step cannot be zero")
    return (0 if s.start is None else int(s.start),
            _INT64_MAX if s.stop is None else int(s.stop), step)


def _index_item(i):
    """One index item as PyTorch reads it: a 0-d integer tensor is an integer; anything
    but integers, slices, ``...``, None, bools and integer or bool tensors is refused."""
    if isinstance(i, (Tensor, np.ndarray)):
        kind = np.asarray(i._data if isinstance(i, Tensor) else i).dtype.kind
        if kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if np.ndim(i._data if isinstance(i, Tensor) else i) == 0:
            v = np.asarray(i._data if isinstance(i, Tensor) else i).item()
            return v  # a Python int, or a bool (indexed as True/False)
        return i
    if i is None or i is Ellipsis or isinstance(i, (slice, list, bool, np.bool_)):
        return i
    if isinstance(i, range):  # t[range(n), y]: the integers, as a list (PyTorch takes it)
        return list(i)
    if isinstance(i, (int, np.integer)):
        return int(i)
    if hasattr(i, "__index__"):
        return i.__index__()
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(i).__name__})")


def _getitem(t: Tensor, index) -> Tensor:
    d = t._data
    if index.__class__ is int and d.ndim and -d.shape[0] <= index < d.shape[0]:
        return apply(O.SELECT, (t,), (0, index))  # t[i] (a dataset's sample): as below
    if not isinstance(index, tuple):
        if isinstance(index, slice):
            args = _slice_args(index)
            if not t.ndim:
                raise IndexError("slice() cannot be applied to a 0-dim tensor.")
            # A lone slice is always recorded, even a full one (PyTorch does the same).
            return apply(O.SLICE, (t,), (0,) + args)
        if not t.ndim:
            if isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_)):
                raise IndexError(
                    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                    "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
                    if index == 0 else
                    f"index {index} is out of bounds for dimension 0 with size 0")
            if not (index is None or index is Ellipsis or isinstance(index, (bool, np.bool_))
                    or isinstance(index, Tensor) and index._dtype is _dt.bool
                    and not index.ndim):
                raise IndexError("too many indices for tensor of dimension 0")
        index = (_index_item(index),)
    else:
        index = tuple(_index_item(i) for i in index)
    n_real = builtins.sum(_index_width(i) for i in index)
    if n_real > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
    # As PyTorch: integers, slices and None first (views), then one index op with the
    # tensor indices at the dims they now refer to.
    out, dim = t, 0
    advanced, bounds = [], []
    for position, i in enumerate(index):
        if i is Ellipsis:
            dim += t.ndim - n_real
        elif i is None:
            out = apply(O.UNSQUEEZE, (out,), (dim,))
            dim += 1
        elif isinstance(i, slice):
            start, stop, step = _slice_args(i)
            # PyTorch skips a slice that keeps everything, judged on the values as given.
            if not (start == 0 and stop >= out.shape[dim] and step == 1):
                out = apply(O.SLICE, (out,), (dim, start, stop, step))
            dim += 1
        elif isinstance(i, (bool, np.bool_)):
            # PyTorch: a new dim, indexed by [0] (True) or by nothing (False).
            out = apply(O.UNSQUEEZE, (out,), (dim,))
            advanced.append((dim, np.arange(int(i), dtype=np.int64)))
            dim += 1
        elif _is_advanced(i):
            a = _index_array(i)
            if a.dtype == np.bool_:
                for j, n in enumerate(a.shape):
                    if n != out.shape[dim + j]:
                        raise IndexError(
                            f"The shape of the mask {list(a.shape)} at index {j} does not "
                            f"match the shape of the indexed tensor {list(out.shape)} at "
                            f"index {dim + j}")
            elif a.size:  # (checked once the indices are known to broadcast)
                bounds.append((len(advanced), a, out.shape[dim]))
            advanced.append((dim, a))
            dim += _index_width(i)
        else:
            i = int(i)
            size = out.shape[dim]
            if not -size <= i < size:  # PyTorch names the index's place in the tuple
                raise IndexError(f"index {i} is out of bounds for dimension {position} with "
                                 f"size {size}")
            out = apply(O.SELECT, (out,), (dim, i))  # i as given, as PyTorch saves it
    if advanced:
        _check_broadcast([a for _, a in advanced])
        for k, a, size in bounds:
            bad = a[(a < -size) | (a >= size)]
            if bad.size:
                raise IndexError(f"index {bad.flat[0]} is out of bounds for dimension {k} "
                                 f"with size {size}")
        items: list = []
        for d, a in advanced:
            items += [slice(None)] * (d - builtins.sum(_index_width(x) for x in items))
            items.append(a)
        return apply(O.INDEX, (out,), (tuple(items),))
    if out is t:
        out = apply(O.ALIAS, (t,))
    return out


def _check_broadcast(arrays: list) -> None:
    """PyTorch's error for tensor indices that do not broadcast (a mask of k dims stands
    for k index tensors of its number of true elements)."""
    shapes = []
    for a in arrays:
        shapes += [(int(np.count_nonzero(a)),)] * a.ndim if a.dtype == np.bool_ else [a.shape]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(s)) for s in shapes)) from None


_NUMPY_BOUNDS = re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)")
_NUMPY_SHAPES = re.compile(r"shape mismatch: indexing arrays could not be broadcast together "
                           r"with shapes ((?:\([\d, ]*\) ?)+)")


def _torch_words(e: IndexError) -> IndexError:
    """numpy's indexing error in PyTorch's words ("dimension", tensors, ``[2]``)."""
    text = str(e)
    m = _NUMPY_BOUNDS.fullmatch(text)
    if m:
        return IndexError(f"index {m[1]} is out of bounds for dimension {m[2]} with size "
                          f"{m[3]}")
    m = _NUMPY_SHAPES.match(text)
    if m:
        shapes = [[int(n) for n in s.split(",") if n.strip()]
                  for s in re.findall(r"\(([\d, ]*)\)", m[1])]
        return IndexError("shape mismatch: indexing tensors could not be broadcast together "
                          "with shapes " + ", ".join(str(s) for s in shapes))
    return e


def _setitem(t: Tensor, index, value) -> None:
    try:
        _setitem_checked(t, index, value)
    except IndexError as e:
        raise _torch_words(e) from None


def _setitem_checked(t: Tensor, index, value) -> None:
    value = _as_tensor_arg(value)
    items = tuple(_index_item(i) for i in (index if isinstance(index, tuple) else (index,)))
    items = tuple(np.asarray(i._data if isinstance(i, Tensor) else i)
                  if isinstance(i, (Tensor, list)) else i for i in items)
    advanced = builtins.any(isinstance(i, np.ndarray) for i in items)
    # Tensor indices as PyTorch saves them: a tuple; anything else as numpy reads it.
    index = items if advanced or isinstance(index, tuple) else items[0]
    if isinstance(value, Tensor) and not advanced:
        # PyTorch's copy_to expands the value first: its errors come before any other.
        target = np.empty(t._data.shape, dtype=bool)[index].shape
        shape = tuple(value.shape)
        stripped = shape[next((k for k, n in enumerate(shape) if n != 1), len(shape)):]
        try:
            ok = np.broadcast_shapes(stripped, target) == target
        except ValueError:
            ok = False
        if not ok:
            _make(np.empty(stripped), value._dtype).expand(target)  # raises PyTorch's error
    recorded = GRAD_MODE.enabled and (t.requires_grad or (isinstance(value, Tensor)
                                                          and value.requires_grad))
    if recorded and t.grad_fn is None and t._requires_grad:
        raise _leaf_in_place_error(view=_is_view_index(index, t._data.shape))
    if recorded or t._view_of is not None or not np.asarray(t._data).flags.writeable:
        # (a view writes into its base as in-place ops do: a 0-d base's value is no shared
        # array; an expanded tensor's memory is checked for overlap there)
        _setitem_recorded(t, index, value)
        return
    if DUAL.levels:  # forward mode: the tangent is written at index too
        DUAL.in_place(t, O.INDEX_PUT_, (value if isinstance(value, Tensor) else
                                        _make(np.asarray(value, t.dtype.np), t.dtype),), (index,))
    t._data[index] = value._data if isinstance(value, Tensor) else value
    t._vc[0] += 1


def _setitem_recorded(t: Tensor, index, value) -> None:
    """``t[index] = value`` recorded as PyTorch records it.

    Into a view that the basic indices select: ``CopySlices``; into ``t`` itself: the
    in-place op that writes (``index_put_`` for tensor indices, ``fill_`` for a number or
    a 0-d tensor, ``copy_`` for a tensor, viewed without leading ones and expanded as
    PyTorch's ``copy_to`` does).
    """
    items = index if isinstance(index, tuple) else (index,)
    advanced = builtins.any(isinstance(i, np.ndarray) and i.ndim > 0 or isinstance(i, list)
                            for i in items)
    view = _is_view_index(index, t._data.shape)
    target = np.empty(t._data.shape, dtype=bool)[index].shape
    is_tensor = isinstance(value, Tensor)
    if is_tensor and (value.shape != target or advanced):
        shape = tuple(value.shape)
        try:
            ok = np.broadcast_shapes(shape, target) == target
        except ValueError:
            ok = False
        if not ok and advanced:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(shape)} cannot "
                               f"be broadcast to indexing result of shape {list(target)}")
        stripped = shape[next((k for k, n in enumerate(shape) if n != 1), len(shape)):]
        if advanced:
            if stripped != shape:
                value = value.view(stripped)
        elif value.ndim:
            value = value.view(stripped)
            if value.shape != target:
                value = value.expand(target)
    if view and t._view_of is not None and creation(t) is not None:
        check_in_place(_getitem(t, index), (value,))  # (PyTorch writes into t[index])
    if view:
        t._in_place(O.COPY_SLICES, (value,), (index,))
    elif advanced:
        t._in_place(O.INDEX_PUT_, (value,), (index,))
    elif (tuple(value.shape) if is_tensor else ()) != target:
        t._in_place(O.FILL_TENSOR, (value,))  # a 0-d value: the others were expanded
    else:
        t._in_place(O.COPY, (value,))


class _Indexing:
    """Tensor's ``[]`` (attached by ``api.tensor``)."""

    def __getitem__(self, index):
        if VMAP.running:  # (a boolean mask of vmap's batch: PyTorch's error)
            VMAP.guard("getitem", self, index)
        return _getitem(self, index)

    def __setitem__(self, index, value) -> None:
        if VMAP.running:
            VMAP.guard("setitem", self, index, value)
        _setitem(self, index, value)
