"""Backends that the op table's gradient rules are written against.

A gradient rule ``lambda m, grad, self: grad * m.cos(self)`` runs on plain numpy arrays
when no graph is recorded (:data:`NUMPY`, the fast path), on object arrays of SymPy
expressions in the symbolic layer (:data:`SYMPY`), and on symgrad tensors under
``create_graph=True`` (:data:`TENSOR`), so that the backward pass is itself recorded and
can be differentiated again.  Arithmetic operators are used directly; everything else
goes through the few functions below.
"""
from __future__ import annotations

import numpy as np

from ..ops.dtype_rules import SUB_BOOL
from ..ops.indexing import _gather_along, _scatter_along

__all__ = ["NUMPY", "TENSOR", "SYMPY", "sum_to"]


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
        return O().SELECT_BACKWARD.forward(grad, tuple(size), dim, index)

    def softmax_backward_data(self, grad, y, dim):
        return y * (grad - self.sum(grad * y, dim, True))

    def log_softmax_backward_data(self, grad, y, dim):
        return grad - self.exp(y) * self.sum(grad, dim, True)

    @staticmethod
    def slice_backward(grad, size, dim, start, end, step):
        return O().SLICE_BACKWARD.forward(grad, tuple(size), dim, start, end, step)

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


class _Tensor:
    """Gradient rules on symgrad tensors: the backward pass is recorded."""

    @staticmethod
    def _t():
        # Not ``from . import tensor``: the package's ``tensor`` is the function.
        import importlib
        return importlib.import_module("symgrad.api.tensor")

    def __getattr__(self, name):
        # Unary functions and comparisons are the tensor's own methods.
        return lambda x, *args: getattr(x, name)(*args)

    def where(self, cond, a, b):
        T = self._t()
        if not isinstance(a, T.Tensor) and not isinstance(b, T.Tensor):
            from ..ops.dtypes import get_default_dtype
            d = get_default_dtype()
            return T._make(np.where(cond._data, a, b).astype(d.np), d)
        return T.apply(O().WHERE, (cond, a, b))

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
        if not isinstance(a, self._t().Tensor):
            return a * c
        return self._t().apply(O().MUL_SCALAR, (a,), (c,))

    def _scalar_op(self, op, a, c):
        if not isinstance(a, self._t().Tensor):
            return op.forward(a, c)
        return self._t().apply(op, (a,), (c,))

    def add_scalar(self, a, c):
        return self._scalar_op(O().ADD_SCALAR, a, c)

    def sub_scalar(self, a, c):
        return self._scalar_op(O().SUB_SCALAR, a, c)

    def div_scalar(self, a, c):
        return self._scalar_op(O().DIV_SCALAR, a, c)

    def tanh_backward(self, grad, y):
        return self._t().apply(O().TANH_BACKWARD, (grad, y))

    def select_backward(self, grad, size, dim, index):
        return self._t().apply(O().SELECT_BACKWARD, (grad,), (tuple(size), dim, index))

    def softmax_backward_data(self, grad, y, dim):
        return self._t().apply(O().SOFTMAX_BACKWARD_DATA, (grad, y), (dim,))

    def log_softmax_backward_data(self, grad, y, dim):
        return self._t().apply(O().LOG_SOFTMAX_BACKWARD_DATA, (grad, y), (dim,))

    def slice_backward(self, grad, size, dim, start, end, step):
        return self._t().apply(O().SLICE_BACKWARD, (grad,), (tuple(size), dim, start, end, step))

    def sigmoid_backward(self, grad, y):
        return self._t().apply(O().SIGMOID_BACKWARD, (grad, y))

    def matmul(self, a, b):
        return self._t().matmul(a, b)

    def zeros_like(self, a):
        # A constant: PyTorch's zeros_like(grad) in a formula is no edge of the graph.
        return self._t()._make(np.zeros(np.shape(a._data), a.dtype.np), a.dtype)

    def threshold_backward(self, grad, s, threshold):
        return self._t().apply(O().THRESHOLD_BACKWARD, (grad, s), (threshold,))

    def put(self, a, index, value):
        return self._t().apply(O().INDEX_PUT_, (a, value), (index,))

    def value_selecting_backward(self, grad, dim, indices, sizes, keepdim):
        # As PyTorch: zeros(sizes).scatter_(dim, indices, grad), unsqueezed unless keepdim.
        T = self._t()
        index = indices._data if isinstance(indices, T.Tensor) else np.asarray(indices)
        if not keepdim and tuple(sizes):
            grad, index = grad.unsqueeze(dim), np.expand_dims(index, dim)
        return self.scatter_dim(self.new_zeros(grad, sizes), dim, index, grad)

    def scatter_dim(self, a, dim, index, src):
        return self._t().apply(O().SCATTER_SRC, (a, src), (dim, index))

    def masked_fill(self, a, mask, value):
        T = self._t()
        mask = np.asarray(mask._data if isinstance(mask, T.Tensor) else mask)
        if not isinstance(value, T.Tensor):  # a number: PyTorch's masked_fill.Scalar
            return T.apply(O().MASKED_FILL_SCALAR, (a,), (mask, value))
        return T.apply(O().MASKED_FILL, (a, value), (mask,))

    def masked_select(self, a, mask):
        mask = mask._data if isinstance(mask, self._t().Tensor) else mask
        return self._t().apply(O().MASKED_SELECT, (a,), (np.asarray(mask),))

    def scatter_add(self, a, dim, index, src):
        return self._t().apply(O().SCATTER_ADD, (a, src), (dim, index))

    def gather(self, a, dim, index):
        return self._t().apply(O().GATHER, (a,), (dim, index))

    def new_zeros(self, like, shape):
        # A constant (no edge), as PyTorch's new_zeros in a formula.
        return self._t()._make(np.zeros(tuple(shape), like.dtype.np), like.dtype)

    def outer(self, a, b):
        # PyTorch's ger: self.reshape(n, 1) * vec.
        return a.reshape((a.shape[0], 1)) * b

    def reshape(self, a, shape):
        return a.reshape(tuple(shape))

    def shape(self, a):
        return tuple(a.shape)

    def first_true(self, mask, dim):
        T = self._t()
        from ..ops.dtypes import float64
        return T._make(_first_true(mask._data, dim), float64)

    def scatter(self, g, shape, index):
        return self._t().apply(O().INDEX_PUT_IMPL, (self.new_zeros(g, shape), g), (index,))

    def index(self, g, ix):
        return self._t().apply(O().INDEX, (g,), (ix,))

    def select(self, g, dim, i):
        return self._t().apply(O().SELECT, (g,), (dim, i))

    def slice(self, g, dim, start, end, step):
        return self._t().apply(O().SLICE, (g,), (dim, start, end, step))

    def cast(self, g, d):
        return g.to(d)

    def logical_and(self, a, b):
        return a & b

    def logical_or(self, a, b):
        return a | b


def O():  # noqa: N802 - the op table module, imported late (it is imported by tensor.py)
    from .. import ops
    return ops


NUMPY = _Numpy()
TENSOR = _Tensor()


class _Sympy(_Numpy):
    """Gradient rules on numpy object arrays of SymPy expressions (the symbolic layer).

    Elementwise functions map to their SymPy counterparts.  A comparison gives an
    indicator ``Piecewise((1, a > b), (0, True))`` so that rules may do arithmetic with
    it as they do with numpy's booleans, and :meth:`where` turns indicators back into
    ``Piecewise`` branches.

    Examples
    --------
    >>> import sympy
    >>> x = sympy.Symbol("x")
    >>> SYMPY.cos(np.array([x, 2 * x], dtype=object))
    array([cos(x), cos(2*x)], dtype=object)
    >>> SYMPY.where(SYMPY.gt(x, 0), x, 0.0)
    Piecewise((x, x > 0), (0, True))
    """

    def __init__(self) -> None:
        import sympy
        self._sp = sympy
        for name, fn in (("cos", sympy.cos), ("sin", sympy.sin), ("exp", sympy.exp),
                         ("log", sympy.log), ("sign", sympy.sign), ("sgn", sympy.sign),
                         ("abs", sympy.Abs)):
            setattr(self, name, np.frompyfunc(fn, 1, 1))
        for name, rel in (("eq", sympy.Eq), ("gt", sympy.Gt), ("ge", sympy.Ge),
                          ("lt", sympy.Lt), ("le", sympy.Le)):
            setattr(self, name, np.frompyfunc(
                lambda a, b, rel=rel: self._indicator(rel(a, b)), 2, 1))
        self.logical_and = np.frompyfunc(
            lambda a, b: self._indicator(sympy.And(self._condition(a),
                                                   self._condition(b))), 2, 1)
        self.logical_or = np.frompyfunc(
            lambda a, b: self._indicator(sympy.Or(self._condition(a),
                                                  self._condition(b))), 2, 1)
        self._where = np.frompyfunc(self._where1, 3, 1)

    def _indicator(self, cond):
        sp = self._sp
        if cond is sp.true or cond is True:
            return sp.S.One
        if cond is sp.false or cond is False:
            return sp.S.Zero
        return sp.Piecewise((sp.S.One, cond), (sp.S.Zero, True))

    def _condition(self, c):
        """The condition an indicator (or a number, or a boolean) stands for."""
        sp = self._sp
        if isinstance(c, (bool, np.bool_)):
            return sp.true if c else sp.false
        c = sp.sympify(c)
        if isinstance(c, sp.logic.boolalg.Boolean):
            return c
        if (isinstance(c, sp.Piecewise) and len(c.args) == 2 and c.args[0][0] == 1
                and c.args[1][0] == 0 and c.args[1][1] is sp.true):
            return c.args[0][1]
        if c.is_number:
            return sp.true if c != 0 else sp.false
        return sp.Ne(c, 0)

    def _where1(self, cond, a, b):
        sp = self._sp
        # Rules write 0.0 for "no gradient": keep it an exact zero.
        a, b = (sp.Integer(int(v)) if isinstance(v, float) and v.is_integer() else v
                for v in (a, b))
        c = self._condition(cond)
        if c is sp.true:
            return sp.sympify(a)
        if c is sp.false:
            return sp.sympify(b)
        return sp.Piecewise((a, c), (b, True))

    def where(self, cond, a, b):
        return self._where(cond, a, b)

    def first_true(self, mask, dim):
        """Indicators of the first true entry along ``dim``: ``m_i * prod_{j<i}(1 - m_j)``."""
        m = np.moveaxis(np.asarray(mask, dtype=object), dim, 0)
        out = np.empty(m.shape, dtype=object)
        none_before = self._sp.S.One
        for i in range(m.shape[0]):
            out[i] = m[i] * none_before
            none_before = none_before * (1 - m[i])
        return np.moveaxis(out, 0, dim)

    @staticmethod
    def value_selecting_backward(grad, dim, indicators, sizes, keepdim):
        # Symbolic indices are the indicators of the selected entries (ops._extreme_indices).
        if not tuple(sizes):
            return grad
        g = np.asarray(grad, dtype=object)
        return (g if keepdim else np.expand_dims(g, dim)) * indicators

    @staticmethod
    def _scatter(g, shape, index):
        out = np.zeros(shape, dtype=object)
        np.add.at(out, index, g)
        return out

    scatter = _scatter

    @staticmethod
    def cast(a, d):
        return a


SYMPY = _Sympy()
