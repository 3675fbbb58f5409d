"""How the expression language calls a function of the op table (``softmax(x)``).

The function the op table names for it (``Op.function``) runs on the operands and the
fixed arguments the language passes (``Op.expr_args``: softmax's dim -1); an op with no
``symgrad.*`` function (an activation: ``F.softplus``) runs as itself.  The evaluator
(:mod:`~symgrad.symbolic.expression`) and the matrix algebra
(:mod:`~symgrad.symbolic.vectors`, which must know what such a call records) share it.
"""
from __future__ import annotations

from ..api import functional as F
from ..api.apply import apply
from ..api.tensor import Tensor

__all__ = ["call"]


def call(op, operands: tuple, args: tuple | None = None) -> Tensor:
    """``op`` called as the expression language calls it, on tensors: after the operands,
    ``args`` (default: the record's ``expr_args``)."""
    args = op.expr_args if args is None else args
    if op.function is None:
        return apply(op, tuple(operands), args)
    return getattr(F, op.function)(*operands, *args)
