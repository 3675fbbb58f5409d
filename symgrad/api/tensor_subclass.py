"""Subclasses of Tensor as PyTorch has them: ``__torch_function__``.

In PyTorch every function and method that takes tensors first asks the tensors' types
for an override: ``Tensor.__torch_function__``, whose default runs the function and
turns a plain ``Tensor`` result into the subclass (``as_subclass``, an alias:
``AliasBackward0`` where it records).  So ``P(...) * 2``, ``P(...).sum()``, ``p[0]``,
``torch.add(p, 1)`` and ``torch.ones(3) + p`` are ``P``; a subclass may override
``__torch_function__`` (a classmethod) to log, change or refuse calls; ``nn.Parameter``
opts out (:func:`_disabled_torch_function_impl`).

symgrad keeps plain tensors on their fast path: nothing is asked until a subclass that
dispatches is defined.  Then (:func:`_init_subclass`) the subclass gets, for each
Tensor method and operator it does not define itself, one that dispatches; and the
functions of ``symgrad``, ``symgrad.nn.functional`` and ``symgrad.linalg`` are replaced,
once, by ones that dispatch where an argument is such a subclass (and call straight
through otherwise).

Examples
--------
>>> import symgrad as torch
>>> class P(torch.Tensor):
...     pass
>>> p = P([1., 2.])
>>> type(p * 2).__name__, type(torch.add(p, 1)).__name__, type(p.sum()).__name__
('P', 'P', 'P')
>>> p[1:]
P([2.])
"""
from __future__ import annotations

import functools
import sys
import threading
import types

from .. import ops as O
from .apply import apply
from ..ir.cores import TENSOR_DEFAULTS, TensorCore
from .core import Tensor, _LegacyMeta
from .viewmeta import RAW_GRAD_FN

__all__ = ["DisableTorchFunctionSubclass", "as_subclass"]


class _State(threading.local):
    """Per thread, as PyTorch's: inside a ``__torch_function__``'s default (or a
    ``DisableTorchFunctionSubclass`` block) calls go straight to the implementation."""

    def __init__(self) -> None:
        self.disabled = False


_STATE = _State()


class DisableTorchFunctionSubclass:
    """``torch._C.DisableTorchFunctionSubclass``: calls in the block skip the subclasses'
    ``__torch_function__``."""

    def __enter__(self):
        self._before, _STATE.disabled = _STATE.disabled, True
        return self

    def __exit__(self, *exc) -> bool:
        _STATE.disabled = self._before
        return False


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """``torch._C._disabled_torch_function_impl``: a subclass whose ``__torch_function__``
    is this one is not asked (``nn.Parameter``)."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def as_subclass(self, cls):
    """This tensor as an instance of ``cls`` (a subclass of Tensor) sharing its data: an
    alias (``AliasBackward0`` where it records), as ``Tensor.as_subclass``."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): argument 'cls' (position 1) must be a subclass of "
                        f"Tensor, not {getattr(cls, '__name__', type(cls).__name__)}")
    with DisableTorchFunctionSubclass():
        out = apply(O.ALIAS, (self,))
    try:
        out.__class__ = cls
    except TypeError:  # (a subclass with slots of its own: its own allocation)
        alias, out = out, TensorCore.__new__(cls)
        for name in ("_data", "_dtype", "_requires_grad", "_vc", *TENSOR_DEFAULTS):
            setattr(out, name, getattr(alias, name))
        RAW_GRAD_FN.__set__(out, RAW_GRAD_FN.__get__(alias))
        out.__dict__.update(alias.__dict__)
    return out


def _convert(ret, cls):
    """PyTorch's ``torch._tensor._convert``: a Tensor result (not already ``cls``) as
    ``cls``; tuples and lists (and named results) element by element."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = as_subclass(ret, cls)
    if isinstance(ret, (tuple, list)):
        ret = type(ret)(_convert(r, cls) for r in ret)
    return ret


def _default_torch_function(cls, func, types, args=(), kwargs=None):
    """``Tensor.__torch_function__``: run ``func`` with dispatch off, its result as
    ``cls``; NotImplemented where ``cls`` is not a subclass of every type involved."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        return ret if func in _NOWRAP else _convert(ret, cls)


def _dispatching_type(t: type) -> bool:
    return (t is not Tensor and issubclass(t, Tensor)
            and getattr(t, "__torch_function__", None) is not _DISABLED)


def _overloaded(args, kwargs) -> list:
    """The types of the arguments (one level into lists and tuples) that dispatch, each
    before its base classes, in order of appearance (PyTorch's order of asking)."""
    found: list = []

    def add(a) -> None:
        t = type(a)
        if t is Tensor or t in found or not isinstance(a, Tensor) or not _dispatching_type(t):
            return
        for k, other in enumerate(found):  # (a subclass is asked before its bases)
            if issubclass(t, other):
                found.insert(k, t)
                return
        found.append(t)

    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            for b in a:
                add(b)
        else:
            add(a)
    return found


class _NoImplementation(TypeError):
    """Every override returned NotImplemented (an operator then returns NotImplemented to
    Python, whose own TypeError follows, as PyTorch's operators do)."""


def _dispatch(public, impl, args, kwargs):
    """Call ``impl`` (named ``public`` to the overrides) as PyTorch's
    ``handle_torch_function`` does."""
    if _STATE.disabled:
        return impl(*args, **kwargs)
    found = _overloaded(args, kwargs)
    if not found:
        return impl(*args, **kwargs)
    for t in found:
        ret = t.__torch_function__(public, tuple(found), args, kwargs)
        if ret is not NotImplemented:
            return ret
    name = getattr(public, "__qualname__", getattr(public, "__name__", str(public)))
    raise _NoImplementation(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[t for t in found]}")


#: The method an operator names to the overrides, as PyTorch's C++ bindings do
#: (``p + 1`` is ``Tensor.add``, ``p % 2`` is ``Tensor.remainder``).
_OPERATOR_NAMES = {
    "__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul",
    "__rmul__": "mul", "__truediv__": "div", "__matmul__": "matmul", "__pow__": "pow",
    "__neg__": "neg", "__abs__": "abs", "__ne__": "ne", "__lt__": "lt", "__le__": "le",
    "__gt__": "gt", "__ge__": "ge", "__mod__": "remainder", "__iadd__": "add_",
    "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_", "__pos__": "positive"}


_BINARY = frozenset(f"__{r}{n}__" for n in ("add", "sub", "mul", "truediv", "floordiv", "mod",
                                              "pow", "matmul", "and", "or", "xor", "lshift",
                                              "rshift") for r in ("", "r", "i")) | frozenset(
    ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"))


def _method(name: str, impl, public=None):
    """The dispatching method ``name`` of a subclass (``impl``: Tensor's; ``public``:
    what the overrides are told, by default the method of that name)."""
    if public is None:
        public = getattr(Tensor, _OPERATOR_NAMES.get(name, name), impl)
    binary = name in _BINARY

    def method(*args, **kwargs):
        if _STATE.disabled:
            return impl(*args, **kwargs)
        if binary:
            try:
                return _dispatch(public, impl, args, kwargs)
            except _NoImplementation:
                return NotImplemented
        return _dispatch(public, impl, args, kwargs)

    functools.update_wrapper(method, impl)
    method._dispatches = impl
    return method


def _getter(prop: property):
    """A property of a subclass whose getter dispatches (``p.T``, ``p.data``)."""
    impl = prop.fget
    return property(_method(impl.__name__, impl, prop.__get__), prop.fset, prop.fdel,
                    prop.__doc__)


# Tensor's names that never dispatch: the object protocol, and what PyTorch does not route.
_KEEP = frozenset(("__new__", "__init__", "__init_subclass__", "__getattr__",
                   "__getattribute__", "__setattr__", "__delattr__", "__dir__", "__class__",
                   "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__",
                   "__sizeof__", "__subclasshook__", "__torch_function__", "__hash__",
                   "__weakref__", "__dict__", "__slots__", "__module__", "__doc__",
                   "__qualname__", "__class_getitem__", "__copy__", "__deepcopy__",
                   "__array__", "__array_priority__", "__array_wrap__", "__len__",
                   "__bool__", "__index__", "__int__", "__float__", "__complex__",
                   "__iter__", "__contains__", "__str__", "as_subclass", "grad_fn"))
#: Properties whose getters dispatch, as PyTorch's (``grad`` does not: a "no wrap" one).
_PROPERTIES = ("T", "mT", "H", "mH", "data", "shape", "dtype", "ndim", "device", "real",
               "imag")
#: Functions whose result is not converted (PyTorch's ``get_default_nowrap_functions``:
#: ``grad``'s getter, which symgrad does not route at all).
_NOWRAP: frozenset = frozenset()
_DISABLED = _disabled_torch_function_impl
#: Functions of these modules dispatch once a dispatching subclass exists.
_MODULES = ("symgrad", "symgrad.nn.functional", "symgrad.linalg")
_NOT_FUNCTIONS = frozenset((
    "tensor", "as_tensor", "from_numpy", "is_tensor", "manual_seed", "seed", "initial_seed",
    "save", "load", "set_default_dtype", "get_default_dtype", "set_printoptions",
    "get_printoptions", "is_grad_enabled", "compile", "typename", "is_storage",
    "set_default_device", "get_default_device", "use_deterministic_algorithms"))
#: Where PyTorch's tensor functions live in symgrad: symgrad's own tools (draw, check,
#: vmap, the SymPy bridge) are no tensor functions, and they read their caller's frame.
_TENSOR_FUNCTION_MODULES = ("symgrad.api.", "symgrad.linalg", "symgrad.nn.functional")
_PATCHED: list = []


def _tensor_methods() -> dict:
    """Tensor's methods and operators that dispatch in a subclass, by name."""
    found = {}
    for klass in reversed(Tensor.__mro__[:-1]):
        for name, value in vars(klass).items():
            if name in _KEEP or (name.startswith("_") and not name.endswith("__")):
                continue
            if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) \
                    or name == "__repr__":
                found[name] = getattr(Tensor, name)
    return found


def _init_subclass(cls, **kwargs) -> None:
    """``Tensor.__init_subclass__``: a subclass that dispatches gets dispatching methods
    (those it does not define itself), and the library's functions start dispatching."""
    super(Tensor, cls).__init_subclass__(**kwargs)
    if isinstance(cls, _LegacyMeta) or not _dispatching_type(cls):
        return
    for name, impl in _tensor_methods().items():
        if name not in cls.__dict__ and not hasattr(getattr(cls, name, None), "_dispatches"):
            setattr(cls, name, _method(name, impl))
    for name in _PROPERTIES:
        prop = getattr(Tensor, name, None)
        if isinstance(prop, property) and name not in cls.__dict__ and not hasattr(
                getattr(cls, name).fget, "_dispatches"):
            setattr(cls, name, _getter(prop))
    if not _PATCHED:
        _patch_functions()


def _patch_functions() -> None:
    """Replace the functions of :data:`_MODULES` by dispatching ones (once)."""
    _PATCHED.append(True)
    for module_name in _MODULES:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for name in getattr(module, "__all__", ()):
            f = getattr(module, name, None)
            if (isinstance(f, types.FunctionType) and name not in _NOT_FUNCTIONS
                    and f.__module__.startswith(_TENSOR_FUNCTION_MODULES)
                    and not hasattr(f, "_dispatches")):
                setattr(module, name, _function(f))


def _function(impl):
    """A function of the library that dispatches where an argument is a subclass that
    does (one look at the arguments otherwise)."""
    def function(*args, **kwargs):
        if _STATE.disabled:
            return impl(*args, **kwargs)
        return _dispatch(function, impl, args, kwargs)

    functools.update_wrapper(function, impl)
    function._dispatches = impl
    return function


_default_torch_function.__name__ = "__torch_function__"
_default_torch_function.__qualname__ = "Tensor.__torch_function__"
Tensor.__torch_function__ = classmethod(_default_torch_function)
Tensor.__init_subclass__ = classmethod(_init_subclass)
Tensor.as_subclass = as_subclass
