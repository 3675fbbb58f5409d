"""``symgrad draw``: forward and backward graphs of an expression, to a file."""
from __future__ import annotations

import pathlib

import click

import symgrad
from symgrad.drawing.diagram import RenderError
from symgrad.drawing.steps import frame_files
from symgrad.drawing.tangents import draw_tangent_steps, draw_tangents, players_page
from symgrad.symbolic.budget import check_expression, limits
from symgrad.symbolic.shapes import placeholder, resolve_shapes
from symgrad.symbolic.vectors import NoVectorForm, dimensions

from ._common import (ExpressionCommand, InputError, check_output, check_stdout,
                      drawing_options, echo_json, load_expression, parse_at, parse_shapes,
                      step_outputs, write_outputs)
from ._forward import parse_direction
from ._limits import limit_options
from ._terminal import terminal_text

__all__ = ["draw"]


@click.command(cls=ExpressionCommand)
@click.argument("expression")
@click.option("--at", "at_items", multiple=True, metavar="VAR=VALUE",
              help="Values (repeatable). With none, values are left out of the drawing.")
@click.option("-o", "--output", required=True,
              help="Output file; the suffix picks the format: .svg .png .pdf .dot .tikz "
                   "(- writes to standard output, in --format).")
@click.option("--shape", "shape_items", multiple=True, metavar="VAR=DIMS",
              help="Without values, the shape of a variable: A=n,m or x=m (repeatable); "
                   "shapes are drawn with these names (n×m).")
@click.option("--kind", type=click.Choice(["forward", "backward", "both"]),
              default="both", show_default=True)
@click.option("--mode", type=click.Choice(["reverse", "forward"]), default="reverse",
              show_default=True,
              help="forward: the forward graph with every value's tangent (ẋ) and the "
                   "local derivative on each edge; --steps then draws the tangents "
                   "flowing forward beside the backward pass (steps.html: both players).")
@click.option("--direction", "direction_items", multiple=True, metavar="VAR=VALUE",
              help="With --mode forward: the inputs' tangents, x=1 (repeatable; missing "
                   "inputs 0; default: 1 for the first input, 0 for the others).")
@drawing_options
@click.option("--json", "as_json", is_flag=True,
              help="Print what was written as one JSON object.")
@limit_options("elements")
def draw(expression: str, at_items: tuple, output: str, shape_items: tuple,
         stdout_format: str, kind: str, mode: str, direction_items: tuple,
         steps_dir: str | None, theme: str, rankdir: str, local: bool, legend: bool,
         as_json: bool, max_elements: int) -> None:
    """Draw the graph of EXPRESSION: forward (values), backward (PyTorch's grad_fn
    nodes, .grad after backward) or both side by side. An intermediate value past
    --max-elements is refused before anything is computed.

    \b
    Examples:
      symgrad draw "5*x**2 + 3*sin(y)" --at x=4 --at y=0 -o graph.svg
      symgrad draw "sin(dot(x, y))" --at x=[1,2,3] --at y=[5,6,7] -o g.png --kind backward
      symgrad draw "tanh(w*x + b)" -o g.pdf --theme print --rankdir TB
      symgrad draw "x**2*y" --at x=3 --at y=2 -o g.svg --steps frames/
      symgrad draw "x**2*y" --at x=3 --at y=2 -o steps.tex --steps frames/
      symgrad draw "-log(x)" -o - --format dot
      symgrad draw "sum((A @ x - b)**2)" --shape A=n,m -o g.png
      symgrad draw "sin(x*y)" --mode forward --at x=1 --at y=2 -o fwd.png --steps frames/
    """
    expr = load_expression(expression)
    at = parse_at(at_items, expr.variables)
    complete = all(v in at for v in expr.variables)
    fmt = check_output(output) or stdout_format
    check_stdout(output, fmt)
    if output == "-" and as_json:
        raise InputError("--json with -o -: the drawing itself goes to standard output")
    direction = parse_direction(direction_items, expr.variables)
    if direction is not None and mode != "forward":
        raise InputError("--direction is for --mode forward")
    if mode == "forward" and not complete:
        missing = [v for v in expr.variables if v not in at]
        raise InputError(f"--mode forward draws numbers: give --at for "
                         f"{', '.join(missing)}")
    try:
        bad = expr.domain_error(**at) if complete else None
        if bad is not None:
            raise InputError(f"not defined at the point: {bad.pretty()}")
        shapes = parse_shapes(shape_items, expr.variables, at)
        with limits(max_elements=max_elements):  # (the work estimated before it is done)
            check_expression(expr, resolve_shapes(shapes)[0], at, symbolic=False)
        values, sizes = _values(expr, at, shapes)
        out = expr.evaluate(**values)
        if steps_dir and out.numel() != 1:
            raise InputError(f"--steps needs a scalar expression; this one has shape "
                             f"{list(out.shape)} (wrap it in sum(...))")
        if mode == "forward":
            if out.grad_fn is None:
                raise InputError("the expression has no operations: nothing to draw in "
                                 "forward mode")
            diagram, files, frames = _forward(
                expr, values, out, direction, output, fmt, steps_dir, theme=theme,
                rankdir=rankdir, local=local, legend=legend, title=expression)
        else:
            if complete and out.numel() == 1 and out.requires_grad and kind != "forward":
                out.backward(retain_graph=True)
            diagram = symgrad.draw(out, kind=kind, names={"f": out}, theme=theme,
                                   rankdir=rankdir, show_values=complete,
                                   show_grads=complete, show_local=local, legend=legend,
                                   title=expression, sizes=sizes)
            # Everything is rendered before anything is written: all files or none.
            files = {output: diagram.pipe(fmt)}
            frames = {}
            if steps_dir:
                out2 = expr.evaluate(**values)
                steps = symgrad.draw_steps(out2, None, theme=theme, rankdir=rankdir,
                                           show_values=complete, show_local=local,
                                           legend=legend, names={"f": out2})
                more, frames = step_outputs(steps, output, fmt, steps_dir,
                                            title=expression)
                files.update(more)
    except RenderError as err:
        raise InputError(str(err)) from None
    except (ValueError, TypeError) as err:
        raise InputError(err.pretty() if hasattr(err, "pretty") else str(err)) from None
    write_outputs(files)
    if as_json:
        echo_json({"output": output, "format": fmt,
                   "kind": "forward" if mode == "forward" else kind, "mode": mode,
                   "nodes": diagram.node_count, "frames": [str(p) for p in frames]})
    elif output != "-":
        click.echo(f"wrote {terminal_text(output)}")
        if frames:
            click.echo(f"wrote {len(frames) - 1} frames to {terminal_text(steps_dir)}")


def _forward(expr, values: dict, out, direction, output: str, fmt: str,
             steps_dir: str | None, **style) -> tuple:
    """``--mode forward``: the drawing, its files and the frames written; with --steps
    the forward frames (``step_XX``; with ``-o FILE.tex`` a Beamer document of them),
    the backward pass's (``reverse/step_XX``) and ``steps.html`` with both players side
    by side."""
    names = {"f": out}
    title = style.pop("title")
    local = style.pop("local")
    diagram = draw_tangents(out, direction, names=names, show_local=local, title=title,
                            **style)
    files = {output: diagram.pipe(fmt)}
    frames: dict = {}
    if steps_dir:
        forward = draw_tangent_steps(out, None, direction=direction, names=names,
                                     show_local=local, **style)
        out2 = expr.evaluate(**values)
        backward = symgrad.draw_steps(out2, None, show_local=local, names={"f": out2},
                                      **style)
        d = pathlib.Path(steps_dir)
        more, frames = step_outputs(forward, output, fmt, steps_dir, title=title)
        files.update(more)  # (with -o FILE.tex, a Beamer document of the forward steps)
        files.update(frame_files(backward, d / "reverse", html_player=False))
        page = players_page([("Forward mode: tangents flow forward", forward),
                             ("Reverse mode: gradients flow back", backward)],
                            title=f"symgrad: {title}")
        files[d / "steps.html"] = page.encode("utf-8")
    return diagram, files, frames


_SIZE_NAMES = "nmklpqrs"


def _values(expr, at: dict, shapes: dict) -> tuple:
    """Values to trace with, and names for the sizes when none is given: each size that
    must be equal to another gets one name (``--shape``'s, else n, m, k, ...) and its
    own number, so that the drawing can write ``n×m`` for every tensor."""
    fixed, labels = resolve_shapes(shapes)
    values = {**expr.shape_values({**{k: placeholder(s) for k, s in fixed.items()}, **at},
                                  scalar=False), **at}
    if at:
        return values, None
    try:
        classes = dimensions(expr, values, labels)
    except (NoVectorForm, ValueError, TypeError, RuntimeError):
        return values, None
    names: dict = {}
    for var, cs in classes.items():
        for c, label in zip(cs, labels.get(var) or (None,) * len(cs)):
            if label:
                names.setdefault(c, label)
    free = iter([n for n in _SIZE_NAMES if n not in names.values()] +
                [f"n{k}" for k in range(1, 64)])
    for cs in classes.values():
        for c in cs:
            names.setdefault(c, next(free))
    if not names:
        return values, None
    number = {c: k + 2 for k, c in enumerate(sorted(names))}
    try:
        sized = {var: placeholder(tuple(number[c] for c in cs))
                 for var, cs in classes.items()}
        expr.evaluate(**sized)
    except (ValueError, TypeError, RuntimeError):  # (a constant of fixed size in the text)
        return values, None
    return sized, {number[c]: names[c] for c in names}
