"""What every command shares: input errors, ``--at`` values, output, colour."""
from __future__ import annotations

import json
import math
import os
import sys
from typing import TYPE_CHECKING, Any, Iterable

import click
import numpy as np

import symgrad
from symgrad.symbolic.parser import ParseError, parse_value

if TYPE_CHECKING:  # (symgrad.parse loads SymPy, which `symgrad ops` never needs)
    from symgrad.symbolic.expression import Expression

__all__ = ["InputError", "CheckFailed", "ExpressionCommand", "check_output",
           "load_expression", "parse_at", "echo_json",
           "style", "fmt", "to_plain"]

#: Exit statuses (CONTRACT §4).
DONE, FAILED, BAD_INPUT, UNDECIDED = 0, 1, 2, 3


class InputError(click.ClickException):
    """Bad input: one clear line (plus the text and a caret when a column is known)."""

    exit_code = BAD_INPUT

    def show(self, file=None) -> None:
        click.echo(f"symgrad: error: {self.format_message()}", err=True)


class CheckFailed(click.ClickException):
    """Not an error of the user's: a check came out wrong (1) or undecided (3)."""

    def __init__(self, code: int) -> None:
        super().__init__("")
        self.exit_code = code

    def show(self, file=None) -> None:
        pass


class ExpressionCommand(click.Command):
    """A command whose EXPRESSION may start with a minus sign (``symgrad diff "-x**2"``).

    Unknown short options are read as the expression; an unknown ``--long`` option is
    still an error (with click's "did you mean").
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        settings = dict(kwargs.pop("context_settings", None) or {})
        settings["ignore_unknown_options"] = True
        super().__init__(*args, context_settings=settings, **kwargs)

    def parse_args(self, ctx: click.Context, args: list) -> list:
        known = {o for p in self.get_params(ctx) for o in (*p.opts, *p.secondary_opts)}
        for arg in args:
            if arg == "--":
                break
            name = arg.split("=", 1)[0]
            if name.startswith("--") and name[2:3].isalpha() and name not in known:
                raise click.NoSuchOption(name, possibilities=[o for o in known
                                                              if o.startswith("--")],
                                         ctx=ctx)
        return super().parse_args(ctx, args)


def load_expression(text: str, what: str = "expression") -> "Expression":
    """Parse expression text with symgrad's own parser; errors become InputError."""
    try:
        return symgrad.parse(text)
    except ParseError as err:
        raise InputError(f"in {what}: {err.pretty()}") from None


def parse_at(items: Iterable[str], variables: list[str]) -> dict:
    """``["x=4", "y=[1,2]"]`` -> ``{"x": 4.0, "y": [1.0, 2.0]}``, checked against variables."""
    values: dict = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError(f"--at {item!r}: expected VAR=VALUE, e.g. --at x=4 or "
                             "--at v=[1,2,3]")
        if name not in variables:
            known = ", ".join(variables) or "none"
            raise InputError(f"--at {item!r}: {name!r} is not a variable of the expression "
                             f"(variables: {known})")
        if name in values:
            raise InputError(f"--at {item!r}: {name} is given twice")
        try:
            values[name] = parse_value(text)
        except ParseError as err:
            raise InputError(f"--at {name}=...: {err.pretty()}") from None
    return values


def check_output(path: str) -> None:
    """``-o PATH`` must name a file in an existing directory (nothing is created)."""
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError(f"-o {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise InputError(f"-o {path}: the directory {parent} is not writable")


def to_plain(v: Any) -> Any:
    """Numbers and arrays as JSON-ready floats and nested lists."""
    if hasattr(v, "detach"):
        v = v.detach().numpy()
    a = np.asarray(v, dtype=np.float64)
    if a.ndim == 0:
        x = float(a)
        return x if math.isfinite(x) else str(x)
    return [to_plain(row) for row in a]


def fmt(v: Any) -> str:
    """A number or array for people: ``40``, ``0.2964``, ``[1, 2.5]``."""
    p = to_plain(v)
    if isinstance(p, list):
        return "[" + ", ".join(fmt(x) for x in p) + "]"
    if isinstance(p, str):
        return p
    return f"{p:.10g}"


def color_enabled() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def style(text: str, **kwargs: Any) -> str:
    """Colour only on a terminal, never in pipes, and not when NO_COLOR is set."""
    return click.style(text, **kwargs) if color_enabled() else text


def echo_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False))
