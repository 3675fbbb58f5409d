"""Forward mode drawn: every value's tangent, and tangents flowing forward step by step.

A tangent ``ẋ`` is the derivative of a value along a direction of the inputs (the seeds,
by default ``ẋ = 1`` for the first input and 0 for the others: the drawing then shows
``∂/∂x`` of every value).  :func:`draw_tangents` draws the forward graph with each
tensor's value and tangent and, on each edge into an operation, the local derivative of
its result with respect to that input -- the same local derivative the backward drawing
puts on the same edge, since forward and reverse mode multiply by the same Jacobians,
only in the other order.  :func:`draw_tangent_steps` draws one frame per operation in
evaluation order; :func:`players_page` puts those frames beside the backward pass's
(:func:`~symgrad.drawing.steps.draw_steps`) in one HTML page.

The tangents are numbers from :mod:`symgrad.autograd.forward_ad` on a replay of the graph
with dual leaves (:func:`~symgrad.drawing.passes.tangent_values`): the user's tensors are
left as they were.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(1.0, requires_grad=True)
>>> y = torch.tensor(2.0, requires_grad=True)
>>> f = torch.sin(x * y)
>>> d = draw_tangents(f, names={"x": x, "y": y, "f": f}, legend=False)
>>> "tangent ḟ = -0.8323" in d.source, "∂/∂(x·y) = cos(x·y)" in d.source
(True, True)
>>> frames = draw_tangent_steps(f, names={"x": x, "y": y, "f": f})
>>> frames.captions[1]
'Step 1 of 2: × computes x·y and its tangent: (x·y)˙ = y·ẋ + x·ẏ = 2·1 + 1·0 = 2'
"""
from __future__ import annotations

import html
import os
import pathlib
from typing import Any, Mapping

import numpy as np

from . import backends
from .collapse import collapse
from .diagram import Diagram
from .direction import laid_out, rankdir_of
from .dotwriter import DotWriter
from .forward import emit_forward, tangent_name
from .inputs import adopt_torch_ops, caller_names, merge_names, roots_and_names
from .labels import atomic, label_of, local_derivative, op_symbol
from .model import GraphModel
from .passes import local_numbers, tangent_values
from .player import player_html
from .rows import order_labels, output_key
from .steps import StepFrames, frame_files
from .themes import theme_named
from .values import format_value

__all__ = ["draw_tangents", "draw_tangent_steps", "tangent_graph", "players_page"]


def _leaves(model: GraphModel) -> list:
    """The leaves' items in the order they are first used by an operation."""
    first: dict = {}
    for it in model.items:
        for e in it.edges if it.kind == "op" else ():
            if e.target is not None and e.target.kind == "accumulate":
                seq = getattr(it.fn, "_seq", 0)
                first[e.target.key] = min(first.get(e.target.key, seq), seq)
    leaves = [it for it in model.items if it.kind == "accumulate"]
    return sorted(leaves, key=lambda it: first.get(it.key, 0))


def _seeds(model: GraphModel, direction: Mapping | None) -> dict:
    """The leaves' tangents by item key: ``direction`` names them (leaf name or the
    tensor itself); by default 1 for the first leaf used, 0 for the others."""
    leaves = _leaves(model)
    if direction is None:
        return {it.key: (1.0 if i == 0 else 0.0) for i, it in enumerate(leaves)}
    out = {}
    for who, value in direction.items():
        hit = [it for it in leaves if (it.name == who if isinstance(who, str)
                                       else it.variable is who)]
        if not hit:
            known = ", ".join(it.name for it in leaves if it.name) or "none"
            raise ValueError(f"direction for {who if isinstance(who, str) else 'a tensor'}"
                             f": not a leaf of the graph (leaves: {known})")
        out[hit[0].key] = value
    return {it.key: out.get(it.key, 0.0) for it in leaves}


def _seed_text(model: GraphModel, seeds: Mapping) -> str:
    return ", ".join(f"{tangent_name(it.name)} = {format_value(seeds[it.key])}"
                     for it in _leaves(model) if it.key in seeds)


def tangent_graph(model: GraphModel, tangents: Mapping, *, theme: str = "light",
                  rankdir: str = "auto", show_values: bool = True, show_local: bool = True,
                  legend: bool = True, title: str | None = None, fontsize: int = 12,
                  state: Mapping | None = None):
    """DOT source of the forward graph of ``model`` with the ``tangents`` (item key ->
    value) of every tensor; ``state`` (frames): see :func:`emit_forward`."""
    def build(direction: str) -> str:
        dot = DotWriter(theme_named(theme), direction, title, fontsize)
        keys = emit_forward(model, dot, show_values=show_values, show_grads=False,
                            higher=len(model.roots) > 1, tangents=tangents,
                            show_local=show_local, state=state)
        dot.tangent_notes = {"ẋ": "tangent: the value's derivative along the direction "
                                  "(forward mode)", **dot.tangent_notes}
        if state is not None:
            dot.highlight_used = True  # (the same legend in every frame)
            dot.highlight_text = "operation computing now (grey: not computed yet)"
        if legend:
            dot.legend(output_key(model, keys), order_labels(model, None))
        return dot.source("forward_mode")
    return laid_out(build, rankdir)


def _model(t: Any, names: Mapping | bool | None, depth: int = 3) -> tuple:
    roots, given = roots_and_names(t)
    auto = {} if names is False else caller_names(depth)
    explicit = dict(given)
    if isinstance(names, Mapping):
        explicit.update(names)
    model = GraphModel([roots[0]], merge_names(explicit, auto))
    return model, roots[0]


def draw_tangents(t: Any, direction: Mapping | None = None, *,
                  names: Mapping[str, Any] | bool | None = None, theme: str = "light",
                  rankdir: str = "auto", show_values: bool = True, show_local: bool = True,
                  legend: bool = True, title: str | None = None, fontsize: int = 12,
                  max_nodes: int | None = 300, width: int | str | None = None) -> Diagram:
    """Draw forward mode on the graph of ``t``: each tensor's value and tangent, and
    the local derivative on each edge into an operation.

    Parameters
    ----------
    direction : mapping, optional
        The inputs' tangents: leaf name (or tensor) -> value; missing leaves 0.  By
        default the first input's tangent is 1 and the others 0.
    show_local : bool
        Label each edge into an operation with its local derivative.

    Other parameters are those of :func:`symgrad.draw`.
    """
    model, root = _model(t, names)
    adopt_torch_ops(model)
    seeds = _seeds(model, direction)
    tangents = tangent_values(model, root, seeds)
    collapse(model, max_nodes)
    head = f"forward mode: {_seed_text(model, seeds)}"
    src = tangent_graph(model, tangents, theme=theme, rankdir=rankdir,
                        show_values=show_values, show_local=show_local, legend=legend,
                        title=f"{title}\n{head}" if title else head, fontsize=fontsize)
    ops = sum(1 for it in model.items if it.kind == "op")
    return Diagram(src, "forward", ops, width=width)


def draw_tangent_steps(t: Any, directory: str | os.PathLike | None = None, *,
                       direction: Mapping | None = None,
                       names: Mapping[str, Any] | bool | None = None, format: str = "svg",
                       theme: str = "light", rankdir: str = "auto", show_values: bool = True,
                       show_local: bool = True, legend: bool = True, html_player: bool = True,
                       backend: str = "auto", width: int | str | None = None) -> StepFrames:
    """Forward mode one frame per operation, in evaluation order: the seeds first, then
    each operation computing its value's tangent from its inputs' (highlighted; what is
    not computed yet is grey).  Parameters as :func:`draw_tangents` and
    :func:`~symgrad.drawing.steps.draw_steps` (``directory``: ``step_00.svg``, ... and
    ``steps.html``)."""
    model, root = _model(t, names)
    adopt_torch_ops(model)
    seeds = _seeds(model, direction)
    tangents = tangent_values(model, root, seeds)
    local = local_numbers(model, root)
    by_key = {it.key: it for it in model.items}
    order = [k for k in tangents if k in by_key and by_key[k].kind == "op"]
    if rankdir == "auto":  # one direction for every frame: nothing moves between them
        rankdir = rankdir_of(tangent_graph(model, tangents, show_values=show_values,
                                           show_local=show_local, legend=legend,
                                           state={"running": None, "done": set(order)}))
    sources, captions = [], []
    n = len(order)

    def frame(caption: str, running: str | None, done: set) -> None:
        sources.append(tangent_graph(model, tangents, theme=theme, rankdir=rankdir,
                                     show_values=show_values, show_local=show_local,
                                     legend=legend, title=caption,
                                     state={"running": running, "done": set(done)}))
        captions.append(caption)

    frame(f"Step 0 of {n}: forward mode starts with the inputs' tangents "
          f"{_seed_text(model, seeds)} (the direction)", None, set())
    done: set = set()
    for k, key in enumerate(order, 1):
        frame(f"Step {k} of {n}: " + _caption(model, by_key[key], tangents, local), key,
              done)
        done.add(key)
    frames = StepFrames(sources, captions, width=width, backend=backend)
    if directory is not None:
        d = pathlib.Path(directory)
        frames.paths.extend(backends.write_all(frame_files(frames, d, format, html_player,
                                                           backend)))
    return frames


def _joined(terms: list) -> str:
    """``a + b``, ``a - b`` for a term that starts with a minus sign."""
    out = terms[0]
    for t in terms[1:]:
        out += f" - {t[1:]}" if t.startswith("-") else f" + {t}"
    return out


def _number(v) -> str:
    text = format_value(v).replace("\n", "")
    return f"({text})" if text.startswith("-") else text


def _caption(model: GraphModel, item, tangents: Mapping, local: Mapping) -> str:
    """``× computes x·y and its tangent: (x·y)˙ = y·ẋ + x·ẏ = 2·1 + 1·0 = 2``: the
    local derivatives times the inputs' tangents, in symbols, then in numbers where the
    operation and its inputs are scalars."""
    label = item.name or label_of(model, item)
    terms, numbers = [], []
    scalars = all(np.size(tangents.get(k, 0)) == 1 for k in
                  [item.key] + [e.target.key for e in item.edges if e.target is not None])
    if not scalars and not (item.op is not None and item.op.elementwise):
        terms = None  # (a Jacobian times a vector is not a product of the labels)
    for e in item.edges if terms is not None else ():
        if e.target is None:
            continue
        tn = tangent_name(e.target.name or label_of(model, e.target))
        ld = local_derivative(model, item, e)
        if ld is None:
            terms = numbers = None
            break
        if ld == "0":
            continue
        terms.append(tn if ld == "1" else f"-{tn}" if ld == "-1" else
                     f"{ld if atomic(ld) else f'({ld})'}·{tn}")
        t, n = tangents.get(e.target.key), local.get((item.key, e.slot))
        if numbers is not None and n is not None and np.size(t) == 1:
            plain = format_value(t).replace("\n", "")
            numbers.append(plain if ld == "1" else f"-{_number(t)}" if ld == "-1" else
                           f"{_number(n)}·{_number(t)}")
        else:
            numbers = None
    formula = ""
    if terms:
        formula = _joined(terms) + " = "
        if numbers and len(numbers) == len(terms):
            formula += _joined(numbers) + " = "
    value = format_value(tangents[item.key]).replace("\n", "")
    return (f"{op_symbol(item)} computes {label} and its tangent: "
            f"{tangent_name(label)} = {formula}{value}")


def players_page(players: list, title: str = "symgrad: forward and reverse mode") -> str:
    """One HTML page with step players side by side: ``players`` is a list of
    ``(heading, StepFrames)`` (forward mode's frames beside the backward pass's)."""
    cells = "".join(
        f'<div style="flex:1 1 0;min-width:0"><h3 style="font-family:Helvetica,Arial,'
        f'sans-serif;margin:0 0 .4em 0">{html.escape(heading)}</h3>'
        f"{player_html(frames.svgs(), frames.captions)}</div>"
        for heading, frames in players)
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title></head>\n"
            f'<body style="margin:1em">\n<div style="display:flex;gap:2em;'
            f'align-items:flex-start">{cells}</div>\n</body></html>\n')
