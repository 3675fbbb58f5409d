"""Short texts for what a drawing shows of a tensor: its value, shape, dtype, attributes.

Values are read from symgrad tensors, PyTorch tensors (through ``detach()``), numpy
arrays and Python numbers alike.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

__all__ = ["format_value", "as_array", "shape_text", "dtype_text", "attr_text"]


def format_value(value: Any, precision: int = 4, max_items: int = 12) -> str:
    """Short text for a tensor value in a drawing (numbers to ``precision`` digits).

    Examples
    --------
    >>> format_value(40.0)
    '40'
    >>> format_value([[1.25, 1.25], [1.25, 1.25]])
    '[[1.25, 1.25],\\n [1.25, 1.25]]'
    >>> format_value(np.arange(100.0))
    '[0, 1, …, 98, 99]'
    >>> format_value(np.sin(11.0)), format_value(0.99996)
    ('-0.99999', '0.99996')
    """
    a = as_array(value)
    if a is None:
        return "?"

    def num(v) -> str:
        if a.dtype == bool:
            return str(bool(v))
        if isinstance(v, (np.integer, int)):
            return str(int(v))
        v = float(v)
        if math.isnan(v) or math.isinf(v):
            return str(v)
        if v == int(v) and abs(v) < 1e6:
            return str(int(v))
        text = f"{v:.{precision}g}"
        # sin(11) = -0.99999 must not read as an exact "-1": more digits until it shows.
        for more in range(precision + 1, 11):
            if "." in text or "e" in text:
                break
            text = f"{v:.{more}g}"
        return text

    if a.ndim == 0:
        return num(a.item())
    if a.size > max_items:
        flat = a.reshape(-1)
        return f"[{num(flat[0])}, {num(flat[1])}, …, {num(flat[-2])}, {num(flat[-1])}]"
    if a.ndim == 1:
        return "[" + ", ".join(num(v) for v in a) + "]"
    if a.ndim == 2:
        rows = ["[" + ", ".join(num(v) for v in row) + "]" for row in a]
        return "[" + ",\n ".join(rows) + "]"
    return "[" + ", ".join(num(v) for v in a.reshape(-1)) + "]"


def as_array(value: Any) -> np.ndarray | None:
    """``value`` as a numpy array (a tensor through ``detach()``), or None if it has none.

    Examples
    --------
    >>> as_array([1, 2]).tolist(), as_array(None), as_array([[1], [2, 3]])
    ([1, 2], None, None)
    """
    if value is None:
        return None
    if isinstance(value, (int, float, bool, np.generic, np.ndarray, list, tuple)):
        try:
            return np.asarray(value)
        except Exception:  # noqa: BLE001 - ragged lists have no display value
            return None
    if hasattr(value, "detach"):
        try:
            return np.asarray(value.detach().cpu().numpy() if hasattr(value, "cpu")
                              else value.detach().numpy())
        except Exception:  # noqa: BLE001 - a tensor we cannot read has no display value
            return None
    return None


def shape_text(shape: Any, sizes: Mapping[int, str] | None = None) -> str:
    """``"scalar"``, ``"shape (3,)"``, ``"shape (2, 3)"``; with ``sizes`` naming the
    numbers, ``"n×m"`` (a drawing of an expression whose sizes are symbolic).

    Examples
    --------
    >>> shape_text(()), shape_text((3,)), shape_text([2, 3])
    ('scalar', 'shape (3,)', 'shape (2, 3)')
    >>> shape_text((2, 3), {2: "n", 3: "m"}), shape_text((3,), {2: "n", 3: "m"})
    ('shape n×m', 'shape m')
    """
    shape = tuple(int(n) for n in shape)
    if not shape:
        return "scalar"
    if sizes and all(n in sizes or n == 1 for n in shape):
        return "shape " + "×".join(sizes.get(n, "1") for n in shape)
    inner = ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "")
    return f"shape ({inner})"


def dtype_text(t: Any) -> str:
    """The dtype of ``t`` without PyTorch's ``torch.`` prefix (empty without a dtype)."""
    d = getattr(t, "dtype", None)
    return "" if d is None else str(d).replace("torch.", "")


def attr_text(v: Any) -> str:
    """An attribute or saved number as a drawing shows it (long tuples shortened).

    Examples
    --------
    >>> attr_text(2.0), attr_text((1, 2, 3, 4, 5, 6, 7)), attr_text("mean")
    ('2', '(1, 2, 3, …)', 'mean')
    """
    if isinstance(v, (int, float, np.generic)):
        return format_value(v)
    if isinstance(v, (tuple, list)) and len(v) > 6:
        return f"({', '.join(str(x) for x in v[:3])}, …)"
    return str(v)
