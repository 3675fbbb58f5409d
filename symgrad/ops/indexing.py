"""Indexing: select, slice, advanced indexing, index_put, masked_fill, scatter, gather."""
from __future__ import annotations

import numpy as np

from .kernels import _raise, sym_where, total
from .record import Op
from .tables import CHOOSES, INDEXING, NO_VECTOR_FORM

__all__ = ["MASKED_FILL_SCALAR", "MASKED_FILL", "MASKED_SELECT", "SCATTER_SRC", "SCATTER_ADD",
           "GATHER", "SELECT", "SELECT_BACKWARD", "SLICE", "SLICE_BACKWARD", "INDEX",
           "INDEX_PUT_IMPL", "INDEX_PUT_", "SCATTER_VALUE", "INDEX_SELECT",
           "INDEX_ADD", "TAKE", "PUT", "MASKED_SCATTER"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# words: a scatter or gather has no formula.


def _slice(a, dim, start, end, step):
    index = [slice(None)] * np.ndim(a)
    index[dim] = slice(start, end, step)
    return a[tuple(index)]


def _select(a, dim, index):
    ix = [slice(None)] * np.ndim(a)
    ix[dim] = index
    return a[tuple(ix)]


def _gather_shape(sizes, index) -> tuple:
    """The shape of ``a[index]`` for integer-array indices, without computing it."""
    if isinstance(index, tuple):
        if not index:
            return ()
        return np.broadcast(*index).shape + tuple(sizes[len(index):])
    return np.shape(index) + tuple(sizes[1:])


def _scatter(m, g, shape, index):
    """``g`` added at ``index`` into zeros of ``shape`` (PyTorch's formula for indexing's
    gradient: ``zeros(shape).index_put_(index, g, accumulate=True)``)."""
    return m.call(INDEX_PUT_IMPL, m.new_zeros(g, shape), g, index)


def _add_at(a, index, v):
    out = np.array(a, copy=True)
    np.add.at(out, index, v)  # repeated indices add up
    return out


def _put(a, index, v):
    out = np.array(a, copy=True)
    # A 0-d object array (a SymPy value) would be stored as one object: unwrap it.
    out[index] = np.asarray(v)[()] if np.ndim(v) == 0 else v
    return out


def _slice_index(shape, dim, start, end, step):
    index = [slice(None)] * len(shape)
    index[dim] = slice(start, end, step)
    return tuple(index)


def _select_index(shape, dim, index):
    ix = [slice(None)] * len(shape)
    ix[dim] = index
    return tuple(ix)


def _along(shape, dim, index) -> tuple:
    """The numpy index of the positions ``index`` points at along ``dim``."""
    ix = list(np.indices(np.shape(index), sparse=True))
    ix[dim % len(shape)] = np.asarray(index)
    return tuple(ix)


def _gather_along(a, dim, index):
    if np.ndim(a) == 0:
        return np.array(a, copy=True)
    return np.asarray(a)[_along(np.shape(a), dim, index)]


def _scatter_along(a, dim, index, src, add: bool):
    out = np.array(a, copy=True)
    if out.ndim == 0:
        return out + src if add else np.array(src, dtype=out.dtype)
    if np.shape(src) != np.shape(index):
        # (PyTorch takes a larger src, but its gradient there is not src's shape.)
        raise ValueError("scatter: src must have the index's shape")
    ix = _along(out.shape, dim, index)
    if add:
        np.add.at(out, ix, src)
    else:
        out[ix] = src
    return out


# masked_fill with a number (MaskedFillBackward0): maximum's gradient.
MASKED_FILL_SCALAR = Op("masked_fill", 0, attrs=("mask", "value"), saves=("mask",),
                        forward=lambda a, mask, value: np.where(mask, value, a),
                        sym=lambda a, mask, value: sym_where(mask, value, a),
                        grads=(lambda m, grad, mask: m.call(MASKED_FILL_SCALAR, grad, mask, 0.0),),
                        local=("[not mask]",), doc="value where mask, else self")


# masked_fill with a 0-d tensor value (MaskedFillBackward1): max()'s gradient.
MASKED_FILL = Op("masked_fill", 1, inputs=("self", "value"), attrs=("mask",), saves=("mask",),
                 forward=lambda a, value, mask: np.where(mask, value, a) if not np.ndim(value)
                 else _raise(ValueError("masked_fill: value must be a 0-d tensor")),
                 sym=lambda a, value, mask: sym_where(mask, value, a),
                 grads=(lambda m, grad, mask: m.call(MASKED_FILL_SCALAR, grad, mask, 0.0),
                        lambda m, grad, mask:
                        total(m, m.call(MASKED_SELECT, grad, mask), None, False)),
                 local=("[not mask]", "Σ[mask]"), doc="value where mask, else self")


MASKED_SELECT = Op("masked_select", attrs=("mask",), saves=("mask", "self"),
                   forward=lambda a, mask: np.asarray(a)[np.broadcast_to(mask, np.shape(a))],
                   grads=(lambda m, grad, mask, self: m.call(
                       MASKED_SCATTER, m.new_zeros(grad, m.shape(self)), grad, mask),),
                   local=("scatter",), doc="the elements of self where mask, as a 1-D tensor")


def _masked_scatter(a, source, mask):
    out = np.array(a, copy=True)
    where = np.broadcast_to(mask, out.shape)
    if int(np.count_nonzero(where)) != np.size(source):
        raise ValueError("masked_scatter: source must have one element per True of mask")
    out[where] = np.asarray(source).reshape(-1)
    return out


# masked_select's gradient, as PyTorch's: zeros_like(self).masked_scatter_(mask, grad).
MASKED_SCATTER = Op("masked_scatter", inputs=("self", "source"), attrs=("mask",),
                    forward=_masked_scatter, saves=("mask", "source_sym_sizes"),
                    derive={"source_sym_sizes": lambda arrays, attrs: tuple(np.shape(arrays[1]))},
                    grads=(lambda m, grad, mask, source_sym_sizes:
                           m.call(MASKED_FILL_SCALAR, grad, mask, 0.0),
                           lambda m, grad, mask, source_sym_sizes:
                           m.reshape(m.call(MASKED_SELECT, grad, mask), tuple(source_sym_sizes))),
                    local=("[not mask]", "masked-select"),
                    doc="self with source's elements written where mask holds")


# PyTorch's value_selecting_reduction_backward writes the gradient into zeros with
# scatter; scatter's and gather's gradients are each other (and scatter_add's).
SCATTER_SRC = Op("scatter", inputs=("self", "src"), attrs=("dim", "index"),
                 forward=lambda a, src, dim, index: _scatter_along(a, dim, index, src, False),
                 saves=("dim", "index"),
                 grads=(lambda m, grad, dim, index: m.call(SCATTER_VALUE, grad, dim, index, 0.0),
                        lambda m, grad, dim, index: m.call(GATHER, grad, dim, index)),
                 local=("[not at index]", "gather"), doc="self with src written at index")


SCATTER_ADD = Op("scatter_add", inputs=("self", "src"), attrs=("dim", "index"),
                 forward=lambda a, src, dim, index: _scatter_along(a, dim, index, src, True),
                 saves=("dim", "index"),
                 grads=(lambda m, grad, dim, index: grad,
                        lambda m, grad, dim, index: m.call(GATHER, grad, dim, index)),
                 local=("1", "gather"), doc="self with src added at index")


GATHER = Op("gather", attrs=("dim", "index"), forward=_gather_along,
            saves=("dim", "index", "self"), consts={"sparse_grad": False},
            grads=(lambda m, grad, dim, index, self:
                   m.call(SCATTER_ADD, m.new_zeros(grad, m.shape(self)), grad, dim, index),),
            local=("scatter-add",), doc="the elements of self at index along dim")


# scatter with a number (ScatterBackward1): the number written at index.
SCATTER_VALUE = Op("scatter", 1, attrs=("dim", "index", "value"),
                   forward=lambda a, dim, index, value: _scatter_along(
                       a, dim, index, np.full(np.shape(index), value, np.result_type(a)),
                       False),
                   saves=("dim", "index"),
                   grads=(lambda m, grad, dim, index:
                          m.call(SCATTER_VALUE, grad, dim, index, 0.0),),
                   local=("[not at index]",), doc="self with value written at index")


def _index_select(a, dim, index):
    index = np.asarray(index).reshape(-1)
    if np.ndim(a) == 0:
        return np.asarray(a)[index] if index.size != 1 else np.array(a, copy=True)
    return np.take(a, index, axis=dim)


def _index_add(a, source, dim, index, alpha):
    out = np.array(a, copy=True)
    source = source if alpha == 1 else source * alpha
    if out.ndim == 0:
        return out + np.sum(source)
    ix = [slice(None)] * out.ndim
    ix[dim] = np.asarray(index).reshape(-1)
    np.add.at(out, tuple(ix), source)
    return out


INDEX_SELECT = Op("index_select", attrs=("dim", "index"), forward=_index_select,
                  saves=("dim", "index", "self_sym_sizes"),
                  grads=(lambda m, grad, dim, index, self_sym_sizes:
                         m.call(INDEX_ADD, m.new_zeros(grad, tuple(self_sym_sizes)), grad, dim,
                                index, 1),),
                  local=("index-add",), doc="the slices of self at index along dim")


# index_select's gradient, as PyTorch's: zeros(sizes).index_add_(dim, index, grad).
INDEX_ADD = Op("index_add", inputs=("self", "source"), attrs=("dim", "index", "alpha"),
               forward=_index_add, saves=("alpha", "dim", "index", "source", "source_dim"),
               derive={"source_dim": lambda arrays, attrs: np.ndim(arrays[1])},
               grads=(lambda m, grad, alpha, dim, index, source, source_dim: grad,
                      lambda m, grad, alpha, dim, index, source, source_dim:
                      m.call(INDEX_SELECT, grad, dim, index) if alpha == 1 else
                      m.mul_scalar(m.call(INDEX_SELECT, grad, dim, index), alpha)),
               local=("1", "index-select"), doc="self with alpha * source added at index")


def _put_flat(a, source, index, accumulate):
    out = np.array(a, copy=True)
    flat = out.reshape(-1)
    index, source = np.asarray(index).reshape(-1), np.asarray(source).reshape(-1)
    if index.size != source.size:
        raise ValueError("put: source must have as many elements as index")
    if accumulate:
        np.add.at(flat, index, source)
    else:
        flat[index] = source
    return flat.reshape(np.shape(out))


TAKE = Op("take", attrs=("index",), saves=("index", "self"),
          forward=lambda a, index: np.asarray(a).reshape(-1)[np.asarray(index)],
          grads=(lambda m, grad, index, self:
                 m.call(PUT, m.zeros_like(self), grad, index, True),),
          local=("put",), doc="self as 1-D at index")


# take's gradient, as PyTorch's: zeros_like(self).put_(index, grad, accumulate=True).
PUT = Op("put", inputs=("self", "source"), attrs=("indices", "accumulate"),
         forward=_put_flat, saves=("accumulate", "index", "source"),
         derive={"index": lambda arrays, attrs: attrs[0]},  # PyTorch's name
         grads=(lambda m, grad, accumulate, index, source: grad if accumulate else
                m.call(PUT, grad, m.zeros_like(source), index, False),
                lambda m, grad, accumulate, index, source:
                m.reshape(m.call(TAKE, grad, index), m.shape(source))),
         local=("1", "take"), doc="self (as 1-D) with source put at index")


SELECT = Op("select", view=True, attrs=("dim", "index"), forward=_select,
            saves=("dim", "index", "self_sym_sizes"),
            grads=(lambda m, grad, dim, index, self_sym_sizes:
                   m.call(SELECT_BACKWARD, grad, tuple(self_sym_sizes), dim, index),),
            local=("one-hot",))


# select's and slice's gradients as their own ops, as in PyTorch (SelectBackwardBackward0,
# SliceBackwardBackward0): grad_output written into zeros of the input's size.
SELECT_BACKWARD = Op("select_backward", inputs=("grad_output",), attrs=("size", "dim", "index"),
                     forward=lambda g, size, dim, index: _put(
                         np.zeros(size, dtype=np.result_type(g)), _select_index(size, dim, index),
                         g),
                     saves=("dim", "index"),
                     grads=(lambda m, grad, dim, index: m.call(SELECT, grad, dim, index),),
                     local=("select",), doc="zeros(size) with grad_output at select(dim, index)")


SLICE = Op("slice", view=True, attrs=("dim", "start", "end", "step"), forward=_slice,
           saves=("dim", "start", "end", "step", "self_sym_sizes"),
           grads=(lambda m, grad, dim, start, end, step, self_sym_sizes:
                  m.call(SLICE_BACKWARD, grad, tuple(self_sym_sizes), dim, start, end, step),),
           local=("pad with zeros",))


SLICE_BACKWARD = Op("slice_backward", inputs=("grad_output",),
                    attrs=("size", "dim", "start", "end", "step"),
                    forward=lambda g, size, dim, start, end, step: _put(
                        np.zeros(size, dtype=np.result_type(g)),
                        _slice_index(size, dim, start, end, step), g),
                    saves=("dim", "start", "end", "step"),
                    grads=(lambda m, grad, dim, start, end, step:
                           m.call(SLICE, grad, dim, start, end, step),),
                    local=("slice",), doc="zeros(size) with grad_output at the slice")


INDEX = Op("index", attrs=("indices",), forward=lambda a, ix: a[ix],
           saves=("indices", "self_sym_sizes"),
           grads=(lambda m, grad, indices, self_sym_sizes:
                  _scatter(m, grad, self_sym_sizes, indices),),
           local=("scatter-add",))


# index's gradient, as PyTorch's index_backward: _index_put_impl_(zeros, indices, grad,
# accumulate=True) (IndexPutImplBackward0; the zeros are a constant).
INDEX_PUT_IMPL = Op("_index_put_impl", inputs=("self", "values"), attrs=("indices",),
                    forward=lambda a, v, ix: _add_at(a, ix, v), saves=("indices",),
                    consts={"accumulate": True},
                    grads=(lambda m, grad, indices: grad,
                           lambda m, grad, indices: m.call(INDEX, grad, indices)),
                    local=("1", "gather"), doc="self with values added at indices")


# ``t[index] = values`` with tensor indices into ``t`` itself: PyTorch's index_put_.
INDEX_PUT_ = Op("index_put_", inputs=("self", "values"), attrs=("index",), broadcasts=True,
                node="IndexPutBackward0", forward=lambda a, v, ix: _put(a, ix, v),
                saves=("indices",), consts={"accumulate": False},
                derive={"indices": lambda arrays, attrs: attrs[0]},  # PyTorch's name
                grads=(lambda m, grad, index: m.set_at(grad, index, 0.0),
                       lambda m, grad, index: m.call(INDEX, grad, index)),
                local=("[not written]", "gather"), doc="self with values put at index")


# What the matrix algebra knows of them: a gradient that scatters or gathers has no
# vector form.
NO_VECTOR_FORM.register(INDEXING, MASKED_SELECT, SCATTER_SRC, SCATTER_ADD, GATHER,
                        SCATTER_VALUE, INDEX_SELECT, INDEX_ADD, TAKE, PUT, MASKED_SCATTER,
                        SELECT_BACKWARD, SLICE_BACKWARD, INDEX, SELECT, SLICE, INDEX_PUT_IMPL)
# masked_fill picks the value where the mask holds (the matrix algebra's and the text's
# ``where``).
CHOOSES.register(lambda a, mask, value: (mask, value, a), MASKED_FILL_SCALAR)
CHOOSES.register(lambda a, value, mask: (mask, value, a), MASKED_FILL)


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.ELEMENT_WISE, MASKED_FILL_SCALAR)
_JVP.register(_fwd.LINEAR, MASKED_FILL, MASKED_SELECT, SCATTER_SRC, SCATTER_ADD, GATHER, SELECT,
              SELECT_BACKWARD, SLICE, SLICE_BACKWARD, INDEX, INDEX_PUT_IMPL,
              INDEX_PUT_, INDEX_SELECT, INDEX_ADD, TAKE, PUT, MASKED_SCATTER)
# (affine: the number written has no tangent)
_JVP.register(lambda m, tangents, args, attrs, result, saved:
              m.call(SCATTER_VALUE, tangents[0], attrs[0], attrs[1], 0.0), SCATTER_VALUE)


# -- vmap (symgrad.ops.batching): each op once on a batch ------------------------------------
from . import batching as _vmap  # noqa: E402
from .tables import BATCHING as _BATCHING  # noqa: E402


def _masked_fill_batched(m, args, batched):
    a, mask, value = args
    return m.call(MASKED_FILL_SCALAR, a, np.broadcast_to(np.asarray(mask), m.shape(a)), value)


_BATCHING.register(_vmap.with_dim(SELECT), SELECT)
_BATCHING.register(_vmap.with_dim(SLICE), SLICE)
_BATCHING.register(_masked_fill_batched, MASKED_FILL_SCALAR)
