"""Gradients in vector form: ``sin(dot(x, y))`` -> ``cos(dot(x, y)) * y``.

Reverse mode over the expression tree, with whole vectors and matrices as values, so
the gradient comes out as expression text in the same grammar (it can be parsed,
evaluated and checked like any expression).  Shapes come from evaluating the expression
once at the given values.  Where a gradient has no form in the grammar (the outer
product that the gradient of ``A @ x`` with respect to ``A`` needs, the step function
of ``relu``), :class:`NoVectorForm` is raised; the per-element symbolic gradient
(:meth:`symgrad.symbolic.expression.Expression.diff`) always exists.

Examples
--------
>>> from symgrad import parse
>>> vector_gradient(parse("sin(dot(x, y))"), "x", x=[1, 2], y=[3, 4])
'cos(dot(x, y)) * y'
>>> vector_gradient(parse("x.T @ A @ x"), "x", x=[1, 2], A=[[1, 2], [3, 4]])
'A.T @ x + A @ x'
>>> vector_gradient(parse("log(sum(exp(x)))"), "x", x=[1, 2, 3])
'exp(x) / sum(exp(x))'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import no_grad
from . import parser as P

__all__ = ["vector_gradient", "NoVectorForm"]


class NoVectorForm(ValueError):
    """The gradient has no vector form in the expression grammar."""


def _num(v) -> P.Num:
    v = float(v)
    return P.Num(int(v) if v.is_integer() and abs(v) < 1e15 else v)


ONE = P.Num(1)
ZERO = P.Num(0)


def _is_num(n, value=None) -> bool:
    if isinstance(n, P.Num):
        return value is None or n.value == value
    return False


def _neg(a):
    if _is_num(a):
        return _num(-a.value)
    if isinstance(a, P.Neg):
        return a.operand
    return P.Neg(a)


def _add(a, b):
    if _is_num(a, 0):
        return b
    if not _is_num(b) and P.to_text(a) == P.to_text(b):
        return _mul(P.Num(2), a)
    if _is_num(b, 0):
        return a
    if _is_num(a) and _is_num(b):
        return _num(a.value + b.value)
    if isinstance(b, P.Neg):
        return P.BinOp("-", a, b.operand)
    return P.BinOp("+", a, b)


def _mul(a, b):
    if _is_num(a, 0) or _is_num(b, 0):
        return ZERO
    if _is_num(a, 1):
        return b
    if _is_num(b, 1):
        return a
    if _is_num(a) and _is_num(b):
        return _num(a.value * b.value)
    if isinstance(a, P.Neg):
        return _neg(_mul(a.operand, b))
    if isinstance(b, P.Neg):
        return _neg(_mul(a, b.operand))
    if isinstance(a, P.BinOp) and a.op == "/" and _is_num(a.left, 1):
        return _div(b, a.right)  # (1/d) * b = b / d
    if isinstance(b, P.BinOp) and b.op == "/" and _is_num(b.left, 1):
        return _div(a, b.right)
    if _is_num(b):  # numbers first: 2 * x
        return P.BinOp("*", b, a)
    return P.BinOp("*", a, b)


def _div(a, b):
    if _is_num(b, 1):
        return a
    if _is_num(a) and _is_num(b) and b.value != 0 and float(a.value / b.value).is_integer():
        return _num(a.value / b.value)
    if _is_num(a, 0):
        return ZERO
    if isinstance(a, P.Neg):
        return _neg(_div(a.operand, b))
    return P.BinOp("/", a, b)


def _pow(a, b):
    if _is_num(b, 1):
        return a
    if _is_num(b, 0):
        return ONE
    return P.BinOp("**", a, b)


def _call(f, *args):
    return P.Call(f, tuple(args))


def _has(node, var: str) -> bool:
    return var in P.free_variables(node)


def _shapes(tree, values: dict, expression_type: type) -> dict:
    """id(node) -> shape of its value, by evaluating every node once (no graph)."""
    e = expression_type(P.to_text(tree), tree)
    shapes: dict = {}
    stack = [tree]
    nodes = []
    while stack:
        n = stack.pop()
        nodes.append(n)
        stack.extend(_children(n))
    with no_grad():
        for n in nodes:
            sub = expression_type(P.to_text(n), n)
            vals = {k: values[k] for k in sub.variables}
            shapes[id(n)] = tuple(sub.evaluate(**vals).shape)
    del e
    return shapes


def _children(n) -> tuple:
    if isinstance(n, P.BinOp):
        return (n.left, n.right)
    if isinstance(n, (P.Neg, P.Transpose)):
        return (n.operand,)
    if isinstance(n, P.Call):
        return tuple(n.args)
    return ()


class _Shapes:
    """Shapes of adjoint expressions, found by evaluating them (cached by text)."""

    def __init__(self, values: dict, expression_type: type) -> None:
        self.values = values
        self.expression_type = expression_type
        self.cache: dict = {}

    def __call__(self, node) -> tuple:
        text = P.to_text(node)
        if text not in self.cache:
            e = self.expression_type(text, node)
            with no_grad():
                out = e.evaluate(**{k: self.values[k] for k in e.variables})
            self.cache[text] = tuple(out.shape)
        return self.cache[text]


def _unbroadcast(g, node_shape: tuple, shape: tuple, shape_of):
    """The adjoint of an operand of ``shape`` broadcast to ``node_shape``.

    A scalar text ``g`` stands for the same value in every element of ``node_shape``.
    """
    if shape == node_shape:
        return g
    g_scalar = shape_of(g) == ()
    if shape == ():
        if g_scalar:
            return _mul(_num(int(np.prod(node_shape))), g)
        return _call("sum", g)
    if g_scalar:
        return g
    raise NoVectorForm(f"broadcasting {shape} to {node_shape} has no vector form here")


def vector_gradient(expr, var: str, **values: Any) -> str:
    """The gradient of a scalar expression with respect to ``var``, as expression text.

    Parameters
    ----------
    expr : Expression
        (Its class evaluates the sub-expressions whose shapes matter.)
    var : str
        The variable.
    **values
        Values of all variables (only their shapes matter).

    Returns
    -------
    str
        Text in the expression grammar; a scalar text for a vector variable means the
        same value in every element (``sum(x)`` gives ``1``).

    Raises
    ------
    NoVectorForm
        When the gradient cannot be written in the grammar.
    """
    e = expr
    if var not in e.variables:
        raise ValueError(f"{var!r} is not a variable of the expression (variables: "
                         f"{', '.join(e.variables) or 'none'})")
    vals = {k: np.asarray(v, dtype=np.float64) for k, v in values.items()}
    missing = [k for k in e.variables if k not in vals]
    if missing:
        raise ValueError(f"no value given for {', '.join(missing)}")
    shapes = _shapes(e.tree, vals, type(e))
    shape_of = _Shapes(vals, type(e))
    if shapes[id(e.tree)] != ():
        raise ValueError("the expression is not a scalar; gradients need a scalar")
    total = ZERO
    work = [(e.tree, ONE)]
    while work:
        node, adj = work.pop()
        if not _has(node, var):
            continue
        for child, g in _rules(node, adj, shapes, shape_of):
            if isinstance(g, _Lazy):
                if _has(child, var):
                    raise NoVectorForm(g.why)
                continue
            if isinstance(child, P.Name):
                if child.name == var:
                    total = _add(total, g)
            else:
                work.append((child, g))
    return P.to_text(_tidy(total, shape_of))


def _tidy(node, shape_of):
    """Cosmetics: ``x.T @ A`` with a vector ``x`` reads better as ``A.T @ x``."""
    if isinstance(node, P.BinOp):
        left, right = _tidy(node.left, shape_of), _tidy(node.right, shape_of)
        if (node.op == "@" and isinstance(left, P.Transpose)
                and len(shape_of(left.operand)) == 1 and len(shape_of(right)) == 2):
            return P.BinOp("@", P.Transpose(right), left.operand)
        return P.BinOp(node.op, left, right)
    if isinstance(node, P.Neg):
        return P.Neg(_tidy(node.operand, shape_of))
    if isinstance(node, P.Transpose):
        return P.Transpose(_tidy(node.operand, shape_of))
    if isinstance(node, P.Call):
        return P.Call(node.func, tuple(_tidy(a, shape_of) for a in node.args))
    return node


def _rules(n, a, shapes, shape_of):
    """(child, adjoint) pairs for node ``n`` with adjoint ``a``."""
    s = shapes[id(n)]
    if isinstance(n, P.Name):
        return [(n, a)]
    if isinstance(n, P.Neg):
        return [(n.operand, _neg(a))]
    if isinstance(n, P.Transpose):
        u = n.operand
        return [(u, a if len(shapes[id(u)]) < 2 else P.Transpose(a))]
    if isinstance(n, P.BinOp):
        u, v = n.left, n.right
        su, sv = shapes[id(u)], shapes[id(v)]
        op = n.op
        if op == "+":
            return [(u, _unbroadcast(a, s, su, shape_of)),
                    (v, _unbroadcast(a, s, sv, shape_of))]
        if op == "-":
            return [(u, _unbroadcast(a, s, su, shape_of)),
                    (v, _unbroadcast(_neg(a), s, sv, shape_of))]
        if op == "*":
            return [(u, _unbroadcast(_mul(a, v), s, su, shape_of)),
                    (v, _unbroadcast(_mul(a, u), s, sv, shape_of))]
        if op == "/":
            return [(u, _unbroadcast(_div(a, v), s, su, shape_of)),
                    (v, _unbroadcast(_neg(_div(_mul(a, u), _pow(v, P.Num(2)))), s, sv,
                                     shape_of))]
        if op in ("**", "^"):
            out = []
            if _is_num(v) or (isinstance(v, P.Neg) and _is_num(v.operand)):
                c = v.value if _is_num(v) else -v.operand.value
                out.append((u, _unbroadcast(_mul(_mul(_num(c), a), _pow(u, _num(c - 1))),
                                            s, su, shape_of)))
                return out
            out.append((u, _unbroadcast(_mul(_mul(a, v), _pow(u, _add(v, _num(-1)))),
                                        s, su, shape_of)))
            out.append((v, _unbroadcast(_mul(_mul(a, n), _call("log", u)), s, sv, shape_of)))
            return out
        if op == "@":
            return _matmul_rules(u, v, a, su, s, sv, shape_of)
    if isinstance(n, P.Call):
        return _call_rules(n, a, shapes, shape_of)
    return []


def _matmul_rules(u, v, a, su, s, sv, shape_of):
    if len(su) + len(sv) > 2 and shape_of(a) == ():
        # A scalar adjoint stands for a matrix of ones, which the grammar cannot write.
        return [(u, _no_form("the adjoint of a matrix product is a matrix of ones")),
                (v, _no_form("the adjoint of a matrix product is a matrix of ones"))]
    if len(su) == 1 and len(sv) == 1:
        return [(u, _mul(a, v)), (v, _mul(a, u))]
    if len(su) == 2 and len(sv) == 1:
        return [(u, _no_form("the gradient of A @ x with respect to A is an outer "
                             "product")), (v, P.BinOp("@", P.Transpose(u), a))]
    if len(su) == 1 and len(sv) == 2:
        return [(u, P.BinOp("@", v, a)),
                (v, _no_form("the gradient of x @ A with respect to A is an outer "
                             "product"))]
    return [(u, P.BinOp("@", a, P.Transpose(v))), (v, P.BinOp("@", P.Transpose(u), a))]


class _Lazy:
    """An adjoint that only fails if it is actually needed."""

    def __init__(self, why: str) -> None:
        self.why = why


def _no_form(why):
    return _Lazy(why)


def _call_rules(n, a, shapes, shape_of):
    f = n.func
    u = n.args[0]
    su = shapes[id(u)]
    if f == "sin":
        return [(u, _mul(a, _call("cos", u)))]
    if f == "cos":
        return [(u, _neg(_mul(a, _call("sin", u))))]
    if f == "tan":
        return [(u, _mul(a, _add(ONE, _pow(_call("tan", u), P.Num(2)))))]
    if f == "exp":
        return [(u, _mul(a, n))]
    if f == "log":
        return [(u, _div(a, u))]
    if f == "sqrt":
        return [(u, _div(a, _mul(P.Num(2), n)))]
    if f == "tanh":
        return [(u, _mul(a, P.BinOp("-", ONE, _pow(n, P.Num(2)))))]
    if f == "sigmoid":
        return [(u, _mul(_mul(a, n), P.BinOp("-", ONE, n)))]
    if f == "abs":
        return [(u, _mul(a, _div(u, n)))]
    if f == "sum":
        return [(u, a)]  # a scalar adjoint: the same value in every element
    if f == "mean":
        return [(u, _div(a, _num(int(np.prod(su)) if su else 1)))]
    if f == "norm":
        return [(u, _mul(a, _div(u, n)))]
    if f == "dot":
        v = n.args[1]
        return [(u, _mul(a, v)), (v, _mul(a, u))]
    if f == "matmul":
        return _matmul_rules(u, n.args[1], a, su, shapes[id(n)], shapes[id(n.args[1])],
                             shape_of)
    scalar = shape_of(a) == ()  # a scalar adjoint text stands for a constant vector
    k = _num(int(np.prod(su)) if su else 1)
    if f == "softmax":
        if scalar:
            return [(u, _mul(a, _mul(n, P.BinOp("-", ONE, _call("sum", n)))))]
        return [(u, _mul(n, P.BinOp("-", a, _call("dot", a, n))))]
    if f == "log_softmax":
        total = _mul(k, a) if scalar else _call("sum", a)
        return [(u, P.BinOp("-", a, _mul(_call("softmax", u), total)))]
    raise NoVectorForm(f"{f}() has no derivative in the expression grammar")
