"""The one escaping layer for the terminal: user text (a problem's name, an output path, an
expression echoed back) is shown with its control characters made visible, so that no
text a user gives can move the cursor, set the window title, ring the bell, erase a line
or reorder what follows (bidirectional overrides).

Examples
--------
>>> print(terminal_text("a\\x1b]0;owned\\x07b"))
a\\x1b]0;owned\\x07b
>>> terminal_text("x\\ny", newlines=True) == "x\\ny"
True
>>> terminal_text("\\u202eevil")
'\\\\u202eevil'
"""
from __future__ import annotations

import re

__all__ = ["terminal_text", "json_text", "UNSAFE"]

#: What a terminal acts on rather than shows: C0 and C1 controls and DEL, the line and
#: paragraph separators, and the bidirectional marks, embeddings, overrides and isolates;
#: and lone surrogates (a byte of a name that is not UTF-8, ``\udcff``: written raw, the
#: output would not be UTF-8, and JSON not JSON).
UNSAFE = ("\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
          "\ufeff\ud800-\udfff")
_ALL = re.compile(f"[{UNSAFE}]")
_BUT_LINES = re.compile(f"[{UNSAFE.replace(chr(0) + '-' + chr(0x1f), '')}"
                        "\x00-\x08\x0b-\x1f]")


def _visible(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: str, newlines: bool = False) -> str:
    """``text`` with every control character shown as an escape (ESC as ``\\x1b``,
    U+202E as ``\\u202e``); with ``newlines`` line feeds and tabs stay (a report of
    several lines), else they are shown too (a name on one line)."""
    return (_BUT_LINES if newlines else _ALL).sub(_visible, str(text))


def json_text(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with the characters of :data:`UNSAFE` written
    as ``\\uXXXX`` escapes: the same JSON, safe to print.  (Line feeds stay: inside
    strings ``json.dumps`` has escaped them already, outside they are the layout.)

    >>> print(json_text('{"a": "\u202e\\u001b"}'))
    {"a": "\\u202e\\u001b"}
    """
    return _BUT_LINES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
