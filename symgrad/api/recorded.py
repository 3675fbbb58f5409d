"""The backend that gradient rules run on under ``create_graph=True``: recorded tensors.

The op table's rules are written against a backend ``m`` (``grad * m.call(SIN, self)``).  On
numpy arrays (:data:`symgrad.ir.backends.NUMPY`) nothing is recorded; here every step is
a tensor operation through :func:`~symgrad.api.apply.apply`, so the backward pass is
itself a graph that can be differentiated again.  The engine runs a ``create_graph`` pass
with this backend (:mod:`symgrad.api.gradients` hands it to ``run_backward``; a
``grad_fn`` called by hand under grad mode finds it as ``INJECTED.recorded``).

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(1.0, requires_grad=True)
>>> from symgrad import ops
>>> TENSOR.call(ops.COS, x)
tensor(0.5403, grad_fn=<CosBackward0>)
"""
from __future__ import annotations

import numpy as np

from .. import ops as O
from ..ops.tables import DECOMPOSED
from ..ops.dtypes import float64, get_default_dtype
from ..ir.backends import _first_true
from ..engine.hooks import wrap
from .apply import apply
from .core import Tensor, _make

__all__ = ["TENSOR"]


class _Recorded:
    """Gradient rules on symgrad tensors: the backward pass is recorded."""

    # -- what the engine asks of the backend it runs a pass with ---------------------------
    # (the same names as symgrad.ir.backends.NUMPY's; each defined here, so that none falls
    # to __getattr__ below)
    records = True  # every step is recorded: grad mode is on during the pass
    sums_in_place = False  # a sum of gradients is a recorded op, never an in-place change

    def saved(self, s):
        """A saved tensor as a rule sees it: the tensor itself (its graph is followed)."""
        return s

    def unwrap(self, t):
        """A tensor handed back by the user, as the pass carries it: the tensor itself."""
        return t

    def conform(self, gi, meta: tuple):
        """A gradient un-broadcast to its input's shape and converted to its dtype."""
        shape, dt = meta
        if gi.shape != shape:
            gi = self.sum_to(gi, shape)
        if gi.dtype is not dt:
            gi = gi.to(dt)
        return gi

    def accumulate(self, var, g, owned: bool = False) -> None:
        """Add ``g`` into the leaf ``var``'s ``.grad`` with grad mode on, as PyTorch's
        AccumulateGrad: the first gradient copied into a new tensor (a CopyBackwards node
        when it requires grad), later ones added out of place."""
        g = wrap(g)
        if var._grad is None:
            var._grad = _make(np.empty(g.shape, var.dtype.np), var.dtype).copy_(g)
        else:
            var._grad = var._grad + g

    def retain(self, var, g) -> None:
        """retain_grad's hook, as PyTorch's: the first gradient cloned, later ones added
        out of place."""
        g = wrap(g)
        var._grad = g.clone() if var._grad is None else var._grad + g

    # -- the functions gradient rules call ---------------------------------------------
    def call(self, op, *args):
        """Another op of the table, recorded (its node is in the graph of the gradient);
        an attribute given as a tensor (a mask) is its array."""
        decomposed = DECOMPOSED.get(op)
        if decomposed is not None:  # as PyTorch records it (ger: a view times a vector)
            return decomposed(*args)
        n = len(args) - len(op.attrs) if op.variadic else len(op.inputs)
        return apply(op, args[:n], tuple(np.asarray(a._data) if isinstance(a, Tensor) else a
                                         for a in args[n:]))

    def broadcast_to(self, g, shape):
        return g.expand(tuple(shape))

    def sum_to(self, g, shape):
        shape = tuple(shape)
        if tuple(g.shape) == shape:
            return g
        if not shape:
            return g.sum()  # PyTorch's sum_to to a 0-d shape: a full sum (SumBackward0)
        lead = g.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                          if n == 1 and g.shape[i + lead] != 1)
        # As PyTorch's sum_to: sum with keepdim, then a view only to drop leading dims.
        out = g.sum(axes, keepdim=True) if axes else g
        return out.reshape(shape) if lead else out

    def mul_scalar(self, a, c):
        # PyTorch records a number times a tensor inside a gradient formula as
        # mul.Scalar (MulBackward1), not as the wrapped-scalar MulBackward0.
        if not isinstance(a, Tensor):
            return a * c
        return apply(O.MUL_SCALAR, (a,), (c,))

    def _scalar_op(self, op, a, c):
        if not isinstance(a, Tensor):
            return op.forward(a, c)
        return apply(op, (a,), (c,))

    def add_scalar(self, a, c):
        return self._scalar_op(O.ADD_SCALAR, a, c)

    def sub_scalar(self, a, c):
        return self._scalar_op(O.SUB_SCALAR, a, c)

    def div_scalar(self, a, c):
        return self._scalar_op(O.DIV_SCALAR, a, c)

    def zeros_like(self, a):
        # A constant: PyTorch's zeros_like(grad) in a formula is no edge of the graph.
        return _make(np.zeros(np.shape(a._data), a.dtype.np), a.dtype)

    def set_at(self, a, index, value):
        return apply(O.INDEX_PUT_, (a, value), (index,))

    def value_selecting_backward(self, grad, dim, indices, sizes, keepdim):
        # As PyTorch: zeros(sizes).scatter_(dim, indices, grad), unsqueezed unless keepdim.
        index = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
        if not keepdim and tuple(sizes):
            grad, index = grad.unsqueeze(dim), np.expand_dims(index, dim)
        return apply(O.SCATTER_SRC, (self.new_zeros(grad, sizes), grad), (dim, index))

    def new_zeros(self, like, shape):
        # A constant (no edge), as PyTorch's new_zeros in a formula.
        return _make(np.zeros(tuple(shape), like.dtype.np), like.dtype)

    def reshape(self, a, shape):
        return a.reshape(tuple(shape))

    def shape(self, a):
        return tuple(a.shape)

    def first_true(self, mask, dim):
        return _make(_first_true(mask._data, dim), float64)

    def cast(self, g, d):
        return g.to(d)



TENSOR = _Recorded()
