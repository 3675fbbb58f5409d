"""What ``draw`` and ``draw_steps`` are given: tensors (symgrad's or PyTorch's), lists
or name->tensor dicts, and the names of the caller's variables."""
from __future__ import annotations

import sys
from typing import Any, Mapping

from ..api.tensor import Tensor

__all__ = ["is_tensor", "roots_and_names", "caller_names", "merge_names"]


def is_tensor(obj: Any) -> bool:
    """True for a symgrad tensor or a PyTorch tensor (recognised without importing torch)."""
    if isinstance(obj, Tensor):
        return True
    return type(obj).__module__.startswith("torch") and hasattr(obj, "grad_fn") and hasattr(
        obj, "requires_grad")


def roots_and_names(t: Any) -> tuple[list, dict]:
    """Root tensors and names from ``t``: a tensor, a sequence, or a name->tensor dict."""
    if isinstance(t, Mapping):
        return list(t.values()), dict(t)
    if isinstance(t, (list, tuple)):
        return list(t), {}
    if not is_tensor(t):
        raise TypeError(f"draw() expects a symgrad or torch tensor (or a list/dict of them), "
                        f"got {type(t).__name__}")
    return [t], {}


def caller_names(depth: int) -> dict:
    """Variable names of tensors in the calling frame (``f = ...; draw(f)`` shows "f").

    ``depth`` counts frames as ``sys._getframe`` does from here: 2 is the caller of the
    function that calls this one.
    """
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return {}
    out: dict = {}
    scopes = [frame.f_locals]
    if frame.f_globals is not frame.f_locals:
        scopes.append(frame.f_globals)
    seen: set[int] = set()
    for scope in scopes:
        for name, obj in list(scope.items()):
            if name.startswith("_") or id(obj) in seen or not is_tensor(obj):
                continue
            seen.add(id(obj))
            out[name] = obj
    return out


def merge_names(explicit: Mapping | None, auto: Mapping) -> dict:
    """``explicit`` names, then ``auto`` names of tensors not named yet."""
    names: dict = {}
    for source in (explicit or {}, auto):
        for n, t in source.items():
            if not any(t is u for u in names.values()):
                names[n] = t
    return names
