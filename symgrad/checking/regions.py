"""Proofs under the domain, piece by piece, for a function of one variable.

The real line is cut into open intervals at every point where the function may leave
its domain (an argument reaching an end of its op record's ``domain``: ``log`` wants a
positive argument, ``acos`` one in (-1, 1); the base of a fractional power reaching 0;
a pole) and at every kink of the function, its true gradient and the claim (the zeros
of the arguments of ``Abs``, ``sign``, ``Max``, ``Min``, ``Heaviside`` and of
``Piecewise``'s comparisons).  On each interval every kink is one smooth piece (decided
at a point inside), and the variable is written ``a + t`` (``b - t``,
``a + (b - a)·t/(1 + t)``) with ``t > 0``, so that SymPy knows the signs the domain
implies: ``log(x**x)`` is ``x·log(x)``, ``sqrt((x + 1)**2)``
is ``|x + 1|`` of a known sign, powers combine (``powsimp``, ``expand_power_exp``) and
logarithms expand.  Each interval is then proved equal, or shown different at a point
confirmed exactly (:func:`~symgrad.checking.domain.confirm`), or left open.

Examples
--------
>>> x = sp.Symbol("x", real=True)
>>> [(str(p.low), str(p.high), p.status) for p in
...  regions(sp.log(sp.log(x)), 1 / sp.log(x ** x), 1 / (x * sp.log(x)), x)]
[('1', 'oo', 'equal')]
>>> ps = regions(sp.Max(0, x), sp.Integer(1), sp.Piecewise((0, x <= 0), (1, True)), x)
>>> [(p.where(x), p.status) for p in ps]
[('x < 0', 'different'), ('x > 0', 'equal')]
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..ops import OPS
from ..symbolic.symbols import almost_everywhere
from .domain import confirm, exact, kink_arguments, real_at_point

__all__ = ["Piece", "regions", "where_text", "positive_parts", "equal_where_positive",
           "domain_points", "MAX_PIECES"]

#: At most this many intervals are proved one by one (more: no answer by pieces).
MAX_PIECES = 12
_KINK_TYPES = (sp.Abs, sp.sign, sp.Heaviside, sp.Max, sp.Min, sp.Piecewise)


@dataclass
class Piece:
    """One open interval ``(low, high)`` of the domain and what was shown there:
    ``status`` "equal" (proved), "different" (at ``point``, exactly) or "unknown"."""

    low: object
    high: object
    status: str
    point: object = None
    claimed: object = None  # (on a piece shown different: the claim and the truth there)
    true: object = None

    def where(self, x) -> str:
        """The interval in words: ``x > 0``, ``0.5 < x < 0.51``, ``every x``."""
        lo, hi = self.low, self.high
        if lo == -sp.oo and hi == sp.oo:
            return f"every {x}"
        if lo == -sp.oo:
            return f"{x} < {_number(hi)}"
        if hi == sp.oo:
            return f"{x} > {_number(lo)}"
        return f"{_number(lo)} < {x} < {_number(hi)}"


def _number(v) -> str:
    """An endpoint as a reader writes it (``0.51``, not ``51/100``)."""
    v = sp.sympify(v)
    if v.is_Rational and not v.is_Integer:
        q = v.q
        while q % 2 == 0:
            q //= 2
        while q % 5 == 0:
            q //= 5
        if q == 1:
            return repr(float(v))
    return str(v)


def where_text(pieces: list, x, f=None) -> str | None:
    """``right for x > 0, wrong for x < 0`` when some pieces are proved right and some
    wrong; None otherwise.  Neighbouring pieces of one status are said as one where
    ``f`` is real at the point between them (a kink of the claim or of a part of f that
    is no kink of f: ``0.999 < x < 1.001``, not ``0.999 < x < 1 and 1 < x < 1.001``)."""
    merged: list = []
    for p in pieces:
        last = merged[-1] if merged else None
        if last is not None and last.status == p.status and last.high == p.low and \
                f is not None and real_at_point(f, {x: p.low}):
            merged[-1] = Piece(last.low, p.high, p.status, last.point)
        else:
            merged.append(p)
    right = [p.where(x) for p in merged if p.status == "equal"]
    wrong = [p.where(x) for p in merged if p.status == "different"]
    if not right or not wrong:
        return None
    text = f"right for {' and '.join(right)}, wrong for {' and '.join(wrong)}"
    unknown = [p.where(x) for p in merged if p.status == "unknown"]
    if unknown:
        text += f" (not settled for {' and '.join(unknown)})"
    return text


def _op_domains() -> dict:
    """SymPy function name -> the open interval its op record declares as its domain
    (``log``: (0, inf), ``acos``: (-1, 1)), read from the op table."""
    out = {}
    for op in OPS.values():
        lo, hi = op.domain
        if isinstance(op.sym, str) and (np.isfinite(lo) or np.isfinite(hi)):
            out.setdefault(op.sym, (lo, hi))
    return out


def _zeros(u, x, solve: bool = True) -> set:
    """The real zeros of ``u`` (the ends of the sets where it is 0), or ValueError; with
    ``solve``, ``sympy.solve``'s roots where ``solveset`` finds no set (then the pieces
    are checked at several points each)."""
    if u.is_positive or u.is_negative:  # (``exp(2*x) + 1``)
        return set()
    zeros = sp.solveset(u, x, sp.S.Reals)
    if not isinstance(zeros, sp.FiniteSet):
        # (``Max(0, |x| - 1) = 0`` on [-1, 1]: the pieces end at its boundary)
        zeros = zeros.boundary
    if not isinstance(zeros, sp.FiniteSet):
        if not solve:
            raise ValueError("zeros not found")
        # (``log(x + sqrt(x**2 - 1)) = 0``: solve finds x = 1)
        try:
            zeros = sp.FiniteSet(*sp.solve(u, x))
        except (NotImplementedError, ValueError, TypeError):
            raise ValueError("zeros not found") from None
    return {z for z in zeros if z.is_real and z.is_finite}


def _cuts(f, exprs, x) -> set:
    """Every point where ``f`` may leave its domain (an argument reaching the end of its
    op's domain, a base of a fractional power reaching 0, a pole) or where a kink of
    ``exprs`` is: between two, all of them keep their sign and realness."""
    domains = _op_domains()
    cuts: set = set()
    for e in f.atoms(sp.Function, sp.Pow):
        if isinstance(e, sp.Pow):
            if e.base.has(x) and not (e.exp.is_Integer and e.exp > 0):
                cuts |= _zeros(e.base, x)
            continue
        bounds = domains.get(type(e).__name__)
        if bounds is None or len(e.args) != 1:
            continue
        for b in bounds:
            if np.isfinite(b):
                cuts |= _zeros(e.args[0] - sp.nsimplify(b), x)
    for u in kink_arguments(exprs):
        if u.free_symbols != {x}:
            raise ValueError("a kink in several variables")
        cuts |= _zeros(u, x, solve=False)  # (a missed kink would join two pieces)
    return cuts


def _real_at(f, x, p) -> bool:
    """Whether ``f`` and every function and power in it are real and finite at
    ``x = p`` (``log(-1)**2`` is real, but not its ``log``)."""
    return real_at_point(f, {x: p})


#: Points where the pieces found are checked against the function's values (7 lies in
#: (2π, 3π), where ``sin(x)**log(x)`` is real again).
_PROBES = [sp.Rational(v) for v in ("3/10", "-3/10", "3", "-3", "7", "30", "-30")]


def _intervals(f, exprs, x) -> list | None:
    """The open intervals where ``f`` is real, cut at the kinks of ``exprs``; None when
    they cannot be found (infinitely many cuts, too many pieces)."""
    f = exact(f)
    try:
        cuts = sorted(_cuts(f, [exact(e) for e in exprs], x), key=float)
    except (ValueError, TypeError, NotImplementedError):
        return None
    edges = [-sp.oo, *cuts, sp.oo]
    out = []
    for lo, hi in zip(edges, edges[1:]):
        inside = _inside(lo, hi)
        real = [_real_at(f, x, p) for p in inside]
        if any(real) != all(real):
            return None  # (real at some points only: a cut was missed)
        if real and real[0]:
            out.append((lo, hi))
    for p in _PROBES:
        if p not in cuts and _real_at(f, x, p) != any(
                bool(lo < p) and bool(p < hi) for lo, hi in out):
            return None
    return out if len(out) <= MAX_PIECES else None


def domain_points(f, shapes: dict, rng, count: int) -> list:
    """Up to ``count`` points (variable -> float64) inside the real domain of ``f`` (a
    SymPy expression of scalar variables), drawn from its exact intervals: for domains
    that points of the usual scales miss (``acos(x - 10)``: 9 < x < 11,
    ``sqrt(x - 1000)``).  With several variables, all but one take random values and the
    intervals are those of the last (a few such lines); [] when a variable is no scalar
    or no intervals are found (or f has no symbolic form: ``10**5000`` of its text)."""
    if not isinstance(f, sp.Basic):
        return []
    syms = sorted(f.free_symbols, key=str)
    if not syms or any(shapes.get(s.name) != () for s in syms):
        return []
    out: list = []
    lines = 1 if len(syms) == 1 else _DOMAIN_LINES
    for i in range(lines):
        x = syms[i % len(syms)]
        fixed = {s: sp.Rational(round(float(rng.uniform(-2, 2)), 2)) for s in syms if s != x}
        try:
            spans = _intervals(f.xreplace(fixed) if fixed else f, [f.xreplace(fixed)], x)
        except Exception:  # noqa: BLE001 - no intervals on this line
            spans = None
        if not spans:
            continue
        for j in range(-(-count // lines)):
            lo, hi = spans[j % len(spans)]
            if lo.is_finite and hi.is_finite:
                v = float(lo) + (float(hi) - float(lo)) * rng.uniform(0.05, 0.95)
            elif lo.is_finite:
                v = float(lo) + 10.0 ** rng.uniform(-1, 1.5)
            elif hi.is_finite:
                v = float(hi) - 10.0 ** rng.uniform(-1, 1.5)
            else:
                v = rng.uniform(-2, 2)
            point = {s.name: np.float64(float(val)) for s, val in fixed.items()}
            point[x.name] = np.float64(v)
            out.append(point)
    return out[:count]


#: Lines through the domain of a function of several variables tried for points.
_DOMAIN_LINES = 4


def _inside(lo, hi) -> list:
    """Exact points inside ``(lo, hi)``, the simplest first."""
    if lo == -sp.oo and hi == sp.oo:
        cands = [1, -1, sp.Rational(1, 2), 2, -2, 0, sp.Rational(-1, 2), 3]
    elif hi == sp.oo:
        base = sp.floor(lo) + 1
        cands = [base, base + 1, lo + sp.Rational(1, 2), base + 2, lo + sp.Rational(1, 10),
                 lo + 10]
    elif lo == -sp.oo:
        base = sp.ceiling(hi) - 1
        cands = [base, base - 1, hi - sp.Rational(1, 2), base - 2, hi - sp.Rational(1, 10),
                 hi - 10]
    else:
        w = hi - lo
        cands = [sp.nsimplify(lo + w / 2), lo + w / 4, lo + 3 * w / 4, lo + w / 10]
    out = []
    for c in cands:
        c = sp.nsimplify(c)
        if bool(lo < c) and bool(c < hi) and c not in out:
            out.append(c)
    return out


def _on_piece(e, x, x0):
    """``e`` with each kink replaced by its smooth piece at ``x = x0`` (innermost first)."""
    if e.is_Atom or not e.has(*_KINK_TYPES):
        return e
    if isinstance(e, sp.Piecewise):
        for expr, cond in e.args:
            c = cond if cond in (sp.true, sp.false) else \
                _on_piece(cond, x, x0).subs(x, x0)
            if c == sp.true:
                return _on_piece(expr, x, x0)
            if c != sp.false:
                raise ValueError("undecided condition")
        return sp.nan
    args = [_on_piece(a, x, x0) for a in e.args]
    if not isinstance(e, (sp.Abs, sp.sign, sp.Heaviside, sp.Max, sp.Min)):
        return e.func(*args)
    at = [sp.N(a.subs(x, x0), 30) for a in args]
    if isinstance(e, sp.Abs):
        return args[0] if at[0] > 0 else -args[0]
    if isinstance(e, sp.sign):  # (0 where the argument is 0 on the whole piece)
        return sp.Integer(0 if at[0] == 0 else 1 if at[0] > 0 else -1)
    if isinstance(e, sp.Heaviside):
        return sp.Integer(1 if at[0] > 0 else 0)
    pick = max if isinstance(e, sp.Max) else min
    return args[pick(range(len(args)), key=lambda i: at[i])]


def _equal(d, prove) -> bool:
    """Whether ``d`` (with the signs of its symbols known) is 0; ``prove`` the general
    prover tried last (:func:`~symgrad.checking.decision.is_zero`)."""
    tries = [d, sp.powsimp(sp.expand_power_exp(d)), sp.expand_log(d),
             sp.powdenest(sp.expand_power_exp(sp.expand_log(d)))]
    for e in tries:
        try:
            e = sp.expand(e)
            if e == 0 or sp.cancel(e) == 0:
                return True
        except Exception:  # noqa: BLE001 - a failed rewrite is not an answer
            continue
    for e in tries[1:]:
        if prove(e):
            return True
    return False


def regions(f, claimed, true, x, deadline: float | None = None,
            prove=lambda e: False) -> list | None:
    """Per interval of the domain of ``f`` (cut at kinks), whether ``claimed`` equals
    ``true`` there: a list of :class:`Piece`, or None when the pieces cannot be found
    (several variables, an infinite union of intervals, too many kinks).  ``prove`` is
    the general prover (an expression -> whether it is 0), tried after the rewrites."""
    given = (claimed, true)  # (with their floats: confirm knows what they can explain)
    claimed, true = exact(claimed), exact(true)
    if (sp.sympify(f).free_symbols | claimed.free_symbols | true.free_symbols) - {x}:
        return None
    spans = _intervals(f, [f, claimed, true], x)
    if spans is None:
        return None
    out = []
    t = sp.Dummy("t", positive=True)
    for lo, hi in spans:
        points = _inside(lo, hi)
        if deadline is not None and time.process_time() > deadline or not points:
            out.append(Piece(lo, hi, "unknown"))
            continue
        status, where = "unknown", None
        c = tr = None
        try:
            c, tr = _on_piece(claimed, x, points[0]), _on_piece(true, x, points[0])
            if lo == -sp.oo and hi == sp.oo:
                sub = x
            elif hi == sp.oo:
                sub = lo + t
            elif lo == -sp.oo:
                sub = hi - t
            else:
                sub = lo + (hi - lo) * t / (1 + t)
            if _equal((c - tr).xreplace({x: sub}), prove):
                status = "equal"
        except Exception:  # noqa: BLE001 - no proof on this piece
            pass
        if status != "equal":
            for p in points:
                if all(_real_at(e, x, p) for e in (f, claimed, true)) and \
                        confirm([given[0]], [given[1]], {x: p}) == "different":
                    status, where = "different", p
                    break
        piece = Piece(lo, hi, status, where)
        if status == "different" and c is not None:
            piece.claimed, piece.true = sp.cancel(c), sp.cancel(tr)
        out.append(piece)
    return out


def positive_parts(f) -> dict:
    """What the domain of ``f`` makes positive: each argument of a ``log`` and each base of
    a power with an exponent that is not an integer (``sin(x)`` in ``sin(x)**log(x)``),
    mapped to a positive symbol standing for it."""
    f = exact(f)
    parts = {e.args[0] for e in f.atoms(sp.log)}
    parts |= {e.base for e in f.atoms(sp.Pow) if not e.exp.is_Integer}
    parts = [p for p in parts if p.free_symbols and not p.is_positive]
    # (larger parts first, so that ``x`` inside ``sin(x)`` is replaced after it)
    parts.sort(key=lambda p: -sp.count_ops(p))
    return {p: sp.Dummy(f"p{i}", positive=True) for i, p in enumerate(parts)}


def equal_where_positive(f, claimed, true, prove=lambda e: False) -> bool:
    """Whether ``claimed`` equals ``true`` wherever ``f`` is real, shown with each part
    that the domain makes positive written as an independent positive symbol (an
    identity in independent symbols holds in particular for the parts themselves):
    logarithmic differentiation, ``sin(x)**(log(x) - 1) = sin(x)**log(x)/sin(x)``."""
    parts = positive_parts(f)
    if not parts:
        return False
    d = exact(claimed) - exact(true)
    for p, s in parts.items():
        d = d.xreplace({p: s})
    return _equal(d, prove)


#: Kinks in several variables: at most this many distinct arguments (2**n sign patterns),
#: and this many random points tried for each pattern.
MAX_SIGN_ARGUMENTS = 3
_PATTERN_POINTS = 40


def _base_arguments(exprs) -> list | None:
    """The distinct kink arguments of ``exprs`` (up to a constant factor), each free of
    kinks itself: ``Max(0, u) <= 0`` (relu's derivative) has the sign of ``u``; None when
    a kink's argument holds another kink in any other way, or there are too many."""
    out: list = []
    for u in sorted(kink_arguments(exprs), key=sp.default_sort_key):
        if u.has(*_KINK_TYPES):
            inner = [a for a in (u.args if isinstance(u, (sp.Max, sp.Min)) else ())
                     if a != 0]
            if len(u.args) == 2 and len(inner) == 1 and not inner[0].has(*_KINK_TYPES):
                u = inner[0]
            else:
                return None
        if not any(_proportional(u, a) for a in out):
            out.append(u)
    return out if len(out) <= MAX_SIGN_ARGUMENTS else None


def _proportional(e, u) -> bool:
    if sp.expand(e - u) == 0 or sp.expand(e + u) == 0:
        return True
    try:
        q = sp.cancel(e / u)
    except Exception:  # noqa: BLE001 - no ratio: not the same kink
        return False
    return bool(q.is_number and q != 0)


def _on_piece_at(e, point: dict):
    """``e`` with each kink replaced by its smooth piece at ``point`` (symbol -> exact
    value; innermost first)."""
    if e.is_Atom or not e.has(*_KINK_TYPES):
        return e
    if isinstance(e, sp.Piecewise):
        for expr, cond in e.args:
            c = cond if cond in (sp.true, sp.false) else \
                _on_piece_at(cond, point).xreplace(point)
            if c == sp.true:
                return _on_piece_at(expr, point)
            if c != sp.false:
                raise ValueError("undecided condition")
        return sp.nan
    args = [_on_piece_at(a, point) for a in e.args]
    if not isinstance(e, (sp.Abs, sp.sign, sp.Heaviside, sp.Max, sp.Min)):
        return e.func(*args)
    at = [sp.N(a.xreplace(point), 30) for a in args]
    if isinstance(e, sp.Abs):
        return args[0] if at[0] > 0 else -args[0]
    if isinstance(e, sp.sign):
        return sp.Integer(0 if at[0] == 0 else 1 if at[0] > 0 else -1)
    if isinstance(e, sp.Heaviside):
        return sp.Integer(1 if at[0] > 0 else 0)
    pick = max if isinstance(e, sp.Max) else min
    return args[pick(range(len(args)), key=lambda i: at[i])]


def inequality_text(u, positive: bool) -> str:
    """``u > 0`` (or ``< 0``) as a reader writes it: ``x > y`` for ``x - y``, ``x*y > 1``
    for ``x*y - 1``, ``x < 0`` for ``-x > 0``."""
    const, rest = sp.sympify(u).as_coeff_Add()
    if rest.could_extract_minus_sign():
        const, rest, positive = -const, -rest, not positive
    rel = ">" if positive else "<"
    if const != 0:
        return f"{rest} {rel} {_number(-const)}"
    terms = sp.Add.make_args(rest)
    if len(terms) == 2:
        pos = [a for a in terms if not a.could_extract_minus_sign()]
        neg = [-a for a in terms if a.could_extract_minus_sign()]
        if len(pos) == 1 and len(neg) == 1:
            return f"{pos[0]} {rel} {neg[0]}"
    return f"{rest} {rel} 0"


def _patterns_text(args: list, patterns: list) -> str:
    """The union of sign patterns (tuples of ±1 per argument) in words, merged where an
    argument's sign does not matter (``x > 0 or y < 0``)."""
    bits = [sp.Dummy(f"b{i}") for i in range(len(args))]
    form = sp.logic.boolalg.SOPform(bits, [[int(s > 0) for s in p] for p in patterns])
    words = {b: (inequality_text(u, True), inequality_text(u, False))
             for b, u in zip(bits, args)}

    def lit(e):
        b = e.args[0] if isinstance(e, sp.Not) else e
        return bits.index(b), words[b][1] if isinstance(e, sp.Not) else words[b][0]

    def conj(e):  # (in the arguments' order, whatever SymPy's order of the symbols)
        return sorted(lit(a) for a in sp.And.make_args(e))
    if form is sp.true:
        return "everywhere"
    return " or ".join(" and ".join(w for _, w in c)
                       for c in sorted(conj(a) for a in sp.Or.make_args(form)))


def sign_regions(f, claimed, true, deadline: float | None = None, prove=lambda e: False,
                 seed: int = 0):
    """For kinks in several variables: per sign pattern of the kinks' arguments (each an
    open set where every kink is one smooth piece), whether the claim equals the truth.

    Returns ``"equal"`` (every pattern proved), ``{"proved for": [...], "not settled
    for": [...]}`` when only some are, ``(where, rows)`` when some pattern is shown
    different at an exact point (``rows``: ``(pattern in words, status, point
    (symbol name -> float) or None, claim there, truth there)``), or None."""
    given = (claimed, true)
    claimed, true = (exact(almost_everywhere(sp.sympify(e))) for e in given)
    f = exact(f)
    args = _base_arguments([f, claimed, true])
    if args is None:
        return None
    # (the claim's own domain: ``sqrt(y)/(2*sqrt(x))`` for ``sqrt(x*y)`` is not real where
    # x, y < 0 although f is: the signs of its roots' and logarithms' arguments too)
    own = [u for u in [*positive_parts(claimed)] if u not in positive_parts(f)
           and not any(_proportional(u, a) for a in args)]
    args = args + sorted(own, key=sp.default_sort_key)
    if not args or len(args) > MAX_SIGN_ARGUMENTS:
        return None
    symbols = sorted(f.free_symbols | claimed.free_symbols | true.free_symbols, key=str)
    rng = np.random.default_rng(seed)
    grid = [sp.Rational(n, d) for n in range(-7, 8) if n for d in (1, 2, 3, 5)]
    found: dict = {}
    for _ in range(_PATTERN_POINTS * 2 ** len(args)):
        point = {s: grid[int(rng.integers(len(grid)))] for s in symbols}
        try:
            signs = tuple(int(sp.sign(u.xreplace(point))) for u in args)
        except (TypeError, ValueError):
            continue
        if 0 in signs or signs in found or not real_at_point(f, point):
            continue
        found[signs] = point
        if len(found) == 2 ** len(args):
            break
    rows = []
    for signs, point in sorted(found.items(), reverse=True):
        if deadline is not None and time.process_time() > deadline:
            return None
        c, t = _on_piece_at(claimed, point), _on_piece_at(true, point)
        status = "equal" if _equal(_signed(c - t, args, signs), prove) else "unknown"
        if status != "equal" and all(real_at_point(e, point) for e in given) and \
                confirm([given[0]], [given[1]], point) == "different":
            status = "different"
        elif status != "equal" and real_at_point(t, point) and not real_at_point(c, point):
            status = "different"  # (the claim is not real where f and its gradient are)
        rows.append((signs, status, point, c, t))
    right = [s for s, st, *_ in rows if st == "equal"]
    wrong = [s for s, st, *_ in rows if st == "different"]
    if not wrong:
        if len(right) == 2 ** len(args):
            return "equal"
        open_ = [s for s, st, *_ in rows if st == "unknown"]
        if right and open_:  # (say what was settled and what not)
            return {"proved for": [_patterns_text(args, right)],
                    "not settled for": [_patterns_text(args, open_)]}
        return None
    if not right:  # (wrong on every piece: the pieces say nothing)
        return None
    text = f"right where {_patterns_text(args, right)}, wrong where " \
        f"{_patterns_text(args, wrong)}"
    out = []
    for signs, st, point, c, t in rows:
        out.append((_patterns_text(args, [signs]), st,
                    {str(s): float(v) for s, v in point.items()} if st == "different"
                    else None, str(sp.cancel(c)) if st == "different" else None,
                    str(sp.cancel(t)) if st == "different" else None))
    return text, out


def _signed(e, args: list, signs: tuple):
    """``e`` with each symbol that is an argument (or its negative) written as a symbol of
    the known sign of the pattern, so that SymPy may use it (``sqrt(x*y)`` is
    ``sqrt(x)*sqrt(y)`` where x, y > 0)."""
    repl = {}
    for u, s in zip(args, signs):
        for v, o in ((u, 1), (-u, -1)):
            if v.is_Symbol and v not in repl:
                repl[v] = o * s * sp.Dummy(v.name, positive=True)
    return e.xreplace(repl) if repl else e

