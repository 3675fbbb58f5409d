"""The backend that gradient rules run on under ``create_graph=True``: recorded tensors.

The op table's rules are written against a backend ``m`` (``grad * m.cos(self)``).  On
numpy arrays (:data:`symgrad.ir.backends.NUMPY`) nothing is recorded; here every step is
a tensor operation through :func:`~symgrad.api.apply.apply`, so the backward pass is
itself a graph that can be differentiated again.  The engine runs a ``create_graph`` pass
with this backend (:mod:`symgrad.api.gradients` hands it to ``run_backward``; a
``grad_fn`` called by hand under grad mode finds it as ``INJECTED.recorded``).

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(1.0, requires_grad=True)
>>> TENSOR.cos(x)
tensor(0.5403, grad_fn=<CosBackward0>)
"""
from __future__ import annotations

import numpy as np

from .. import ops as O
from ..ops.dtypes import float64, get_default_dtype
from ..ir.backends import _first_true
from ..engine.hooks import wrap
from .apply import apply
from .core import Tensor, _make
from .linalg import matmul

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
    def __getattr__(self, name):
        # Unary functions and comparisons are the tensor's own methods.
        return lambda x, *args: getattr(x, name)(*args)

    def call(self, op, *args):
        """Another op of the table, recorded (its node is in the graph of the gradient)."""
        n = len(args) if op.variadic else len(op.inputs)
        return apply(op, args[:n], args[n:])

    def where(self, cond, a, b):
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            d = get_default_dtype()
            return _make(np.where(cond._data, a, b).astype(d.np), d)
        return apply(O.WHERE, (cond, a, b))

    def sum(self, g, dim, keepdim):
        return g.sum(dim, keepdim)

    def expand(self, g, shape):
        return g.expand(shape)

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

    def tanh_backward(self, grad, y):
        return apply(O.TANH_BACKWARD, (grad, y))

    def select_backward(self, grad, size, dim, index):
        return apply(O.SELECT_BACKWARD, (grad,), (tuple(size), dim, index))

    def softmax_backward_data(self, grad, y, dim):
        return apply(O.SOFTMAX_BACKWARD_DATA, (grad, y), (dim,))

    def log_softmax_backward_data(self, grad, y, dim):
        return apply(O.LOG_SOFTMAX_BACKWARD_DATA, (grad, y), (dim,))

    def slice_backward(self, grad, size, dim, start, end, step):
        return apply(O.SLICE_BACKWARD, (grad,), (tuple(size), dim, start, end, step))

    def sigmoid_backward(self, grad, y):
        return apply(O.SIGMOID_BACKWARD, (grad, y))

    def matmul(self, a, b):
        return matmul(a, b)

    def zeros_like(self, a):
        # A constant: PyTorch's zeros_like(grad) in a formula is no edge of the graph.
        return _make(np.zeros(np.shape(a._data), a.dtype.np), a.dtype)

    def threshold_backward(self, grad, s, threshold):
        return apply(O.THRESHOLD_BACKWARD, (grad, s), (threshold,))

    def put(self, a, index, value):
        return apply(O.INDEX_PUT_, (a, value), (index,))

    def value_selecting_backward(self, grad, dim, indices, sizes, keepdim):
        # As PyTorch: zeros(sizes).scatter_(dim, indices, grad), unsqueezed unless keepdim.
        index = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
        if not keepdim and tuple(sizes):
            grad, index = grad.unsqueeze(dim), np.expand_dims(index, dim)
        return self.scatter_dim(self.new_zeros(grad, sizes), dim, index, grad)

    def scatter_dim(self, a, dim, index, src):
        return apply(O.SCATTER_SRC, (a, src), (dim, index))

    def masked_fill(self, a, mask, value):
        mask = np.asarray(mask._data if isinstance(mask, Tensor) else mask)
        if not isinstance(value, Tensor):  # a number: PyTorch's masked_fill.Scalar
            return apply(O.MASKED_FILL_SCALAR, (a,), (mask, value))
        return apply(O.MASKED_FILL, (a, value), (mask,))

    def masked_select(self, a, mask):
        mask = mask._data if isinstance(mask, Tensor) else mask
        return apply(O.MASKED_SELECT, (a,), (np.asarray(mask),))

    def scatter_add(self, a, dim, index, src):
        return apply(O.SCATTER_ADD, (a, src), (dim, index))

    def gather(self, a, dim, index):
        return apply(O.GATHER, (a,), (dim, index))

    def new_zeros(self, like, shape):
        # A constant (no edge), as PyTorch's new_zeros in a formula.
        return _make(np.zeros(tuple(shape), like.dtype.np), like.dtype)

    def outer(self, a, b):
        # PyTorch's ger: self.reshape(n, 1) * vec.
        return a.reshape((a.shape[0], 1)) * b

    def reshape(self, a, shape):
        return a.reshape(tuple(shape))

    def shape(self, a):
        return tuple(a.shape)

    def first_true(self, mask, dim):
        return _make(_first_true(mask._data, dim), float64)

    def scatter(self, g, shape, index):
        return apply(O.INDEX_PUT_IMPL, (self.new_zeros(g, shape), g), (index,))

    def index(self, g, ix):
        return apply(O.INDEX, (g,), (ix,))

    def select(self, g, dim, i):
        return apply(O.SELECT, (g,), (dim, i))

    def slice(self, g, dim, start, end, step):
        return apply(O.SLICE, (g,), (dim, start, end, step))

    def cast(self, g, d):
        return g.to(d)

    def logical_and(self, a, b):
        return a & b

    def logical_or(self, a, b):
        return a | b


TENSOR = _Recorded()
