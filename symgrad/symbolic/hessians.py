"""Hessians in matrix form: ``x.T @ A @ x`` -> ``A + A.T``, least squares -> ``2 * A.T @ A``.

The gradient's vector form (:mod:`~symgrad.symbolic.vectors`) is differentiated once
more, in a direction ``v``: the derivative of ``g(x + t v)`` at ``t = 0`` is ``H @ v``,
and ``H`` is read off the expanded result, term by term (``M @ v`` gives ``M``, ``c * v``
gives ``c * I``, ``c * (M @ v)`` with a vector ``c`` gives ``diag(c) @ M``).  The
derivatives of the functions come from the op table's own rules, run on the matrix
algebra (for an elementwise function, the rule's vector-Jacobian product is also the
directional derivative).  Matrix variables have Hessians of four dimensions, which no
matrix writes: those, and second derivatives through non-elementwise functions, raise
:class:`~symgrad.symbolic.matrix.NoVectorForm`.

Examples
--------
>>> from symgrad import parse
>>> hessian_text(parse("x.T @ A @ x"), "x", "x", {"x": [1, 2], "A": [[1, 2], [3, 4]]})
'A + A.T'
>>> hessian_text(parse("sum(x**2)"), "x", "x", {"x": [1, 2]})
'2 * I'
"""
from __future__ import annotations

from ..ops import tables as T
from . import matrix as M
from .matrix import Mx, NoVectorForm
from .matrix_forms import _factors, canonical, tidy, to_text
from .vectors import MATRIX, _grammar_attrs, gradient_expression

__all__ = ["hessian_form", "hessian_text"]

_V = "__v"  # the direction (a name the expression language cannot write)


def hessian_form(expr, x: str, y: str, values: dict, labels: dict | None = None) -> Mx:
    """The block ``d^2 f / dx dy`` of the Hessian as a matrix expression (``x`` and ``y``
    vectors or scalars)."""
    g = gradient_expression(expr, x, values, labels)
    leaf = _find(g, y)
    if leaf is None:
        return M.num(0)
    if g.rank > 1 or leaf.rank > 1:
        raise NoVectorForm("a Hessian with respect to a matrix has four dimensions")
    v = M.sym(_V, leaf.shape)
    d = canonical(_directional(g, y, v, {}))
    terms = d.args if d.kind == "add" else (d,)
    return tidy(M.add(*(_coefficient(t, v) for t in terms)))


def hessian_text(expr, x: str, y: str, values: dict, labels: dict | None = None) -> str:
    """:func:`hessian_form` as text, ``I`` standing for the identity matrix."""
    try:
        return to_text(hessian_form(expr, x, y, values, labels), identity="I")
    except (NoVectorForm, ValueError):
        raise
    except Exception as err:  # noqa: BLE001 - a form the algebra cannot follow
        raise NoVectorForm(f"a step the matrix algebra cannot follow ({err})") from None


def _find(e: Mx, name: str) -> Mx | None:
    stack = [e]
    while stack:
        n = stack.pop()
        if n.kind == "sym" and n.args[0] == name:
            return n
        stack.extend(a for a in n.args if isinstance(a, Mx))
    return None


def _directional(e: Mx, name: str, v: Mx, memo: dict) -> Mx:
    """The derivative of ``e`` in the direction ``v`` of the variable ``name``."""
    k = e.key
    if k not in memo:
        memo[k] = _rule(e, name, v, memo)
    return memo[k]


def _rule(e: Mx, name: str, v: Mx, memo: dict) -> Mx:
    kind, args = e.kind, e.args

    def d(a):
        return _directional(a, name, v, memo)
    if kind == "sym":
        return v if args[0] == name else M.num(0)
    if kind in ("num", "eye"):
        return M.num(0)
    if kind == "uniform":
        return d(args[0])
    if kind == "add":
        return M.add(*(d(t) for t in args))
    if kind == "mul":
        return M.add(*(M.mul(*args[:i], d(f), *args[i + 1:]) for i, f in enumerate(args)))
    if kind == "pow":
        base, p = args
        if p.kind != "num":
            raise NoVectorForm("a power with a variable exponent")
        return M.mul(p, M.power(base, M.num(p.args[0] - 1)), d(base))
    if kind == "mm":
        return M.add(M.mm(d(args[0]), args[1]), M.mm(args[0], d(args[1])))
    if kind == "T":
        return M.transpose(d(args[0]))
    if kind == "outer":
        return M.add(M.outer(d(args[0]), args[1]), M.outer(args[0], d(args[1])))
    if kind == "fn":
        return _function(e, d)
    raise NoVectorForm(f"no second derivative through {kind}")


def _function(e: Mx, d) -> Mx:
    """A function's directional derivative: linear ones pass it through, elementwise
    ones use the op table's rule (``du * f'(u)``)."""
    name, u = e.args[0], e.args[1]
    du = d(u)
    if M._is_num(du, 0):
        return M.num(0)
    op = M.op_of(name)
    if op is not None and op.linear:  # (sum, trace)
        return M.fn(name, du, shape=e.shape)
    if not M.elementwise(name) or op is None or op.grads is None or \
            _grammar_attrs(op) is None:
        raise NoVectorForm(f"a second derivative through {name}()")
    saved = []
    for what, where in op.plan:
        if what == "input":
            saved.append(u)
        elif what == "result":
            saved.append(e)
        elif what == "attr":
            saved.append(_grammar_attrs(op)[where])
        else:
            raise NoVectorForm(f"a second derivative through {name}()")
    return M._lift(op.grads[0](MATRIX, du, *saved))


def _coefficient(t: Mx, v: Mx) -> Mx:
    """``J`` with ``t = J @ v`` for one term of the expanded directional derivative: a
    matrix for a vector ``t``, a (row) vector for a scalar ``t``."""
    if t.same(v):
        return M.eye(v.shape[0]) if v.rank else M.num(1)
    if t.kind == "mm":
        fs = _factors(t)
        if t.rank == 0 and _find(fs[0], _V) is not None:  # w @ M @ u = u @ M.T @ w
            fs = [M.transpose(f) for f in reversed(fs)]
        if any(_find(f, _V) for f in fs[:-1]):
            raise NoVectorForm("the Hessian has no matrix form here")
        left = fs[0]
        for f in fs[1:-1]:
            left = M.mm(left, f)
        inner = _coefficient(fs[-1], v)
        if t.rank == 0:  # u @ (J v) = (J.T @ u) @ v
            return M.mm(M.transpose(inner), left)
        return M.mm(left, inner)
    if t.kind == "mul":
        with_v = [f for f in t.args if _find(f, _V) is not None]
        rest = [f for f in t.args if _find(f, _V) is None]
        if len(with_v) == 1 and all(f.rank <= 1 for f in rest):
            f = with_v[0]
            inner = _coefficient(f, v)
            scalars = [g for g in rest if g.rank == 0]
            vectors = [g for g in rest if g.rank == 1]
            c = M.mul(*vectors) if vectors else None
            if f.rank == 0:  # c * (u @ v) = outer(c, u) @ v
                return M.mul(*scalars, M.outer(c, inner) if c is not None else inner)
            diag = M.fn(M.name_of(T.ROLES.diagonal), c, shape=(c.shape[0],) * 2) \
                if c is not None else None
            return M.mul(*scalars, M.mm(diag, inner) if diag is not None else inner)
    raise NoVectorForm("the Hessian has no matrix form here")
