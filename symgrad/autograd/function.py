"""Custom operations: ``symgrad.autograd.Function`` with ``forward``/``backward``.

As in PyTorch, the ``ctx`` handed to ``forward`` and ``backward`` *is* the graph node: a
``<Name>Backward`` node (a :class:`BackwardCFunction`) whose backward calls the user's
``backward(ctx, *grads)`` once per pass.  Saved tensors live in the node's saved values,
so the engine checks their versions and frees them after backward like any table op's.
A Function may return several tensors: its node then has several outputs.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any

import numpy as np

from ..ops import Op, unregister
from ..ir.backends import NUMPY
from ..ir.node import GRAD_MODE, MultiOutput, Node, _version_error
from ..engine.hooks import wrap
from ..engine.rules import FREED_MESSAGE
from ..api.dual import DUAL, set_tangent, tangent
from ..api.tensor import Tensor, _make

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """The methods of the ``ctx`` passed to ``forward`` and ``backward``."""

    __slots__ = ()

    def save_for_backward(self, *tensors) -> None:
        """Keep ``tensors`` (or ``None``) for ``backward``; read them as ``saved_tensors``."""
        self._to_save = tuple(tensors)

    def save_for_forward(self, *tensors) -> None:
        self.saved_for_forward = tuple(tensors)

    def mark_non_differentiable(self, *tensors) -> None:
        """These outputs do not require grad; their gradient in ``backward`` is zeros."""
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors) -> None:
        """These inputs were modified in place by ``forward``: returned, they are the same
        tensors, now with this node as their ``grad_fn`` (an in-place op's history)."""
        self._dirty = tuple(tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` gets zeros (``True``, the default) or ``None`` for outputs
        that received no gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(MultiOutput, Node, FunctionCtx):
    """The graph node of a custom Function; also the ``ctx`` of its forward and backward."""

    __slots__ = ()
    _function: type

    # -- the ctx ------------------------------------------------------------------
    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked against in-place changes."""
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        if "_jvp_saved" in self.__dict__:  # inside jvp (forward mode)
            return self._jvp_saved
        if "_arg_positions" not in self.__dict__:
            return ()  # still inside forward (or setup_context): nothing is saved yet
        for i, s in enumerate(self._saved):
            if isinstance(s, Tensor) and s._vc[0] != self._versions[i]:
                raise _version_error(self, i, s, i in self._saved_outputs)
        return tuple(self._saved)

    # -- the backward -------------------------------------------------------------
    def _custom_backward(self, g, m, needed) -> list:
        """Call the user's backward once; check and shape its gradients as PyTorch does."""
        gs = list(g) if self._n_outputs != 1 else [g]
        args = []
        for k, gk in enumerate(gs):
            if gk is None and self.materialize_grads:
                shape, dt = self._out_meta[k]
                gk = np.zeros(shape, dt.np)
            args.append(wrap(gk))
        slots = self.__dict__.get("_out_slots")
        if slots is not None:
            # Outputs that are no tensors get a None gradient, in their place.
            n_all, where = slots
            full = [None] * n_all
            for k, a in zip(where, args):
                full[k] = a
            args = full
        result = self._function.backward(self, *args)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self.needs_input_grad)
        if len(result) > n_args and all(r is None for r in result[n_args:]):
            result = result[:n_args]
        name = self.name()
        if len(result) != n_args:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {n_args}, got {len(result)})")
        positions = self._arg_positions
        for pos, r in enumerate(result):
            if r is not None and not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            if r is not None and pos not in positions:
                raise RuntimeError(f"function {name} returned a gradient different than None "
                                   f"at position {pos + 1}, but the corresponding forward "
                                   "input was not a Variable")
        out = []
        for j, (x, pos) in enumerate(zip(self.inputs, positions)):
            r = result[pos]
            if r is None or not isinstance(x, Node) or (needed is not None and not needed(x)):
                out.append(None)
                continue
            shape, dt = self._meta[j]
            if tuple(r.shape) != tuple(shape):
                if not _expandable(shape, tuple(r.shape)):
                    raise RuntimeError(
                        f"Function {name} returned an invalid gradient at index {j} - got "
                        f"{list(r.shape)} but expected shape compatible with {list(shape)}")
                r = _make(np.asarray(NUMPY.sum_to(r._data, shape)), r.dtype) \
                    if not m.records else m.sum_to(r, shape)
            if r.dtype is not dt:
                r = r.to(dt)
            out.append(m.unwrap(r))
        return out

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{type(self).__name__} object at {id(self):#x}>"

    def __call__(self, *grads):
        # PyTorch's custom-Function nodes are Python objects without __call__ (their
        # ``apply`` runs the user's backward), unlike its C++ nodes.
        raise TypeError(f"'{type(self).__name__}' object is not callable")

    def apply(self, *grads) -> Any:
        """The user's ``backward(ctx, *grads)``, called directly (as PyTorch's node)."""
        return self._function.backward(self, *grads)


def _expandable(shape: tuple, to: tuple) -> bool:
    """Can a tensor of ``shape`` be expanded to ``to`` (so ``to`` sums back to it)?"""
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(to)):
        if a != b and a != 1:
            return False
    return True


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs) -> None:
        super().__init__(name, bases, attrs)
        # Every class gets its own node class, as PyTorch's FunctionMeta gives each its
        # ``_backward_cls``: a subclass that only overrides backward is ``<Sub>Backward``.
        op = Op(f"{name}", inputs=("tensors",), forward=None, grads=(None,),
                node=f"{name}Backward", key=f"function:{cls.__module__}.{name}")
        unregister(op)  # a user's Function is no op of the table
        cls._node_class = type(f"{name}Backward", (BackwardCFunction,), {
            "__slots__": (), "op": op, "_function": cls,
            "__module__": "torch.autograd.function"})
        op.node_class = cls._node_class


def _forward_params(forward) -> list:
    """The names of ``forward``'s positional parameters after the first (``ctx``)."""
    try:
        params = list(inspect.signature(forward).parameters.values())
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params[1:] if p.kind in kinds]


def _bind_kwargs(forward, args: tuple, kwargs: dict) -> tuple:
    """Keyword arguments of ``apply`` placed by position, as PyTorch's C++ ``apply`` does:
    each must name a positional parameter of ``forward`` after ``ctx``, and together with
    the positional ones leave no gap (defaults are not filled in)."""
    params = _forward_params(forward)
    placed: dict = {}
    for name, value in kwargs.items():
        if name not in params:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        i = params.index(name)
        if i < len(args) or i in placed:
            raise TypeError(f"forward() got multiple values for argument '{name}'")
        placed[i] = value
    for i in range(len(args), max(placed) + 1):
        if i not in placed:
            raise TypeError(f"forward() missing required argument: '{params[i]}' "
                            f"(position {i})")
    return tuple(args) + tuple(placed[i] for i in range(len(args), max(placed) + 1))


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
    >>> y
    tensor(8., grad_fn=<CubeBackward>)
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

    vjp = backward

    @staticmethod
    def jvp(ctx: FunctionCtx, *grad_inputs: Any) -> Any:
        """Forward mode: the outputs' tangents given the inputs' (``grad_inputs``)."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> Any:
        """Override to use a ``forward`` without ``ctx``: save what backward needs here."""
        raise NotImplementedError("setup_context is not implemented.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please "
            "use new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` without recording, then record one ``<Name>Backward`` node."""
        setup = cls.setup_context is not Function.setup_context
        if setup:
            # PyTorch binds the arguments of a forward without ctx in Python first
            # (defaults filled in): setup_context sees them all as ``inputs``.
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        if kwargs:
            args = _bind_kwargs(cls.forward, args, kwargs)
        node_cls = cls._node_class
        ctx = node_cls.__new__(node_cls)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx.materialize_grads = True
        ctx._non_differentiable = set()
        for lv in DUAL.batched:  # (batched tangents: jacfwd runs a pass per column instead)
            if lv in DUAL.active() and any(isinstance(a, Tensor) and tangent(a, lv) is not None
                                           for a in args):
                DUAL.batched[lv].refuse(f"{cls.__name__}'s jvp")
        prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = False
        # Forward mode: inputs with tangents -> forward runs without computing tangents,
        # then the Function's jvp gives its outputs' tangents.
        levels = [lv for lv in DUAL.active() if any(
            isinstance(a, Tensor) and tangent(a, lv) is not None for a in args)]
        DUAL.masked.extend(levels)
        try:
            try:
                if setup:
                    out = cls.forward(*args)
                    cls.setup_context(ctx, args, out)
                else:
                    out = cls.forward(ctx, *args)
            finally:
                GRAD_MODE.enabled = prev
            # (jvp runs in the caller's grad mode, as PyTorch's: its tangents record)
            tangents = [_custom_jvp(cls, ctx, args, out, lv) for lv in levels]
        finally:
            del DUAL.masked[len(DUAL.masked) - len(levels):]
        if levels:
            out = _set_tangents(out, levels, tangents)
        saved = ctx.__dict__.pop("_to_save", ())
        dirty = ctx.__dict__.pop("_dirty", ())
        for t in dirty:
            t._vc[0] += 1  # PyTorch bumps a dirty tensor's version once more
        if not (prev and any(ctx.needs_input_grad)):
            return out
        for t in dirty:
            if t.grad_fn is None and t._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
        for k, s in enumerate(saved):
            if s is not None and not isinstance(s, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument "
                                f"{k} is of type {type(s).__name__}")
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        tensors = [args[i] for i in positions]
        inputs = []
        nrs = None
        for j, a in enumerate(tensors):
            fn = a.grad_fn
            if fn is None and a._requires_grad:
                fn = a._accumulator()
            elif fn is not None and a._multi_output:
                nrs = nrs or [0] * len(tensors)
                nrs[j] = a._output_nr
            inputs.append(a if fn is None else fn)
        meta = tuple((tuple(a.shape), a.dtype) for a in tensors)
        is_tuple = isinstance(out, tuple)
        outs = list(out) if is_tuple else [out]
        tensor_outs = [k for k, o in enumerate(outs) if isinstance(o, Tensor)]
        n = len(tensor_outs)
        for nr, k in enumerate(tensor_outs):
            o = outs[k]
            if id(o) in ctx._non_differentiable:
                continue
            if any(o is t for t in dirty):
                # Modified in place: the tensor itself takes this node as its history.
                o.grad_fn = ctx
                o._output_nr = nr if n > 1 else 0
                o._multi_output = n > 1
                continue
            if o.grad_fn is not None or o._requires_grad or any(o is a for a in tensors):
                # An input (or a tensor with a history) returned as is: PyTorch hands out
                # a new tensor sharing its data, with this node as grad_fn.
                alias = _make(o._data, o.dtype)
                alias._vc = o._vc
                o = outs[k] = alias
            o.grad_fn = ctx
            if n > 1:
                o._output_nr = nr
                o._multi_output = True
        # The node saves what save_for_backward got, with versions for the in-place check.
        versions = tuple(s._vc[0] if isinstance(s, Tensor) else None for s in saved)
        Node.__init__(ctx, tuple(inputs), (), tuple(saved), versions, meta)
        ctx._arg_positions = positions
        ctx._saved_outputs = {i for i, s in enumerate(saved)
                              if any(s is outs[k] for k in tensor_outs)}
        ctx._out_meta = tuple((tuple(outs[k].shape), outs[k].dtype) for k in tensor_outs)
        if n != len(outs):
            ctx._out_slots = (len(outs), tuple(tensor_outs))
        if n > 1:
            ctx._n_outputs = n
        if nrs is not None:
            ctx._input_nrs = tuple(nrs)
        out = tuple(outs) if is_tuple else outs[0]
        return _set_tangents(out, levels, tangents) if levels else out


def _custom_jvp(cls, ctx, args: tuple, out, level: int):
    """The output tangents a custom Function's ``jvp`` gives for the inputs' tangents at
    ``level`` (zeros for a tensor input without one, None for other inputs)."""
    if cls.jvp is Function.jvp:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    grads = []
    for a in args:
        if not isinstance(a, Tensor):
            grads.append(None)
            continue
        t = tangent(a, level)
        grads.append(t if t is not None else _make(np.zeros(np.shape(a._data), a.dtype.np),
                                                   a.dtype))
    # In jvp, saved_tensors are what save_for_forward kept (else save_for_backward).
    ctx.__dict__["_jvp_saved"] = tuple(ctx.__dict__.get(
        "saved_for_forward", ctx.__dict__.get("_to_save", ())))
    try:
        got = cls.jvp(ctx, *grads)
    finally:
        del ctx.__dict__["_jvp_saved"]
    n = len(out) if isinstance(out, tuple) else 1
    got = got if isinstance(got, tuple) else (got,)
    if len(got) != n:
        raise RuntimeError(f"function {cls.__name__}_jvp returned an incorrect number of "
                           f"forward gradients (expected {n}, got {len(got)})")
    outs = out if isinstance(out, tuple) else (out,)
    for k, (o, t) in enumerate(zip(outs, got)):
        if t is not None and (not isinstance(o, Tensor) or id(o) in ctx._non_differentiable):
            raise RuntimeError(f"Function's jvp returned a gradient at position {k}, but  the "
                               "corresponding forward output is not a differentiable Tensor."
                               "You should return None at that position instead.")
    return got


def _set_tangents(out, levels: list, tangents: list):
    """Give each tensor output its tangent at each level (``tangents[k][i]``)."""
    outs = out if isinstance(out, tuple) else (out,)
    for level, ts in zip(levels, tangents):
        for o, t in zip(outs, ts):
            if isinstance(o, Tensor) and t is not None and o.dtype.is_floating_point:
                set_tangent(o, level, t)
    return out


class _UndefinedGrad(Function):
    """The same values; backward hands on an undefined (None) gradient.  gradcheck uses
    it to check that backward functions accept undefined gradients (PyTorch's
    ``torch._C._functions.UndefinedGrad``)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return None


_TWICE = ("trying to differentiate twice a function that was marked with "
          "@once_differentiable")


class _DelayedError(Function):
    """The outputs of a ``once_differentiable`` backward run with grad mode on: the same
    values, on a node (PyTorch's ``Error``) that raises if a later pass reaches it."""

    @staticmethod
    def forward(ctx, *tensors):
        return tensors[0] if len(tensors) == 1 else tensors

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_TWICE)


def _error_call(self, *grads):
    raise RuntimeError(_TWICE)


_error_node = _DelayedError._node_class
_error_node.__name__ = _error_node.__qualname__ = "Error"
_error_node.__module__ = "builtins"  # as PyTorch's C++ node: <class 'Error'>
_error_node.name = lambda self: "torch::autograd::Error"
_error_node.__repr__ = lambda self: f"<Error object at {id(self):#x}>"
_error_node.__call__ = _error_call


def once_differentiable(fn):
    """Mark a ``backward`` as not differentiable itself: it runs without recording, and
    differentiating its result (``create_graph=True``, then another pass) raises.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.autograd.function import once_differentiable
    >>> class Square(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 2
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return 2 * x * grad
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> y = Square.apply(x)
    >>> torch.autograd.grad(y * y, x, create_graph=True)
    (tensor(108., grad_fn=<Error>),)
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = False
        try:
            outputs = fn(ctx, *args, **kwargs)
        finally:
            GRAD_MODE.enabled = prev
        if not prev:
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        fakes = [None if v is None else v.detach().requires_grad_(True) for v in outs]
        return _DelayedError.apply(*fakes)
    return wrapper

