"""Shapes: :class:`Size` and the checks of dims and shapes that tensor methods share.

Examples
--------
>>> Size([2, 3])[1:]
torch.Size([3])
>>> _infer_shape((-1, 2), 6)
(3, 2)
"""
from __future__ import annotations

import builtins

import numpy as np

__all__ = ["Size"]

_INT64_MAX = 2 ** 63 - 1


class _SizeMeta(type):
    def __repr__(cls) -> str:
        return "<class 'torch.Size'>"


class Size(tuple, metaclass=_SizeMeta):
    """A shape, printed as PyTorch prints it: ``torch.Size([2, 3])``.

    Slices, sums and repeats of a Size are Sizes, as in PyTorch.

    Examples
    --------
    >>> s = Size([2, 3])
    >>> s[1:], s + (4,), (1,) + s
    (torch.Size([3]), torch.Size([2, 3, 4]), torch.Size([1, 2, 3]))
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, index):
        r = tuple.__getitem__(self, index)
        return Size(r) if index.__class__ is slice else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to "
                            "torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

def _wrap_dim(dim: int, ndim: int) -> int:
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}],"
                         f" but got {dim})")
    return dim % n


def _check_dims(dim, ndim):
    for d in (dim,) if isinstance(dim, int) else dim:
        _wrap_dim(d, ndim)


def _shape_args(shape) -> tuple:
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _infer_shape(shape: tuple, numel: int) -> tuple:
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    n = 1
    for s in shape:
        n *= s
    if n != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _contiguous(a) -> bool:
    """PyTorch's ``is_contiguous`` (numpy's flag also ignores the strides of size-1 dims)."""
    return a.size <= 1 or np.asarray(a).flags.c_contiguous


def _strides(t) -> tuple:
    """The tensor's strides in elements, as PyTorch reports them."""
    a = np.asarray(t._data)
    return tuple(s // a.itemsize for s in a.strides)


def _viewable(a: np.ndarray, shape: tuple) -> bool:
    """Can ``a`` be reshaped to ``shape`` without copying (PyTorch's view rule)?"""
    if a.flags.c_contiguous or a.size <= 1:
        return True
    try:
        v = a.view()
        v.shape = shape
        return True
    except AttributeError:
        return False


def _broadcast_sizes(a: tuple, b: tuple) -> tuple:
    """Broadcast two size tuples with PyTorch's message on mismatch."""
    n = builtins.max(len(a), len(b))
    out = []
    for i in range(n):
        x = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        y = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)

