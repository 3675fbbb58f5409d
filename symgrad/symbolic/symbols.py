"""SymPy values of tensors: exact numbers, the symbols of leaves, object arrays, kinks."""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..api.tensor import Tensor

__all__ = ["nice_number", "as_sympy", "almost_everywhere", "leaf_symbols"]


#: Constants the op table's rules use, by their float64 value (``log(2)`` in exp2's).
_KNOWN = {math.pi: sp.pi, math.e: sp.E, math.log(2): sp.log(2), math.log(10): sp.log(10),
          2 / math.sqrt(math.pi): 2 / sp.sqrt(sp.pi), math.sqrt(math.pi) / 2: sp.sqrt(sp.pi) / 2,
          math.sqrt(2): sp.sqrt(2), 1 / math.sqrt(2): 1 / sp.sqrt(2),
          math.sqrt(2 / math.pi): sp.sqrt(2 / sp.pi), 1 / math.sqrt(2 * math.pi):
          1 / sp.sqrt(2 * sp.pi)}


def nice_number(v) -> sp.Expr:
    """A Python/numpy number as an exact SymPy number where its decimal text is short.

    ``0.1`` becomes ``1/10``, ``1/3`` folded by the parser ``1/3`` again, ``2.0`` becomes
    ``2``, ``math.pi`` becomes ``pi`` (and ``math.log(2)`` ``log(2)``, the constants of
    the op table's rules); a float whose shortest text is long stays a
    :class:`sympy.Float`.

    Examples
    --------
    >>> nice_number(0.5), nice_number(2.0), nice_number(math.pi), nice_number(1 / 3)
    (1/2, 2, pi, 1/3)
    >>> nice_number(0.123456789)
    0.123456789000000
    >>> nice_number(math.pi / 4), nice_number(-2 * math.pi / 3)
    (pi/4, -2*pi/3)
    """
    if isinstance(v, sp.Basic):
        if isinstance(v, sp.Float):
            return nice_number(float(v))
        return v
    if isinstance(v, (bool, np.bool_)):
        return sp.true if v else sp.false
    if isinstance(v, (int, np.integer)):
        return sp.Integer(int(v))
    f = float(v)
    if not math.isfinite(f):
        return sp.oo if f > 0 else -sp.oo if f < 0 else sp.nan
    known = _KNOWN.get(abs(f))
    if known is not None:
        return known if f > 0 else -known
    if f.is_integer() and abs(f) < 1e15:
        return sp.Integer(int(f))
    multiple = _pi_multiple(f)
    if multiple is not None:
        return multiple
    text = str(v) if isinstance(v, np.floating) else repr(f)
    if len(text.replace("-", "").replace(".", "").lstrip("0")) <= 8 and "e" not in text:
        return sp.Rational(text)
    return sp.Float(f)


#: Constants whose rational multiples (and quotients) are recognised in folded floats.
_CONSTANTS = ((1.0, sp.Integer(1)), (math.pi, sp.pi), (math.sqrt(math.pi), sp.sqrt(sp.pi)),
              (math.e, sp.E),
              (math.sqrt(2), sp.sqrt(2)), (math.sqrt(3), sp.sqrt(3)),
              (math.log(2), sp.log(2)), (math.log(10), sp.log(10)))


def _pi_multiple(f: float):
    """``p*c/q`` or ``p/(q*c)`` (c one of :data:`_CONSTANTS`, 1 first; q <= 12) when ``f``
    is that number to float rounding (``pi/4`` folded by the parser is ``math.pi / 4``;
    ``2/sqrt(pi)`` is a product of two roundings), else None."""
    if f == 0 or not 1e-4 < abs(f) < 1e4:
        return None
    for c, exact in _CONSTANTS:
        for q in range(1, 13):
            for ratio, make in ((f / c * q, lambda p: exact * sp.Rational(p, q)),
                                (f * c * q, lambda p: sp.Rational(p, q) / exact)):
                p = round(ratio)
                if p and abs(p) <= 1000 and math.gcd(p, q) == 1 \
                        and abs(ratio - p) <= 4e-15 * abs(p):
                    return make(p)
    return None


def _nicen(expr):
    """Replace floats in a (small) expression by exact numbers where they are short."""
    if not isinstance(expr, sp.Basic):
        return nice_number(expr) if isinstance(expr, (int, float, np.number)) else expr
    floats = expr.atoms(sp.Float)
    if not floats:
        return expr
    return expr.xreplace({f: nice_number(f) for f in floats})


_nicen_all = np.frompyfunc(_nicen, 1, 1)


def as_sympy(value) -> np.ndarray:
    """A constant (tensor, array or number) as an object array of exact SymPy numbers."""
    if isinstance(value, Tensor):
        value = value._data
    a = np.asarray(value)
    out = np.empty(a.shape, dtype=object)
    for ix in np.ndindex(a.shape):
        out[ix] = nice_number(a[ix])
    return out


def _obj(x) -> np.ndarray:
    if isinstance(x, np.ndarray) and x.dtype == object:
        return x
    if isinstance(x, np.ndarray):
        return as_sympy(x)
    out = np.empty((), dtype=object)
    out[()] = sp.sympify(x) if not isinstance(x, (float, np.floating)) else nice_number(x)
    return out


_NONSMOOTH = (sp.Max, sp.Min, sp.Abs, sp.Piecewise, sp.sign, sp.Heaviside)


def almost_everywhere(expr):
    """Drop ``Piecewise`` branches taken only on a set of measure zero.

    A branch whose condition is ``Eq(a, b)`` with ``a - b`` a non-zero expression free
    of kinks (no ``Max``, ``Abs``, ``Piecewise``, ...) holds only on a null set (such as
    ``Eq(sqrt(x**2 + y**2), 0)`` in the gradient of a norm), so it cannot change a
    gradient almost everywhere.  Equalities between kinked expressions (``Eq(x,
    Max(x, y))``, which holds on a half-space) are kept.

    Examples
    --------
    >>> x = sp.Symbol("x", real=True)
    >>> almost_everywhere(sp.Piecewise((0, sp.Eq(x**2, 0)), (1 / x, True)))
    1/x
    >>> almost_everywhere(sp.Piecewise((1, sp.Eq(x, sp.Max(x, 0))), (0, True)))
    Piecewise((1, Eq(x, Max(0, x))), (0, True))
    """
    if not isinstance(expr, sp.Basic) or not expr.has(sp.Piecewise):
        return expr

    def null(cond) -> bool:
        if isinstance(cond, sp.And):  # a subset of a null set is null
            return any(null(c) for c in cond.args)
        if not isinstance(cond, sp.Eq):
            return False
        d = cond.lhs - cond.rhs
        # |u| = 0 and u**k = 0 (k > 0) hold exactly where u = 0.
        while isinstance(d, sp.Abs) or (isinstance(d, sp.Pow) and d.exp.is_positive):
            d = d.args[0]
        return bool(d.free_symbols) and not d.has(*_NONSMOOTH) and d != 0

    def visit(pw):
        kept = [(v, c) for v, c in pw.args if not null(c)]
        if not kept or len(kept) == len(pw.args):
            return pw
        if kept[-1][1] is not sp.true:
            kept.append((sp.nan, True))
        return sp.Piecewise(*kept)

    return expr.replace(lambda e: isinstance(e, sp.Piecewise), visit)


def leaf_symbols(name: str, shape: tuple, real: bool = True) -> np.ndarray:
    """One symbol per element: ``x`` for a scalar, ``x_0, x_1`` for a vector, ``A_0_1``.

    Examples
    --------
    >>> leaf_symbols("A", (2, 2))
    array([[A_0_0, A_0_1],
           [A_1_0, A_1_1]], dtype=object)
    """
    out = np.empty(shape, dtype=object)
    for ix in np.ndindex(*shape):
        label = name + "".join(f"_{i}" for i in ix)
        out[ix] = sp.Symbol(label, real=real)
    return out


def _to_public(a: np.ndarray):
    """An object array as users get it: a scalar, a column Matrix, a Matrix, an Array."""
    if a.ndim == 0:
        return a[()]
    if a.ndim == 1:
        return sp.Matrix(list(a))
    if a.ndim == 2:
        return sp.Matrix(a.tolist())
    return sp.Array(a.tolist())
