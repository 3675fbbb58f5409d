"""``symgrad.autograd.forward_ad``: forward-mode automatic differentiation, as PyTorch's.

A *dual tensor* carries a primal value and a tangent; every operation on dual tensors
computes its result's tangent (the Jacobian-vector product) alongside the value, from the
op's record (:func:`symgrad.ops.jvp.jvp_of`, the per-op entry point that other layers,
such as a symbolic or drawn forward mode, can call with a backend of their own).

- :class:`dual_level` (``with dual_level():``), :func:`enter_dual_level`,
  :func:`exit_dual_level`: the scope in which tangents live; they are forgotten when it
  ends.  As in PyTorch, levels do not nest here (``symgrad.func`` nests them internally
  with :func:`_enter_level`);
- :func:`make_dual` (a view of the primal with the tangent attached) and
  :func:`unpack_dual` (``UnpackedDualTensor(primal, tangent)``).

Tangents are tensors and are computed with recorded operations, so a ``create_graph``
backward pass inside a level carries tangents too (forward-over-reverse: Hessian-vector
products), and a tangent may itself have a gradient.

Examples
--------
>>> import symgrad as torch
>>> import symgrad.autograd.forward_ad as fwAD
>>> x = torch.tensor([0.0, 1.0])
>>> with fwAD.dual_level():
...     y = torch.sin(fwAD.make_dual(x, torch.ones(2))) * 2
...     fwAD.unpack_dual(y).tangent
tensor([2.0000, 1.0806])
>>> fwAD.unpack_dual(y).tangent is None
True
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable

from .. import ops as O
from ..api import forward as _forward  # noqa: F401 - installs the propagation
from ..api.apply import apply
from ..api.core import Tensor
from ..api.dual import DUAL, clear_level, set_tangent, tangent

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

_UnpackedDualTensor = namedtuple("_UnpackedDualTensor", ["primal", "tangent"])


class UnpackedDualTensor(_UnpackedDualTensor):
    """The named tuple :func:`unpack_dual` returns: ``primal`` and ``tangent``."""

    __slots__ = ()


def _current() -> int:
    return DUAL.levels[-1] if DUAL.levels else -1


def _enter_level() -> int:
    """Open a new level, nested in any open one (for ``symgrad.func``); returns it."""
    level = DUAL.levels[-1] + 1 if DUAL.levels else 0
    DUAL.levels.append(level)
    return level


def _exit_level(level: int) -> None:
    """Close ``level`` (the innermost) and forget its tangents."""
    clear_level(level)
    DUAL.levels.remove(level)


def enter_dual_level() -> int:
    """Open a forward-mode level and return it (PyTorch's first level is 0).

    Levels do not nest: entering one while another is open is a RuntimeError, as in
    PyTorch.
    """
    if DUAL.levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    return _enter_level()


def exit_dual_level(*, level: int | None = None) -> None:
    """Close ``level`` (by default the current one); every tangent at it is forgotten."""
    if level is None:
        level = _current()
    if level != _current():
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _exit_level(level)


class dual_level:
    """Context manager (and decorator) for a forward-mode level: ``with dual_level():``.

    ``__enter__`` returns the level; on exit every tangent computed inside is forgotten.
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return func(*args, **kwargs)
        return wrapper


def _level(level: int | None, caller: str) -> int:
    if level is None:
        return _current()
    if level not in DUAL.levels:
        raise RuntimeError(f"Invalid level given to {caller}")
    return level


def make_dual(tensor: Tensor, tangent_: Tensor, *, level: int | None = None) -> Tensor:
    """A dual tensor: a view of ``tensor`` whose tangent is ``tangent_`` (same shape,
    floating point), at ``level`` (by default the current one).

    Examples
    --------
    >>> import symgrad as torch
    >>> import symgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))
    tensor([1., 2.], tangent=tensor([1., 0.]))
    """
    if level is None and not DUAL.levels:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists,"
                           " make sure to enter_dual_level() first.")
    for what, t in (("primal", tensor), ("tangent", tangent_)):
        if not isinstance(t, Tensor):
            raise TypeError(f"make_dual(): argument '{what}' must be Tensor, not "
                            f"{type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                             f"{t.dtype}")
    level = _level(level, "_make_dual")
    if tangent(tensor, level) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    batched = DUAL.batched.get(level)  # (symgrad.func's jacfwd: a row per basis tangent)
    if tuple(tangent_.shape) != ((batched.size,) if batched else ()) + tuple(tensor.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent_.shape)}.")
    dual = _dual_view(tensor, level)
    set_tangent(dual, level, tangent_)
    return dual


def _dual_view(t: Tensor, level: int) -> Tensor:
    """The view of ``t`` a dual tensor is made of (``ViewBackward0``), with no tangent at
    ``level`` yet."""
    return _masked_view(t, O.VIEW, (tuple(t.shape),), level)


def _masked_view(t: Tensor, op, attrs: tuple, level: int) -> Tensor:
    """A view of ``t`` with no tangent at ``level`` (none is computed for it)."""
    DUAL.masked.append(level)
    try:
        return apply(op, (t,), attrs)
    finally:
        DUAL.masked.remove(level)


class _Identity(O.ALIAS.node_class):
    """The ``grad_fn`` of :func:`unpack_dual`'s primal: PyTorch's C++ node
    ``torch::autograd::Identity`` (``grad_fn=<Identity>``, shown as a ``CppFunction``);
    the gradient passes through unchanged."""

    __slots__ = ()
    __module__ = "builtins"

    def name(self) -> str:
        return "torch::autograd::Identity"

    def __repr__(self) -> str:
        return f"<CppFunction object at {id(self):#x}>"


_Identity.__name__ = _Identity.__qualname__ = "CppFunction"  # (as torch; repr: <Identity>)


def _primal(tensor: Tensor, level: int) -> Tensor:
    """PyTorch's ``_fw_primal``: a view of ``tensor`` without its tangent at ``level``."""
    view = _masked_view(tensor, O.ALIAS, (), level)
    if view.grad_fn is not None and type(view.grad_fn) is O.ALIAS.node_class:
        view.grad_fn.__class__ = _Identity
    return view


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``UnpackedDualTensor(primal, tangent)`` of ``tensor`` at ``level`` (by default the
    current one): inside a level the primal is always a new view of ``tensor`` without the
    tangent (``grad_fn=<Identity>`` when ``tensor`` requires grad), as PyTorch's; ``tangent``
    None where there is none.  With no level open: ``(tensor, None)``.

    Examples
    --------
    >>> import symgrad as torch
    >>> import symgrad.autograd.forward_ad as fwAD
    >>> fwAD.unpack_dual(torch.ones(2))
    UnpackedDualTensor(primal=tensor([1., 1.]), tangent=None)
    >>> with fwAD.dual_level():
    ...     fwAD.unpack_dual(torch.ones(2, requires_grad=True)).primal
    tensor([1., 1.], grad_fn=<Identity>)
    """
    if level is None and not DUAL.levels:
        return UnpackedDualTensor(tensor, None)
    level = _level(level, "_fw_primal")
    return UnpackedDualTensor(_primal(tensor, level), tangent(tensor, level))


def _unpack(tensor: Tensor, level: int) -> tuple:
    """``(primal, tangent)`` for symgrad's transforms: ``tensor`` itself where it has no
    tangent at ``level`` (no view, no node), else its primal view."""
    t = tangent(tensor, level)
    if t is None:
        return tensor, None
    return _masked_view(tensor, O.ALIAS, (), level), t
