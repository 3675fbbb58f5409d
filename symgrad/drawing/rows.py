"""The rows of a tensor's node, shared by every kind of drawing: its name, shape and
dtype, value and ``.grad``; and the legend's names of derivative orders.

Examples
--------
>>> tensor_rows(None, "x", 2.5, show_values=True, show_grads=True, grad=1.0)
[('x', 'title'), ('scalar', 'small'), ('2.5', 'body'), ('grad = 1', 'grad')]
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .model import GraphModel
from .values import format_value, shape_text

__all__ = ["tensor_rows", "leaf_grad", "order_labels", "output_key"]


def tensor_rows(t: Any, name: str | None, value: Any, *, show_values: bool,
                show_grads: bool, grad: Any = None, shape: tuple | None = None,
                dtype: str = "", sizes: dict | None = None) -> list:
    """``[(text, style), ...]`` for a tensor node (styles as in ``DotWriter.node``)."""
    rows = [(name or "tensor", "title")]
    if shape is None:
        shape = getattr(t, "shape", None)
        if shape is None and value is not None:
            shape = np.shape(value)
    if shape is not None:
        rows.append((f"{shape_text(shape, sizes)}  {dtype}".rstrip(), "small"))
    if show_values and value is not None:
        rows.append((format_value(value), "body"))
    if show_grads and grad is not None:
        rows.append(("grad = " + format_value(grad), "grad"))
    return rows


def leaf_grad(t: Any) -> Any:
    """A leaf's ``.grad`` (no warning: only leaves and retained grads are read)."""
    if t is None:
        return None
    if getattr(t, "grad_fn", None) is not None and not getattr(t, "retains_grad", False):
        return None
    return getattr(t, "grad", None)


def output_key(model: GraphModel, keys: dict) -> str | None:
    """The DOT key of the last root drawn (the legend goes beside it), or None."""
    items = [item for item in model.root_items if item is not None]
    return keys[items[-1].key] if items else None


def order_labels(model: GraphModel, names: list[str] | None) -> list[str]:
    """The legend's name of each derivative order: ``names``, or ``order k: graph of f``."""
    if names:
        return list(names)
    out = []
    for k, t in enumerate(model.roots):
        n = model.tensor_name(t)
        out.append(f"order {k}" + (f": graph of {n}" if n else ""))
    return out
