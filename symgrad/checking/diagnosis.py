"""Plain words for how a claimed gradient differs from the true one.

From the numbers: a constant factor ("missing factor 2"), the wrong sign, a transposed matrix, the
derivative with respect to another variable, a claim right only for a symmetric matrix, the wrong
shape. From SymPy (:func:`explain`, run with the symbolic comparison): a missing factor, a missing
or extra term, a wrong sign of one term, the product rule half applied (which of u'v and uv' the
claim has, or u'v'), two variables swapped.

Examples
--------
>>> factor_text(0.5), factor_text(-1.0)
('missing factor 2', 'wrong sign: the claimed gradient is the negative of the true one')
>>> import sympy as sp
>>> x = sp.Symbol("x", real=True)
>>> explain(sp.cos(x**2), 2*x*sp.cos(x**2))
[('factor', 2*x)]
"""
from __future__ import annotations

import re
from itertools import combinations

import numpy as np
import sympy as sp

from ..symbolic.bridge import almost_everywhere
from ..symbolic.expression import Expression
from .domain import abstract_kinks
from .sampling import Samples, close, random_point
from .sizes import size_classes
from .slip_trees import _terms
from .report import _rank, shape_mismatches
from .slips import NUMEL_KINDS, RATIO_KINDS, REGION_KINDS, missing_vector_term, named_slip

__all__ = ["SIMPLIFY_OPS", "explain", "diagnose", "diagnose_all", "factor_text",
           "shape_mismatches"]

# Diagnoses read off the numbers alone; any other is worth the symmetric-matrix test.
_NUMERIC_KINDS = ("wrong sign", "missing factor", "extra factor", "transposed",
                  "wrong variable", "the claimed gradient is")


#: SymPy's ``simplify`` (and its rewrites) run only on expressions of at most this many
#: operations (nested ``tanh`` can take minutes); larger ones get ``expand``/``cancel``.
SIMPLIFY_OPS = 24


def _tidy(e):
    """``e`` with trig functions of two-term sums expanded (three: seconds), cancelled."""
    wide = any(len(sp.Add.make_args(g.args[0])) > 2 for g in e.atoms(sp.Function) if g.args)
    return sp.cancel(sp.expand(e if wide else sp.expand_trig(e)))


def _small(e, limit: int = 12) -> bool:
    return sp.count_ops(e) <= limit


def explain(claimed: sp.Expr, true: sp.Expr, function=None) -> list:
    """Symbolic hints for one element pair that is not equal: a missing term or the wrong
    sign of one, a factor (only a simple one: a constant, a monomial, or a factor of the
    chain rule of ``function``, the SymPy form of f), else an extra term or the
    difference.

    >>> x = sp.Symbol("x", real=True)
    >>> explain(4 * x**7 + 2, 4 * x**7)
    [('extra', 2)]
    >>> explain(sp.cos(x), sp.cosh(x))
    [('differs', cos(x) - cosh(x))]
    """
    try:
        (claimed, true), back = abstract_kinks(almost_everywhere(claimed),
                                               almost_everywhere(true))
        if back and function is not None:  # (no sub-expression of f is a kink's symbol)
            function = None if function.has(*_KINKED) else function
        hints = [(h[0], *(e.xreplace(back) if isinstance(e, sp.Basic) else e
                          for e in h[1:])) for h in _explain(claimed, true, function)]
        # (a factor holding a kink is no simple factor: the pieces say it better)
        return [h for h in hints if not (h[0] in ("factor", "extra factor", "chain",
                                                   "extra chain") and h[1].has(*_KINKED))]
    except Exception:  # noqa: BLE001 - hints are optional
        return []


def _explain(claimed, true, function) -> list:
    hints = []
    try:
        # (never SymPy's simplify: its time has no useful bound, and its first call
        # imports sympy.physics, a second or more; trigonometric expansion and cancel
        # on small expressions, cancel alone on larger ones)
        big = sp.count_ops(true) + sp.count_ops(claimed) > SIMPLIFY_OPS
        simplify = sp.cancel if big else _tidy
        diff = simplify(true - claimed)
        if diff != 0 and _small(diff):
            terms = sp.Add.make_args(sp.expand(true))
            if any(simplify(t - diff) == 0 for t in terms):
                ratio = simplify(true / claimed) if claimed != 0 else None
                chain = None if ratio is None or ratio.is_number else \
                    _chain_factor(sp.factor(ratio), function, simplify, true)
                if chain is not None:  # (a term only as expanded: the chain rule's factor)
                    return [("chain", sp.factor(ratio), chain)]
                named = _product_rule(claimed, true, function)  # (which term: u'v, uv')
                return [("missing", diff)] + ([named] if named is not None else [])
            if any(simplify(t - diff / 2) == 0 for t in terms):
                return [("sign", diff / 2)]
        if true != 0 and claimed != 0:
            ratio = simplify(true / claimed)
            ratio = ratio if big else sp.factor(ratio)
            if ratio.is_number and ratio.is_finite and ratio != 0:
                return [("const", ratio, _linear_inner(ratio, function, true))]
            chain = _chain_factor(ratio, function, simplify, true)
            if chain is not None:
                return [("chain", ratio, chain)]
            other = _part_by_other(claimed, true, function) or \
                _inner_for_derivative(claimed, true, function)
            if other is not None:  # (2*x for the y of x**2*y is no factor x/2)
                return [other]
            named = _product_rule(claimed, true, function)  # (u'v alone: no factor)
            if named is not None and " but lacks " in named[2]:
                return [named]
            if _monomial(ratio) or _of_parts(ratio, function):
                num, den = sp.fraction(ratio)
                if num.is_number and not den.is_number and not _divides(den, true):
                    return [("extra factor", 1 / ratio)]  # (x**4 claimed 4*x**4)
                return [("factor", ratio)]
            inverse = 1 / ratio
            chain = _chain_factor(inverse, function, simplify, true)
            if chain is not None:  # (sigma' once too often)
                return [("extra chain", inverse, chain)]
        named = _product_rule(claimed, true, function) or _swapped(claimed, true, function)
        if named is not None:
            return [named]
        if diff != 0 and _small(diff, 40):
            if diff.is_number or _monomial(diff) or any(
                    simplify(t + diff) == 0 for t in sp.Add.make_args(sp.expand(claimed))):
                hints.append(("extra", -diff))  # (one term more than the truth has)
            else:
                hints.append(("differs", _shortest(claimed - true, -diff)))
    except Exception:  # noqa: BLE001 - hints are optional
        pass
    return hints


_KINKED = (sp.Piecewise, sp.Max, sp.Min, sp.Heaviside, sp.Abs, sp.sign)


def _divides(g, true) -> bool:
    """Whether the truth is written divided by ``g`` (``x/norm(x)``: a claim ``x`` misses
    the factor ``1/norm(x)``, where ``4*x**4`` for ``4*x**3`` has an extra ``x``)."""
    den = sp.fraction(sp.together(true))[1]
    return not den.is_number and sp.fraction(sp.cancel(den / g))[1].is_number


def _shortest(*forms):
    """The form with the fewest operations (``claimed - true`` as written, or cancelled)."""
    return min(forms, key=lambda e: (sp.count_ops(e), len(str(e))))


def _linear_inner(c, function, true) -> str | None:
    """Words for a constant ``c`` that is the derivative of an inner linear expression of
    ``function`` (2 for ``2*x + 1`` in ``(2*x + 1)**5``) with respect to the variable whose
    derivative ``true`` is, else None; never -1 (that is a wrong sign)."""
    if function is None or sp.count_ops(function) > 40 or c == -1:
        return None
    symbols = sorted(function.free_symbols, key=str)
    var = _variable(true, function, symbols)
    if var is None:
        return None
    for u in sp.preorder_traversal(function):
        if not u.free_symbols or u.is_Symbol or u is function:
            continue
        for s in [var]:
            du = sp.diff(u, s)
            if du.is_number and du != 0 and sp.simplify(du - c) == 0:
                return f"the derivative of the inner {u}" + (
                    f" with respect to {s}" if len(symbols) > 1 else "")
    return None


def _has_kinks(text: str) -> bool:
    return any(name in text for name in ("Piecewise", "Max(", "Min(", "Heaviside",
                                         "Abs(", "sign("))


def _monomial(r) -> bool:
    """A simple factor: a constant times powers of symbols (``2*x``, ``1/x``)."""
    if not r.free_symbols or r.has(*_KINKED):
        return False
    return all(f.is_number or f.is_Symbol or (f.is_Pow and f.base.is_Symbol
                                              and f.exp.is_number)
               for f in sp.Mul.make_args(r))


def _of_parts(r, function) -> bool:
    """A factor made of powers of the function's own parts (``1/sqrt(x**2 + y**2)`` for
    ``sqrt(x**2 + y**2)``): not a ratio of unrelated functions (``cosh(x)/cos(x)``)."""
    if function is None or not r.free_symbols or r.has(*_KINKED):
        return False
    parts = set(sp.preorder_traversal(function))
    for f in sp.Mul.make_args(r):
        base = f.base if f.is_Pow and f.exp.is_number else f
        if not (f.is_number or base.is_Symbol or base in parts or (
                base.is_Pow and base.exp.is_number and base.base in parts)):
            return False
    return True


def _same(a, b, symbols: list) -> bool:
    """Whether ``a`` and ``b`` agree to 20 digits at three points (words only: which
    name a diagnosis gives, never a verdict, rests on it)."""
    for p in ("7/10", "13/10", "-11/10"):
        at = {s: sp.Rational(p) + sp.Rational(i, 7) for i, s in enumerate(symbols)}
        try:
            va, vb = complex(sp.N(a.xreplace(at), 30)), complex(sp.N(b.xreplace(at), 30))
        except (TypeError, ValueError, ZeroDivisionError):
            return False
        if not abs(va - vb) <= 1e-20 * max(1.0, abs(vb)):
            return False
    return True


def _chain_factor(ratio, function, simplify, true=None) -> str | None:
    """Words for ``ratio`` when it is a factor of the chain rule of ``function``: the
    derivative of an inner expression (``2*x`` for ``x**2`` in ``sin(x**2)``), or the
    derivative of the outer part at an inner expression (σ' for ``sigmoid(w*x)``)."""
    if function is None or sp.count_ops(function) > 40 or ratio.has(*_KINKED):
        return None
    inner = [-u if u.could_extract_minus_sign() else u  # (w*x in exp(-w*x))
             for u in sp.preorder_traversal(function)
             if u.free_symbols and not u.is_Symbol and u is not function][:30]
    symbols = sorted(function.free_symbols, key=str)
    var = _variable(true, function, symbols) if true is not None else None
    for u in inner:
        for s in ([var] if var is not None else symbols):
            du = sp.diff(u, s)
            if du != 0 and not du.is_number and _same(ratio, du, symbols):
                return f"the derivative of the inner {u}" + (
                    f" with respect to {s}" if len(symbols) > 1 else "")
        z = sp.Dummy("u")
        outer = function.subs(u, z)  # (subs: -w*x holds w*x)
        if outer.has(*u.free_symbols) or not outer.has(z):
            continue
        d_outer = sp.diff(outer, z).xreplace({z: u})
        if _same(ratio, d_outer, symbols):
            return (f"the derivative of the outer {outer.xreplace({z: sp.Symbol('u')})} "
                    f"at u = {u}")
    return None


def _variable(true, function, symbols: list):
    """The symbol of ``function`` whose derivative ``true`` is (by :func:`_same`), or None."""
    for s in symbols:
        if _same(true, sp.diff(function, s), symbols):
            return s
    return None


_PRIMED = {2: ("u\u2032v", "uv\u2032"), 3: ("u\u2032vw", "uv\u2032w", "uvw\u2032")}


def _product_rule(claimed, true, function):
    """``("product", true, words)`` when f is a product u*v (or u*v*w) of factors of the
    variable and the claim has only some of the product rule's terms, none of them, or
    the product of the derivatives u'v'; else None.  Bounded: f and the claim of at
    most 40 operations, 6 symbols, 3 factors; each test is :func:`_same`'s three points."""
    if (function is None or sp.count_ops(function) > 40 or sp.count_ops(claimed) > 40
            or function.has(*_KINKED)):
        return None
    symbols = sorted(function.free_symbols, key=str)
    if len(symbols) > 6:
        return None
    var = _variable(true, function, symbols)
    if var is None:
        return None
    found = _product_inside(function, var)
    if found is None:
        return None
    product, outer, factors = found
    terms = [outer * sp.Mul(*[sp.diff(g, var) if j == i else g
                              for j, g in enumerate(factors)])
             for i in range(len(factors))]
    names = _PRIMED[len(factors)]
    letters = "uvw"[:len(factors)]
    parts = ", ".join(f"{n} = {g}" for n, g in zip(letters, factors))
    rule = f"f\u2032 = {' + '.join(names)} for f = {'*'.join(letters)} ({parts})"
    if product is not function:  # (a product inside a chain: g(u*v))
        rule = (f"(u*v)\u2032 = {' + '.join(names)} for the inner {product} ({parts})" +
                (f", times {outer}, the outer derivative" if outer != 1 else ""))
        rule = rule.replace("u*v)", "*".join(letters) + ")", 1)
    both = outer * sp.Mul(*[sp.diff(g, var) for g in factors])
    none = ("neither " + " nor ".join(f"{t} ({n})" for t, n in zip(terms, names))
            if len(terms) == 2 else
            "none of " + ", ".join(f"{t} ({n})" for t, n in zip(terms, names)))
    has = [False] * len(terms)
    for k in range(1, len(terms)):  # (some of the terms first: u'v is u'v' when v' = v)
        for chosen in combinations(range(len(terms)), k):
            if _same(claimed, sp.Add(*[terms[i] for i in chosen]), symbols):
                has = [i in chosen for i in range(len(terms))]
                break
        if any(has):
            break
    else:  # (not a sum of some of the terms: which terms the claim's own terms match)
        if _same(claimed, both, symbols):
            primes = "".join(n + "\u2032" for n in letters)
            return ("product", true, f"the product rule: the claim has {none}: it is "
                    f"{primes} = {both}, the product of the derivatives; {rule}")
        mine = sp.Add.make_args(sp.expand(claimed))[:12]
        has = [any(_same(m, t, symbols) for m in mine) for t in terms]
    if all(has):
        return None
    got = [f"{t} ({n})" for t, n, h in zip(terms, names, has) if h]
    lack = [f"{t} ({n})" for t, n, h in zip(terms, names, has) if not h]
    if not got:
        return ("product", true, f"the product rule: the claim has {none}; {rule}")
    return ("product", true, f"the product rule: the claim has {' and '.join(got)} but "
            f"lacks {' and '.join(lack)}; {rule}")


def _product_inside(function, var):
    """``(product, outer derivative, factors)``: ``function`` itself when it is a product
    of 2 or 3 factors of ``var`` (outer 1), else the one product inside it that holds every
    occurrence of ``var`` (``x*exp(x)`` in ``sin(x*exp(x))``, outer ``cos(x*exp(x))``);
    None when there is none."""
    candidates = [function] + [e for e in sp.preorder_traversal(function)
                               if isinstance(e, sp.Mul) and e is not function]
    for product in candidates[:20]:
        if not isinstance(product, sp.Mul):
            continue
        factors = [a for a in sp.Mul.make_args(product) if a.has(var)]
        if len(factors) not in _PRIMED:
            continue
        factors[0] = factors[0] * sp.Mul(*[a for a in sp.Mul.make_args(product)
                                           if not a.has(var)])
        if product is function:
            return product, sp.Integer(1), factors
        z = sp.Dummy("z")
        outer = function.xreplace({product: z})
        if outer.has(var) or not outer.has(z):
            continue
        return product, sp.diff(outer, z).xreplace({z: product}), factors
    return None


def _part_by_other(claimed, true, function):
    """``("swapped", true, words)`` when the claim is the derivative of a part of f with
    respect to another variable (``2*x``, of ``x**2``, for the ``y`` of ``x**2*y``), else
    None.  Bounded: f of at most 40 operations and 6 symbols, its first 30 parts."""
    if function is None or sp.count_ops(function) > 40 or function.has(*_KINKED):
        return None
    symbols = sorted(function.free_symbols, key=str)
    if not 2 <= len(symbols) <= 6:
        return None
    var = _variable(true, function, symbols)
    if var is None:
        return None
    parts = [u for u in sp.preorder_traversal(function)  # (f itself: the numbers say it)
             if u.free_symbols and not u.is_Symbol and u is not function][:30]
    for u in parts:
        for s in symbols:
            d = sp.diff(u, s) if s != var else 0
            if d != 0 and not d.is_number and _same(claimed, d, symbols):
                return ("swapped", true, f"wrong variable: the claim {claimed} is the "
                        f"derivative of {u} with respect to {s}; with respect to {var} "
                        f"the gradient is {true}")
    return _term_by_other(claimed, true, parts, symbols, var)


def _term_by_other(claimed, true, parts: list, symbols: list, var):
    """``("swapped", true, words)`` when one term of the claim is the derivative of a
    part of f with respect to another variable and the claim is right with that term
    made a term of the true gradient (``2*x + 3*y**2`` for the y of ``x**2*y + y**3``:
    2*x is d(x**2)/dx; by y the term is x**2).  Bounded: 6 terms, the parts given."""
    terms = sp.Add.make_args(claimed)
    if not 2 <= len(terms) <= 6 or any(_ELEMENT.search(str(s)) for s in symbols):
        return None  # (elements of vectors: the vector form's words say it better)
    wanted = sp.Add.make_args(sp.expand(true))
    for c in terms:
        if c.is_Symbol or c.is_number:
            continue
        rest = true - (claimed - c)
        if not any(_same(rest, w, symbols) for w in wanted):
            continue  # (the claim's other terms are not all right)
        for u in parts:
            for s in symbols:
                d = sp.diff(u, s) if s != var else 0
                if d != 0 and not d.is_number and _same(c, d, symbols):
                    r = sp.factor(rest)
                    return ("swapped", true, f"wrong variable in one term: {c} is the "
                            f"derivative of {u} with respect to {s}; with respect to "
                            f"{var} that term is {r} (the true gradient is {true})")
    return None


def _inner_for_derivative(claimed, true, function):
    """``("swapped", true, words)`` when the claim has an inner expression u of f where
    the chain rule puts its derivative u' (``x**3*exp(x**3)`` for ``3*x**2*exp(x**3)``),
    else None.  Bounded: f of at most 40 operations and 6 symbols, its first 30 parts."""
    if function is None or sp.count_ops(function) > 40 or function.has(*_KINKED):
        return None
    symbols = sorted(function.free_symbols, key=str)
    var = _variable(true, function, symbols) if len(symbols) <= 6 else None
    if var is None:
        return None
    for u in [u for u in sp.preorder_traversal(function)
              if u.free_symbols and not u.is_Symbol and u is not function][:30]:
        du = sp.diff(u, var)
        if du != 0 and not _same(du, u, symbols) and _same(claimed * du / u, true, symbols):
            return ("swapped", true, f"the chain rule: the claim has the inner {u} where "
                    f"its derivative {du} belongs (the true gradient is {true})")
    return None


def _swapped(claimed, true, function):
    """``("swapped", true, words)`` when the claim is the true derivative with two
    variables exchanged, or the derivative with respect to the other variable with the
    two exchanged; else None.  Bounded: at most 6 symbols (15 pairs), the claim and the
    truth of at most 80 operations together, each test :func:`_same`'s three points."""
    names = true.free_symbols | claimed.free_symbols
    if function is not None:
        names |= function.free_symbols
    symbols = sorted(names, key=str)
    if not 2 <= len(symbols) <= 6 or sp.count_ops(true) + sp.count_ops(claimed) > 80 or (
            true.has(*_KINKED) or claimed.has(*_KINKED)
            or (function is not None and function.has(*_KINKED))):
        return None  # (three points say nothing across a kink)
    for a, b in combinations(symbols, 2):
        if _same(claimed, true.xreplace({a: b, b: a}), symbols):
            return ("swapped", true, f"{a} and {b} are swapped: the claim {claimed} is the "
                    f"true derivative {true} with {a} and {b} exchanged")
    if function is None or sp.count_ops(function) > 40:
        return None
    own = sorted(function.free_symbols, key=str)
    var = _variable(true, function, own)
    for other in own:
        if var is None or other == var:
            continue
        d = sp.diff(function, other)
        if _same(claimed, d.xreplace({var: other, other: var}), symbols):
            return ("swapped", true, f"{var} and {other} are swapped: this is the "
                    f"derivative with respect to {other}, {d}, with {var} and {other} "
                    f"exchanged")
    return None


def diagnose_all(f: Expression, claims: dict, found: Samples, sym_result: list | None,
                 shapes: dict, rtol: float, atol: float) -> list:
    """The diagnoses of every claim that differs (shape mismatches aside)."""
    out = []
    for k in claims:
        if found.per_var[k]["numeric"] != "differ" or k in found.shape_bad:
            continue
        hints = None
        if sym_result is not None:
            hints = sym_result[list(claims).index(k)][1]
        evidence = found.evidence[k]
        if shapes[k] and evidence and evidence[0][0].ndim == 0:
            # (the chain rule's vector factor, or a sum that should not be, says why)
            slip = named_slip(f, claims[k], k, evidence, shapes, rtol, atol)
            out.append(f"{k}: wrong shape: the claimed gradient is a scalar, "
                       f"but {k} is {_rank(shapes[k])}" + (f": {slip}" if slip else ""))
            continue
        if found.per_var[k].get("where"):  # (the pieces say it better than a Piecewise)
            hints = [h for h in hints or () if not _has_kinks(h[1])]
            slip = named_slip(f, claims[k], k, evidence, shapes, rtol, atol, kinds=REGION_KINDS)
            out.extend([f"{k}: {slip}"] * (slip is not None))
        words = diagnose(k, evidence, hints, rtol, atol,
                         getattr(getattr(claims[k], "expression", None), "text", None))
        size = _numel_slip(f, claims[k], k, evidence, shapes, rtol, atol) or \
            _size_factor(f, claims[k], k, evidence, shapes, rtol, atol)
        if size is not None:
            words = [size]
        elif words and words[0].startswith(_FACTOR_KINDS[1:]) and "/" in getattr(
                getattr(claims[k], "expression", None), "text", ""):
            slip = named_slip(f, claims[k], k, evidence, shapes, rtol, atol,
                              kinds=RATIO_KINDS)  # (exp(3*x)/3: no 'missing factor 9')
            words = [slip] if slip is not None else words
        if words and words[0].startswith("the product rule") and " but lacks " in words[0] \
                and _term_count(claims[k]) > 1:
            # (one term of the claim is there but wrong: the rewrite that mends it)
            slip = named_slip(f, claims[k], k, evidence, shapes, rtol, atol)
            words = [slip] if slip is not None and not slip.startswith("missing term") else words
        if not (words and words[0].startswith(_NUMERIC_KINDS)):
            m = _transposed_matrix(f, claims[k], k, evidence, shapes, rtol, atol)
            if m is not None:
                words = [f"transposed {m}: the claim has {m} where the true gradient has "
                         f"{m}.T (it is right with {m} replaced by {m}.T)"]
        slip = None
        if _constant_ratio(evidence, rtol, atol) is None and not found.per_var[k].get(
                "where") and not (words and (words[0].startswith(_NAMED + ("wrong sign",))
                                             or " are swapped: " in words[0])
                                  and not _foreign(words[0], claims[k])):
            # (one rewrite of the claim that makes it right says more than a ratio or a
            # difference of two forms in exponentials)
            slip = named_slip(f, claims[k], k, evidence, shapes, rtol, atol)
            if slip is not None and slip.startswith(_TERM_KINDS) and any(
                    w.startswith("the product rule") for w in words):
                slip = None  # (SymPy's term says as much, and the product rule with it)
            if slip is not None and slip.startswith(_ARGUMENT_KINDS) and words and \
                    words[0].startswith(_FACTOR_KINDS[1:]) and not _ELEMENT.search(words[0]):
                slip = None  # (a simple missing factor says it plainer: cos(x) of cos(x)**2)
            words = [slip] if slip is not None else words
        if slip is None and not (words and words[0].startswith(_NUMERIC_KINDS +
                                                               ("transposed",))):
            sym = _symmetric_only(f, claims[k], k, evidence, shapes, rtol, atol)
            if sym is not None:
                words = [f"right only when {sym} is symmetric: the true gradient "
                         f"has both {sym} and {sym}.T"]
        if shapes[k] and (not words or words[0].startswith("claimed - true") or
                          _ELEMENT.search(words[0])):  # (b*dot(a, x), not elements)
            term = missing_vector_term(f, claims[k], k, evidence, shapes, rtol, atol)
            words = [term] if term is not None else words
        if found.per_var[k].get("where"):  # (numbers from the wrong part only: say so)
            wrong = " and ".join(r["where"] for r in found.per_var[k].get("regions", ())
                                 if r["status"] == "different")
            words = [f"for {wrong}: {w}" if wrong and w.startswith(_FACTOR_KINDS) else w
                     for w in words if not w.startswith("the claimed gradient is zero")]
        out.extend(f"{k}: {d}" for d in words)
    return out


def _foreign(words: str, claim) -> bool:
    """Whether ``words`` quote exponentials the claim does not have (sigmoid's SymPy
    form): a rewrite of the claim's own text says it better."""
    expr = getattr(claim, "expression", None)
    return expr is not None and "exp(" in words and "exp(" not in expr.text


_FACTOR_KINDS = ("wrong sign", "missing factor", "extra factor")
_TERM_KINDS = ("missing term", "extra term")
# Rewrites of the chain rule's argument (slips_more), worth less than a simple factor.
_ARGUMENT_KINDS = ("the chain rule: the claim has the inner derivative",
                   "the outer derivative is taken at")
_ELEMENT = re.compile(r"[A-Za-z]_\d")  # (x_0: a factor of elements, no simple factor)
# Diagnoses that name the mistake already (no rewrite of the claim is tried).
_NAMED = ("wrong variable", "transposed", "the product rule")


def _term_count(claim) -> int:
    """The number of terms of the claim's text (1 when it has no text)."""
    expr = getattr(claim, "expression", None)
    return 1 if expr is None else len(_terms(expr.tree))


def _numel_slip(f: Expression, claim, name: str, evidence: list, shapes: dict,
                rtol: float, atol: float) -> str | None:
    """``1/numel(X) where the true gradient has 1/numel(y)``: a claim that divides by
    the size of the wrong tensor (named before the size is read off the numbers)."""
    expr = getattr(claim, "expression", None)
    if expr is None or "numel(" not in expr.text:
        return None
    return named_slip(f, claim, name, evidence, shapes, rtol, atol, kinds=NUMEL_KINDS)


def _size_factor(f: Expression, claim, name: str, evidence: list, shapes: dict,
                 rtol: float, atol: float) -> str | None:
    """``missing factor 1/numel(y)`` when the claim is off by the number of elements of
    a variable (a mean's 1/N): the ratio is that number at the points checked and again
    at other sizes (each size one larger), so it is no coincidence of one size."""
    if not evidence or all(s == () for s in shapes.values()):
        return None
    c = _constant_ratio(evidence, rtol, atol)
    if c is None or abs(c) < 1e-12:
        return None
    point = evidence[0][3]
    classes = size_classes(f, point)
    if classes is None:
        return None
    for v, shape in shapes.items():
        n = int(np.prod(shape)) if shape else 1
        if n < 2:
            continue
        for power, word in ((1, "missing"), (-1, "extra")):
            if abs(c - float(n) ** power) > 1e-9 * max(1.0, abs(c)):
                continue
            # the same at other sizes: every size class one larger
            k = 1 + max((i for cs in classes.values() for i in cs), default=-1)
            base = [0] * k
            for var, cs in classes.items():
                for i, size in zip(cs, np.shape(point[var])):
                    base[i] = size
            other = {var: tuple(base[i] + 1 for i in cs) for var, cs in classes.items()}
            try:
                p = random_point(np.random.default_rng(1), other, 2)
                true = np.asarray(f.gradient(**p)[name], dtype=np.float64)
                got = np.broadcast_to(np.asarray(claim.value(p), dtype=np.float64),
                                      true.shape)
            except Exception:  # noqa: BLE001 - no other size: no claim about sizes
                return None
            m = int(np.prod(other[v])) if other[v] else 1
            if not np.allclose(got, true * float(m) ** power, rtol=1e-6, atol=1e-12):
                continue
            return (f"{word} factor 1/numel({v}) (the number of elements of {v}, "
                    f"{n} at the counterexample and {m} at another size)")
    return None


def _transposed_matrix(f: Expression, claim, name: str, evidence: list, shapes: dict,
                       rtol: float, atol: float):
    """The square matrix variable (other than ``name``) that the claim has transposed:
    the claim with it replaced by its transpose is the truth at every point, or None
    (``A @ y`` for the gradient ``A.T @ y`` of ``dot(y, A @ x)``)."""
    return _matrix_that_fixes(lambda a: a.T, f, claim, name, evidence, shapes, rtol, atol,
                              skip=name)


def _symmetric_only(f: Expression, claim, name: str, evidence: list, shapes: dict,
                    rtol: float, atol: float):
    """The square matrix variable whose symmetry would make the claim right, or None.

    The classic slip: d(x.T @ A @ x)/dx written as 2 * A @ x, true for symmetric A.
    """
    return _matrix_that_fixes(lambda a: (a + a.T) / 2, f, claim, name, evidence, shapes,
                              rtol, atol, again=True)


def _matrix_that_fixes(change, f: Expression, claim, name: str, evidence: list,
                       shapes: dict, rtol: float, atol: float, skip: str | None = None,
                       again: bool = False):
    """The square matrix variable (at least 2x2, not ``skip``) that, replaced by
    ``change`` of it at the first three points, makes the claim the true gradient there
    (the gradient at the changed point when ``again``, else the one at the point), or
    None."""
    for m, shape in shapes.items():
        if m == skip or len(shape) != 2 or shape[0] != shape[1] or shape[0] < 2:
            continue
        good = 0
        for _, true, _, point in evidence[:3]:
            p = dict(point)
            p[m] = change(np.asarray(point[m]))
            try:
                if again:
                    true = np.asarray(f.gradient(**p)[name], dtype=np.float64)
                got = np.asarray(claim.value(p), dtype=np.float64)
            except Exception:  # noqa: BLE001 - then this is not the explanation
                break
            if got.shape != true.shape or not np.all(close(got, true, rtol, atol)):
                break
            good += 1
        if good and good == min(3, len(evidence)):
            return m
    return None


def _constant_ratio(evidence, rtol, atol):
    """c such that claimed == c * true at every point, or None."""
    ratios = []
    for claimed, true, _, _ in evidence:
        c = np.broadcast_to(claimed, true.shape).astype(np.float64)
        mask = np.abs(true) > 1e-9
        if not np.any(mask):
            if np.any(np.abs(c) > 1e-9):
                return None
            continue
        r = c[mask] / true[mask]
        ratios.extend(r.tolist())
        if np.any(np.abs(c[~mask]) > 1e-9):
            return None
    if not ratios:
        return None
    r0 = ratios[0]
    if all(abs(r - r0) <= 1e-6 * max(1.0, abs(r0)) for r in ratios):
        return r0
    return None


def diagnose(name: str, evidence: list, hints, rtol: float, atol: float,
             claim_text: str | None = None) -> list:
    """Plain-words explanations of how the claimed gradient of ``name`` differs.

    ``evidence`` holds ``(claimed, true, all true gradients, point)`` per point;
    ``hints`` are :func:`explain`'s ``(kind, text, value)`` (or None); ``claim_text``:
    a constant (``log(10)``) is extra only where the claim writes it.
    """
    out: list = []
    if not evidence:
        return out
    ratio = _constant_ratio(evidence, rtol, atol)
    if ratio is None:
        # Rounding can hide a constant ratio from the numbers; SymPy may still see it.
        const = [value for kind, _, value, *_ in hints or () if kind == "const"]
        if const and const[0]:
            ratio = 1.0 / const[0]
    if ratio is not None and abs(ratio - 1) > 1e-9:  # (1: right at these points)
        for kind, text, value, *more in hints or ():
            if kind != "const" or not value or abs(1 / value - ratio) > 1e-6 * abs(ratio):
                continue
            if more and more[0]:  # (the chain rule's constant: 2 for the inner 2*x + 1)
                return [f"missing factor {text}", f"the chain rule: {text} is {more[0]}"]
            exact = sp.sympify(text)
            if exact.atoms(sp.Float):  # (3**x's log(3) reaches SymPy as a float)
                exact = _named_constant(float(value)) or exact
            if not (exact.is_Rational or exact.atoms(sp.Float)) and abs(ratio + 1) > 1e-6:
                # (log(10), not 2.30...)
                sign = "" if ratio > 0 else "wrong sign and "
                extra = abs(ratio) > 1 and sp.fraction(sp.Abs(1 / exact))[0] != 1
                named = [str(a) for a in sp.Abs(exact).atoms(sp.Function)]
                if claim_text is not None and named:  # (log(10) extra only if written)
                    extra = any(t.replace(" ", "") in claim_text.replace(" ", "")
                                for t in named)
                return [f"{sign}extra factor {sp.Abs(1 / exact)}" if extra else
                        f"{sign}missing factor {sp.Abs(exact)}"]
        return [factor_text(ratio)]
    chain = [h for h in hints or () if h[0] == "chain"]
    if chain:  # (before "wrong variable": the chain rule names the mistake)
        _, text, _, words = chain[0]
        return [f"missing factor {text}", f"the chain rule: {text} is {words}"]
    # Transposed matrices.
    # (a claim of the true shape is a transpose only for square matrices: c.T must fit t)
    if all(np.ndim(c) == 2 and np.shape(c)[::-1] == np.shape(t)
           for c, t, _, _ in evidence) and evidence[0][1].ndim == 2:
        if all(np.all(close(c.T, t, rtol, atol)) for c, t, _, _ in evidence):
            return ["transposed: the claimed gradient is the transpose of the true one"]
    # The derivative with respect to another variable (unless one term is what is wrong:
    # x for dot(x, x)/2 + dot(b, x) lacks the term b, though x is also d/db).
    for other in () if any(h[0] in ("missing", "sign") for h in hints or ()) \
            else evidence[0][2]:
        if other == name:
            continue
        if all(np.shape(ev[2][other]) == np.shape(ev[1]) and np.all(
                close(np.broadcast_to(ev[0], ev[1].shape), ev[2][other], rtol, atol))
               for ev in evidence):
            return [f"wrong variable: this is the derivative with respect to {other}, "
                    f"not {name}"]
    for kind, text, *more in hints or ():
        if kind == "factor":
            out.append(f"missing factor {text}")
        elif kind == "chain":
            out += [f"missing factor {text}", f"the chain rule: {text} is {more[-1]}"]
        elif kind == "extra chain":
            out += [f"extra factor {text}", f"the chain rule: {text} is {more[-1]}; the "
                    "true gradient does not have it as a factor"]
        elif kind == "extra factor":
            out.append(f"extra factor {text}")
        elif kind == "missing":
            out.append(f"missing term {text}")
        elif kind == "sign":
            out.append(f"wrong sign of the term {text}")
        elif kind in ("product", "swapped"):
            out.append(more[-1])
        elif kind == "extra":
            out.append(f"extra term {text}")
        elif kind == "differs":
            out.append(f"claimed - true = {text}")
    if out and out[0].startswith(("missing factor", "extra factor")):
        return out[:2] if len(out) > 1 and out[1].startswith("the chain rule") else out[:1]
    return out


#: Constants a factor is named by when it reaches SymPy as a float (log(3): 1.0986...).
_CONSTANTS = [sp.log(k) for k in range(2, 11)] + [1 / sp.log(k) for k in range(2, 11)] + [
    sp.pi, 1 / sp.pi, sp.E, sp.sqrt(2), sp.sqrt(3), sp.sqrt(sp.pi)]


def _named_constant(v: float):
    """The constant of :data:`_CONSTANTS` (or its negative) equal to ``v`` to 12 digits,
    or None."""
    for c in _CONSTANTS:
        for s in (c, -c):
            if abs(float(s) - v) <= 1e-12 * max(1.0, abs(v)):
                return s
    return None


def factor_text(ratio: float) -> str:
    """Words for ``claimed = ratio * true``, with the digits that show the ratio is not 1.

    >>> factor_text(1.00000025)
    'extra factor 1.00000025'
    """
    if abs(ratio + 1) < 1e-6:
        return "wrong sign: the claimed gradient is the negative of the true one"
    if abs(ratio) < 1e-12:
        return "the claimed gradient is zero where the true one is not"
    exact = sp.nsimplify(ratio, tolerance=1e-6 * max(1.0, abs(ratio)), rational=True)
    if sp.Abs(exact).is_Rational and max(sp.fraction(sp.Abs(exact))) <= 100 \
            and exact != 1 and exact != -1:
        exact_r = exact
    else:
        exact_r = sp.Float(ratio, _digits(abs(ratio)))
    sign = "" if ratio > 0 else "wrong sign and "
    mag = sp.Abs(exact_r)
    if mag < 1:
        inv = 1 / mag if mag.is_Rational else sp.Float(1 / float(mag), _digits(1 / abs(ratio)))
        return f"{sign}missing factor {_num_text(inv)}"
    return f"{sign}extra factor {_num_text(mag)}"


def _digits(v: float) -> int:
    """Significant digits that show ``v`` is not 1 (6 at least, 17 at most)."""
    for n in range(6, 18):
        if float(f"{v:.{n - 1}e}") != 1.0:
            return n + 1
    return 17


def _num_text(x) -> str:
    if isinstance(x, sp.Rational):
        return str(sp.nsimplify(x))
    if isinstance(x, sp.Float):
        return repr(float(f"{float(x):.{max(x._prec * 3 // 10, 6)}g}"))
    return str(x)
