"""The programs' numeric walk knows every one-argument function an op maps to."""
import numpy as np
import pytest
import sympy as sp

from symgrad import ops as O
from symgrad.symbolic.numeric import evaluate

FUNCTIONS = sorted({op.name: op for op in O.OPS.values()
                    if isinstance(op.sym, str) and len(op.inputs) == 1 and not op.attrs
                    and isinstance(getattr(sp, op.sym, None), type)
                    and issubclass(getattr(sp, op.sym), sp.Function)}.items())


@pytest.mark.parametrize("name,op", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_walk_agrees_with_sympy(name, op):
    x = sp.Symbol("x")
    lo, hi = op.domain
    x0 = 0.3 if lo < 0.3 < hi else (lo + 0.7 if np.isfinite(lo) else hi - 0.7)
    e = getattr(sp, op.sym)(x)
    got = evaluate(e, {x: np.float64(x0)})
    assert np.isclose(float(got), float(e.subs(x, x0).evalf(30)), rtol=1e-12)
