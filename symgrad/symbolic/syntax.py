"""The expression language's syntax tree: nodes, precedence, free variables, text."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Union

__all__ = ["CONSTANTS", "Num", "Name", "Call", "BinOp", "Neg", "Transpose", "Vector", "Node",
           "free_variables", "to_text"]


#: Names that denote constants rather than free variables.
CONSTANTS = frozenset({"pi", "e"})


@dataclass(frozen=True)
class Num:
    """A numeric literal: ``int`` for ``2``, ``float`` for ``2.0``, ``.5``, ``1e3``.

    Examples
    --------
    >>> from symgrad.symbolic.parser import parse
    >>> parse("1e3")
    Num(value=1000.0, pos=0)
    """

    value: Union[int, float]
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Name:
    """A free variable, or one of the constants ``pi`` and ``e``.

    Examples
    --------
    >>> from symgrad.symbolic.parser import parse
    >>> parse("  w_1")
    Name(name='w_1', pos=2)
    """

    name: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Call:
    """A call of one of :data:`FUNCTIONS`; ``pos`` is that of the function name.

    Examples
    --------
    >>> from symgrad.symbolic.parser import parse
    >>> parse("dot(x, y)") == Call("dot", (Name("x"), Name("y")))
    True
    """

    func: str
    args: tuple
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class BinOp:
    """A binary operation; ``op`` is one of ``+ - * / ** @``, ``pos`` the operator's.

    Examples
    --------
    >>> from symgrad.symbolic.parser import parse
    >>> parse("a - b - c") == BinOp("-", BinOp("-", Name("a"), Name("b")), Name("c"))
    True
    """

    op: str
    left: "Node"
    right: "Node"
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Neg:
    """Unary minus; ``pos`` is that of the ``-``.

    Examples
    --------
    >>> from symgrad.symbolic.parser import parse
    >>> parse("--x") == Neg(Neg(Name("x")))
    True
    """

    operand: "Node"
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Transpose:
    """Postfix ``.T``; ``pos`` is that of the ``.``.

    Examples
    --------
    >>> from symgrad.symbolic.parser import parse
    >>> parse("x.T")
    Transpose(operand=Name(name='x', pos=0), pos=1)
    """

    operand: "Node"
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Vector:
    """A bracketed list of values, produced only by :func:`parse_value_node`.

    Examples
    --------
    >>> from symgrad.symbolic.parser import parse_value_node
    >>> parse_value_node("[1, -2]") == Vector((Num(1), Num(-2)))
    True
    """

    items: tuple
    pos: int = field(default=0, compare=False)


Node = Union[Num, Name, Call, BinOp, Neg, Transpose, Vector]


_PREC_ADD, _PREC_MUL, _PREC_UNARY, _PREC_POW, _PREC_POSTFIX, _PREC_ATOM = range(1, 7)


# ``%`` is Python's and PyTorch's remainder (the sign of the divisor), as tight as ``*``.
_BINARY_PREC = {"+": _PREC_ADD, "-": _PREC_ADD, "*": _PREC_MUL, "/": _PREC_MUL,
                "%": _PREC_MUL, "@": _PREC_MUL, "**": _PREC_POW}


def free_variables(node: Node) -> list[str]:
    """Return the names of the free variables, in order of first appearance.

    The constants :data:`CONSTANTS` (``pi``, ``e``) are not free variables.

    Examples
    --------
    >>> from symgrad.symbolic.parser import parse
    >>> free_variables(parse("y * exp(x) + e**y - x.T @ A"))
    ['y', 'x', 'A']
    """
    seen: dict[str, None] = {}
    stack: list = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Name):
            if n.name not in CONSTANTS:
                seen.setdefault(n.name)
        elif isinstance(n, BinOp):
            stack.append(n.right)
            stack.append(n.left)
        elif isinstance(n, (Neg, Transpose)):
            stack.append(n.operand)
        elif isinstance(n, Call):
            stack.extend(reversed(n.args))
        elif isinstance(n, Vector):
            stack.extend(reversed(n.items))
        elif not isinstance(n, Num):
            raise TypeError(f"not an AST node: {n!r}")
    return list(seen)


def to_text(node: Node) -> str:
    """Print an AST as text that :func:`parse` reads back to an equal AST.

    Parentheses are added only where precedence or associativity needs them.  A
    negative :class:`Num` prints as ``-2`` (parenthesised where needed), which reads
    back as ``Neg(Num(2))``; :class:`Vector` prints as ``[...]``, which only
    :func:`parse_value_node` reads.

    Examples
    --------
    >>> to_text(BinOp("-", Name("a"), BinOp("-", Name("b"), Name("c"))))
    'a - (b - c)'
    >>> to_text(BinOp("**", Neg(Name("x")), BinOp("**", Num(2), Num(3))))
    '(-x) ** 2 ** 3'
    """
    return _to_text(node)[0]


def _to_text(node: Node) -> tuple[str, int]:
    if isinstance(node, Num):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"Num value must be int or float, got {v!r}")
        if isinstance(v, float):
            if not math.isfinite(v):
                raise ValueError(f"cannot print non-finite number {v!r}")
            s = repr(v)
        else:
            s = str(v)
        return s, _PREC_UNARY if s.startswith("-") else _PREC_ATOM
    if isinstance(node, Name):
        return node.name, _PREC_ATOM
    if isinstance(node, Call):
        return f"{node.func}({', '.join(to_text(a) for a in node.args)})", _PREC_ATOM
    if isinstance(node, Vector):
        return f"[{', '.join(to_text(a) for a in node.items)}]", _PREC_ATOM
    if isinstance(node, Transpose):
        s, p = _to_text(node.operand)
        return (f"({s})" if p < _PREC_POSTFIX else s) + ".T", _PREC_POSTFIX
    if isinstance(node, Neg):
        s, p = _to_text(node.operand)
        if p < _PREC_UNARY:
            s = f"({s})"
        return "-" + (" " + s if s.startswith("-") else s), _PREC_UNARY
    if isinstance(node, BinOp):
        prec = _BINARY_PREC[node.op]
        left, lp = _to_text(node.left)
        right, rp = _to_text(node.right)
        if node.op == "**":  # right associative; the exponent may carry a sign
            left_parens, right_parens = lp <= prec, rp < _PREC_UNARY
        else:
            left_parens, right_parens = lp < prec, rp <= prec
        if left_parens:
            left = f"({left})"
        if right_parens:
            right = f"({right})"
        return f"{left} {node.op} {right}", prec
    raise TypeError(f"not an AST node: {node!r}")
