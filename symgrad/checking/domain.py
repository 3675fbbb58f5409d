"""Where a point may be judged: inside the real domain of the function, off its kinks,
and with a difference that survives exact arithmetic.

A point counts as a counterexample only where the function is real and differentiable:

* every operation of the function is inside its domain there
  (:meth:`~symgrad.symbolic.expression.Expression.domain_error`, which reads the op
  records: ``log`` of a negative number, ``sqrt`` below 0, ``acos`` past 1, ...);
* the point is off every kink, the zeros of the arguments of ``Abs``, ``sign``,
  ``Heaviside``, of ``Max``/``Min``'s differences and of the comparisons of
  ``Piecewise`` (how relu, hardtanh, clamp, leaky ReLU, maximum ... read in SymPy), in
  the function, its true gradient and the claim (:class:`Kinks`);
* the difference of claim and truth is confirmed at the point exactly: its floats as the
  exact decimals written, evaluated by SymPy (mpmath) at 30 and then 60 digits, judged
  against the size of the terms summed, not of a result that may cancel to 0
  (:func:`confirm`).

Examples
--------
>>> import sympy as sp
>>> x = sp.Symbol("x", real=True)
>>> t = 1 - sp.tanh(x) ** 2 - 4 * sp.exp(2 * x) / (sp.exp(2 * x) + 1) ** 2
>>> confirm([sp.Integer(0)], [t], {x: sp.Rational(3, 2)})
'equal'
>>> confirm([40 * sp.exp(40 * x) * sp.Float(1 + 1e-9)], [40 * sp.exp(40 * x)], {x: 0})
'different'
>>> Kinks([sp.Abs(x - 1)], [x]).near({"x": 1.0}), Kinks([sp.Abs(x - 1)], [x]).near({"x": 2})
(True, False)
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from ..symbolic.symbols import almost_everywhere

__all__ = ["Kinks", "abstract_kinks", "kink_arguments", "confirm", "exact", "exact_point",
           "MAX_EXACT_OPS", "KINK_DISTANCE", "real_at_point"]

#: Exact confirmation runs on element pairs of at most this many operations (larger ones,
#: a deep net's gradient, are judged in float64 against the size of their terms).
MAX_EXACT_OPS = 1500
#: A point closer than this (relative to its size) to a kink is not judged.
KINK_DISTANCE = 1e-7
_MAX_KINKS = 200


def exact(e):
    """``e`` with every float replaced by the exact decimal it was written as (``0.1`` is
    ``1/10``, ``4.000001`` is ``4000001/1000000``)."""
    e = sp.sympify(e)
    floats = e.atoms(sp.Float)
    return e.xreplace({f: sp.Rational(repr(float(f))) for f in floats}) if floats else e


def abstract_kinks(*exprs):
    """``exprs`` with each outermost kink (``Abs``, ``sign``, ``Heaviside``, ``Max``,
    ``Min``, ``Piecewise``) replaced by a fresh symbol, and the map back.  An identity of
    the results holds for the originals (the symbols only forget what the kinks are)."""
    kinds = (sp.Abs, sp.sign, sp.Heaviside, sp.Max, sp.Min, sp.Piecewise)
    atoms = set().union(*(sp.sympify(e).atoms(*kinds) for e in exprs))
    forward = {a: sp.Dummy("k") for a in sorted(atoms, key=sp.default_sort_key)}
    back = {v: k for k, v in forward.items()}
    out = [sp.sympify(e).xreplace(forward) for e in exprs]
    return (out[0] if len(out) == 1 else out), back


def kink_arguments(exprs) -> list:
    """The expressions whose zeros are kinks or steps of any of ``exprs``."""
    out: dict = {}
    for e in exprs:
        e = sp.sympify(e)
        if not isinstance(e, sp.Basic):
            continue
        for k in e.atoms(sp.Abs, sp.sign, sp.Heaviside):
            out[k.args[0]] = None
        for k in e.atoms(sp.Max, sp.Min):
            for a, b in zip(k.args, k.args[1:]):
                out[a - b] = None
        for r in e.atoms(sp.core.relational.Relational):
            if not isinstance(r, (sp.Eq, sp.Ne)):
                out[r.lhs - r.rhs] = None
    return [u for u in out if u.free_symbols][:_MAX_KINKS]


class Kinks:
    """The kinks of some expressions, tested at points quickly (numpy).

    Parameters
    ----------
    exprs : iterable of SymPy expressions
    symbols : list of Symbol
        The symbols a point gives values to (named as the variables, ``x_0`` for an
        element of ``x``).
    """

    def __init__(self, exprs, symbols: list) -> None:
        self.arguments = kink_arguments(exprs)
        self.symbols = list(symbols)
        self._fn = None
        if self.arguments:
            try:  # (one function for all: lambdify costs a millisecond a call)
                self._fn = sp.lambdify(self.symbols, self.arguments, modules="numpy")
            except Exception:  # noqa: BLE001 - arguments numpy cannot run: no kinks known
                self._fn = None

    def near(self, point: dict) -> bool:
        """Whether ``point`` (variable -> value) lies on or next to a kink."""
        if self._fn is None:
            return False
        values = _flat_values(point, self.symbols)
        if values is None:
            return False
        size = 1.0 + max((abs(v) for v in values), default=0.0)
        with np.errstate(all="ignore"):
            try:
                us = self._fn(*values)
            except Exception:  # noqa: BLE001 - not evaluable here: not a kink we know
                return False
        flat = None
        for i, u in enumerate(us):
            try:
                if abs(complex(u)) > KINK_DISTANCE * size:
                    continue
            except (TypeError, ValueError):
                continue
            # (``Max(0, u) <= 0`` has an argument that is 0 on a whole region: no kink
            # unless it leaves 0 nearby; its ends are the kinks of ``Max``)
            if flat is None:  # (steps of unequal sizes: x - y must move too)
                steps = [1e-4 * size * (1 + 0.618 * i) for i in range(len(values))]
                flat = [self._at([v + h for v, h in zip(values, steps)]),
                        self._at([v - h for v, h in zip(values, steps)])]
            if all(f is not None and abs(complex(f[i])) <= KINK_DISTANCE * size for f in flat):
                continue
            return True
        return False

    def _at(self, values):
        with np.errstate(all="ignore"):
            try:
                return self._fn(*values)
            except Exception:  # noqa: BLE001 - not evaluable here
                return None


def _flat_values(point: dict, symbols: list) -> list | None:
    """The value of each symbol (``x_0_1`` from ``point["x"][0, 1]``), or None."""
    out = []
    for s in symbols:
        name, *ix = s.name.split("_")
        if name not in point:
            # (a variable name with underscores: the longest known prefix)
            parts = s.name.split("_")
            for cut in range(len(parts), 0, -1):
                if "_".join(parts[:cut]) in point:
                    name, ix = "_".join(parts[:cut]), parts[cut:]
                    break
            else:
                return None
        v = np.asarray(point[name], dtype=np.float64)
        try:
            out.append(float(v[tuple(int(i) for i in ix)]) if ix else float(v))
        except (ValueError, IndexError, TypeError):
            return None
    return out


def exact_point(point: dict, symbols: list) -> dict | None:
    """Symbol -> the exact rational of each float64 value of ``point``."""
    values = _flat_values(point, symbols)
    if values is None:
        return None
    return {s: sp.Rational(v) for s, v in zip(symbols, values)}


def _size(e) -> float:
    """The size of the terms summed in ``e`` (a number): the largest of them."""
    best = 0.0
    for term in sp.Add.make_args(e):
        try:
            best = max(best, abs(complex(sp.N(term, 15))))
        except (TypeError, ValueError):
            return float("nan")
    return best


def confirm(claimed: list, true: list, subs: dict) -> str:
    """Whether the claim differs from the truth at an exact point, each element pair
    evaluated exactly (floats as the decimals written) by SymPy's arbitrary precision.

    Returns ``"different"`` (some element differs, certainly: the difference keeps its
    leading digits from 30 to 60 digits and is far above the rounding of its terms),
    ``"equal"`` (every element agrees to 40 digits of the size of its terms) or
    ``"unknown"`` (too large to evaluate exactly, not a real number, a difference that
    the 15 digits of a float constant could explain, ...).
    """
    verdict = "equal"
    for c, t in zip(claimed, true):
        c, t = almost_everywhere(sp.sympify(c)), almost_everywhere(sp.sympify(t))
        # A float constant may be a folded one (``pi**2/4`` as 2.46740110027234): it is
        # exact only to float64's digits, so a difference must exceed what they explain,
        # 1e-13 of the terms that hold one (``1e-20*Max(0, x - 30)`` explains no
        # difference of 1e-20 but a term ``2.467*x`` one of 1e-16).
        floated = [a for e in (c, t) for a in sp.Add.make_args(e) if a.atoms(sp.Float)]
        c, t = exact(c), exact(t)
        if sp.count_ops(c) + sp.count_ops(t) > MAX_EXACT_OPS:
            return "unknown"
        try:
            cv, tv = c.xreplace(subs), t.xreplace(subs)
            if cv.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or tv.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
                return "unknown"
            size = max(_size(cv), _size(tv))
            floor = 1e-25 * size
            if floated:
                floor = max(floor, 1e-13 * max(_size(exact(a).xreplace(subs))
                                               for a in floated))
            d = cv - tv
            v1 = complex(sp.N(d, 30))
            v2 = complex(sp.N(d, 60))
        except (TypeError, ValueError, ZeroDivisionError, RecursionError):
            return "unknown"
        if not np.isfinite(size) or not (np.isfinite(v1.real) and np.isfinite(v2.real)):
            return "unknown"
        if abs(v2) <= 1e-40 * max(size, 1e-300):
            continue
        if abs(v1 - v2) <= 1e-6 * abs(v2) and abs(v2) > floor:
            return "different"
        verdict = "unknown"
    return verdict


def real_at_point(e, point: dict) -> bool:
    """Whether ``e`` and each function and power in it are real and finite at ``point``
    (symbol -> exact value): ``sqrt(y)/sqrt(x)`` is not at x = y = -1, although SymPy
    writes it as a real number there."""
    e = sp.sympify(e)
    for a in [e, *e.atoms(sp.Function, sp.Pow)]:
        try:
            v = sp.N(a.xreplace(point), 15)
            re, im = v.as_real_imag()
            if not (re.is_finite and im.is_finite) or abs(im) > 1e-12 * max(1, abs(re)):
                return False
        except (TypeError, ValueError, ZeroDivisionError, AttributeError):
            return False
    return True
