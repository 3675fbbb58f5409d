"""Numbers from SymPy expressions without compiling them.

``sympy.lambdify`` costs a tenth of a second on its first call (its code printers load)
and milliseconds on each later one; a gradient program at a point needs one number per
line, so :func:`evaluate` walks the expression instead, with numpy's functions on
float64 scalars (``1/0`` is ``inf`` and ``log(-1)`` is ``nan``, as in reverse mode).  An
expression it does not know raises :class:`Unknown`, and the caller compiles that one.

Examples
--------
>>> x = sp.Symbol("x")
>>> float(evaluate(sp.sin(x) * 2 + x**2, {x: np.float64(0.5)}))
1.208851077208406
>>> float(evaluate(sp.Piecewise((x, x > 0), (0, True)), {x: np.float64(-1.0)}))
0.0
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .. import ops as O

__all__ = ["evaluate", "Unknown"]


class Unknown(ValueError):
    """An expression with a node :func:`evaluate` has no numpy meaning for."""


def _erf(x):
    return np.float64(math.erf(x)) if np.isfinite(x) else np.float64(np.sign(x))


def _erfc(x):
    return np.float64(math.erfc(x)) if np.isfinite(x) else np.float64(1 - np.sign(x))


_FUNCTIONS = {
    sp.sin: np.sin, sp.cos: np.cos, sp.tan: np.tan, sp.exp: np.exp, sp.log: np.log,
    sp.sinh: np.sinh, sp.cosh: np.cosh, sp.tanh: np.tanh, sp.asin: np.arcsin,
    sp.acos: np.arccos, sp.atan: np.arctan, sp.asinh: np.arcsinh, sp.acosh: np.arccosh,
    sp.atanh: np.arctanh, sp.Abs: np.abs, sp.sign: np.sign, sp.floor: np.floor,
    sp.ceiling: np.ceil, sp.erf: _erf, sp.erfc: _erfc, sp.atan2: np.arctan2,
    sp.sec: lambda x: 1 / np.cos(x), sp.csc: lambda x: 1 / np.sin(x),
    sp.cot: lambda x: 1 / np.tan(x), sp.frac: lambda x: x - np.floor(x),
    sp.Heaviside: lambda x, h=np.float64(0.5): np.heaviside(x, h),
    sp.re: np.real, sp.im: np.imag,
}

# Any other one-argument function an op maps to (``erfinv``): that op's own numpy forward.
for _op in O.OPS.values():
    _fn = getattr(sp, _op.sym, None) if isinstance(_op.sym, str) else None
    if (len(_op.inputs) == 1 and not _op.attrs and isinstance(_fn, type)
            and issubclass(_fn, sp.Function)):
        _FUNCTIONS.setdefault(_fn, _op.forward)

_RELATIONS = {sp.StrictGreaterThan: np.greater, sp.GreaterThan: np.greater_equal,
              sp.StrictLessThan: np.less, sp.LessThan: np.less_equal,
              sp.Equality: np.equal, sp.Unequality: np.not_equal}


def evaluate(e, env: dict):
    """The value of the SymPy expression ``e`` with ``env`` giving its symbols (numpy
    float64 scalars)."""
    if e.is_Symbol:
        return env[e]
    if e.is_Number or e in (sp.pi, sp.E):
        return np.float64(float(e)) if e.is_real is not False else complex(e)
    if e.is_Add:
        out = evaluate(e.args[0], env)
        for a in e.args[1:]:
            out = out + evaluate(a, env)
        return out
    if e.is_Mul:
        out = evaluate(e.args[0], env)
        for a in e.args[1:]:
            out = out * evaluate(a, env)
        return out
    if e.is_Pow:
        base, exp = evaluate(e.args[0], env), evaluate(e.args[1], env)
        if e.args[1] == sp.S.Half:
            return np.sqrt(base)
        return np.power(base, exp)
    kind = type(e)
    fn = _FUNCTIONS.get(kind)
    if fn is not None:
        return fn(*(evaluate(a, env) for a in e.args))
    if kind in (sp.Max, sp.Min):
        values = [evaluate(a, env) for a in e.args]
        pick = np.maximum if kind is sp.Max else np.minimum
        out = values[0]
        for v in values[1:]:
            out = pick(out, v)
        return out
    if isinstance(e, sp.Piecewise):
        for value, cond in e.args:
            if bool(evaluate(cond, env)):
                return evaluate(value, env)
        return np.float64(np.nan)
    if kind in _RELATIONS:
        return _RELATIONS[kind](evaluate(e.args[0], env), evaluate(e.args[1], env))
    if e is sp.true:
        return True
    if e is sp.false:
        return False
    if isinstance(e, sp.And):
        return all(bool(evaluate(a, env)) for a in e.args)
    if isinstance(e, sp.Or):
        return any(bool(evaluate(a, env)) for a in e.args)
    if isinstance(e, sp.Not):
        return not bool(evaluate(e.args[0], env))
    if e in (sp.oo, -sp.oo, sp.nan):
        return np.float64(float(e))
    if e is sp.I:
        return 1j
    raise Unknown(type(e).__name__)
