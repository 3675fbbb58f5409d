"""The backend protocol gradient rules are written against, and its numpy interpretation.

A gradient rule ``lambda m, grad, self: grad * m.call(COS, self)`` runs on plain numpy arrays
when no graph is recorded (:data:`NUMPY`, the fast path, here), on symgrad tensors under
``create_graph=True`` (``symgrad.api.recorded.TENSOR``: the backward pass is itself
recorded and can be differentiated again) and on object arrays of SymPy expressions in
the symbolic layer (``symgrad.symbolic.backend.SYMPY``), on matrix expressions
(``symgrad.symbolic.vectors.MATRIX``) and on text (``symgrad.drawing.formula.TEXT``, the
drawing's local derivative).  Arithmetic operators are used directly; another op is
reached through ``m.call(OP, ...)``, which each backend interprets by the op record
(numpy runs ``op.forward``, the recorded backend ``apply(op, ...)``, SymPy the op's SymPy
mapping); the rest is the few questions of :class:`Backend`, none named after an op.

A backend is also what the engine (:mod:`symgrad.engine`) runs a backward pass with: the
few things that differ between a pass on arrays and a recorded one (``create_graph``) are
asked of it (``records``, ``sums_in_place``, ``saved``, ``unwrap``, ``conform``,
``accumulate``, ``retain``), rather than decided by a flag in the engine.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..ops.dtype_rules import SUB_BOOL
from .injected import INJECTED

__all__ = ["Backend", "NUMPY", "sum_to"]

_ndarray = np.ndarray


@runtime_checkable
class Backend(Protocol):
    """What a gradient rule may ask of the backend ``m`` it runs on, besides arithmetic
    (``+ - * / **`` and unary minus on its values): one interpretation of the op table's
    rules.  None of these is named after an op; an op is reached through :meth:`call`.
    """

    #: Results record a graph (grad mode on during a pass with this backend).
    records: bool
    #: A sum of gradients the pass made may grow in place.
    sums_in_place: bool

    # -- another op of the table --------------------------------------------------------
    def call(self, op: Any, *args: Any) -> Any:
        """``op`` on ``args`` (operands, then attributes), as this backend interprets it."""

    # -- arithmetic with a plain number (PyTorch records these as their own overloads) --
    def mul_scalar(self, a: Any, c: Any) -> Any: ...
    def add_scalar(self, a: Any, c: Any) -> Any: ...
    def sub_scalar(self, a: Any, c: Any) -> Any: ...
    def div_scalar(self, a: Any, c: Any) -> Any: ...

    # -- shapes and constants -------------------------------------------------------------
    def shape(self, a: Any) -> tuple: ...
    def zeros_like(self, a: Any) -> Any: ...
    def new_zeros(self, like: Any, shape: tuple) -> Any: ...
    def sum_to(self, g: Any, shape: tuple) -> Any: ...
    def broadcast_to(self, g: Any, shape: tuple) -> Any: ...
    def reshape(self, a: Any, shape: tuple) -> Any: ...
    def cast(self, a: Any, d: Any) -> Any: ...

    # -- PyTorch's helpers of its formulas, not ops of the table --------------------------
    def first_true(self, mask: Any, dim: int) -> Any: ...
    def value_selecting_backward(self, grad: Any, dim: int, indices: Any, sizes: tuple,
                                 keepdim: bool) -> Any: ...
    def set_at(self, a: Any, index: Any, value: Any) -> Any: ...

    # -- what the engine asks of the backend it runs a pass with --------------------------
    def saved(self, s: Any) -> Any: ...
    def unwrap(self, t: Any) -> Any: ...
    def conform(self, gi: Any, meta: tuple) -> Any: ...
    def accumulate(self, var: Any, g: Any, owned: bool = False) -> None: ...
    def retain(self, var: Any, g: Any) -> None: ...


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


class _Numpy:
    """Gradient rules on numpy arrays: no graph, no Python per element."""

    # -- what the engine asks of the backend it runs a pass with ---------------------------
    records = False  # results record no graph: grad mode is off during the pass
    sums_in_place = True  # a sum of gradients the pass made may grow in place

    @staticmethod
    def saved(s):
        """A saved tensor as a rule sees it: its array (0-d: a cheap numpy scalar)."""
        d = s._data
        if d.__class__ is _ndarray and not d.ndim:
            return d[()]
        return d  # (an array, or already a numpy scalar)

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

    reshape = staticmethod(np.reshape)
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
    first_true = staticmethod(_first_true)
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
    def new_zeros(like, shape):
        return np.zeros(tuple(shape), dtype=np.result_type(like))

    @staticmethod
    def set_at(a, index, value):
        """``a`` with ``value`` written at ``index`` (a copy)."""
        out = np.array(a, copy=True)
        out[index] = value
        return out

    broadcast_to = staticmethod(np.broadcast_to)

    @staticmethod
    def cast(a, d):
        return np.asarray(a).astype(d.np, copy=False)


NUMPY = _Numpy()
