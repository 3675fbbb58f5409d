"""Comparisons and the logical connectives: no gradient, but gradient rules call them
(``m.call(EQ, self, 0)``), so they are named here, below the families that use them."""
from __future__ import annotations

import numpy as np

from . import dtype_rules as R
from .kernels import sym_connective, sym_relation
from .record import Op
from .tables import CONJUNCTION, FORMULA, MEASURE_ZERO, NO_VECTOR_FORM, STEP

__all__ = ["EQ", "NE", "LT", "LE", "GT", "GE", "LOGICAL_AND", "LOGICAL_OR"]


def _compare(name: str, forward, sym, dunder: tuple = ()) -> Op:
    # (``&`` and ``|`` of tensors are the logical ops, whatever their dtype.)
    return Op(name, inputs=("self", "other"), forward=forward, dtype=R.boolean,
              broadcasts=True, sym=sym, method=(name,) + dunder, function=name)


EQ = _compare("eq", np.equal, sym_relation("Eq"))
NE = _compare("ne", np.not_equal, sym_relation("Ne"))
LT = _compare("lt", np.less, sym_relation("Lt"))
LE = _compare("le", np.less_equal, sym_relation("Le"))
GT = _compare("gt", np.greater, sym_relation("Gt"))
GE = _compare("ge", np.greater_equal, sym_relation("Ge"))
LOGICAL_AND = _compare("logical_and", np.logical_and, sym_connective("And"), ("__and__",))
LOGICAL_OR = _compare("logical_or", np.logical_or, sym_connective("Or"), ("__or__",))


# What the matrix algebra knows of them: equality holds on a set of measure zero (a zero
# norm, a zero base); the others are steps, which have no vector form.
MEASURE_ZERO.register(True, EQ)
CONJUNCTION.register(True, LOGICAL_AND)
NO_VECTOR_FORM.register(STEP, NE, LT, LE, GT, GE, LOGICAL_AND, LOGICAL_OR)

# How a rule's comparison reads as text (symgrad.ops.formula): a condition.
for _op, _relation in ((EQ, "="), (NE, "≠"), (LT, "<"), (LE, "≤"), (GT, ">"), (GE, "≥"),
                       (LOGICAL_AND, "and"), (LOGICAL_OR, "or")):
    FORMULA.register("{self} %s {other}" % _relation, _op)
