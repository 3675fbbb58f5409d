"""The Tensor methods and ``symgrad.*`` functions generated from the op table.

Every op record names its surfaces (``Op.methods``, ``Op.inplace``, ``Op.function``).
Where the tensor API has no hand-written front end of that name (one that parses
PyTorch's keyword forms, ``sum(dim, keepdim, dtype=...)``), the name is generated here:

* a method on the op's operands, ``x.sin()``, ``x.atan2(y)``, ``x.clamp_(0, 1)``, with
  numbers and numpy scalars as operands where PyTorch takes them, and ``NotImplemented``
  for an operand that is none (so that Python tries the reflected operator);
* a module function, ``symgrad.sin(x)``, which calls the method of that name when the
  op has one (so both share one front end) and the op itself otherwise.

Ops registered after import (``Op(...)`` anywhere) get their surfaces at once, and lose
them with ``ops.unregister`` (see :func:`symgrad.ops.subscribe`).

Examples
--------
>>> import symgrad
>>> x = symgrad.tensor([0.0, 1.0])
>>> symgrad.sin(x).grad_fn is None, x.sin().dtype
(True, torch.float32)
"""
from __future__ import annotations

from typing import Callable

from ..ops import OPS, Op
from .apply import apply
from .construct import _as_tensor_arg, tensor
from .core import Tensor

__all__ = ["method", "inplace_method", "function", "Methods", "Functions"]

_FAST_OPERANDS = frozenset((float, int, Tensor))  # operands _as_tensor_arg keeps as they are


def _binary(op: Op, a, b):
    """``op`` on a tensor and another operand; ``NotImplemented`` if that is none."""
    if b.__class__ in _FAST_OPERANDS:
        return apply(op, (a, b))
    b = _as_tensor_arg(b)
    if b is NotImplemented:
        return NotImplemented
    return apply(op, (a, b))


def _operands(op: Op, self, args: tuple) -> tuple:
    """(tensor operands, attributes) of a call ``self.method(*args)``."""
    n = len(op.inputs) - 1
    if len(args) != n + len(op.attrs):
        names = ", ".join(op.inputs[1:] + op.attrs)
        raise TypeError(f"{op.method or op.function}() takes ({names}) but got {len(args)} "
                        "arguments")
    return (self,) + tuple(_as_tensor_arg(a) for a in args[:n]), tuple(args[n:])


def method(op: Op, name: str) -> Callable:
    """The Tensor method ``name`` that is exactly ``op`` on its operands."""
    if op.arity == 1 and not op.attrs:
        def unary(self):
            return apply(op, (self,))
        fn = unary
    elif op.arity == 2 and not op.attrs:
        def binary(self, other):
            if other.__class__ in _FAST_OPERANDS:  # the common case, one call less
                return apply(op, (self, other))
            return _binary(op, self, other)
        fn = binary
    else:
        def general(self, *args):
            operands, attrs = _operands(op, self, args)
            if NotImplemented in operands:
                return NotImplemented
            return apply(op, operands, attrs)
        fn = general
    return _named(fn, name, f"``{op.node_name}``: {op.doc or op.name} (the op table's "
                            f"{op.key!r}).")


def inplace_method(op: Op, name: str) -> Callable:
    """The in-place Tensor method ``name``: ``op``'s result written into ``self``."""
    def in_place(self, *args):
        operands, attrs = _operands(op, self, args)
        return self._in_place(op, operands[1:], attrs)
    return _named(in_place, name, f"In-place {op.method or op.name}: ``{op.node_name}``.")


def function(op: Op, name: str | None = None) -> Callable:
    """``symgrad.<op.function>`` (or ``name``): the method of the same front end, or the
    op itself."""
    name = name or op.function
    if op.method is not None:
        def via_method(input, *args, **kwargs):
            if not isinstance(input, Tensor):
                input = tensor(input)
            return getattr(input, op.method)(*args, **kwargs)
        fn = via_method
        doc = f"``{name}(input, ...)`` is ``input.{op.method}(...)``."
    else:
        def direct(input, *args):
            if not isinstance(input, Tensor):
                input = tensor(input)
            operands, attrs = _operands(op, input, args)
            return apply(op, operands, attrs)
        fn = direct
        doc = f"``{op.node_name}``: {op.doc or op.name}."
    return _named(fn, name, doc)


def _named(fn: Callable, name: str, doc: str) -> Callable:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


class Methods:
    """Adds (and takes away) the Tensor methods generated for each op.

    Subscribed once the hand-written methods are on the class: a name the class already
    has is a hand-written front end and stays.
    """

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.made: dict[str, list] = {}  # op key -> names this made

    def added(self, op: Op) -> None:
        if op.composite:
            return
        made = []
        for name in op.methods:
            if not self._defines(name):
                setattr(self.cls, name, method(op, name))
                made.append(name)
        if op.inplace and not self._defines(op.inplace):
            setattr(self.cls, op.inplace, inplace_method(op, op.inplace))
            made.append(op.inplace)
        self.made[op.key] = made

    def removed(self, op: Op) -> None:
        for name in self.made.pop(op.key, ()):
            delattr(self.cls, name)

    def _defines(self, name: str) -> bool:
        # (not hasattr: the metaclass answers for some dunders, ``type.__or__``)
        return any(name in vars(k) for k in self.cls.__mro__ if k is not object)

    def _ops(self) -> list:
        return [OPS[k] for k in self.made if k in OPS]


class Functions:
    """Adds (and takes away) the ``symgrad.*`` functions generated for each op.

    ``namespaces`` receive them (``symgrad.api.functional``'s globals, the ``symgrad``
    package's, ...); a name already defined in the first is a hand-written front end.
    ``field`` is the record's names on this surface: ``"functions"`` (``symgrad.*``) or
    ``"functional"`` (``symgrad.nn.functional``).
    """

    def __init__(self, namespaces: list, field: str = "functions") -> None:
        self.namespaces = namespaces
        self.field = field
        self.made: dict[str, tuple] = {}  # op key -> the functions' names

    def export_to(self, namespace: dict) -> None:
        """Give ``namespace`` the functions made so far, and those made later."""
        for names in self.made.values():
            for name in names:
                namespace.setdefault(name, self.namespaces[0][name])
        self.namespaces.append(namespace)

    def added(self, op: Op) -> None:
        names = getattr(op, self.field)
        names = (names,) if isinstance(names, str) else tuple(names or ())
        if op.composite or not names or names[0] in self.namespaces[0]:
            return
        fn = function(op, names[0])
        for name in names:
            for ns in self.namespaces:
                ns.setdefault(name, fn)
                if name not in ns.get("__all__", (name,)):
                    ns["__all__"].append(name)
        self.made[op.key] = names

    def removed(self, op: Op) -> None:
        for name in self.made.pop(op.key, ()):
            for ns in self.namespaces:
                ns.pop(name, None)
                if name in ns.get("__all__", ()):
                    ns["__all__"].remove(name)
