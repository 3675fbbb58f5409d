"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each is a context manager and a decorator, as in PyTorch: ``@no_grad`` and ``@no_grad()``
both work, a decorated generator runs each step in the mode, and ``set_grad_enabled``
also works as a plain function call.  ``inference_mode`` behaves as ``no_grad`` (symgrad
has no separate inference tensors).
"""
from __future__ import annotations

import functools
import inspect
import sys
import warnings
from typing import Any, Callable

from ..ir.node import GRAD_MODE

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "inference_mode", "is_inference_mode_enabled"]


def is_grad_enabled() -> bool:
    """Whether operations are being recorded.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.is_grad_enabled()
    True
    """
    return GRAD_MODE.stashed if GRAD_MODE.inference else GRAD_MODE.enabled


# Inside inference_mode nothing records, whatever the grad mode says (PyTorch's inference
# mode bypasses autograd): GRAD_MODE.enabled, which the library reads to record, stays
# False there, and the grad mode users set and read is GRAD_MODE.stashed.


def _get() -> tuple:
    return GRAD_MODE.enabled, GRAD_MODE.inference, GRAD_MODE.stashed


def _restore(state: tuple) -> None:
    GRAD_MODE.enabled, GRAD_MODE.inference, GRAD_MODE.stashed = state


def _set_grad(mode: bool) -> None:
    if GRAD_MODE.inference:
        GRAD_MODE.stashed = mode
    else:
        GRAD_MODE.enabled = mode


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode`` block is active."""
    return GRAD_MODE.inference


def _wrap_generator(make_mode: Callable, func: Callable) -> Callable:
    """Each step of the generator runs inside a fresh mode, as PyTorch's decorators do."""

    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with make_mode():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_mode():
                        gen.close()
                    raise
                except BaseException:
                    with make_mode():
                        response = gen.throw(*sys.exc_info())
                else:
                    with make_mode():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return generator_context


class _Mode:
    """A context manager and decorator that sets the grad mode and restores it."""

    _target = True

    def __enter__(self) -> None:
        self._prev = _get()
        _set_grad(self._target)

    def __exit__(self, *exc) -> None:
        _restore(self._prev)

    def clone(self) -> "_Mode":
        return type(self)()

    def __repr__(self) -> str:
        # Printed as PyTorch's objects print (the class lives in torch.autograd.grad_mode).
        return f"<torch.autograd.grad_mode.{type(self).__name__} object at {id(self):#x}>"

    def __call__(self, func: Callable) -> Callable:
        if inspect.isclass(func):
            warnings.warn("Decorating classes is deprecated and will be disabled in future "
                          "versions. You should only decorate functions or methods. To "
                          "preserve the current behavior of class decoration, you can "
                          "directly decorate the `__init__` method and nothing else.",
                          FutureWarning, stacklevel=2)
            cls, func = func, (lambda *args, **kwargs: cls(*args, **kwargs))
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper


class _NoParamMode(_Mode):
    """Usable as ``@mode`` as well as ``@mode()``."""

    def __new__(cls, orig_func: Callable | None = None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamMode):
    """Do not record operations inside the block (as ``torch.no_grad``).

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     (x * 2).requires_grad
    False
    >>> @torch.no_grad
    ... def double(t):
    ...     return t * 2
    >>> double(x).requires_grad
    False
    """

    _target = False


class enable_grad(_NoParamMode):
    """Record operations inside the block, even within ``no_grad``.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad(), torch.enable_grad():
    ...     (x * 2).requires_grad
    True
    """

    _target = True


class set_grad_enabled(_Mode):
    """Turn recording on or off: as a function call, a context manager or a decorator.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.set_grad_enabled(False):
    ...     (x * 2).requires_grad
    False
    >>> torch.set_grad_enabled(True)
    torch.autograd.grad_mode.set_grad_enabled(mode=True)
    """

    def __init__(self, mode: bool) -> None:
        self._prev = _get()
        self.mode = bool(mode)
        _set_grad(self.mode)

    def __call__(self, func: Callable) -> Callable:
        _restore(self._prev)  # as a decorator it changes nothing until called
        return super().__call__(func)

    def __enter__(self) -> None:
        _set_grad(self.mode)

    def __exit__(self, *exc) -> None:
        _restore(self._prev)

    def clone(self) -> "set_grad_enabled":
        return type(self)(self.mode)

    def __repr__(self) -> str:
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_Mode):
    """Like ``no_grad``, and ``is_inference_mode_enabled()`` is True inside.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.inference_mode():
    ...     (x * 2).requires_grad
    False
    """

    def __new__(cls, mode_or_fn: Any = True):
        if mode_or_fn is None or isinstance(mode_or_fn, bool):
            return super().__new__(cls)
        return cls()(mode_or_fn)

    def __init__(self, mode: Any = True) -> None:
        self.mode = bool(mode) if isinstance(mode, bool) else True

    def __enter__(self) -> None:
        # As PyTorch's: inference_mode(True) turns grad mode off, inference_mode(False)
        # turns it on, whatever it was.
        self._prev = _get()
        GRAD_MODE.inference = self.mode
        GRAD_MODE.enabled = not self.mode
        GRAD_MODE.stashed = False

    def __exit__(self, *exc) -> None:
        _restore(self._prev)

    def clone(self) -> "inference_mode":
        return type(self)(self.mode)
