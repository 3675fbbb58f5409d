"""Logical not, all, any and arg-reductions: no gradient (comparisons: ``compare``)."""
from __future__ import annotations

import numpy as np

from . import dtype_rules as R
from .compare import *  # noqa: F401,F403  (eq, lt, ... and the connectives)
from .record import Op
from .reductions import _extreme_indices, refuse_empty

__all__: list = []  # the comparisons register themselves; none is named


Op("logical_not", forward=np.logical_not, dtype=R.boolean, method=("logical_not", "__invert__"),
   function="logical_not")


Op("all", attrs=("dim", "keepdim"), method="all", function="all", dtype=R.boolean,
   forward=lambda a, dim, keepdim: np.all(a, axis=dim, keepdims=keepdim))


Op("any", attrs=("dim", "keepdim"), method="any", function="any", dtype=R.boolean,
   forward=lambda a, dim, keepdim: np.any(a, axis=dim, keepdims=keepdim))


Op("argmax", attrs=("dim", "keepdim"), method="argmax", function="argmax", dtype=R.int64,
   refuse={"self:bool": (RuntimeError, "argmax(): does not support bool input")},
   forward=lambda a, dim, keepdim: refuse_empty("argmax", a, dim, IndexError)
   or np.argmax(a, axis=dim, keepdims=keepdim))


# The indices max(dim) and min(dim) return (bool operands included, unlike argmax's).
for _kind in ("Max", "Min"):
    Op(f"{_kind.lower()}_indices", attrs=("dim", "keepdim"), dtype=R.int64,
       forward=lambda a, dim, keepdim, f=_extreme_indices(_kind): f((a,), (dim, keepdim)))


Op("argmin", attrs=("dim", "keepdim"), method="argmin", function="argmin", dtype=R.int64,
   refuse={"self:bool": (RuntimeError, "argmin(): does not support bool input")},
   forward=lambda a, dim, keepdim: refuse_empty("argmin", a, dim, IndexError)
   or np.argmin(a, axis=dim, keepdims=keepdim))
