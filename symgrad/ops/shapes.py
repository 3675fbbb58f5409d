"""Shapes and copies: views (transpose, view, squeeze, expand, ...), cat, stack, clone, casts."""
from __future__ import annotations

import numpy as np

from .indexing import INDEX, INDEX_PUT_IMPL, SELECT, SLICE, _gather_shape, _scatter
from .kernels import _strides
from . import dtype_rules as R
from .record import Op

__all__ = ["T", "PERMUTE", "TRANSPOSE", "VIEW", "RESHAPE_ALIAS", "ALIAS", "AS_STRIDED",
           "UNSAFE_VIEW", "SQUEEZE", "SQUEEZE_DIM", "SQUEEZE_DIMS", "SQUEEZE_", "UNSQUEEZE",
           "EXPAND", "CAT", "STACK", "CLONE", "CLONE_CONTIGUOUS", "TO_COPY"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# words: a view's local derivative is the inverse reshaping.


def _cat_piece(m, grad, dim, sizes, i):
    start = sum(sizes[:i])
    return m.call(SLICE, grad, dim, start, start + sizes[i], 1)


def _expand(a, size):
    """``broadcast_to`` with PyTorch's strides: only the expanded dims get stride 0 (numpy
    zeroes every size-1 dim), which matters to matmul's choice of folding."""
    a = np.asarray(a)
    size = tuple(size)
    lead = len(size) - a.ndim
    strides = [0] * len(size)
    below = a.itemsize  # stride of a new leading dim: the size times stride of the next
    for i in range(len(size) - 1, -1, -1):
        d = i - lead
        n, st = (a.shape[d], a.strides[d]) if d >= 0 else (1, below)
        if n != size[i] and n != 1:
            raise ValueError(f"cannot broadcast shape {a.shape} to {size}")
        strides[i] = 0 if n != size[i] else st
        below = size[i] * strides[i]
    return np.lib.stride_tricks.as_strided(a, size, tuple(strides), writeable=False)


def _restride(a, out, strides: tuple):
    """``out`` (a view of ``a``'s memory) with PyTorch's strides, in elements: numpy picks
    others for size-1 dims, which PyTorch reports (``stride()``, mm's saved strides)."""
    if out.dtype == object or out.size == 0:
        return out
    return np.lib.stride_tricks.as_strided(out, out.shape,
                                           tuple(s * out.itemsize for s in strides),
                                           writeable=out.flags.writeable)


def _reshape(a, shape):
    """A view of ``a`` in ``shape`` where one exists, strides as PyTorch's computeStride."""
    out = np.reshape(a, shape)
    if not isinstance(a, np.ndarray) or a.flags.c_contiguous or not np.shares_memory(a, out):
        return out  # numpy's strides for a contiguous result are PyTorch's
    old, old_strides = a.shape, _strides(a)
    new = list(out.shape)
    strides = [0] * len(new)
    view_d = len(new) - 1
    base = old_strides[-1] if old else 1
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and old_strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                strides[view_d] = view_numel * base
                view_numel *= new[view_d]
                view_d -= 1
            if d > 0:
                base, tensor_numel, view_numel = old_strides[d - 1], 1, 1
    return _restride(a, out, tuple(strides))


def _unsqueeze(a, dim):
    out = np.expand_dims(a, dim)
    if not isinstance(a, np.ndarray):
        return out
    d = dim % out.ndim
    # PyTorch: the new dim's stride is size * stride of the dim it goes before, 1 at the end.
    new = 1 if d == a.ndim else a.shape[d] * _strides(a)[d]
    strides = _strides(a)
    return _restride(a, out, strides[:d] + (new,) + strides[d:])


def _unsqueeze_to(m, grad, sizes, dims):
    """PyTorch's unsqueeze_to: squeeze's gradient gets back the size-1 dims it lost."""
    if not len(sizes):
        return grad
    for d in sorted({d % len(sizes) for d in ((dims,) if isinstance(dims, int) else dims)}):
        if sizes[d] == 1:
            grad = m.call(UNSQUEEZE, grad, d)
    return grad


def _squeeze_dims(shape, dim):
    if dim is None:
        return tuple(i for i, n in enumerate(shape) if n == 1)
    return tuple(d % len(shape) for d in ((dim,) if isinstance(dim, int) else dim)
                 if shape[d % len(shape)] == 1) if shape else ()


T = Op("t", view=True, forward=np.transpose, grads=(lambda m, grad: m.call(T, grad),), local=("ᵀ",),
       method="t", function="t")


PERMUTE = Op("permute", view=True, attrs=("dims",), forward=np.transpose, saves=("dims",),
             grads=(lambda m, grad, dims:
                    m.call(PERMUTE, grad, tuple(np.argsort([d % len(dims) for d in dims]))),),
             local=("permute",),
             method="permute", function="permute")


TRANSPOSE = Op("transpose", 0, view=True, attrs=("dim0", "dim1"),
               forward=lambda a, d0, d1: np.swapaxes(a, d0, d1) if np.ndim(a) else a,
               saves=("dim0", "dim1"),
               grads=(lambda m, grad, dim0, dim1: m.call(TRANSPOSE, grad, dim0, dim1),),
               local=("transpose",),
               method="transpose", function="transpose")


VIEW = Op("view", view=True, attrs=("size",), forward=_reshape, saves=("self_sym_sizes",),
          grads=(lambda m, grad, self_sym_sizes: m.reshape(grad, self_sym_sizes),),
          local=("reshape",),
          method="view")


RESHAPE_ALIAS = Op("_reshape_alias", view=True, attrs=("size",), forward=_reshape,
                   saves=("self_sym_sizes",),
                   grads=(lambda m, grad, self_sym_sizes: m.reshape(grad, self_sym_sizes),),
                   local=("reshape",), doc="reshape of a non-contiguous tensor, as a view")


ALIAS = Op("alias", view=True, forward=lambda a: a.view() if isinstance(a, np.ndarray) else a,
           grads=(lambda m, grad: grad,), doc="the same values: x[...]")


# A view regenerated from its base after an in-place change (PyTorch's as_strided); the
# index holds the base positions of the view's elements.
AS_STRIDED = Op("as_strided", view=True, attrs=("indices", "size", "stride", "storage_offset"),
                # (a 0-d base: indices is (), its one element, expanded perhaps, at each place)
                forward=lambda a, ix, size, stride, offset: np.broadcast_to(a, size).copy()
                if isinstance(ix, tuple) and not ix else np.reshape(a[ix], size),
                # (PyTorch shows the view's size, stride and storage offset; the positions
                # in the base are what the gradient needs)
                saves=("_indices", "_self_sym_sizes", "size", "stride", "storage_offset"),
                grads=(lambda m, grad, indices, self_sym_sizes, *geometry:
                       m.sum_to(grad, self_sym_sizes)  # a 0-d base: indices is ()
                       if isinstance(indices, tuple) and not indices else
                       _scatter(m, m.reshape(grad, _gather_shape(self_sym_sizes, indices)),
                                 self_sym_sizes, indices),),
                local=("scatter-add",), doc="the elements of self at index, as a view")


UNSAFE_VIEW = Op("_unsafe_view", attrs=("size",), forward=np.reshape,
                 saves=("self_sym_sizes",), node="UnsafeViewBackward0",
                 grads=(lambda m, grad, self_sym_sizes: m.reshape(grad, self_sym_sizes),),
                 local=("reshape",),
                 symbol="view")


SQUEEZE = Op("squeeze", 0, view=True, forward=np.squeeze, saves=("self_sym_sizes",),
             grads=(lambda m, grad, self_sym_sizes:
                    _unsqueeze_to(m, grad, self_sym_sizes, range(len(self_sym_sizes))),),
             local=("squeeze",),
             method="squeeze", function="squeeze")


SQUEEZE_DIM = Op("squeeze", 1, view=True, attrs=("dim",), saves=("self_sym_sizes", "dim"),
                 forward=lambda a, dim: np.squeeze(a, _squeeze_dims(np.shape(a), dim)),
                 grads=(lambda m, grad, self_sym_sizes, dim:
                        _unsqueeze_to(m, grad, self_sym_sizes, (dim,)),),
                 local=("squeeze",))


SQUEEZE_DIMS = Op("squeeze", 2, view=True, attrs=("dim",), saves=("self_sym_sizes", "dim"),
                  forward=lambda a, dim: np.squeeze(a, _squeeze_dims(np.shape(a), dim)),
                  grads=(lambda m, grad, self_sym_sizes, dim:
                         _unsqueeze_to(m, grad, self_sym_sizes, dim),),
                  local=("squeeze",))


# In-place ``squeeze_(dim)``: PyTorch's matmul squeezes its 1-D @ 2-D product this way
# (the product itself, one version later: not a view).
SQUEEZE_ = Op("squeeze_", 4, attrs=("dim",), saves=("self_sym_sizes", "dim"),
              forward=lambda a, dim: np.squeeze(a, _squeeze_dims(np.shape(a), dim)),
              grads=(lambda m, grad, self_sym_sizes, dim:
                     _unsqueeze_to(m, grad, self_sym_sizes, (dim,)),),
              local=("squeeze",))


UNSQUEEZE = Op("unsqueeze", view=True, attrs=("dim",), forward=_unsqueeze, saves=("dim",),
               grads=(lambda m, grad, dim: m.call(SQUEEZE_DIM, grad, dim),), local=("unsqueeze",),
               method="unsqueeze", function="unsqueeze")


EXPAND = Op("expand", view=True, attrs=("size",), forward=_expand, saves=("self_sym_sizes",),
            grads=(lambda m, grad, self_sym_sizes: m.sum_to(grad, self_sym_sizes),),
            local=("sum over broadcast",),
            method="expand")


CAT = Op("cat", inputs=("tensors",), attrs=("dim",), dtype=R.promote,
         # PyTorch allocates a contiguous result; numpy would follow the inputs' layout.
         forward=lambda *a: np.ascontiguousarray(np.concatenate(a[:-1], axis=a[-1])),
         saves=("dim", "_sizes"),  # PyTorch's CatBackward0 shows only its dim
         grads=(lambda m, grad, dim, sizes, i: _cat_piece(m, grad, dim, sizes, i),),
         local=("slice",), doc="variadic: one grad rule applied per input",
         function="cat")


STACK = Op("stack", inputs=("tensors",), attrs=("dim",), dtype=R.promote,
           forward=lambda *a: np.ascontiguousarray(np.stack(a[:-1], axis=a[-1])),
           saves=("dim",),
           grads=(lambda m, grad, dim, i: m.call(SELECT, grad, dim, i),),
           local=("select",), doc="variadic: one grad rule applied per input",
           function="stack")


CLONE = Op("clone", forward=np.copy, grads=(lambda m, grad: grad,), method="clone",
           function="clone")


# clone(memory_format=torch.contiguous_format): what contiguous() and reshape copy with.
CLONE_CONTIGUOUS = Op("clone", key="clone_contiguous", forward=lambda a: np.array(a, order="C"),
                      grads=(lambda m, grad: grad,), )


TO_COPY = Op("_to_copy", attrs=("dtype",), forward=lambda a, d: a.astype(d.np),
             sym=lambda a, d: a,
             saves=("_self_dtype",), node="ToCopyBackward0", dtype=R.attr,
             grads=(lambda m, grad, self_dtype: m.cast(grad, self_dtype),),
             symbol="to")


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.LINEAR, T, PERMUTE, TRANSPOSE, VIEW, RESHAPE_ALIAS, ALIAS, AS_STRIDED,
              UNSAFE_VIEW, SQUEEZE, SQUEEZE_DIM, SQUEEZE_DIMS, SQUEEZE_, UNSQUEEZE, EXPAND, CAT,
              STACK, CLONE, CLONE_CONTIGUOUS, TO_COPY)


# -- vmap (symgrad.ops.batching): each op once on a batch, its dimensions past the batch's ----
from . import batching as _vmap  # noqa: E402
from .tables import BATCHING as _BATCHING  # noqa: E402


def _t_batched(m, args, batched):
    (a,) = args
    return m.call(TRANSPOSE, a, 1, 2) if _vmap.rank(m, a) == 2 else a


def _transpose_batched(m, args, batched):
    a, d0, d1 = args
    r = _vmap.rank(m, a)
    return m.call(TRANSPOSE, a, _vmap.shift(d0, r), _vmap.shift(d1, r)) if r else a


def _permute_batched(m, args, batched):
    a, dims = args
    r = _vmap.rank(m, a)
    return m.call(PERMUTE, a, (0,) + tuple(_vmap.shift(d, r) for d in dims))


_BATCHING.register(_vmap.view_size, VIEW, UNSAFE_VIEW, RESHAPE_ALIAS)
_BATCHING.register(_vmap.expand, EXPAND)
_BATCHING.register(_t_batched, T)
_BATCHING.register(_transpose_batched, TRANSPOSE)
_BATCHING.register(_permute_batched, PERMUTE)
_BATCHING.register(_vmap.unsqueeze(UNSQUEEZE), UNSQUEEZE)
_BATCHING.register(_vmap.squeeze, SQUEEZE)
_BATCHING.register(_vmap.with_dim(SQUEEZE_DIM), SQUEEZE_DIM)
_BATCHING.register(_vmap.with_dims(SQUEEZE_DIMS), SQUEEZE_DIMS)
for _op in (CLONE, CLONE_CONTIGUOUS, ALIAS, TO_COPY):
    _BATCHING.register(_vmap.same(_op), _op)
