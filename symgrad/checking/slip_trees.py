"""The claim's syntax tree as the slip rewrites see it: sites (path, node, parent), one-site
replacement, the term or matrix product that holds a node, and text as a reader writes it.

Examples
--------
>>> from symgrad.symbolic.parser import parse
>>> tree = parse("2*x + sigmoid(w*x)")
>>> [_text(t) for _, t in _terms(tree)]
['2*x', 'sigmoid(w*x)']
"""
from __future__ import annotations

import re
from dataclasses import replace

from .. import ops
from ..symbolic import parser as P
from ..symbolic.syntax import BinOp, Call, Neg, Num, Transpose, to_text

__all__ = ["_children", "_with_children", "_sites", "_put", "_is", "_call", "_negated",
           "_text", "_context", "_at", "_term", "_one_minus", "_left_grouped", "_spine",
           "_terms", "_number"]

_PRODUCTS = ("*", "@")
_NEGATIVE_POWER = re.compile(r"\*\*(-[0-9.]+)")


def _children(node) -> tuple:
    if isinstance(node, BinOp):
        return (node.left, node.right)
    if isinstance(node, (Neg, Transpose)):
        return (node.operand,)
    if isinstance(node, Call):
        return node.args
    return ()


def _with_children(node, kids: tuple):
    if isinstance(node, BinOp):
        return replace(node, left=kids[0], right=kids[1])
    if isinstance(node, (Neg, Transpose)):
        return replace(node, operand=kids[0])
    if isinstance(node, Call):
        return replace(node, args=tuple(kids))
    return node


def _sites(tree, path: tuple = ()):
    """``(path, node, parent)`` for every node, outermost first."""
    stack = [(path, tree, None)]
    while stack:
        p, n, parent = stack.pop()
        yield p, n, parent
        kids = _children(n)
        for i in reversed(range(len(kids))):
            stack.append((p + (i,), kids[i], n))


def _put(tree, path: tuple, new):
    """``tree`` with the node at ``path`` replaced by ``new``."""
    if not path:
        return new
    kids = list(_children(tree))
    kids[path[0]] = _put(kids[path[0]], path[1:], new)
    return _with_children(tree, tuple(kids))


def _is(node, op) -> bool:
    return isinstance(node, Call) and P.FUNCTION_OPS.get(node.func) is op


def _call(op, *args) -> Call:
    return Call(op.exprs[0], tuple(args))


def _negated(u):
    """``-u`` as a reader writes it (``-w*x``, not ``-(w*x)``; ``x`` for ``-x``)."""
    if isinstance(u, Neg):
        return u.operand
    if isinstance(u, BinOp) and u.op in ("*", "/", "@"):
        return replace(u, left=_negated(u.left))
    return Neg(u)


def _text(node) -> str:
    """``node`` as text, products and powers written tight (``sigmoid(w*x)``)."""
    out = to_text(node).replace(" ** ", "**").replace(" * ", "*").replace(" / ", "/")
    return _NEGATIVE_POWER.sub(r"**(\1)", out)  # (x**(-3), not x**-3)


def _context(tree, path: tuple):
    """The path of the innermost matrix product holding the node at ``path`` (the node's
    own when there is none): the part of the claim a diagnosis quotes."""
    for cut in range(len(path) - 1, -1, -1):
        node = _at(tree, path[:cut])
        if isinstance(node, BinOp) and node.op == "@":
            return path[:cut]
    return path


def _at(tree, path: tuple):
    for i in path:
        tree = _children(tree)[i]
    return tree


def _term(tree, path: tuple) -> tuple:
    """The path of the product (of ``*``, ``/``, ``@``) that holds the node at ``path``
    as a factor: the term of a sum it is in."""
    cut = len(path)
    while cut > 0 and isinstance(_at(tree, path[:cut - 1]), BinOp) and \
            _at(tree, path[:cut - 1]).op in ("*", "/", "@"):
        cut -= 1
    return path[:cut]


def _one_minus(node, op=ops.SIGMOID) -> bool:
    return (isinstance(node, BinOp) and node.op == "-" and isinstance(node.left, Num)
            and node.left.value == 1 and _is(node.right, op))


def _left_grouped(items: list):
    out = items[0]
    for i in range(1, len(items), 2):
        out = BinOp(items[i], out, items[i + 1])
    return out


def _spine(node) -> list:
    """``[a, op, b, op, c, ...]`` for a product ``((a op b) op c) ...`` of ``*`` and ``@``
    (``[node]`` when it is none)."""
    if isinstance(node, BinOp) and node.op in _PRODUCTS:
        return _spine(node.left) + [node.op, node.right]
    return [node]


def _terms(node, path: tuple = ()) -> list:
    """``(path, term)`` for the terms of a sum or difference (the node alone if none)."""
    if isinstance(node, BinOp) and node.op in ("+", "-"):
        return _terms(node.left, path + (0,)) + _terms(node.right, path + (1,))
    return [(path, node)]


def _number(node):
    if isinstance(node, Num) and isinstance(node.value, int):
        return node.value
    if isinstance(node, Neg):
        n = _number(node.operand)
        return None if n is None else -n
    return None
