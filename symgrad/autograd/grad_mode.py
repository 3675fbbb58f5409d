"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``."""
from __future__ import annotations

import functools

from ..graph import GRAD_MODE

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "inference_mode", "is_inference_mode_enabled"]


def is_grad_enabled() -> bool:
    """Whether operations are being recorded."""
    return GRAD_MODE.enabled


def is_inference_mode_enabled() -> bool:
    return GRAD_MODE.inference


class _Mode:
    """A context manager and decorator that sets the grad mode and restores it."""

    _target = True

    def __enter__(self):
        self._prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = self._target
        return None

    def __exit__(self, *exc) -> bool:
        GRAD_MODE.enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_Mode):
    """Do not record operations inside the block (as ``torch.no_grad``).

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    _target = False


class enable_grad(_Mode):
    """Record operations inside the block, even within ``no_grad``."""

    _target = True


class set_grad_enabled(_Mode):
    """Turn recording on or off: as a function call or a context manager."""

    def __init__(self, mode: bool) -> None:
        self._prev = GRAD_MODE.enabled
        self._target = bool(mode)
        GRAD_MODE.enabled = self._target

    def __enter__(self):
        return None

    def __call__(self, fn):
        mode = self._target

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        GRAD_MODE.enabled = self._prev
        return wrapper


class inference_mode(_Mode):
    """Like ``no_grad`` (symgrad has no separate inference tensors)."""

    def __init__(self, mode: bool = True) -> None:
        self._target = not mode
        self._mode = mode

    def __enter__(self):
        self._prev_inf = GRAD_MODE.inference
        GRAD_MODE.inference = self._mode
        return super().__enter__()

    def __exit__(self, *exc) -> bool:
        GRAD_MODE.inference = self._prev_inf
        return super().__exit__(*exc)

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper
