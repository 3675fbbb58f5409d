"""The optional compiled loops (``symgrad/_speedups.c``), handed the Python side.

symgrad is complete in Python.  When the C extension was built at install time, the fast
path of ``tensor.apply`` and the plain-node loop of ``engine._run_ordered`` run compiled:
the same steps, the same op-table callables, without the interpreter in between (scalar
code runs twice as fast).  ``SYMGRAD_PURE_PYTHON=1`` keeps everything in Python.

Examples
--------
>>> from symgrad.api import compiled as _compiled
>>> _compiled.ENABLED in (True, False)
True
"""
from __future__ import annotations

import os
from typing import Callable

__all__ = ["ENABLED", "accelerate"]

ENABLED = False


def accelerate(apply: Callable) -> Callable:
    """``apply`` compiled if the extension is there (and wanted), else ``apply`` itself;
    points the engine at the compiled backward loop."""
    global ENABLED
    if os.environ.get("SYMGRAD_PURE_PYTHON", "") not in ("", "0"):
        return apply
    try:
        from .. import _speedups
    except ImportError:
        return apply
    import numpy as np

    from .. import ops
    from ..engine import reverse as engine
    from ..ir import node as graph
    from ..ops import dtypes
    from . import tensor
    _speedups.setup({
        "Tensor": tensor.Tensor, "Op": ops.Op, "ndarray": np.ndarray, "Node": graph.Node,
        "AccumulateGrad": graph.AccumulateGrad, "dtype": dtypes.dtype,
        "GRAD_MODE": graph.GRAD_MODE, "sequence": graph._sequence,
        "META0": tensor._META0, "NUMBER_META": tensor._NUMBER_META, "apply": apply,
        "conform_data": tensor._conform_data, "NUMPY": engine.NUMPY,
        "scalar_meta": engine._scalar_meta(), "version_error": engine._version_error,
        "conform_grad": engine._conform, "release": engine._release,
        "run_other": engine._run_other, "run_accumulators": engine._run_accumulators,
        "FREED": engine._FREED, "ALL_FREED": engine._ALL_FREED, "seq_key": engine._SEQ,
    })
    engine._run_ordered_compiled = _speedups.run_ordered
    for name, (op, arity) in tensor._DIRECT_METHODS.items():
        setattr(tensor.Tensor, name, _speedups.method(op, vars(tensor.Tensor)[name], arity))
    ENABLED = True
    return _speedups.apply
