"""Triangles and diagonals of (batches of) matrices: ``tril``, ``triu`` (and in place),
``diagonal`` (a view) and its gradient ``diagonal_backward``.

As in PyTorch: ``tril``'s gradient is ``tril`` of the gradient (``TrilBackward0`` again
under ``create_graph``); ``diagonal``'s is the gradient written on the diagonal of zeros
of the input's size (``diagonal_backward``, whose own gradient, ``DiagonalBackwardBackward0``,
is ``diagonal`` of its gradient).
"""
from __future__ import annotations

import numpy as np

from .record import Op
from . import jvp as _fwd
from .tables import INDEXING, JVP, NO_VECTOR_FORM

__all__ = ["TRIL", "TRIU", "DIAGONAL", "DIAGONAL_BACKWARD"]


def _band(keep_lower: bool):
    def forward(a, diagonal):
        a = np.asarray(a)
        n, k = a.shape[-2:]
        rows, cols = np.arange(n)[:, None], np.arange(k)[None, :]
        keep = cols - rows <= diagonal if keep_lower else cols - rows >= diagonal
        zero = np.zeros((), dtype=a.dtype) if a.dtype != object else 0
        return np.where(keep, a, zero).astype(a.dtype, copy=False)
    return forward


TRIL = Op("tril", attrs=("diagonal",), forward=_band(True), saves=("diagonal",),
          grads=(lambda m, grad, diagonal: m.call(TRIL, grad, diagonal),), ranks=((2, 3),),
          local=("lower triangle",), symbol="tril",
          method="tril", inplace="tril_", function="tril")

TRIU = Op("triu", attrs=("diagonal",), forward=_band(False), saves=("diagonal",),
          grads=(lambda m, grad, diagonal: m.call(TRIU, grad, diagonal),), ranks=((2, 3),),
          local=("upper triangle",), symbol="triu",
          method="triu", inplace="triu_", function="triu")


def _diagonal_view(a, offset, dim1, dim2):
    """numpy's diagonal, a view of ``a`` (writeable when ``a`` is, as PyTorch's)."""
    out = np.diagonal(a, offset, dim1, dim2)
    if isinstance(a, np.ndarray) and a.flags.writeable:
        out.flags.writeable = True
    return out


def _diagonal_backward(g, input_sizes, offset, dim1, dim2):
    g = np.asarray(g)
    out = np.zeros(input_sizes, dtype=g.dtype) if g.dtype != object else \
        np.full(input_sizes, 0, dtype=object)
    _diagonal_view(out, offset, dim1, dim2)[...] = g
    return out


DIAGONAL = Op("diagonal", view=True, attrs=("offset", "dim1", "dim2"), forward=_diagonal_view,
              saves=("dim1", "dim2", "offset", "self_sym_sizes"), ranks=((2, 3),),
              grads=(lambda m, grad, dim1, dim2, offset, self_sym_sizes:
                     m.call(DIAGONAL_BACKWARD, grad, tuple(self_sym_sizes), offset, dim1,
                            dim2),),
              local=("on the diagonal of zeros",), symbol="diagonal")

DIAGONAL_BACKWARD = Op("diagonal_backward", inputs=("grad_output",),
                       attrs=("input_sizes", "offset", "dim1", "dim2"),
                       forward=_diagonal_backward, saves=("dim1", "dim2", "offset"),
                       grads=(lambda m, grad, dim1, dim2, offset:
                              m.call(DIAGONAL, grad, offset, dim1, dim2),),
                       local=("the diagonal",), symbol="diagonal backward",
                       doc="zeros(input_sizes) with grad_output on the diagonal")

JVP.register(_fwd.LINEAR, TRIL, TRIU, DIAGONAL, DIAGONAL_BACKWARD)
NO_VECTOR_FORM.register(INDEXING, TRIL, TRIU, DIAGONAL, DIAGONAL_BACKWARD)
