"""Custom operations: ``symgrad.autograd.Function`` with ``forward``/``backward``.

A subclass's backward becomes a graph node named ``<Name>Backward`` whose rule calls the
user's ``backward(ctx, *grads)``; it takes part in the engine like any table op.
"""
from __future__ import annotations

from typing import Any

from ..graph import GRAD_MODE, Node
from ..ops import Op

__all__ = ["Function", "FunctionCtx"]


class FunctionCtx:
    """The ``ctx`` passed to ``forward`` and ``backward``."""

    def __init__(self) -> None:
        self.saved_tensors: tuple = ()
        self.needs_input_grad: tuple = ()
        self.materialize_grads = True
        self._non_differentiable: set = set()

    def save_for_backward(self, *tensors) -> None:
        self.saved_tensors = tuple(tensors)

    def save_for_forward(self, *tensors) -> None:
        self.saved_for_forward = tuple(tensors)

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


def _rule(m, grad, ctx, cls, i):
    """Call the user's backward once per incoming gradient; hand out input ``i``'s part."""
    from ..engine import _unwrap, _wrap
    if ctx._last_grad is not grad:
        with _mode(m):
            result = cls.backward(ctx, _wrap(grad))
        ctx._last = result if isinstance(result, tuple) else (result,)
        ctx._last_grad = grad
    g = ctx._last[i] if i < len(ctx._last) else None
    return _unwrap(g, m is not _numpy())


def _numpy():
    from ..backends import NUMPY
    return NUMPY


class _mode:
    def __init__(self, m) -> None:
        self.enabled = m is not _numpy()

    def __enter__(self):
        self.prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = self.enabled

    def __exit__(self, *exc):
        GRAD_MODE.enabled = self.prev
        return False


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs) -> None:
        super().__init__(name, bases, attrs)
        if bases and "forward" in attrs:
            op = Op(f"{name}", inputs=("tensors",), forward=None, saves=("ctx", "cls"),
                    grads=(lambda m, grad, ctx, c, i: _rule(m, grad, ctx, c, i),),
                    node=f"{name}Backward", key=f"function:{cls.__module__}.{name}")
            cls._node_class = type(f"{name}Backward", (Node,), {
                "__slots__": (), "op": op, "__module__": "torch.autograd.function"})


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable operations (as ``torch.autograd.Function``).

    Examples
    --------
    >>> import symgrad as torch
    >>> class Cube(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return grad * 3 * x ** 2
    >>> x = torch.tensor(2.0, requires_grad=True)
    >>> y = Cube.apply(x)
    >>> y.backward()
    >>> x.grad
    tensor(12.)
    """

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        from ..tensor import Tensor
        ctx = FunctionCtx()
        ctx._last_grad = None
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = False
        try:
            out = cls.forward(ctx, *args, **kwargs)
        finally:
            GRAD_MODE.enabled = prev
        if not (prev and any(ctx.needs_input_grad)):
            return out
        tensors = [a for a in args if isinstance(a, Tensor)]
        inputs = tuple(a.grad_fn or (a._accumulator() if a._requires_grad else a)
                       for a in tensors)
        meta = tuple((tuple(a.shape), a.dtype) for a in tensors)
        node = cls._node_class(inputs, (), (ctx, cls), (None, None), meta)
        for o in (out if isinstance(out, tuple) else (out,)):
            if isinstance(o, Tensor) and id(o) not in ctx._non_differentiable:
                if o.grad_fn is None and not o._requires_grad:
                    o.grad_fn = node
                else:
                    from ..tensor import _make
                    alias = _make(o._data, o.dtype)
                    alias.grad_fn = node
                    if not isinstance(out, tuple):
                        return alias
        return out
