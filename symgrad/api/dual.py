"""Dual tensors: the forward-mode levels that are open and the tangents tensors hold.

This is what :func:`~symgrad.api.apply.apply` and the in-place writes consult (one check
each: is a level open?); the tangents themselves are computed by
:mod:`symgrad.api.forward`, which installs its ``propagate`` and ``in_place`` here, and
the public API is :mod:`symgrad.autograd.forward_ad`.

A tensor's tangents live in its ``_fw`` attribute, ``{level: tangent}``; a level is a small
integer (PyTorch's first is 0).  Levels, like PyTorch's, are global, not per thread.
While the tangent of a result is being computed its level is *masked*: the operations
that compute it (on the primal operands, which still hold their tangents) record no
tangent at that level, while they do at any other open level, so that nested levels
(``symgrad.func``'s ``jvp`` of ``jvp``) give tangents of tangents.

A view of a tensor that gets a tangent later (an in-place copy into its base) finds its
own tangent on first use: the same view of the base's tangent (:func:`tangent`).
"""
from __future__ import annotations

import weakref
from typing import Callable

__all__ = ["DUAL", "tangent", "set_tangent", "clear_level"]


class _Dual:
    """The open levels (innermost last), the masked ones, and the functions installed
    by :mod:`symgrad.api.forward`."""

    def __init__(self) -> None:
        self.levels: list[int] = []
        self.masked: list[int] = []
        self.holders: dict[int, list] = {}  # level -> weak references to tensors with one
        self.propagate: Callable | None = None  # (op, args, attrs, out) -> out
        self.in_place: Callable | None = None  # (tensor, op, others, attrs) -> before
        self.carry: Callable | None = None  # (source, before) -> None
        self.view_tangent: Callable | None = None  # (view, root, level) -> tangent or None
        # level -> the rules of a level whose tangents are batched (``symgrad.func``'s jacfwd:
        # every tangent there has a leading dimension, one basis tangent per row)
        self.batched: dict = {}

    def active(self) -> list:
        """The open levels whose tangents are recorded now (not masked), innermost last."""
        return [lv for lv in self.levels if lv not in self.masked]

    def __repr__(self) -> str:
        return f"<dual levels {self.levels}, masked {self.masked}>"


DUAL = _Dual()


def tangent(t, level: int):
    """``t``'s tangent at ``level``, or None.  A view of a tensor with a tangent (taken
    before the tangent was set) gets the same view of that tangent."""
    fw = t.__dict__.get("_fw") if hasattr(t, "__dict__") else None
    if fw:
        found = fw.get(level)
        if found is not None:
            return found
    if getattr(t, "_view_of", None) is not None and DUAL.view_tangent is not None:
        root = t
        while root._view_of is not None:
            root = root._view_of[0]
        if root.__dict__.get("_fw", {}).get(level) is not None:
            found = DUAL.view_tangent(t, root, level)
            if found is not None:
                set_tangent(t, level, found)
            return found
    return None


def set_tangent(t, level: int, value) -> None:
    """Give ``t`` the tangent ``value`` at ``level`` (None takes it away)."""
    fw = t.__dict__.get("_fw")
    if value is None:
        if fw:
            fw.pop(level, None)
        return
    if fw is None:
        fw = t.__dict__["_fw"] = {}
    if level not in fw:
        DUAL.holders.setdefault(level, []).append(weakref.ref(t))
    fw[level] = value


def clear_level(level: int) -> None:
    """Forget every tangent at ``level`` (it is being exited)."""
    for ref in DUAL.holders.pop(level, ()):
        t = ref()
        if t is not None:
            fw = t.__dict__.get("_fw")
            if fw:
                fw.pop(level, None)
