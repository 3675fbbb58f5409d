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
import math
import operator
from typing import Callable, NamedTuple, Optional, Union

import numpy as np

from ..ops import subscribe
from .lexer import ParseError, _describe, _Lexer, _Token, _where
from .syntax import (_BINARY_PREC, _PREC_UNARY, CONSTANTS, BinOp, Call, Name, Neg, Node, Num,
                    Transpose, Vector, free_variables, to_text)

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

#: The fixed arguments the language passes after each function's operands (the record's
#: ``expr_args``, or those of a name in its ``expr_with``).
FUNCTION_ARGS: dict = {}


def _add_function(op) -> None:
    for name, args in [(n, op.expr_args) for n in op.exprs] + list(op.expr_with.items()):
        FUNCTIONS[name] = op.arity
        FUNCTION_OPS[name] = op
        FUNCTION_ARGS[name] = tuple(args)


def _remove_function(op) -> None:
    for name in op.exprs + tuple(op.expr_with):
        if FUNCTION_OPS.get(name) is op:
            del FUNCTIONS[name], FUNCTION_OPS[name], FUNCTION_ARGS[name]


subscribe(_add_function, _remove_function)


#: Functions a calculus student writes that are compositions of the table's functions
#: (no op of their own: PyTorch has none, ``torch.square`` records ``PowBackward0``);
#: ``x`` stands for the argument.
COMPOSITIONS = {"sec": "1/cos(x)", "csc": "1/sin(x)", "cot": "1/tan(x)",
                "softsign": "x/(abs(x) + 1)", "tanhshrink": "x - tanh(x)", "square": "x**2"}
FUNCTIONS.update(dict.fromkeys(COMPOSITIONS, 1))


def _substitute(node: Node, arg: Node, pos: int) -> Node:
    """``node`` (a composition's body) with ``arg`` for ``x``, reported at ``pos``."""
    if isinstance(node, Name):
        return arg
    if isinstance(node, Num):
        return Num(node.value, pos)
    if isinstance(node, Call):
        return Call(node.func, tuple(_substitute(a, arg, pos) for a in node.args), pos)
    return BinOp(node.op, _substitute(node.left, arg, pos), _substitute(node.right, arg, pos),
                 pos)


_FOLD_BINARY: dict[str, Callable[[float, float], float]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "%": operator.mod, "**": math.pow,
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


def _fold_call(name: str, *args: Optional[float]) -> Optional[float]:
    """The function's op's own forward on float constants (its value on 0-d arrays);
    ``None`` when an argument is not constant or the op has no value on numbers."""
    if any(a is None for a in args):
        return None
    with np.errstate(all="ignore"):
        try:
            return float(FUNCTION_OPS[name].forward(*(np.float64(a) for a in args),
                                                    *FUNCTION_ARGS[name]))
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
        self.lexer = _Lexer(text, MAX_TOKENS if max_tokens is None else max_tokens,
                            MAX_NUMERAL_DIGITS)
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
        if frame.name in COMPOSITIONS:
            body = parse(COMPOSITIONS[frame.name])
            node = _substitute(body, args[0].node, frame.name_pos)
            return _Item(node, frame.name_pos, close.end, depth + 1, None, args[0].scale)
        const = _fold_call(frame.name, *(a.const for a in args))
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
    symgrad.symbolic.lexer.ParseError: column 2: implicit multiplication is not supported: \
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
    symgrad.symbolic.lexer.ParseError: column 10: inconsistent list lengths: this element has \
shape (1,) but the first element has shape (2,)
    """
    return _Parser(text, max_length, max_depth, max_tokens).parse_value()[1]
