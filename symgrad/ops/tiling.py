"""Tiling and rotating: ``repeat`` (``tile`` is a front end of it), ``roll``, ``rot90``.

Their gradients are PyTorch's: ``repeat_backward`` sums the new leading dims away, then
views each repeated dim as (repeats, size) and sums the repeats (``SumBackward1``,
``ViewBackward0`` under ``create_graph``); ``roll`` and ``rot90`` turn the gradient back
(``RollBackward0`` with the shifts negated, ``Rot90Backward0`` with ``-k``).
"""
from __future__ import annotations

import numpy as np

from . import dtype_rules as R
from . import jvp as _fwd
from .indexing import SLICE
from .reductions import SUM_DIM
from .shapes import SQUEEZE_DIM
from .record import Op
from .tables import INDEXING, JVP, NO_VECTOR_FORM

__all__ = ["REPEAT", "ROLL", "ROT90", "BLOCK_DIAG"]


def _repeat(a, repeats):
    a = np.asarray(a)
    if len(repeats) < a.ndim:
        raise ValueError("Number of dimensions of repeat dims can not be smaller than "
                         "number of dimensions of tensor")
    return np.ascontiguousarray(np.tile(a, tuple(repeats)) if repeats else a.copy())


def _repeat_grad(m, grad, repeats, self_sym_sizes):
    extra = len(repeats) - len(self_sym_sizes)
    for _ in range(extra):
        grad = m.call(SUM_DIM, grad, (0,), False)
    size, dims = [], []
    for d, n in enumerate(self_sym_sizes):
        r = repeats[d + extra]
        if r != 1:
            size.append(r)
            dims.append(len(size) - 1)
        size.append(n)
    if not dims:
        return grad
    return m.call(SUM_DIM, m.reshape(grad, tuple(size)), tuple(dims), False)


REPEAT = Op("repeat", attrs=("repeats",), forward=_repeat, saves=("repeats", "self_sym_sizes"),
            grads=(_repeat_grad,), local=("sum of the copies",), symbol="repeat")


def _roll(a, shifts, dims):
    a = np.asarray(a)
    if not dims:
        return np.roll(a, shifts[0])
    return np.roll(a, tuple(shifts), tuple(dims))


ROLL = Op("roll", attrs=("shifts", "dims"), forward=_roll, saves=("dims", "shifts"),
          grads=(lambda m, grad, dims, shifts:
                 m.call(ROLL, grad, tuple(-s for s in shifts), dims),),
          local=("rolled back",), symbol="roll")

ROT90 = Op("rot90", attrs=("k", "dims"), ranks=((2, 3),),
           forward=lambda a, k, dims: np.ascontiguousarray(np.rot90(a, k, tuple(dims))),
           saves=("dims", "k"),
           grads=(lambda m, grad, dims, k: m.call(ROT90, grad, -k, dims),),
           local=("turned back",), symbol="rot90")



def _as_block(a) -> tuple:
    """A block's (rows, columns): a vector is one row, a number one element."""
    shape = np.shape(a) if not isinstance(a, tuple) else a
    return tuple(shape) if len(shape) == 2 else (1, shape[0]) if shape else (1, 1)


def _block_diag(*arrays):
    blocks = [_as_block(a) for a in arrays]
    dtype = np.result_type(*arrays)
    out = np.zeros((sum(b[0] for b in blocks), sum(b[1] for b in blocks)), dtype=dtype) \
        if dtype != object else np.full((sum(b[0] for b in blocks),
                                         sum(b[1] for b in blocks)), 0, dtype=object)
    r = c = 0
    for a, (h, w) in zip(arrays, blocks):
        out[r:r + h, c:c + w] = np.reshape(a, (h, w))
        r, c = r + h, c + w
    return out


def _block_grad(m, grad, shapes, i):
    # PyTorch's block_diag_backward: the block sliced out, a vector's summed to its
    # shape after a squeeze of its last dim, a number's squeezed twice.
    blocks = [_as_block(s) for s in shapes]
    r, c = sum(b[0] for b in blocks[:i]), sum(b[1] for b in blocks[:i])
    h, w = blocks[i]
    g = m.call(SLICE, m.call(SLICE, grad, 0, r, r + h, 1), 1, c, c + w, 1)
    if len(shapes[i]) == 1:
        return m.sum_to(m.call(SQUEEZE_DIM, g, -1), tuple(shapes[i]))
    if not shapes[i]:
        return m.call(SQUEEZE_DIM, m.call(SQUEEZE_DIM, g, -1), -1)
    return g


BLOCK_DIAG = Op("block_diag", inputs=("tensors",), forward=_block_diag, dtype=R.promote,
                saves=("_shapes",),
                derive={"shapes": lambda arrays, attrs: tuple(np.shape(a) for a in arrays)},
                grads=(_block_grad,), local=("the block",), symbol="block_diag",
                doc="variadic: the tensors as the blocks of a block-diagonal matrix")

JVP.register(_fwd.LINEAR, REPEAT, ROLL, ROT90, BLOCK_DIAG)
NO_VECTOR_FORM.register(INDEXING, REPEAT, ROLL, ROT90, BLOCK_DIAG)
