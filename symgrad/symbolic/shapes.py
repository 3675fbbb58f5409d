"""Shapes without values: a placeholder value that fixes a variable's shape, and shapes
given with named sizes (``--shape A=n,m``) made concrete.  Pure numpy: the command line
reads ``--shape`` without loading SymPy."""
from __future__ import annotations

from typing import Mapping

import numpy as np

__all__ = ["placeholder", "resolve_shapes"]


def placeholder(shape: tuple):
    """A value that fixes a variable's shape only: 0.5 everywhere, plus the identity for a
    square matrix (invertible, for ``inverse(A)`` and ``det(A)``)."""
    a = np.full(tuple(shape), 0.5)
    if a.ndim == 2 and a.shape[0] == a.shape[1]:
        a += np.eye(a.shape[0])
    return a.tolist() if a.ndim else 0.5


def resolve_shapes(spec: Mapping | None) -> tuple[dict, dict]:
    """Shapes with named sizes -> ``(shapes, labels)``: concrete shapes (distinct names
    get distinct sizes 2, 3, 4, ... in order of appearance) and the names of each
    variable's dimensions (None for a size given as a number).

    Examples
    --------
    >>> resolve_shapes({"A": ("n", "m"), "x": ("m",), "y": (4,)})
    ({'A': (2, 3), 'x': (3,), 'y': (4,)}, {'A': ('n', 'm'), 'x': ('m',), 'y': (None,)})
    """
    sizes: dict = {}
    shapes, labels = {}, {}
    for name, dims in (spec or {}).items():
        dims = tuple(dims)
        shapes[name] = tuple(sizes.setdefault(d, len(sizes) + 2) if isinstance(d, str)
                             else int(d) for d in dims)
        labels[name] = tuple(d if isinstance(d, str) else None for d in dims)
    return shapes, labels
