"""Sorting: sort (and msort), argsort, topk and kthvalue.

Their gradients are PyTorch's ``value_selecting_backward``: the gradient written back at
the indices the values came from (``SortBackward0``/``SortBackward1`` for the stable
overload, ``TopkBackward0``, ``KthvalueBackward0``).  Ties keep their original order
(a stable sort), NaN sorts above every number, as PyTorch's CPU kernels do.
"""
from __future__ import annotations

import numpy as np

from . import dtype_rules as R
from .record import Op

__all__ = ["SORT", "SORT_STABLE", "MSORT", "ARGSORT", "TOPK", "TOPK_INDICES", "KTHVALUE",
           "KTHVALUE_INDICES", "sort_indices"]


def sort_indices(a, dim: int, descending: bool) -> np.ndarray:
    """The indices that sort ``a`` along ``dim`` (stable; descending keeps ties in order)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return np.zeros((), dtype=np.int64)
    if not descending:
        return np.argsort(a, axis=dim, kind="stable").astype(np.int64)
    # the stable ascending order of the reversed array, reversed: descending, ties in order
    n = a.shape[dim]
    flipped = np.argsort(np.flip(a, dim), axis=dim, kind="stable")
    return (n - 1 - np.flip(flipped, dim)).astype(np.int64)


def _take(a, indices, dim):
    a = np.asarray(a)
    return a.copy() if a.ndim == 0 else np.take_along_axis(a, indices, axis=dim)


def _topk_indices(a, k, dim, largest, sorted):
    idx = sort_indices(a, dim, largest)
    if np.ndim(a) == 0:
        return idx
    return np.take(idx, np.arange(k), axis=dim)


def _kth_indices(a, k, dim, keepdim):
    idx = sort_indices(a, dim, False)
    if np.ndim(a) == 0:
        return idx
    out = np.take(idx, [k - 1], axis=dim)
    return out if keepdim else np.squeeze(out, axis=dim)


def _kthvalue(a, k, dim, keepdim):
    idx = _kth_indices(a, k, dim, True)
    out = _take(a, idx, dim)
    return out if keepdim or np.ndim(a) == 0 else np.squeeze(out, axis=dim)


def _selected(m, grad, dim, indices, self_sym_sizes):
    # value_selecting_backward(grad, dim, indices, sizes, keepdim=true)
    return m.value_selecting_backward(grad, dim, indices, self_sym_sizes, True)


_SORT_SAVES = ("dim", "indices", "self_sym_sizes")

SORT = Op("sort", attrs=("dim", "descending"), saves=_SORT_SAVES,
          forward=lambda a, dim, descending: _take(a, sort_indices(a, dim, descending), dim),
          derive={"indices": lambda arrays, attrs: sort_indices(arrays[0], *attrs)},
          grads=(_selected,), local=("[sorted position]",), symbol="sort dim={dim}",
          method="sort", function="sort")

# msort(x) is sort(x, 0).values: a front end of its own, no node (SortBackward0)
MSORT = Op("msort", forward=lambda a: np.sort(a, axis=0, kind="stable"),
           method="msort", function="msort")

SORT_STABLE = Op("sort", 1, attrs=("stable", "dim", "descending"), saves=_SORT_SAVES,
                 forward=lambda a, stable, dim, descending:
                 _take(a, sort_indices(a, dim, descending), dim),
                 derive={"indices": lambda arrays, attrs: sort_indices(arrays[0], *attrs[1:])},
                 grads=(_selected,), local=("[sorted position]",), symbol="sort dim={dim}")

ARGSORT = Op("argsort", attrs=("stable", "dim", "descending"), dtype=R.int64,
             forward=lambda a, stable, dim, descending: sort_indices(a, dim, descending),
             method="argsort", function="argsort")

TOPK = Op("topk", attrs=("k", "dim", "largest", "sorted"), saves=_SORT_SAVES,
          forward=lambda a, *attrs: _take(a, _topk_indices(a, *attrs), attrs[1]),
          derive={"indices": lambda arrays, attrs: _topk_indices(arrays[0], *attrs)},
          grads=(_selected,), local=("[among the top k]",), symbol="topk k={k}",
          method="topk", function="topk")

TOPK_INDICES = Op("topk_indices", attrs=("k", "dim", "largest", "sorted"), dtype=R.int64,
                  forward=_topk_indices)

KTHVALUE = Op("kthvalue", attrs=("k", "dim", "keepdim"),
              saves=("dim", "indices", "keepdim", "self_sym_sizes"), forward=_kthvalue,
              derive={"indices": lambda arrays, attrs: _kth_indices(arrays[0], *attrs)},
              grads=(lambda m, grad, dim, indices, keepdim, self_sym_sizes:
                     m.value_selecting_backward(grad, dim, indices, self_sym_sizes, keepdim),),
              local=("[k-th smallest]",), symbol="kthvalue k={k}",
              method="kthvalue", function="kthvalue")

KTHVALUE_INDICES = Op("kthvalue_indices", attrs=("k", "dim", "keepdim"), dtype=R.int64,
                      forward=_kth_indices)


# -- forward mode (symgrad.ops.jvp): the values' tangents are the tangent's elements at the
# indices (kthvalue, one per segment, is a reduction)
from . import jvp as _fwd  # noqa: E402
from .indexing import GATHER as _GATHER  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402


def _gathered_jvp(m, tangents, args, attrs, result, saved):
    dim, indices = saved[0], saved[1]
    return m.call(_GATHER, tangents[0], dim, indices)


_JVP.register(_gathered_jvp, SORT, SORT_STABLE, TOPK)
_JVP.register(_fwd.REDUCTION, KTHVALUE)
