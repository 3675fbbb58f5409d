"""Splitting: ``split``, ``split_with_sizes`` and ``unbind``, one node of several outputs.

PyTorch records ``x.split(2)`` (and ``x.chunk(n)``, which splits by a size) as one
``SplitBackward0`` node whose outputs are the pieces (``output_nr`` 0, 1, ...);
``x.split([1, 4])`` as ``SplitWithSizesBackward0``, ``x.unbind(dim)`` as
``UnbindBackward0``.  Each is an op of the side table ``EVERY_OUTPUT``: its forward
returns every piece (views of the input), its rule takes one gradient per piece (None
where a piece got none) and joins them, zeros for the missing ones, with ``cat`` (``stack``
for unbind), as PyTorch's ``split_with_sizes_backward`` and ``unbind_backward`` do.  The
number of pieces depends on the call: the front end (:mod:`symgrad.api.views`) sets it on
the node.  The last attribute is the output mask: forward mode's tangent of piece ``k``
is that piece of the tangent.
"""
from __future__ import annotations

import numpy as np

from .indexing import SELECT, SLICE, _select, _slice
from .record import Op
from .shapes import CAT, STACK
from .tables import EVERY_OUTPUT, INDEXING, JVP, NO_VECTOR_FORM

__all__ = ["SPLIT", "SPLIT_WITH_SIZES", "UNBIND", "split_bounds"]


def split_bounds(n: int, sizes) -> list:
    """``[(start, end), ...]`` of the pieces of a dim of length ``n``: ``sizes`` an int
    (pieces of that size, the last shorter) or a sequence of sizes."""
    if isinstance(sizes, (int, np.integer)):
        sizes = [min(sizes, n - s) for s in range(0, n, sizes)] if sizes and n else [0]
    out, start = [], 0
    for s in sizes:
        out.append((start, start + int(s)))
        start += int(s)
    return out


def _pieces(a, sizes, dim, mask):
    bounds = split_bounds(np.shape(a)[dim], sizes)
    return tuple(_slice(a, dim, s, e, 1) if k >= len(mask) or mask[k] else None
                 for k, (s, e) in enumerate(bounds))


def _joined(m, grads, dim, self_sym_sizes, sizes):
    """The input's gradient: the pieces' gradients (zeros where None) joined by cat."""
    like = next(g for g in grads if g is not None)
    bounds = split_bounds(self_sym_sizes[dim], sizes)
    parts = []
    for g, (s, e) in zip(grads, bounds):
        if g is None:
            shape = list(self_sym_sizes)
            shape[dim] = e - s
            g = m.new_zeros(like, tuple(shape))
        parts.append(g)
    return m.call(CAT, *parts, dim)


def _piece_jvp(m, tangents, args, attrs, result, saved):
    """The tangent of the piece the mask asks for: that piece of the input's tangent."""
    t = tangents[0]
    if t is None:
        return None
    sizes, dim, mask = attrs
    s, e = split_bounds(m.shape(args[0])[dim], sizes)[list(mask).index(True)]
    return m.call(SLICE, t, dim, s, e, 1)


def _split_op(name: str, sizes: str, doc: str) -> Op:
    """split (``split_size``) or split_with_sizes (``split_sizes``): the pieces along dim,
    one node with an output each; the input's gradient joins the pieces' by cat."""
    return Op(name, attrs=(sizes, "dim", "output_mask"), outputs=("piece0", "piece1"),
              forward=_pieces, saves=("dim", "self_sym_sizes", sizes), grads=(_joined,),
              local=("cat",), symbol="split", doc=doc)


SPLIT = _split_op("split", "split_size",
                  "pieces of split_size along dim: one node with an output per piece")
SPLIT_WITH_SIZES = _split_op("split_with_sizes", "split_sizes",
                             "pieces of the given sizes along dim: one node, an output each")


def _unbind(a, dim, mask):
    return tuple(_select(a, dim, k) if k >= len(mask) or mask[k] else None
                 for k in range(np.shape(a)[dim]))


def _stacked(m, grads, dim, _self_sym_sizes):
    like = next(g for g in grads if g is not None)
    shape = tuple(m.shape(like))
    return m.call(STACK, *(m.new_zeros(like, shape) if g is None else g for g in grads), dim)


def _select_jvp(m, tangents, args, attrs, result, saved):
    t = tangents[0]
    if t is None:
        return None
    dim, mask = attrs
    return m.call(SELECT, t, dim, list(mask).index(True))


UNBIND = Op("unbind", attrs=("dim", "output_mask"), outputs=("piece0", "piece1"),
            forward=_unbind, saves=("dim", "_self_sym_sizes"),
            grads=(_stacked,), local=("stack",), symbol="unbind",
            doc="the slices along dim: one node with an output per slice")

EVERY_OUTPUT.register(True, SPLIT, SPLIT_WITH_SIZES, UNBIND)
NO_VECTOR_FORM.register(INDEXING, SPLIT, SPLIT_WITH_SIZES, UNBIND)
JVP.register(_piece_jvp, SPLIT, SPLIT_WITH_SIZES)
JVP.register(_select_jvp, UNBIND)
