"""In-place writes that rebase history: zero_, fill_, copy_, and ``t[index] = src``
(``CopySlices``)."""
from __future__ import annotations

import numpy as np

from .indexing import INDEX, _put, _scatter
from .joint import gradient
from .record import Op
from .shapes import AS_STRIDED, CLONE

__all__ = ["ZERO", "FILL", "FILL_TENSOR", "COPY", "COPY_SLICES"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# the record it copies.


ZERO = Op("zero", forward=np.zeros_like, grads=(lambda m, grad: m.zeros_like(grad),),
          )


FILL = Op("fill", 2, attrs=("value",), forward=lambda a, v: np.full_like(a, v),
          grads=(lambda m, grad: m.zeros_like(grad),), )


# fill_ with a 0-d tensor: what ``t[...] = 1.5`` records (the number is wrapped).
FILL_TENSOR = Op("fill", 3, inputs=("self", "value"), broadcasts=True,
                 forward=lambda a, v: np.full_like(a, v),
                 grads=(lambda m, grad: m.zeros_like(grad), lambda m, grad: grad),
                 local=("0", "Σ"))


COPY = Op("copy", inputs=("self", "src"), broadcasts=True,
          node="torch::autograd::CopyBackwards",
          # (a src that broadcasts past self is refused by the in-place write, as PyTorch)
          forward=lambda a, b: np.broadcast_arrays(a, b)[1].astype(np.result_type(a)),
          grads=(lambda m, grad: m.zeros_like(grad), lambda m, grad: grad), )



def _written(shape, index) -> tuple:
    """Where ``t[index]`` (a basic index) lies in ``t``: the elements' positions (an
    advanced index), and the view's strides and storage offset as PyTorch shows them."""
    base = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    view = np.asarray(base[index])
    positions = np.unravel_index(view, shape)
    offset = int(view.flat[0]) if view.size else 0
    strides = tuple(int(s) // view.itemsize for s in view.strides) \
        if np.may_share_memory(view, base) else (1,) * view.ndim
    return positions, tuple(view.shape), strides, offset


def _copy_slices_grads(m, grad, index, self_sym_sizes, mask):
    """(self's, src's) gradient.  Recorded, as PyTorch's CopySlices records them: the
    gradient copied into a new tensor (CopyBackwards), the written part viewed
    (AsStridedBackward0) and cloned (CloneBackward0: src's), zeros copied into that part
    (CopySlices: self's); elsewhere the part not written and the part written."""
    if not m.records:
        part = m.call(INDEX, grad, index)
        return (grad - _scatter(m, part, self_sym_sizes, index) if mask[0] else None,
                part if mask[1] else None)
    result = m.call(COPY, m.new_zeros(grad, self_sym_sizes), grad)
    positions, shape, strides, offset = _written(tuple(self_sym_sizes), index)
    part = m.call(AS_STRIDED, result, positions, shape, strides, offset)
    src = m.call(CLONE, part)
    return m.call(COPY_SLICES, result, m.new_zeros(grad, shape), index), src


def _copy_slices_rule(which: int):
    def rule(m, grad, index, self_sym_sizes):
        return gradient(m, _copy_slices_grads, which, (grad,), (index, self_sym_sizes),
                        (True, True), run=_copy_slices_grads)
    rule.__name__ = ("grad_self", "grad_src")[which]
    return rule


COPY_SLICES = Op("copy_slices", inputs=("self", "src"), attrs=("index",), broadcasts=True,
                 node="torch::autograd::CopySlices", forward=lambda a, v, ix: _put(a, ix, v),
                 saves=("_index", "_self_sym_sizes"),  # PyTorch's CopySlices shows none
                 grads=(_copy_slices_rule(0), _copy_slices_rule(1)),
                 local=("[not written]", "gather"),
                 doc="self with src written at index (``t[index] = src``)")

# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.ELEMENT_WISE, ZERO, FILL, FILL_TENSOR, COPY)
_JVP.register(_fwd.LINEAR, COPY_SLICES)
