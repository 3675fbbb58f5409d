"""The expression language's tokens, and ParseError with its column and caret."""
from __future__ import annotations

import keyword
import math
import string
from typing import NamedTuple, Union

from ..errors import SymgradError

__all__ = ["ParseError"]


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
    >>> from symgrad.symbolic.parser import parse
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


_DIGITS = frozenset(string.digits)


_IDENT_START = frozenset(string.ascii_letters + "_")


_IDENT_CHARS = _IDENT_START | _DIGITS


_SPACE = frozenset(" \t\n\r\f\v")


_SINGLE = {"+": "op", "-": "op", "/": "op", "%": "op", "@": "op", "(": "(", ")": ")",
           "[": "[", "]": "]", ",": ","}


_BAD_CHARS = {
    "'": "string literals are not allowed",
    '"': "string literals are not allowed",
    ";": "';' is not allowed: enter a single expression",
    "=": "'=' is not allowed (no assignments, comparisons or keyword arguments)",
    "<": "comparisons are not supported",
    ">": "comparisons are not supported",
    "!": "'!' is not supported",
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

    def __init__(self, text: str, max_tokens: int, max_digits: int) -> None:
        self.text = text
        self.max_digits = max_digits
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
        if digits > self.max_digits:
            raise self.error(f"numeral is too long: {digits} digits (the limit is "
                             f"{self.max_digits})", start)
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
