"""The optional compiled loops (``symgrad/_speedups.c``), handed the Python side.

symgrad is complete in Python.  When the C extension was built at install time, it holds
the only copy of two shortcuts for scalar code: ``apply``'s fast path (plain floating
tensors of one dtype and numbers, an op with a simple saving plan; every other call goes
to the general Python ``apply``) and a plain ``backward()`` (the engine's loop on numpy
arrays, every node running; nodes off that path go back to the engine's Python
helpers).  Both call the op table's own callables, so no maths is written twice; scalar
code runs about twice as fast.  ``SYMGRAD_PURE_PYTHON=1`` keeps everything in Python.

Two steps, each called once at import time: :func:`accelerate` by :mod:`symgrad.api.apply`
(the compiled ``apply``), :func:`accelerate_methods` by :mod:`symgrad.api.tensor` once the
:class:`~symgrad.api.core.Tensor` class has its methods.

Examples
--------
>>> from symgrad.api import compiled as _compiled
>>> _compiled.ENABLED in (True, False)
True
"""
from __future__ import annotations

import operator
import os
from typing import Callable

import numpy as np

from .. import ops
from ..engine import reverse as engine
from ..engine import rules
from ..ir import node as graph
from ..ir.backends import NUMPY
from ..ops import dtypes
from .core import Tensor

if os.environ.get("SYMGRAD_PURE_PYTHON", "") in ("", "0"):
    try:
        from .. import _speedups
    except ImportError:  # not built: everything runs in Python
        _speedups = None
else:
    _speedups = None

__all__ = ["ENABLED", "accelerate", "accelerate_methods", "set_packing"]

ENABLED = False


def accelerate(apply: Callable, conform_data: Callable) -> Callable:
    """``apply`` compiled if the extension is there (and wanted), else ``apply`` itself;
    points the engine at the compiled backward loop.  ``conform_data`` is the helper the
    compiled ``apply`` calls to store a result in its dtype."""
    global ENABLED
    if _speedups is None:
        return apply
    _speedups.setup({
        "Tensor": Tensor, "Op": ops.Op, "ndarray": np.ndarray, "Node": graph.Node,
        "AccumulateGrad": graph.AccumulateGrad, "dtype": dtypes.dtype,
        "GRAD_MODE": graph.GRAD_MODE, "sequence": graph._sequence,
        "META0": graph._META0, "NUMBER_META": graph._NUMBER_META, "apply": apply,
        "conform_data": conform_data, "NUMPY": NUMPY,
        "scalar_meta": rules.SCALAR_META,
        "version_error": graph._version_error, "conform_grad": NUMPY.conform,
        "release": rules.release, "run_other": engine._run_other,
        "run_accumulators": engine._run_accumulators, "FREED": rules.FREED_MESSAGE,
        "ALL_FREED": rules.ALL_FREED, "seq_key": operator.attrgetter("_seq"),
    })
    engine._run_ordered_compiled = _speedups.run_ordered
    ENABLED = True
    return _speedups.apply


def accelerate_methods(cls: type, methods: dict) -> None:
    """Replace the methods of ``cls`` that are exactly one op (``methods``: name -> (op,
    number of operands)) by compiled ones, if :func:`accelerate` compiled ``apply``."""
    if not ENABLED:
        return
    for name, (op, arity) in methods.items():
        setattr(cls, name, _speedups.method(op, vars(cls)[name], arity))


_ASIDE: dict = {}


def set_packing(n: int, reason: str = "saved_tensors_hooks") -> None:
    """Tell the compiled ``apply`` how many ``saved_tensors_hooks`` blocks (or, ``reason``
    ``"dual levels"``, forward-mode levels) are open, in any thread: while some are, every
    call takes the Python path, which runs the hooks (and computes tangents)."""
    _ASIDE[reason] = n
    if ENABLED:
        _speedups.set_packing(sum(_ASIDE.values()))
