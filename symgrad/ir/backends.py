"""The numpy backend that the op table's gradient rules are written against.

A gradient rule ``lambda m, grad, self: grad * m.cos(self)`` runs on plain numpy arrays
when no graph is recorded (:data:`NUMPY`, the fast path, here), on symgrad tensors under
``create_graph=True`` (``symgrad.api.recorded.TENSOR``: the backward pass is itself
recorded and can be differentiated again) and on object arrays of SymPy expressions in
the symbolic layer (``symgrad.symbolic.backend.SYMPY``).  Arithmetic operators are used
directly; everything else goes through the few functions below.

A backend is also what the engine (:mod:`symgrad.engine`) runs a backward pass with: the
few things that differ between a pass on arrays and a recorded one (``create_graph``) are
asked of it (``records``, ``sums_in_place``, ``saved``, ``unwrap``, ``conform``,
``accumulate``, ``retain``), rather than decided by a flag in the engine.
"""
from __future__ import annotations

import numpy as np

from .. import ops as _ops
from ..ops.dtype_rules import SUB_BOOL
from ..ops.indexing import _gather_along, _scatter_along
from .injected import INJECTED

__all__ = ["NUMPY", "sum_to"]


def sum_to(g, shape):
    """Sum ``g`` over broadcast axes so that it has ``shape`` (numpy arrays)."""
    shape = tuple(shape)
    if np.shape(g) == shape:
        return g
    lead = np.ndim(g) - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                      if n == 1 and np.shape(g)[i + lead] != 1)
    out = np.sum(g, axis=axes, keepdims=True)
    return out.reshape(shape) if lead or out.shape != shape else out


_FLOAT_SCALARS = (np.float64, np.float32, np.float16)


def _first_true(mask, dim):
    """A float mask keeping only the first True along ``dim``."""
    first = np.argmax(mask, axis=dim, keepdims=True)
    out = np.zeros(mask.shape)
    np.put_along_axis(out, first, 1.0, axis=dim)
    return out


def _scatter(g, shape, index):
    out = np.zeros(shape, dtype=np.result_type(g))
    np.add.at(out, index, g)
    return out


class _Numpy:
    """Gradient rules on numpy arrays: no graph, no Python per element."""

    # -- what the engine asks of the backend it runs a pass with ---------------------------
    records = False  # results record no graph: grad mode is off during the pass
    sums_in_place = True  # a sum of gradients the pass made may grow in place

    @staticmethod
    def saved(s):
        """A saved tensor as a rule sees it: its array (0-d: a cheap numpy scalar)."""
        d = s._data
        return d[()] if not d.ndim else d

    @staticmethod
    def unwrap(t):
        """A tensor handed back by the user (a hook's result, a custom backward's
        gradient) as the pass carries it: its array."""
        return t._data if isinstance(t, INJECTED.Tensor) else t

    @staticmethod
    def conform(gi, meta: tuple):
        """A gradient un-broadcast to its input's shape and converted to its dtype."""
        shape, dt = meta
        if gi.shape != shape:
            gi = sum_to(gi, shape)
        if gi.dtype is not dt.np and gi.dtype != dt.np:
            gi = np.asarray(gi).astype(dt.np)
        return gi

    @staticmethod
    def accumulate(var, g, owned: bool = False) -> None:
        """Add ``g`` into the leaf ``var``'s ``.grad`` (AccumulateGrad); ``owned``: the
        pass made ``g`` and nobody else holds it, so it may become ``.grad`` as it is."""
        make = INJECTED.make
        if isinstance(g, INJECTED.Tensor):
            g = g._data
        if var._grad is None:
            if not (owned and g.dtype == var.dtype.np):
                g = np.array(g, dtype=var.dtype.np)
            var._grad = make(g, var.dtype)
        else:
            # In place, as PyTorch does with grad mode off: .grad keeps its identity and
            # its grad_fn, if a create_graph pass gave it one.
            target = var._grad
            if target._data.__class__ is not np.ndarray:
                target._data = np.array(target._data)  # a 0-d result held as a numpy scalar
            np.add(target._data, g, out=target._data, casting="unsafe")
            target._vc[0] += 1

    @staticmethod
    def retain(var, g) -> None:
        """retain_grad's hook, as PyTorch's: the first gradient is cloned, later ones are
        added out of place (a new .grad each time, unlike a leaf's, which grows in place)."""
        make = INJECTED.make
        if isinstance(g, INJECTED.Tensor):
            g = g._data
        old = var._grad
        if old is None:
            var._grad = make(np.array(g, dtype=var.dtype.np), var.dtype)
        else:
            var._grad = make(np.asarray(old._data + g).astype(old.dtype.np, copy=False),
                             old.dtype)

    # -- the functions gradient rules call ---------------------------------------------

    @staticmethod
    def call(op, *args):
        """Another op of the table (``m.call(ops.COSH, self)``): its numpy forward."""
        return op.forward(*args)

    cos = staticmethod(np.cos)
    sin = staticmethod(np.sin)
    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    sign = staticmethod(np.sign)
    abs = staticmethod(np.abs)
    where = staticmethod(np.where)
    eq = staticmethod(np.equal)
    ne = staticmethod(np.not_equal)
    gt = staticmethod(np.greater)
    ge = staticmethod(np.greater_equal)
    lt = staticmethod(np.less)
    le = staticmethod(np.less_equal)
    logical_and = staticmethod(np.logical_and)
    logical_or = staticmethod(np.logical_or)
    matmul = staticmethod(np.matmul)
    outer = staticmethod(np.outer)
    reshape = staticmethod(np.reshape)
    unsqueeze = staticmethod(np.expand_dims)
    shape = staticmethod(np.shape)
    sum_to = staticmethod(sum_to)
    mul_scalar = staticmethod(np.multiply)
    add_scalar = staticmethod(np.add)

    @staticmethod
    def sub_scalar(a, c):
        if getattr(a, "dtype", None) == np.bool_:
            raise RuntimeError(SUB_BOOL)  # as PyTorch's sub (pow's gradient, bool y)
        return np.subtract(a, c)

    div_scalar = staticmethod(np.true_divide)

    @staticmethod
    def tanh_backward(grad, y):
        return grad * (1 - y * y)

    @staticmethod
    def select_backward(grad, size, dim, index):
        return _ops.SELECT_BACKWARD.forward(grad, tuple(size), dim, index)

    def softmax_backward_data(self, grad, y, dim):
        return y * (grad - self.sum(grad * y, dim, True))

    def log_softmax_backward_data(self, grad, y, dim):
        return grad - self.exp(y) * self.sum(grad, dim, True)

    @staticmethod
    def slice_backward(grad, size, dim, start, end, step):
        return _ops.SLICE_BACKWARD.forward(grad, tuple(size), dim, start, end, step)

    @staticmethod
    def sigmoid_backward(grad, y):
        return grad * (y * (1 - y))
    first_true = staticmethod(_first_true)
    scatter = staticmethod(_scatter)
    sgn = staticmethod(np.sign)
    zeros_like = staticmethod(np.zeros_like)

    @staticmethod
    def value_selecting_backward(grad, dim, indices, sizes, keepdim):
        """max(dim)'s gradient: ``grad`` written at ``indices`` along ``dim`` into zeros."""
        sizes = tuple(sizes)
        if not sizes:
            return grad
        if not keepdim:
            grad, indices = np.expand_dims(grad, dim), np.expand_dims(indices, dim)
        out = np.zeros(sizes, dtype=np.result_type(grad))
        np.put_along_axis(out, indices, grad, axis=dim)
        return out

    @staticmethod
    def scatter_dim(a, dim, index, src):
        return _scatter_along(a, dim, index, src, False)

    def masked_fill(self, a, mask, value):
        return self.where(mask, value, a)

    @staticmethod
    def masked_select(a, mask):
        return np.asarray(a)[np.broadcast_to(mask, np.shape(a))]

    @staticmethod
    def scatter_add(a, dim, index, src):
        return _scatter_along(a, dim, index, src, True)

    @staticmethod
    def gather(a, dim, index):
        return _gather_along(a, dim, index)

    @staticmethod
    def new_zeros(like, shape):
        return np.zeros(tuple(shape), dtype=np.result_type(like))

    @staticmethod
    def put(a, index, value):
        """``a`` with ``value`` written at ``index`` (a copy)."""
        out = np.array(a, copy=True)
        out[index] = value
        return out

    def threshold_backward(self, grad, s, threshold):
        if grad.__class__ in _FLOAT_SCALARS and s.__class__ in _FLOAT_SCALARS:
            # 0-d: numpy scalars, without np.where's ~2 us (and its 0-d array result)
            return grad.__class__(0.0) if s <= threshold else grad
        # As PyTorch: zero where self <= threshold, so a NaN lets the gradient through.
        return self.where(self.le(s, threshold), 0.0, grad)

    @staticmethod
    def sum(g, dim, keepdim):
        return np.sum(g, axis=dim, keepdims=keepdim)

    @staticmethod
    def expand(g, shape):
        return np.broadcast_to(g, shape)

    @staticmethod
    def t(a):
        return np.transpose(a)

    @staticmethod
    def transpose(a, d0, d1):
        return np.swapaxes(a, d0, d1) if np.ndim(a) else a

    @staticmethod
    def permute(a, dims):
        return np.transpose(a, dims)

    @staticmethod
    def squeeze(a, dim):
        return np.squeeze(a, dim)

    @staticmethod
    def index(a, ix):
        return a[ix]

    @staticmethod
    def select(a, dim, i):
        return np.take(a, i, axis=dim)

    @staticmethod
    def slice(a, dim, start, end, step):
        ix = [slice(None)] * np.ndim(a)
        ix[dim] = slice(start, end, step)
        return a[tuple(ix)]

    @staticmethod
    def cast(a, d):
        return np.asarray(a).astype(d.np, copy=False)


NUMPY = _Numpy()
