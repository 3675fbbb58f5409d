"""``symgrad trace``: run a teaching script written for torch on symgrad, and draw it."""
from __future__ import annotations

import contextlib
import importlib
import os
import pathlib
import runpy
import sys
import traceback

import click

import symgrad
from symgrad import Tensor
from symgrad.drawing.diagram import RenderError

from ._common import (InputError, check_output, check_stdout, drawing_options, echo_json,
                      step_outputs, write_outputs)
from ._terminal import terminal_text

# The modules of torch a script may import by name (``import torch.nn as nn``).
_MODULES = ("autograd", "autograd.graph", "autograd.functional", "nn", "nn.functional",
            "nn.init", "nn.parameter", "optim", "optim.lr_scheduler", "cuda", "backends",
            "backends.mps", "backends.cudnn", "accelerator")

__all__ = ["trace"]


@click.command()
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.option("--var", "variables", multiple=True, metavar="NAME",
              help="Tensor variable of the script to draw (repeatable; default: the last "
                   "tensor with a grad_fn).")
@click.option("-o", "--output", required=True,
              help="Output file; the suffix picks the format: .svg .png .pdf .dot .tikz "
                   "(- writes to standard output, in --format).")
@click.option("--kind", type=click.Choice(["forward", "backward", "both"]),
              default="backward", show_default=True)
@drawing_options
@click.option("--json", "as_json", is_flag=True,
              help="Print what was written as one JSON object.")
def trace(script: str, variables: tuple, output: str, kind: str, stdout_format: str,
          steps_dir: str | None, theme: str, rankdir: str, local: bool, legend: bool,
          as_json: bool) -> None:
    """Run SCRIPT (written for torch.autograd) with `torch` mapped to symgrad, then draw
    the named tensors. The script is Python and runs as such: only trace your own.

    \b
    Examples:
      symgrad trace lesson.py --var f -o f.svg
      symgrad trace lesson.py --var loss --kind both -o loss.png --no-legend
      symgrad trace lesson.py --var loss -o loss.tex --steps frames/
    """
    if not os.path.isfile(script):  # (a FIFO would wait for a writer, a device never end)
        raise InputError(f"{script}: not a regular file (a FIFO or a device is never read)")
    fmt = check_output(output, inputs=[script]) or stdout_format
    check_stdout(output, fmt)
    if steps_dir and len(variables) > 1:
        raise InputError("--steps draws the backward pass of one tensor; give one --var")
    saved = {k: sys.modules.get(k) for k in ("torch", *(f"torch.{m}" for m in _MODULES))}
    sys.modules["torch"] = symgrad
    for m in _MODULES:  # `import torch.nn.functional as F` finds symgrad's
        sys.modules[f"torch.{m}"] = importlib.import_module(f"symgrad.{m}")
    try:
        # With --json, stdout is for the JSON object: the script's prints go to stderr.
        with contextlib.redirect_stdout(sys.stderr if as_json else sys.stdout):
            namespace = runpy.run_path(script, run_name="__main__")
    except SystemExit as err:
        if err.code not in (None, 0):
            raise InputError(f"{script} exited with status {err.code}") from None
        raise InputError(f"{script} exited before its tensors could be drawn") from None
    except Exception as err:  # the script's own error: where it is, in one line
        raise InputError(_script_error(script, err)) from None
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    if variables:
        missing = [v for v in variables if not isinstance(namespace.get(v), Tensor)]
        if missing:
            raise InputError(f"{', '.join(missing)}: not a tensor defined by {script}")
        targets = {v: namespace[v] for v in variables}
    else:
        found = [(k, v) for k, v in namespace.items()
                 if isinstance(v, Tensor) and v.grad_fn is not None]
        if not found:
            raise InputError(f"{script} defines no tensor with a graph; name one with --var")
        targets = dict(found[-1:])
    names = {k: v for k, v in namespace.items() if isinstance(v, Tensor)}
    for k, v in namespace.items():  # a model's parameters by their dotted names
        if isinstance(v, symgrad.nn.Module):
            names.update((f"{k}.{n}", p) for n, p in v.named_parameters())
    roots = list(targets.values())
    if steps_dir and roots[0].numel() != 1:
        raise InputError(f"--steps needs a scalar; {next(iter(targets))} has shape "
                         f"{list(roots[0].shape)}")
    try:
        d = symgrad.draw(roots[0] if len(roots) == 1 else targets, kind=kind, names=names,
                         theme=theme, rankdir=rankdir, show_local=local, legend=legend)
        files = {output: d.pipe(fmt)}
        frames: dict = {}
        if steps_dir:
            steps = symgrad.draw_steps(roots[0], None, names=names, theme=theme,
                                       rankdir=rankdir, show_local=local, legend=legend)
            more, frames = step_outputs(steps, output, fmt, steps_dir,
                                        title=f"{script}: {next(iter(targets))}")
            files.update(more)
    except RenderError as err:
        raise InputError(str(err)) from None
    except (ValueError, TypeError, RuntimeError) as err:
        raise InputError(str(err).splitlines()[0] if str(err) else type(err).__name__
                         ) from None
    write_outputs(files)
    path = pathlib.Path(output)
    if output == "-":
        return
    if as_json:
        echo_json({"output": str(path), "format": fmt, "kind": kind,
                   "nodes": d.node_count, "variables": list(targets),
                   "frames": [str(p) for p in frames]})
    else:
        click.echo(f"wrote {terminal_text(str(path))}")
        if frames:
            click.echo(f"wrote {len(frames) - 1} frames to {terminal_text(steps_dir)}")


def _script_error(script: str, err: BaseException) -> str:
    """``lesson.py, line 4: ValueError: boom``: the innermost frame in the script."""
    line = getattr(err, "lineno", None) if isinstance(err, SyntaxError) else None
    if line is None:
        target = os.path.abspath(script)
        for frame in traceback.extract_tb(err.__traceback__):
            if os.path.abspath(frame.filename) == target:
                line = frame.lineno
    where = f"{script}, line {line}" if line else script
    text = err.msg if isinstance(err, SyntaxError) else err
    return f"{where}: {type(err).__name__}: {text}"
