"""Matrix expressions as text, as a textbook factors them, and as a proof compares them.

:func:`to_text` prints a :class:`~symgrad.symbolic.matrix.Mx` in the expression language
(``2 * A.T @ (A @ x - b)``: a scalar joins a chain of products, negations lead it, a
dot product of two vectors is ``dot(u, v)``); :func:`tidy` factors sums of products
(``A @ x + A.T @ x`` -> ``(A + A.T) @ x``); :func:`canonical` expands everything into a
sorted sum of products, so that two expressions with equal canonical forms are equal for
every size.
"""
from __future__ import annotations

import threading
from fractions import Fraction
from math import gcd

from ..ops import tables as T
from . import parser as P
from .matrix import (Mx, NoVectorForm, _broadcast, _dim_key, _is_num, _split, add, fn, is_op,
                     mm, mul, name_of, num, op_of, outer, power, transpose, unsqueeze)

__all__ = ["to_text", "tidy", "canonical"]


# -- text -------------------------------------------------------------------------------------
def _node(e: Mx):
    """The parser AST of an expression (for :func:`symgrad.parser.to_text`)."""
    k = e.kind
    if k == "sym":
        return P.Name(e.args[0])
    if k == "num":
        v = e.args[0]
        if isinstance(v, Fraction):
            n = P.BinOp("/", P.Num(abs(v.numerator)), P.Num(v.denominator))
            return P.Neg(n) if v < 0 else n
        return P.Neg(P.Num(-v)) if v < 0 else P.Num(v)
    if k == "uniform":
        return _node(e.args[0])
    if k == "eye":
        raise NoVectorForm("an identity matrix (the grammar has no eye())")
    if k == "T":
        return P.Transpose(_node(e.args[0]))
    if k == "mm":
        fs = _factors(e)
        if len(fs) == 2 and fs[0].rank == 1 and fs[1].rank == 1:
            return P.Call("dot", (_node(fs[0]), _node(fs[1])))
        return _chain(fs)
    if k == "outer":
        return P.Call("outer", (_node(e.args[0]), _node(e.args[1])))
    if k == "unsq":
        raise NoVectorForm("a one-row or one-column matrix")
    if k == "fn":
        if e.args[0] not in P.FUNCTIONS:
            raise NoVectorForm(f"{e.args[0]} has no name in the expression language")
        return P.Call(e.args[0], tuple(_node(a) for a in e.args[1:]))
    if k == "pow":
        b, x = e.args
        if _is_num(x) and x.args[0] == Fraction(1, 2):
            return P.Call("sqrt", (_node(b),))
        return P.BinOp("**", _node(b), _node(x))
    if k == "add":
        out = None
        terms = sorted(e.args, key=lambda t: _split(t)[1] is None or t.kind == "uniform")
        first = next((i for i, t in enumerate(terms) if _split(t)[0] > 0), 0) \
            if all(isinstance(_split(t)[0], (int, Fraction, float)) for t in terms) else 0
        terms.insert(0, terms.pop(first))  # a - b rather than -b + a
        for t in terms:
            c, rest = _split(t)
            negative = (c < 0) if rest is not None else False
            n = _node(mul(num(-c), rest)) if negative else _node(t)
            if out is None:
                out = P.Neg(n) if negative else n
            else:
                out = P.BinOp("-" if negative else "+", out, n)
        return out
    if k == "mul":
        c, rest = _split(e)
        if c == -1:  # -A @ x and -a * b, not -(A @ x) and -(a * b)
            return _negate_first(_node(rest))
        ups, downs = [], []
        for f in e.args:
            if f.kind == "num" and c != 1:
                v = f.args[0]
                if isinstance(v, Fraction) and v.numerator in (1, -1):
                    downs.append(P.Num(v.denominator))
                    if v.numerator < 0:
                        ups.insert(0, P.Num(-1))
                    continue
            if f.kind == "pow" and _is_num(f.args[1]) and f.args[1].args[0] < 0:
                downs.append(_node(power(f.args[0], -f.args[1].args[0])))
                continue
            ups.append(_node(f))
        last = e.args[-1]
        if last.kind == "mm" and ups and not downs and \
                all(f.rank == 0 and f.shape is not None for f in e.args[:-1]):
            # 2 * A.T @ v: a scalar factor joins the chain's first matrix, as a book writes
            chain = _factors(last)
            head = ups[0]
            for u in ups[1:-1]:
                head = P.BinOp("*", head, u)
            first = _node(chain[0])
            lead = P.Neg(first) if isinstance(head, P.Num) and head.value == -1 and \
                len(ups) == 2 else P.BinOp("*", head, first)
            out = lead
            for f in chain[1:]:
                out = P.BinOp("@", out, _node(f))
            return out
        out = ups[0] if ups else P.Num(1)
        for u in ups[1:]:
            out = P.BinOp("*", out, u)
        if ups and isinstance(ups[0], P.Num) and ups[0].value == -1 and len(ups) > 1:
            rest_node = ups[1]
            for u in ups[2:]:
                rest_node = P.BinOp("*", rest_node, u)
            out = P.Neg(rest_node)
        for d in downs:
            out = P.BinOp("/", out, d)
        return out
    raise NoVectorForm(f"no text for {k}")


def _negate_first(node):
    """``-node`` with the minus on its first factor (the product is the same)."""
    if isinstance(node, P.BinOp) and node.op in ("*", "/", "@"):
        return P.BinOp(node.op, _negate_first(node.left), node.right)
    return P.Neg(node)


def _factors(e: Mx) -> list:
    """The factors of a chain of matrix products, left to right."""
    out = []
    while e.kind == "mm":
        out.extend(_factors(e.args[0]) if e.args[0].kind == "mm" else [e.args[0]])
        e = e.args[1]
    out.append(e)
    return out


def _chain(factors: list):
    """``A @ B @ x`` printed left to right (the product is associative)."""
    out = _node(factors[0])
    for f in factors[1:]:
        out = P.BinOp("@", out, _node(f))
    return out


def to_text(e: Mx, identity: str | None = None) -> str:
    """Expression text in the grammar (:func:`symgrad.parse` reads it back); an identity
    matrix, which the grammar cannot write, is printed as ``identity`` if given."""
    return P.to_text(_node(_name_eye(e, identity) if identity else e))


def _name_eye(e: Mx, name: str) -> Mx:
    if e.kind == "eye":
        return Mx("sym", (name,), e.shape)
    return Mx(e.kind, tuple(_name_eye(a, name) if isinstance(a, Mx) else a
                            for a in e.args), e.shape)


# -- factoring for print, expanding for proof ---------------------------------------------------
def tidy(e: Mx) -> Mx:
    """Factor sums of products the way a textbook writes them:
    ``A @ x + A.T @ x`` -> ``(A + A.T) @ x``, ``2*u*v + 2*u*w`` -> ``2*u*(v + w)``."""
    if e.kind == "add":
        terms = [tidy(t) for t in e.args]
        return _factor(terms)
    if e.kind in ("mul", "mm", "outer", "fn", "pow", "T"):
        args = tuple(tidy(a) if isinstance(a, Mx) else a for a in e.args)
        if e.kind == "mul":
            return mul(*args)
        if e.kind == "mm":
            return mm(*args)
        if e.kind == "outer":
            return outer(*args)
        if e.kind == "pow":
            return power(*args)
        if e.kind == "T":
            return transpose(args[0])
        return Mx("fn", args, e.shape)
    return e


def _factor(terms: list) -> Mx:
    """Group terms sharing a right matrix factor (``_ @ x``) or a common elementwise
    factor, largest groups first."""
    # right factors of matrix products
    groups: dict = {}
    for i, t in enumerate(terms):
        c, rest = _split(t)
        if rest is not None and rest.kind == "mm":
            groups.setdefault(rest.args[1].key, []).append(i)
    for k, idx in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        if len(idx) < 2:
            continue
        right = _split(terms[idx[0]])[1].args[1]
        lefts = []
        for i in idx:
            c, rest = _split(terms[i])
            lefts.append(mul(num(c), rest.args[0]))
        lefts.sort(key=lambda t: t.kind == "T")  # A + A.T, not A.T + A
        combined = Mx("mm", (_factor(_diagonals(lefts)), right),
                      _split(terms[idx[0]])[1].shape)
        rest = [t for i, t in enumerate(terms) if i not in idx]
        return _factor([combined] + rest) if rest else combined
    # outer products sharing a side: outer(u, b) + outer(w, b) = outer(u + w, b)
    for side in (1, 0):
        groups = {}
        for i, t in enumerate(terms):
            c, rest = _split(t)
            if rest is not None and rest.kind == "outer":
                groups.setdefault(rest.args[side].key, []).append(i)
        for k, idx in groups.items():
            if len(idx) < 2:
                continue
            shared = _split(terms[idx[0]])[1].args[side]
            others = _factor([mul(num(_split(terms[i])[0]), _split(terms[i])[1].args[1 - side])
                              for i in idx])
            combined = Mx("outer", (others, shared) if side else (shared, others),
                          _split(terms[idx[0]])[1].shape)
            rest = [t for i, t in enumerate(terms) if i not in idx]
            return _factor([combined] + rest) if rest else combined
    # left factors of matrix products: X.T @ A + X.T @ B = X.T @ (A + B)
    groups = {}
    for i, t in enumerate(terms):
        c, rest = _split(t)
        if rest is not None and rest.kind == "mm":
            groups.setdefault(_factors(rest)[0].key, []).append(i)
    for k, idx in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        if len(idx) < 2:
            continue
        left = _factors(_split(terms[idx[0]])[1])[0]
        rights = []
        for i in idx:
            c, rest = _split(terms[i])
            fs = _factors(rest)[1:]
            r = fs[0]
            for f in fs[1:]:
                r = mm(r, f)
            rights.append(mul(num(c), r))
        combined = Mx("mm", (left, _factor(_diagonals(rights))), left.shape[:1] +
                      _split(terms[idx[0]])[1].shape[1:])
        rest = [t for i, t in enumerate(terms) if i not in idx]
        return _factor([combined] + rest) if rest else combined
    # a common factor: det(X) * (A + B), y * (u - v)
    if len(terms) > 1:
        def scalars(t):
            return {f.key: f for f in (t.args if t.kind == "mul" else (t,))
                    if f.kind != "num" and (f.rank == 0 or t.kind == "mul")}
        common = set(scalars(terms[0]))
        for t in terms[1:]:
            common &= set(scalars(t))
        if common:
            factor = [scalars(terms[0])[k] for k in sorted(common, key=repr)]
            keys = set(common)
            inner = [mul(*(f for f in (t.args if t.kind == "mul" else (t,))
                           if f.key not in keys)) for t in terms]
            return mul(*factor, _factor(inner))
    # a common coefficient
    coefs = [_split(t)[0] for t in terms]
    if len(terms) > 1 and all(c != 1 for c in coefs):
        g = _gcd(coefs)
        if g not in (1, -1) and g != 0:
            inner = add(*(mul(num(Fraction(c) / g), _split(t)[1] or num(1)) for c, t in
                          zip(coefs, terms)))
            return mul(num(g), Mx("add", inner.args, inner.shape) if inner.kind == "add"
                       else inner)
    terms.sort(key=lambda t: t.kind == "T")  # A + A.T, not A.T + A
    return Mx("add", tuple(terms), _broadcast([t.shape for t in terms])) \
        if len(terms) > 1 else terms[0]


def _diagonals(terms: list) -> list:
    """``diag(a) + c * diag(b)`` -> ``[diag(a + c * b)]`` (diag is linear)."""
    if len(terms) > 1 and all(_split(t)[1] is not None and _split(t)[1].kind == "fn"
                              and is_op(_split(t)[1].args[0], T.ROLES.diagonal)
                              for t in terms):
        inside = add(*(mul(num(_split(t)[0]), _split(t)[1].args[1]) for t in terms))
        return [fn(name_of(T.ROLES.diagonal), tidy(inside), shape=terms[0].shape)]
    return terms


def _gcd(values) -> Fraction:
    fr = [Fraction(v) for v in values if isinstance(v, (int, Fraction))]
    if len(fr) != len(values):
        return Fraction(1)
    num_ = 0
    den = 1
    for f in fr:
        num_ = gcd(num_, f.numerator)
        den = den * f.denominator // gcd(den, f.denominator)
    g = Fraction(num_, den)
    if all(f < 0 for f in fr):
        g = -g
    return g.numerator if g.denominator == 1 else g


def canonical(e: Mx) -> Mx:
    """Fully expanded, with sums and elementwise products in sorted order: equal
    canonical forms (:attr:`Mx.key`) mean equal expressions for every size."""
    _WORK.left = MAX_WORK
    try:
        return _sorted_tree(_canonical(e))
    finally:
        _WORK.left = MAX_WORK


def _sorted_tree(e: Mx) -> Mx:
    """Every sum's terms and every elementwise product's factors in one order."""
    args = tuple(_sorted_tree(a) if isinstance(a, Mx) else a for a in e.args)
    if e.kind in ("add", "mul"):
        args = tuple(sorted(args, key=lambda t: (t.kind != "num", repr(t.key))))
    return Mx(e.kind, args, e.shape)


def _canonical(e: Mx) -> Mx:
    k = e.kind
    if k in ("sym", "num", "eye"):
        return e
    if k == "uniform":  # (a scalar text stands for a uniform vector in a claim)
        return _canonical(e.args[0])
    if k == "add":
        return _sorted_add(add(*(_canonical(t) for t in e.args)))
    if k == "mul":
        fs = [_canonical(f) for f in e.args]
        out = num(1)
        for f in fs:
            out = _distribute(out, f, mul)
        return _sorted_add(out)
    if k == "mm":
        return _sorted_add(_distribute(_canonical(e.args[0]), _canonical(e.args[1]), _mm_canon))
    if k == "outer":
        return _sorted_add(_distribute(_canonical(e.args[0]), _canonical(e.args[1]), outer))
    if k == "T":
        inner = _canonical(e.args[0])
        if inner.kind == "add":
            return _sorted_add(add(*(_canonical(transpose(t)) for t in inner.args)))
        return transpose(inner)
    if k == "pow":
        return power(_canonical(e.args[0]), _canonical(e.args[1]))
    if k == "fn":
        args = tuple(_canonical(a) if isinstance(a, Mx) else a for a in e.args[1:])
        name = e.args[0]
        op = op_of(name)
        if op in T.TRANSPOSE_INVARIANT and args[0].kind == "T":
            return _canonical(fn(name, args[0].args[0], shape=e.shape))  # det(X.T) = det(X)
        inverse = op is not None and op is T.ROLES.inverse
        if inverse and args[0].kind == "T":  # inverse(X.T) = inverse(X).T
            return transpose(fn(name, args[0].args[0], shape=e.shape))
        if inverse and args[0].kind == "mm" and all(
                _square(f) for f in args[0].args):  # (A B)^-1 = B^-1 A^-1, A and B square
            a, b = args[0].args
            return _canonical(mm(fn(name, b, shape=b.shape), fn(name, a, shape=a.shape)))
        if op is not None and op.linear and args[0].kind == "add":
            return _sorted_add(add(*(_canonical(fn(e.args[0], t, shape=e.shape))
                                     for t in args[0].args)))
        return fn(e.args[0], *args, shape=e.shape)
    if k == "unsq":
        return unsqueeze(_canonical(e.args[0]), e.args[1])
    return e


def _square(a: Mx) -> bool:
    return a.rank == 2 and _dim_key(a.shape[0]) == _dim_key(a.shape[1])


def _mm_canon(a: Mx, b: Mx) -> Mx:
    r = mm(a, b)
    if r.kind == "mm" and r.rank == 0:  # u @ v == v @ u; u @ M @ v == v @ M.T @ u
        x, y = r.args
        alt = mm(y, x) if x.rank == 1 and y.rank == 1 and y.kind != "mm" else None
        if x.rank == 1 and y.kind == "mm" and y.args[1].rank == 1:
            alt = Mx("mm", (y.args[1], mm(transpose(y.args[0]), x)), ())
        if alt is not None and repr(alt.key) < repr(r.key):
            return alt
    return r


#: The most terms an expansion may make (proofs of larger ones are left to the numbers).
MAX_TERMS = 2000


#: The most terms all the expansions of one canonical form may make together.
MAX_WORK = 20_000
_WORK = threading.local()


def _distribute(a: Mx, b: Mx, op) -> Mx:
    ta = a.args if a.kind == "add" else (a,)
    tb = b.args if b.kind == "add" else (b,)
    n = len(ta) * len(tb)
    _WORK.left = getattr(_WORK, "left", MAX_WORK) - n
    if n > MAX_TERMS or _WORK.left < 0:
        raise NoVectorForm(f"more than {MAX_TERMS} terms when expanded")
    return add(*(op(x, y) for x in ta for y in tb))


def _sorted_add(e: Mx) -> Mx:
    if e.kind == "add":
        return Mx("add", tuple(sorted(e.args, key=lambda t: repr(t.key))), e.shape)
    if e.kind == "mul":
        return Mx("mul", tuple(sorted(e.args, key=lambda t: (t.kind != "num",
                                                               repr(t.key)))), e.shape)
    return e
