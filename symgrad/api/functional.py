"""Module-level functions (``symgrad.sin(x)``, ``symgrad.cat([...])``), as PyTorch has them.

Most are the tensor methods of the same name; the rest choose an op from the table.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import ops as O
from ..ops import subscribe
from ..ops.dtypes import result_type
from .apply import apply
from .construct import tensor
from .einsum import (addmv, baddbmm, cross, cummax, cummin, dist, einsum, inner,  # noqa: F401
                     logcumsumexp, tensordot, unique, cdist)
from .gathering import searchsorted  # noqa: F401
from .remainders import (count_nonzero, floor_divide, fmod, nan_to_num,  # noqa: F401
                         remainder, true_divide)
from .core import Tensor
from .linalg import (bmm, det, diag, dot, inverse, kron, logdet, matmul, mm, mv, outer,
                     slogdet, trace)
from .methods import allclose, equal, isclose, maximum, minimum, where
from .shapes import _wrap_dim
from .statistics import bucketize
from .surface import Functions
from .views import (atleast_1d, atleast_2d, atleast_3d, block_diag,  # noqa: F401
                    broadcast_tensors, cartesian_prod, column_stack, diag_embed, dstack,
                    hstack, meshgrid, repeat_interleave, vstack)

# Tensor methods that PyTorch also has as functions but that are no op of the table
# (their front ends choose ops: reshape a view or a copy).  The ops' own functions are
# generated from the table (see the end of this module and ``surface``).
_METHOD_FUNCTIONS = ("reshape", "flatten", "clip", "numel", "detach", "quantile", "nanquantile",
                     "narrow", "split", "chunk", "unbind", "movedim", "moveaxis", "diagonal",
                     "swapaxes", "swapdims", "broadcast_to", "tile", "roll", "rot90", "ravel",
                     "gather", "scatter", "scatter_add", "index_select", "take", "take_along_dim",
                     "nonzero", "masked_select", "diff", "select", "scatter_reduce",
                     "tensor_split", "hsplit", "vsplit", "dsplit")


def _method(name: str):
    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            input = tensor(input)
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``symgrad.{name}(input, ...)`` is ``input.{name}(...)``."
    return fn


for _name in _METHOD_FUNCTIONS:
    globals()[_name] = _method(_name)


def pow(input, exponent) -> Tensor:
    """``input ** exponent``; a number raised to a tensor is ``PowBackward2``, as in PyTorch."""
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor):
        return exponent.__rpow__(input)
    if not isinstance(input, Tensor):
        input = tensor(input)
    return input.pow(exponent)


def square(input: Tensor) -> Tensor:
    return input ** 2


def xlogy(input, other) -> Tensor:
    """``input * log(other)``, 0 where ``input`` is 0 (``XlogyBackward0``; a number for
    either operand: ``XlogyBackward1``/``2``, as in PyTorch)."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError("xlogy(): argument 'input' must be Tensor or Number")
        return apply(O.XLOGY_SELF_NUMBER, (other,), (input,))
    return input.xlogy(other)


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    """``input + weight * (end - input)`` (``LerpBackward0``; a tensor weight:
    ``LerpBackward1``)."""
    return input.lerp(end, weight)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Round half to even (``RoundBackward0``; with ``decimals``: ``RoundBackward1``)."""
    return input.round(decimals=decimals)


def _promote_all(tensors: Sequence[Tensor]) -> list:
    d = result_type(tensors)
    return [t if t.dtype is d else t.to(d) for t in tensors]


def cat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along an existing dimension (``CatBackward0``)."""
    dim = dim if axis is None else axis
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for k, t in enumerate(tensors):
        if not t.ndim:
            raise RuntimeError(f"zero-dimensional tensor (at position {k}) cannot be "
                               "concatenated")
    ref = tensors[0]
    d = _wrap_dim(dim, ref.ndim)
    for k, t in enumerate(tensors[1:], 1):
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} "
                               f"and {t.ndim}")
        for i, (a, b) in enumerate(zip(ref.shape, t.shape)):
            if i != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {a} but got size {b} for tensor number "
                                   f"{k} in the list.")
    return apply(O.CAT, tuple(tensors), (dim,))  # dim as given: PyTorch saves it so


concat = cat


def stack(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along a new dimension (``StackBackward0``)."""
    dim = dim if axis is None else axis
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for k, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at "
                               f"entry {k}")
    _wrap_dim(dim, tensors[0].ndim + 1)
    return apply(O.STACK, tuple(tensors), (dim,))


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


__all__ = list(_METHOD_FUNCTIONS) + ["pow", "square", "xlogy", "lerp", "round", "dot", "matmul", "mm", "mv", "bmm",
                                     "det", "logdet", "slogdet", "inverse", "outer", "diag", "trace", "kron",
                                     "maximum", "minimum", "cat", "concat", "stack", "where",
                                     "is_tensor", "equal", "isclose", "allclose", "bucketize",
                                     "broadcast_tensors", "atleast_1d", "atleast_2d",
                                     "atleast_3d", "hstack", "vstack", "dstack",
                                     "column_stack", "meshgrid", "cartesian_prod",
                                     "block_diag", "diag_embed", "repeat_interleave",
                                     "gather", "index_select", "scatter", "scatter_add", "take",
                                     "scatter_reduce",
                                     "take_along_dim", "remainder", "fmod", "floor_divide",
                                     "true_divide", "nan_to_num", "count_nonzero", "nonzero",
                                     "masked_select", "diff", "searchsorted", "einsum",
                                     "inner", "tensordot", "addmv", "baddbmm", "dist",
                                     "logcumsumexp", "cummax", "cummin", "cross", "unique",
                                     "cdist"]
#: The functions generated from the op table (and the namespaces that receive them).
FUNCTIONS = Functions([globals()])
subscribe(FUNCTIONS.added, FUNCTIONS.removed)
