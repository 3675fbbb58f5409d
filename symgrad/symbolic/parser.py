"""Tokenizer and parser for symgrad expression text.

This module turns text such as ``"sin(x)**2 + 3*x"`` into a small immutable AST
(:class:`Num`, :class:`Name`, :class:`Call`, :class:`BinOp`, :class:`Neg`,
:class:`Transpose`, :class:`Vector`) that another module lowers to the graph IR.
It is a hand-written tokenizer plus an iterative operator-precedence parser: it never
calls ``eval``, ``exec``, ``compile``, ``ast.literal_eval``, ``sympy.sympify`` or
``parse_expr``, and it never recurses, so hostile input cannot hang it, exhaust the
stack or allocate huge amounts of memory.

Grammar, from loosest to tightest binding (as in Python)::

    + -            binary, left associative
    * / @          binary, left associative
    + -            unary (unary plus is dropped): -x*y is (-x)*y
    ** ^           binary, right associative; -x**2 is -(x**2), 2**-1 is allowed
    .T             postfix transpose
    atoms          numerals, names, (expression), f(arg, ...)

Numerals are decimal: ``2``, ``1.5``, ``.5``, ``2.``, ``1e-3``, ``2E+5``.  Integer
numerals become ``int``, the others ``float``.  Rejected: ``1.2.3`` (second decimal
point), ``1e`` (exponent without digits; write ``1*e`` for the constant),
``08`` / ``00.5`` (leading zeros, as in Python; write ``8`` / ``0.5``), ``1_000``,
``0x1F``, more than :data:`MAX_NUMERAL_DIGITS` digits, and numerals that overflow a
float.  Errors about a numeral point at the offending character (the second ``.``,
the ``e`` without digits) or, for whole-numeral problems, at its first character.

Safety limits (module constants, read at call time): :data:`MAX_LENGTH` characters,
:data:`MAX_TOKENS` tokens, :data:`MAX_DEPTH` levels of bracket nesting *and* of tree
depth (so every returned AST is at most that deep and can be walked recursively),
:data:`MAX_NUMERAL_DIGITS` digits per numeral, and :data:`MAX_EXPONENT` for constant
exponents: an exponent that folds to a constant (``x**1e9``, ``2**(10**400)``,
``x**-5000``) must be finite with magnitude at most ``MAX_EXPONENT``, and so must the
product of constant exponents along nested powers (``((2**1000)**1000)**1000``
would otherwise make any exact evaluator build a 10**9-digit integer).

Node equality ignores positions: ``Name("x", 0) == Name("x", 7)``.

Examples
--------
>>> parse("-x**2 + 3")
BinOp(op='+', left=Neg(operand=BinOp(op='**', left=Name(name='x', pos=1), \
right=Num(value=2, pos=4), pos=2), pos=0), right=Num(value=3, pos=8), pos=6)
>>> to_text(parse("(a+b)*c^2"))
'(a + b) * c ** 2'
>>> free_variables(parse("dot(w, x) + pi*w"))
['w', 'x']
>>> parse_value("[[1, 2], [3, -4.5]]")
[[1.0, 2.0], [3.0, -4.5]]
"""
from __future__ import annotations

import difflib
import keyword
import math
import operator
import string
from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Optional, Union

import numpy as np

from ..errors import SymgradError
from ..ops import subscribe

__all__ = [
    "MAX_LENGTH",
    "MAX_DEPTH",
    "MAX_TOKENS",
    "MAX_NUMERAL_DIGITS",
    "MAX_EXPONENT",
    "FUNCTIONS",
    "CONSTANTS",
    "Num",
    "Name",
    "Call",
    "BinOp",
    "Neg",
    "Transpose",
    "Vector",
    "Node",
    "ParseError",
    "parse",
    "parse_value",
    "parse_value_node",
    "free_variables",
    "to_text",
]

#: Maximum length of the input text, in characters.
MAX_LENGTH = 10_000
#: Maximum nesting of brackets and maximum depth of the resulting tree.
MAX_DEPTH = 200
#: Maximum number of tokens in one input.
MAX_TOKENS = 5_000
#: Maximum number of digits in one numeral (mantissa and exponent together).
MAX_NUMERAL_DIGITS = 100
#: Maximum magnitude of a constant exponent (and of nested constant exponents).
MAX_EXPONENT = 1_000

#: Known functions, name -> number of arguments: every op of the table with a name in
#: the expression language (``Op.expr``), kept in step with the table.
FUNCTIONS: dict[str, int] = {}
#: The op record of each function, for constant folding and evaluation.
FUNCTION_OPS: dict = {}


def _add_function(op) -> None:
    if op.expr:
        FUNCTIONS[op.expr] = op.arity
        FUNCTION_OPS[op.expr] = op


def _remove_function(op) -> None:
    if FUNCTION_OPS.get(op.expr) is op:
        del FUNCTIONS[op.expr], FUNCTION_OPS[op.expr]


subscribe(_add_function, _remove_function)

#: Names that denote constants rather than free variables.
CONSTANTS = frozenset({"pi", "e"})


# --------------------------------------------------------------------------- AST


@dataclass(frozen=True)
class Num:
    """A numeric literal: ``int`` for ``2``, ``float`` for ``2.0``, ``.5``, ``1e3``.

    Examples
    --------
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
    >>> parse_value_node("[1, -2]") == Vector((Num(1), Num(-2)))
    True
    """

    items: tuple
    pos: int = field(default=0, compare=False)


Node = Union[Num, Name, Call, BinOp, Neg, Transpose, Vector]


# ------------------------------------------------------------------------ errors


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _where(text: str, pos: int) -> str:
    line, column = _line_col(text, pos)
    if "\n" in text:
        return f"line {line}, column {column}"
    return f"column {column}"


class ParseError(SymgradError, ValueError):
    """Raised for any text that is not a valid expression or value.

    Attributes
    ----------
    text : str
        The whole input.
    pos : int
        0-based offset of the offending character (``len(text)`` at end of input).
    line, column : int
        1-based line and column of ``pos``.
    message : str
        What was expected and what was found, without the location.

    Examples
    --------
    >>> try:
    ...     parse("sin(x + 1")
    ... except ParseError as err:
    ...     print(err.pretty())
    column 10: expected ')' to close '(' at column 4, found end of input
        sin(x + 1
                 ^
    """

    def __init__(self, message: str, text: str, pos: int) -> None:
        self.message = message
        self.text = text
        self.pos = pos
        self.line, self.column = _line_col(text, pos)
        super().__init__(f"{_where(text, pos)}: {message}")

    def __reduce__(self) -> tuple:
        return (type(self), (self.message, self.text, self.pos))

    def pretty(self, width: int = 76) -> str:
        """Return the message, the offending line and a caret under the column.

        Lines longer than `width` are cut around the column, with ``...`` marks.
        """
        start = self.text.rfind("\n", 0, self.pos) + 1
        end = self.text.find("\n", self.pos)
        line = self.text[start:] if end < 0 else self.text[start:end]
        col = self.pos - start
        if len(line) > width:
            lo = max(0, min(col - width // 2, len(line) - width))
            hi = lo + width
            lead = "..." if lo > 0 else ""
            line = lead + line[lo:hi] + ("..." if hi < len(line) else "")
            col = col - lo + len(lead)
        line = "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in line)
        pad = "".join("\t" if ch == "\t" else " " for ch in line[:col])
        return f"{self}\n    {line}\n    {pad}^"


# --------------------------------------------------------------------- tokenizer

_DIGITS = frozenset(string.digits)
_IDENT_START = frozenset(string.ascii_letters + "_")
_IDENT_CHARS = _IDENT_START | _DIGITS
_SPACE = frozenset(" \t\n\r\f\v")
_SINGLE = {"+": "op", "-": "op", "/": "op", "@": "op", "(": "(", ")": ")", "[": "[",
           "]": "]", ",": ","}
_BAD_CHARS = {
    "'": "string literals are not allowed",
    '"': "string literals are not allowed",
    ";": "';' is not allowed: enter a single expression",
    "=": "'=' is not allowed (no assignments, comparisons or keyword arguments)",
    "<": "comparisons are not supported",
    ">": "comparisons are not supported",
    "!": "'!' is not supported",
    "%": "'%' (modulo) is not supported",
    "&": "bitwise operators are not supported",
    "|": "bitwise operators are not supported",
    "~": "bitwise operators are not supported",
    ":": "':' is not allowed (no slices, lambdas or annotations)",
    "{": "braces are not allowed",
    "}": "braces are not allowed",
    "#": "comments are not allowed",
    "\\": "backslashes are not allowed",
}
_LOOKALIKES = {"π": "pi", "×": "*", "·": "*", "÷": "/", "−": "-", "²": "**2", "³": "**3"}


class _Token(NamedTuple):
    kind: str  # 'num' 'name' 'op' '(' ')' '[' ']' ',' '.T' 'eof'
    text: str
    pos: int
    end: int
    value: object = None  # int/float for 'num', normalised operator for 'op'


def _describe(tok: _Token) -> str:
    if tok.kind == "eof":
        return "end of input"
    text = tok.text if len(tok.text) <= 30 else tok.text[:27] + "..."
    if tok.kind == "num":
        return f"number '{text}'"
    if tok.kind == "name":
        return f"name '{text}'"
    return f"'{text}'"


class _Lexer:
    """Produces tokens on demand, so the leftmost error is the one reported."""

    def __init__(self, text: str, max_tokens: int) -> None:
        self.text = text
        self.n = len(text)
        self.i = 0
        self.count = 0
        self.max_tokens = max_tokens

    def error(self, message: str, pos: int) -> ParseError:
        return ParseError(message, self.text, pos)

    def next(self) -> _Token:
        text, n = self.text, self.n
        i = self.i
        while i < n and text[i] in _SPACE:
            i += 1
        if i >= n:
            self.i = n
            return _Token("eof", "", n, n)
        self.count += 1
        if self.count > self.max_tokens:
            raise self.error(f"too many tokens: the limit is {self.max_tokens}", i)
        tok = self._scan(i)
        self.i = tok.end
        return tok

    def _exponent_at(self, i: int) -> bool:
        """Whether ``text[i:]`` starts with an exponent such as ``e5`` or ``E-3``."""
        text, n = self.text, self.n
        if i >= n or text[i] not in "eE":
            return False
        i += 1
        if i < n and text[i] in "+-":
            i += 1
        return i < n and text[i] in _DIGITS

    def _scan(self, i: int) -> _Token:
        text, n = self.text, self.n
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c in _DIGITS or (c == "." and nxt in _DIGITS):
            return self._number(i)
        if c in _IDENT_START:
            return self._name(i)
        if c == "*":
            if nxt == "*":
                return _Token("op", "**", i, i + 2, "**")
            return _Token("op", "*", i, i + 1, "*")
        if c == "^":
            return _Token("op", "^", i, i + 1, "**")
        if c == "/" and nxt == "/":
            raise self.error("'//' (floor division) is not supported; use '/'", i)
        if c in _SINGLE:
            return _Token(_SINGLE[c], c, i, i + 1, c)
        if c == ".":
            if nxt in _IDENT_START:
                j = i + 1
                while j < n and text[j] in _IDENT_CHARS:
                    j += 1
                if text[i + 1:j] == "T":
                    return _Token(".T", ".T", i, j)
                attr = text[i:j] if j - i <= 40 else text[i:i + 37] + "..."
                raise self.error(f"attribute access '{attr}' is not allowed (only '.T', "
                                 "the transpose, is supported)", i)
            raise self.error("unexpected '.'", i)
        if c in _BAD_CHARS:
            raise self.error(_BAD_CHARS[c], i)
        shown = repr(c)[1:-1] if c.isprintable() else f"U+{ord(c):04X}"
        message = f"unexpected character '{shown}'"
        if c in _LOOKALIKES:
            message += f"; write '{_LOOKALIKES[c]}'"
        elif not c.isascii():
            message += " (only ASCII is allowed)"
        raise self.error(message, i)

    def _number(self, start: int) -> _Token:
        text, n = self.text, self.n
        i = start
        while i < n and text[i] in _DIGITS:
            i += 1
        int_part = text[start:i]
        is_float = False
        if i < n and text[i] == ".":
            after = text[i + 1] if i + 1 < n else ""
            # '2.T' is the transpose of 2; '2.', '2.5' and '2.e5' are numerals.
            if after not in _IDENT_START or self._exponent_at(i + 1):
                is_float = True
                i += 1
                while i < n and text[i] in _DIGITS:
                    i += 1
        if i < n and text[i] in "eE":
            if self._exponent_at(i):
                is_float = True
                i += 2 if text[i + 1] in "+-" else 1
                while i < n and text[i] in _DIGITS:
                    i += 1
            else:
                j = i + 1
                if j < n and text[j] in "+-":
                    j += 1
                if j == i + 2 or j >= n or text[j] not in _IDENT_CHARS:
                    raise self.error(f"malformed numeral '{text[start:j]}': expected digits "
                                     f"after the exponent '{text[i]}' (to multiply by the "
                                     f"constant e, write '{text[start:i]}*e')", i)
                # Otherwise '2ex' or '2exp(x)': the parser reports implicit multiplication.
        if i < n:
            c = text[i]
            after = text[i + 1] if i + 1 < n else ""
            if c == "." and after not in _IDENT_START:
                j = i
                while j < n and j - start < 40 and (text[j] in _DIGITS or text[j] in ".eE+-"):
                    j += 1
                what = ("a numeral can have only one decimal point" if "." in text[start:i]
                        else "unexpected '.' after the exponent")
                raise self.error(f"malformed numeral '{text[start:j]}': {what}", i)
            if c == "_":
                raise self.error("underscores are not allowed in numerals", i)
            if int_part == "0" and i == start + 1 and c in "xXoObB":
                raise self.error("hexadecimal, octal and binary numerals are not supported",
                                 start)
        s = text[start:i]
        digits = sum(ch in _DIGITS for ch in s)
        if digits > MAX_NUMERAL_DIGITS:
            raise self.error(f"numeral is too long: {digits} digits (the limit is "
                             f"{MAX_NUMERAL_DIGITS})", start)
        if len(int_part) > 1 and int_part[0] == "0":
            fixed = (int_part.lstrip("0") or "0") + s[len(int_part):]
            raise self.error(f"leading zeros are not allowed in numeral '{s}'; write '{fixed}'",
                             start)
        value: Union[int, float] = float(s) if is_float else int(s)
        if is_float and math.isinf(value):
            shown = s if len(s) <= 30 else s[:27] + "..."
            raise self.error(f"numeral '{shown}' is too large (it overflows to infinity)",
                             start)
        return _Token("num", s, start, i, value)

    def _name(self, start: int) -> _Token:
        text, n = self.text, self.n
        i = start
        while i < n and text[i] in _IDENT_CHARS:
            i += 1
        name = text[start:i]
        shown = name if len(name) <= 40 else name[:37] + "..."
        if name.startswith("__"):
            raise self.error(f"names starting with '__' are not allowed: '{shown}'", start)
        if keyword.iskeyword(name):
            raise self.error(f"'{name}' is a Python keyword; only arithmetic expressions "
                             "are allowed", start)
        return _Token("name", name, start, i)


# ------------------------------------------------------------------------ parser

_PREC_ADD, _PREC_MUL, _PREC_UNARY, _PREC_POW, _PREC_POSTFIX, _PREC_ATOM = range(1, 7)
_BINARY_PREC = {"+": _PREC_ADD, "-": _PREC_ADD, "*": _PREC_MUL, "/": _PREC_MUL,
                "@": _PREC_MUL, "**": _PREC_POW}


_FOLD_BINARY: dict[str, Callable[[float, float], float]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "**": math.pow,
}


def _fold(func: Callable[..., float], *args: Optional[float]) -> Optional[float]:
    """Apply `func` to float constants; ``None`` if any is not constant."""
    if any(a is None for a in args):
        return None
    try:
        return float(func(*args))
    except OverflowError:
        return math.inf
    except (ValueError, ZeroDivisionError):
        return math.nan


def _fold_call(op, *args: Optional[float]) -> Optional[float]:
    """The op's own forward on float constants (its value on 0-d arrays); ``None`` when
    an argument is not constant or the op has no value on numbers (softmax's dim)."""
    if any(a is None for a in args):
        return None
    with np.errstate(all="ignore"):
        try:
            return float(op.forward(*(np.float64(a) for a in args), *op.expr_args))
        except (ValueError, TypeError, IndexError, ZeroDivisionError):
            return None


class _Item:
    """An operand on the parser's stack, with facts needed for the limit checks."""

    __slots__ = ("node", "start", "end", "depth", "const", "scale")

    def __init__(self, node: Node, start: int, end: int, depth: int,
                 const: Optional[float], scale: float) -> None:
        self.node = node
        self.start = start  # source span, for messages
        self.end = end
        self.depth = depth  # tree depth of node
        self.const = const  # float value if node is a constant, else None
        self.scale = scale  # largest product of constant exponents along nested powers


class _Op(NamedTuple):
    op: str  # 'neg' or a binary operator ('**' also for '^')
    text: str
    pos: int
    prec: int


class _Frame:
    """An open bracket: a parenthesis, a function call's '(' or a value's '['."""

    __slots__ = ("kind", "pos", "name", "name_pos", "args")

    def __init__(self, kind: str, pos: int, name: str = "", name_pos: int = 0) -> None:
        self.kind = kind
        self.pos = pos
        self.name = name
        self.name_pos = name_pos
        self.args: list = []


def _example_call(name: str) -> str:
    return f"{name}(x)" if FUNCTIONS[name] == 1 else f"{name}(x, y)"


class _Parser:
    def __init__(self, text: str, max_length: Optional[int], max_depth: Optional[int],
                 max_tokens: Optional[int]) -> None:
        if not isinstance(text, str):
            raise TypeError(f"expected text as str, got {type(text).__name__}")
        max_length = MAX_LENGTH if max_length is None else max_length
        self.max_depth = MAX_DEPTH if max_depth is None else max_depth
        self.text = text
        if len(text) > max_length:
            raise ParseError(f"input is too long: {len(text)} characters (the limit is "
                             f"{max_length})", text, max_length)
        self.lexer = _Lexer(text, MAX_TOKENS if max_tokens is None else max_tokens)
        self.prev: Optional[_Token] = None
        self.tok = self.lexer.next()

    # helpers -------------------------------------------------------------------
    def advance(self) -> None:
        self.prev = self.tok
        self.tok = self.lexer.next()

    def error(self, message: str, pos: int) -> ParseError:
        return ParseError(message, self.text, pos)

    def where(self, pos: int) -> str:
        return _where(self.text, pos)

    def snippet(self, start: int, end: int, limit: int = 30) -> str:
        s = " ".join(self.text[start:end].split())
        return s if len(s) <= limit else s[:limit - 3] + "..."

    def check_depth(self, depth: int, pos: int) -> None:
        if depth > self.max_depth:
            raise self.error(f"expression is too deeply nested: more than {self.max_depth} "
                             "levels", pos)

    def open_bracket(self, nesting: int, tok: _Token) -> int:
        if nesting + 1 > self.max_depth:
            raise self.error(f"too many nested brackets: more than {self.max_depth} levels",
                             tok.pos)
        return nesting + 1

    def expected(self, what: str) -> ParseError:
        found = _describe(self.tok)
        if self.prev is None:
            if self.tok.kind == "eof":
                return self.error(f"empty input: expected {what}", self.tok.pos)
            return self.error(f"expected {what}, found {found}", self.tok.pos)
        return self.error(f"expected {what} after {_describe(self.prev)}, found {found}",
                          self.tok.pos)

    # expressions ---------------------------------------------------------------
    def parse_expression(self) -> Node:
        items: list[_Item] = []
        ops: list[Union[_Op, _Frame]] = []
        nesting = 0
        expect_operand = True
        while True:
            tok = self.tok
            kind = tok.kind
            if expect_operand:
                if kind == "op" and tok.text in ("+", "-"):
                    if tok.text == "-":
                        ops.append(_Op("neg", "-", tok.pos, _PREC_UNARY))
                    self.advance()
                elif kind == "num":
                    items.append(_Item(Num(tok.value, tok.pos), tok.pos, tok.end, 1,
                                       float(tok.value), 1.0))
                    self.advance()
                    expect_operand = False
                elif kind == "name":
                    self.advance()
                    if self.tok.kind == "(" or tok.text in FUNCTIONS:
                        self.check_call(tok)
                        nesting = self.open_bracket(nesting, self.tok)
                        ops.append(_Frame("call", self.tok.pos, tok.text, tok.pos))
                        self.advance()
                        if self.tok.kind == ")":
                            self.check_arity(tok.text, 0, tok.pos)
                    else:
                        const = {"pi": math.pi, "e": math.e}.get(tok.text)
                        items.append(_Item(Name(tok.text, tok.pos), tok.pos, tok.end, 1,
                                           const, 1.0))
                        expect_operand = False
                elif kind == "(":
                    nesting = self.open_bracket(nesting, tok)
                    ops.append(_Frame("paren", tok.pos))
                    self.advance()
                elif kind == "[":
                    raise self.error("brackets '[...]' are only allowed in values, not in "
                                     "expressions; use '(...)' for grouping", tok.pos)
                else:
                    raise self.expected("an expression")
                continue

            # An operand is complete: expect a postfix or binary operator, or a closer.
            if kind == ".T":
                it = items[-1]
                items[-1] = _Item(Transpose(it.node, tok.pos), it.start, tok.end,
                                  it.depth + 1, it.const, it.scale)
                self.check_depth(it.depth + 1, tok.pos)
                self.advance()
                continue
            if kind == "op":
                op = str(tok.value)
                prec = _BINARY_PREC[op]
                right_assoc = op == "**"
                while ops and isinstance(ops[-1], _Op) and (
                        ops[-1].prec > prec or (ops[-1].prec == prec and not right_assoc)):
                    self.reduce(items, ops.pop())  # type: ignore[arg-type]
                ops.append(_Op(op, tok.text, tok.pos, prec))
                self.advance()
                expect_operand = True
                continue
            if kind in ("num", "name", "("):
                raise self.implicit_multiplication(items[-1], tok)
            if kind == "[":
                raise self.error("indexing with '[...]' is not supported", tok.pos)

            # ',' ')' ']' or end of input: finish everything back to the open bracket.
            while ops and isinstance(ops[-1], _Op):
                self.reduce(items, ops.pop())  # type: ignore[arg-type]
            frame = ops[-1] if ops else None
            assert frame is None or isinstance(frame, _Frame)
            if kind == ")" and frame is not None:
                ops.pop()
                nesting -= 1
                if frame.kind == "paren":
                    items[-1].start, items[-1].end = frame.pos, tok.end
                else:
                    frame.args.append(items.pop())
                    items.append(self.make_call(frame, tok))
                self.advance()
                continue
            if kind == "," and frame is not None and frame.kind == "call":
                frame.args.append(items.pop())
                self.advance()
                expect_operand = True
                continue
            if frame is not None:
                closer = "')'"
                if frame.kind == "call" and len(frame.args) + 1 < FUNCTIONS[frame.name]:
                    closer = "',' or ')'"
                raise self.error(f"expected {closer} to close '(' at {self.where(frame.pos)}, "
                                 f"found {_describe(tok)}", tok.pos)
            if kind == ")":
                raise self.error("unmatched ')': there is no '(' to close", tok.pos)
            if kind == "]":
                raise self.error("unmatched ']': there is no '[' to close", tok.pos)
            if kind == ",":
                raise self.error("unexpected ',': enter a single expression (commas only "
                                 "separate function arguments)", tok.pos)
            assert kind == "eof" and len(items) == 1
            return items[0].node

    def check_call(self, name_tok: _Token) -> None:
        """Raise unless `name_tok` (now behind us) starts a call of a known function."""
        name = name_tok.text
        if name in FUNCTIONS:
            if self.tok.kind != "(":
                raise self.error(f"'{name}' is a function; call it with parentheses, e.g. "
                                 f"'{_example_call(name)}'", name_tok.pos)
            return
        if name in CONSTANTS:
            raise self.error(f"'{name}' is a constant, not a function; for multiplication "
                             f"write '{name}*(...)'", name_tok.pos)
        close = difflib.get_close_matches(name, list(FUNCTIONS), n=1, cutoff=0.6)
        if close:
            hint = f"did you mean '{close[0]}'?"
        else:
            hint = (f"known functions: {', '.join(sorted(FUNCTIONS))}; for multiplication "
                    f"write '{self.snippet(name_tok.pos, name_tok.end)}*(...)'")
        raise self.error(f"unknown function '{self.snippet(name_tok.pos, name_tok.end)}'; "
                         f"{hint}", name_tok.pos)

    def check_arity(self, name: str, given: int, pos: int) -> None:
        wanted = FUNCTIONS[name]
        if given != wanted:
            plural = "" if wanted == 1 else "s"
            raise self.error(f"{name}() takes {wanted} argument{plural} but {given} "
                             f"{'was' if given == 1 else 'were'} given", pos)

    def make_call(self, frame: _Frame, close: _Token) -> _Item:
        args: list[_Item] = frame.args
        self.check_arity(frame.name, len(args), frame.name_pos)
        depth = 1 + max(a.depth for a in args)
        self.check_depth(depth, frame.name_pos)
        const = _fold_call(FUNCTION_OPS[frame.name], *(a.const for a in args))
        node = Call(frame.name, tuple(a.node for a in args), frame.name_pos)
        return _Item(node, frame.name_pos, close.end, depth, const,
                     max(a.scale for a in args))

    def reduce(self, items: list[_Item], op: _Op) -> None:
        """Pop the operand(s) of `op` from `items` and push the combined operand."""
        if op.op == "neg":
            it = items.pop()
            self.check_depth(it.depth + 1, op.pos)
            const = None if it.const is None else -it.const
            items.append(_Item(Neg(it.node, op.pos), op.pos, it.end, it.depth + 1, const,
                               it.scale))
            return
        right = items.pop()
        left = items.pop()
        depth = 1 + max(left.depth, right.depth)
        self.check_depth(depth, op.pos)
        scale = max(left.scale, right.scale)
        if op.op == "**" and right.const is not None:
            v = right.const
            shown = self.snippet(right.start, right.end)
            if math.isnan(v):
                raise self.error(f"constant exponent '{shown}' is undefined", right.start)
            if abs(v) > MAX_EXPONENT:
                raise self.error(f"constant exponent '{shown}' is too large: exponents are "
                                 f"limited to +-{MAX_EXPONENT}", right.start)
            scale = max(scale, left.scale * max(1.0, abs(v)))
            if scale > MAX_EXPONENT:
                raise self.error(f"nested powers are too large: their constant exponents "
                                 f"multiply to {scale:g} (the limit is {MAX_EXPONENT})",
                                 op.pos)
        const = None
        if op.op in _FOLD_BINARY:
            const = _fold(_FOLD_BINARY[op.op], left.const, right.const)
        items.append(_Item(BinOp(op.op, left.node, right.node, op.pos), left.start,
                           right.end, depth, const, scale))

    def implicit_multiplication(self, left: _Item, tok: _Token) -> ParseError:
        lhs = self.snippet(left.start, left.end, limit=20)
        if tok.kind == "(":
            rhs = "(...)"
        else:
            rhs = self.snippet(tok.pos, tok.end, limit=20)
            if tok.kind == "name" and self.text[tok.end:].lstrip().startswith("("):
                rhs += "(...)"
        return self.error(f"implicit multiplication is not supported: did you mean "
                          f"'{lhs}*{rhs}'?", tok.pos)

    # values ----------------------------------------------------------------------
    def parse_value(self) -> tuple[Node, Union[float, list]]:
        frames: list[tuple[_Frame, list, list]] = []  # frame, nodes, values
        shapes: list[Optional[tuple]] = []  # shape of each open list's first element
        while True:
            tok = self.tok
            if tok.kind == "[":
                if len(frames) + 1 > self.max_depth:
                    raise self.error(f"too many nested brackets: more than {self.max_depth} "
                                     "levels", tok.pos)
                frames.append((_Frame("list", tok.pos), [], []))
                shapes.append(None)
                self.advance()
                if self.tok.kind == "]":
                    raise self.error("empty lists are not allowed in values", tok.pos)
                continue
            if tok.kind == "op" and tok.text == "-":
                self.advance()
                if self.tok.kind != "num":
                    raise self.expected("a number")
                node: Node = Num(-self.tok.value, tok.pos)  # type: ignore[operator]
            elif tok.kind == "num":
                node = Num(tok.value, tok.pos)  # type: ignore[arg-type]
            else:
                hint = ""
                if tok.kind in ("name", "(", "op"):
                    hint = " (values are plain numbers or [lists] of them; nothing is evaluated)"
                raise self.error(self.expected("a number or '['").message + hint, tok.pos)
            value: Union[float, list] = float(node.value)
            shape: tuple = ()
            self.advance()
            while True:  # attach the finished value to the open lists
                if not frames:
                    if self.tok.kind != "eof":
                        raise self.error(f"expected end of input after the value, found "
                                         f"{_describe(self.tok)}", self.tok.pos)
                    return node, value
                frame, nodes, values = frames[-1]
                first = shapes[-1]
                if first is None:
                    shapes[-1] = shape
                elif shape != first:
                    if not shape or not first:
                        message = "cannot mix numbers and lists in the same list"
                    else:
                        message = (f"inconsistent list lengths: this element has shape "
                                   f"{shape} but the first element has shape {first}")
                    raise self.error(message, node.pos)
                nodes.append(node)
                values.append(value)
                if self.tok.kind == ",":
                    self.advance()
                    break
                if self.tok.kind != "]":
                    raise self.error(f"expected ',' or ']' to close '[' at "
                                     f"{self.where(frame.pos)}, found {_describe(self.tok)}",
                                     self.tok.pos)
                node, value = Vector(tuple(nodes), frame.pos), values
                shape = (len(values),) + (shapes[-1] or ())
                frames.pop()
                shapes.pop()
                self.advance()


# ----------------------------------------------------------------------- public


def parse(text: str, *, max_length: Optional[int] = None, max_depth: Optional[int] = None,
          max_tokens: Optional[int] = None) -> Node:
    """Parse expression text into an AST.

    Parameters
    ----------
    text : str
        The expression; may span several lines.
    max_length, max_depth, max_tokens : int, optional
        Override :data:`MAX_LENGTH`, :data:`MAX_DEPTH` and :data:`MAX_TOKENS`.

    Returns
    -------
    Node
        The root of the tree, at most `max_depth` levels deep.

    Raises
    ------
    ParseError
        If the text is not a valid expression or exceeds a limit.

    Examples
    --------
    >>> parse("2**-1") == BinOp("**", Num(2), Neg(Num(1)))
    True
    >>> parse("a @ b.T") == BinOp("@", Name("a"), Transpose(Name("b")))
    True
    >>> parse("2x")
    Traceback (most recent call last):
    ...
    symgrad.symbolic.parser.ParseError: column 2: implicit multiplication is not supported: \
did you mean '2*x'?
    """
    return _Parser(text, max_length, max_depth, max_tokens).parse_expression()


def parse_value_node(text: str, *, max_length: Optional[int] = None,
                     max_depth: Optional[int] = None,
                     max_tokens: Optional[int] = None) -> Node:
    """Parse a value (see :func:`parse_value`) into :class:`Num` / :class:`Vector` nodes.

    A leading minus is folded into the number, so positions stay available for messages.

    Examples
    --------
    >>> parse_value_node("[-1, 2.5]")
    Vector(items=(Num(value=-1, pos=1), Num(value=2.5, pos=5)), pos=0)
    """
    return _Parser(text, max_length, max_depth, max_tokens).parse_value()[0]


def parse_value(text: str, *, max_length: Optional[int] = None,
                max_depth: Optional[int] = None,
                max_tokens: Optional[int] = None) -> Union[float, list]:
    """Parse a value: a number or a rectangular nested list of numbers.

    Only numerals, a single ``-`` directly before a numeral, brackets and commas are
    accepted; names (even ``pi``), operators, empty lists, trailing commas and ragged
    lists are errors.  Numbers are returned as ``float``.

    Parameters
    ----------
    text : str
        Such as ``"4"``, ``"-0.5"``, ``"[1, 2, 3]"`` or ``"[[1, 2], [3, 4]]"``.
    max_length, max_depth, max_tokens : int, optional
        Override the module limits.

    Returns
    -------
    float or list
        A float, or nested lists of floats.

    Raises
    ------
    ParseError
        If the text is not such a value.

    Examples
    --------
    >>> parse_value("-0.5")
    -0.5
    >>> parse_value("[[1, 2], [3]]")
    Traceback (most recent call last):
    ...
    symgrad.symbolic.parser.ParseError: column 10: inconsistent list lengths: this element has \
shape (1,) but the first element has shape (2,)
    """
    return _Parser(text, max_length, max_depth, max_tokens).parse_value()[1]


def free_variables(node: Node) -> list[str]:
    """Return the names of the free variables, in order of first appearance.

    The constants :data:`CONSTANTS` (``pi``, ``e``) are not free variables.

    Examples
    --------
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
