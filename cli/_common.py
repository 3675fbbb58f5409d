"""What every command shares: input errors, ``--at`` values, output, colour, and the
options of the commands that draw (``draw`` and ``trace``: one definition)."""
from __future__ import annotations

import json
import math
import os
import pathlib
import sys
from typing import TYPE_CHECKING, Any, Iterable

import click
import numpy as np

import symgrad
from symgrad.drawing import backends
from symgrad.drawing.backends import SUFFIXES, format_for, write_all
from symgrad.drawing.direction import RANKDIRS
from symgrad.drawing.steps import frame_files
from symgrad.drawing.tikz import beamer_document
from symgrad.symbolic.shapes import resolve_shapes
from symgrad.symbolic.parser import ParseError, parse_value

from ._terminal import json_text, terminal_text

if TYPE_CHECKING:  # (symgrad.parse loads SymPy, which `symgrad ops` never needs)
    from symgrad.symbolic.expression import Expression

__all__ = ["InputError", "CheckFailed", "ExpressionCommand", "check_output", "write_outputs",
           "load_expression", "parse_at", "echo_json", "drawing_options", "check_stdout",
           "step_outputs", "style", "fmt", "to_plain"]

#: Exit statuses (CONTRACT §4).
DONE, FAILED, BAD_INPUT, UNDECIDED = 0, 1, 2, 3


class InputError(click.ClickException):
    """Bad input: one clear line (plus the text and a caret when a column is known)."""

    exit_code = BAD_INPUT

    def show(self, file=None) -> None:
        click.echo(f"symgrad: error: {terminal_text(self.format_message(), newlines=True)}",
                   err=True)


class CheckFailed(click.ClickException):
    """Not an error of the user's: a check came out wrong (1) or undecided (3)."""

    def __init__(self, code: int) -> None:
        super().__init__("")
        self.exit_code = code

    def show(self, file=None) -> None:
        pass


class ExpressionCommand(click.Command):
    """A command whose arguments are data, whatever they look like: ``symgrad diff
    "-tanh(x)"`` and ``symgrad draw "-log(x)" -o out.svg`` differentiate ``-tanh(x)``
    and ``-log(x)``.

    Only the command's own option names (exactly, or ``--name=value``) are options, and
    the word after an option that takes a value is that value (``-o -``, ``--at x=-1``);
    every other word is an argument, a leading minus sign included.  An unknown
    ``--long`` option is still an error (with click's "did you mean"), and ``--`` still
    ends the options.
    """

    def parse_args(self, ctx: click.Context, args: list) -> list:
        options = {o: p for p in self.get_params(ctx) if isinstance(p, click.Option)
                   for o in (*p.opts, *p.secondary_opts)}
        kept, positional = [], []
        i = 0
        while i < len(args):
            word = args[i]
            if word == "--":
                positional += args[i + 1:]
                break
            name = word.split("=", 1)[0] if word.startswith("--") else word
            param = options.get(name)
            if param is not None:
                kept.append(word)
                if not (param.is_flag or param.count or "=" in word) and i + 1 < len(args):
                    kept.append(args[i + 1])
                    i += 1
            elif word.startswith("--") and word[2:3].isalpha():
                raise click.NoSuchOption(name, possibilities=[o for o in options
                                                              if o.startswith("--")], ctx=ctx)
            else:
                positional.append(word)
            i += 1
        return super().parse_args(ctx, kept + ["--"] + positional)


def load_expression(text: str, what: str = "expression") -> "Expression":
    """Parse expression text with symgrad's own parser; errors become InputError."""
    try:
        return symgrad.parse(text)
    except ParseError as err:
        raise InputError(f"in {what}: {err.pretty()}") from None


def assignments(option: str, items: Iterable[str], variables: list[str], example: str):
    """``(name, text)`` of each ``VAR=TEXT`` given to ``option``, with the errors every
    such option gives: no ``=``, a name that is not a variable, a name given twice."""
    seen: set = set()
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError(f"{option} {item!r}: expected VAR=..., e.g. {example}")
        if name not in variables:
            known = ", ".join(variables) or "none"
            raise InputError(f"{option} {item!r}: {name!r} is not a variable of the "
                             f"expression (variables: {known})")
        if name in seen:
            raise InputError(f"{option} {item!r}: {name} is given twice")
        seen.add(name)
        yield name, text


def parse_at(items: Iterable[str], variables: list[str]) -> dict:
    """``["x=4", "y=[1,2]"]`` -> ``{"x": 4.0, "y": [1.0, 2.0]}``, checked against variables."""
    values: dict = {}
    for name, text in assignments("--at", items, variables, "--at x=4 or --at v=[1,2,3]"):
        try:
            values[name] = parse_value(text)
        except ParseError as err:
            raise InputError(f"--at {name}=...: {err.pretty()}") from None
    return values


#: The largest size --shape gives one dimension (values given with --at have their own
#: limit on the command line's length).
MAX_SHAPE_SIZE = 100


def parse_shapes(items: Iterable[str], variables: list[str], at: dict) -> dict:
    """``["A=n,m", "x=m", "y=4"]`` -> ``{"A": ("n", "m"), "x": ("m",), "y": (4,)}``
    (see :func:`symgrad.symbolic.expression.resolve_shapes`); ``x=`` is a scalar.  A
    variable may not have both a --shape and an --at of another shape."""
    shapes: dict = {}
    for name, text in assignments("--shape", items, variables,
                                  "--shape A=n,m --shape x=m (or x=3)"):
        item = f"{name}={text}"
        dims = [d.strip() for d in text.replace("×", ",").split(",")] if text.strip() else []
        if len(dims) > 2:
            raise InputError(f"--shape {item!r}: at most two dimensions (a matrix)")
        shape = []
        for d in dims:
            if d.isdigit() and 1 <= int(d) <= MAX_SHAPE_SIZE:
                shape.append(int(d))
            elif d.isidentifier():
                shape.append(d)
            else:
                raise InputError(f"--shape {item!r}: {d!r} is not a dimension (a name "
                                 f"such as n, or a size from 1 to {MAX_SHAPE_SIZE})")
        shapes[name] = tuple(shape)
    sized, _ = resolve_shapes(shapes)
    for name, shape in sized.items():
        if name in at and tuple(np.shape(at[name])) != shape:
            raise InputError(f"--shape {name}=...: --at gives {name} the shape "
                             f"{'x'.join(map(str, np.shape(at[name]))) or 'scalar'}")
    return shapes


def check_output(path: str, inputs: Iterable[str] = ()) -> str | None:
    """Check ``-o PATH`` before anything is computed, and return its format (``None`` for
    ``-``: standard output).

    The suffix picks the format and must be one symgrad writes (never a silent rename);
    the directory must exist and be writable; an input of the command (a script, a batch
    file) is never overwritten.
    """
    if path == "-":
        return None
    if not path.strip():
        raise InputError("-o: the output path is empty; give a file such as graph.svg, "
                         "or - for standard output")
    if "\x00" in path:  # (no file name holds one: os refuses it with a ValueError)
        raise InputError(f"-o {path}: a file name cannot contain a NUL character")
    target = os.path.realpath(path)
    for given in inputs:
        if os.path.realpath(given) == target:
            raise InputError(f"-o {path}: that is an input of this command; it is not "
                             "overwritten (choose another output file)")
    fmt = format_for(pathlib.Path(path))
    if fmt is None:
        suffix = pathlib.Path(path).suffix
        raise InputError(f"-o {path}: " + (f"unknown format {suffix}" if suffix else
                                           "no suffix to pick the format")
                         + f"; use one of {' '.join(sorted(SUFFIXES))}")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError(f"-o {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise InputError(f"-o {path}: the directory {parent} is not writable")
    return fmt


#: The formats ``-o -`` writes (``--format``), and those that are not text.
STDOUT_FORMATS = ("svg", "png", "pdf", "dot", "tikz")
BINARY_FORMATS = frozenset({"png", "pdf", "jpg", "gif", "webp"})
THEME_NAMES = ("light", "dark", "print", "colorblind")

_DRAWING_OPTIONS = (
    click.option("--format", "stdout_format", type=click.Choice(STDOUT_FORMATS),
                 default="svg", show_default=True,
                 help="The format of -o - (standard output)."),
    click.option("--steps", "steps_dir", type=click.Path(file_okay=False), default=None,
                 help="Also write one frame per backward step into this directory (and "
                      "with -o FILE.tex, the steps as a Beamer document, a frame each)."),
    click.option("--theme", type=click.Choice(THEME_NAMES), default="light",
                 show_default=True),
    click.option("--rankdir", type=click.Choice(RANKDIRS, case_sensitive=False),
                 default="auto", show_default=True,
                 help="Layout direction; auto: the one in which the drawing fits a 16:9 "
                      "slide best."),
    click.option("--local/--no-local", default=True, show_default=True,
                 help="Label each backward edge with its local derivative."),
    click.option("--legend/--no-legend", default=True, show_default=True,
                 help="A legend of the colours and arrows used."),
)


def drawing_options(command):
    """The options every drawing command has, defined once: ``--format``, ``--steps``,
    ``--theme``, ``--rankdir``, ``--local/--no-local``, ``--legend/--no-legend``."""
    for option in reversed(_DRAWING_OPTIONS):
        command = option(command)
    return command


def check_stdout(output: str, fmt: str) -> None:
    """Refuse to write a binary format to a terminal (``-o - --format png``); a pipe or
    a file is fine."""
    if output == "-" and fmt in BINARY_FORMATS and sys.stdout.isatty():
        raise InputError(f"refusing to write {fmt.upper()} to a terminal; redirect to a "
                         "file or use -o FILE")


def step_outputs(steps, output: str, fmt: str, steps_dir: str, title: str | None = None
                 ) -> tuple[dict, dict]:
    """The files of step ``steps`` (a ``StepFrames``): its frames in ``steps_dir``, and
    when the drawing's format is TikZ (``-o FILE.tex``), a Beamer document of the steps,
    a frame each, in place of the single picture.  Returns (files, frames)."""
    frames = frame_files(steps, pathlib.Path(steps_dir))
    files = dict(frames)
    if fmt == "tikz":
        layouts = [json.loads(backends.pipe(src, "json").decode("utf-8"))
                   for src in steps.sources]
        files[output] = beamer_document(layouts, steps.captions, title).encode("utf-8")
    return files, frames


def write_outputs(files: dict) -> None:
    """Write ``path -> bytes`` (``-`` is standard output), all files or none; a failure
    names the path."""
    stdout = files.pop("-", None)
    try:
        write_all(files)
    except OSError as err:
        where = err.filename or next(iter(files), "")
        raise InputError(f"cannot write {where}: {err.strerror or err}") from None
    if stdout is not None:
        sys.stdout.buffer.write(stdout)
        sys.stdout.flush()


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
    click.echo(json_text(json.dumps(obj, indent=2, ensure_ascii=False)))
