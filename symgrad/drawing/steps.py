"""A backward pass drawn step by step: one frame per node the engine runs, shown inline
in a notebook as a player, or written as files with a self-contained HTML player.

The pass is observed on a copy of the graph (:mod:`~symgrad.drawing.passes`): the user's
tensors keep their ``.grad`` and their graph.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(3.0, requires_grad=True)
>>> frames = draw_steps(x * x)
>>> len(frames), x.grad is None
(3, True)
"""
from __future__ import annotations

import html
import os
import pathlib
from typing import Any, Iterator, Mapping

import numpy as np

from . import backends
from .backward import backward_graph
from .direction import rankdir_of
from .diagram import Diagram
from .inputs import caller_names, merge_names, roots_and_names
from .model import GraphModel, Item
from .passes import backward_events
from .player import css_width, player_html, player_page
from .values import as_array, format_value

__all__ = ["draw_steps", "StepFrames", "frame_files"]


class StepFrames:
    """The frames of a step-by-step backward pass; a notebook shows them as a player.

    Attributes
    ----------
    sources : list of str
        DOT text of each frame.
    captions : list of str
        What happens in each frame.
    paths : list of pathlib.Path
        Files written (one per frame, plus ``steps.html``, a self-contained player).
    width : int, str or None
        Display width of the frames in a notebook (pixels, or a CSS length such as
        ``"80%"``); None: their own size, shrunk to the column's width if wider.
    backend : str
        Renderer for the notebook's player (``"auto"``, ``"dot"`` or ``"wasm"``).
    """

    def __init__(self, sources: list[str], captions: list[str], *,
                 width: int | str | None = None, backend: str = "auto") -> None:
        self.sources = sources
        self.captions = captions
        self.paths: list[pathlib.Path] = []
        css_width(width)
        self.width = width
        self.backend = backend
        self._svgs: tuple | None = None

    def __len__(self) -> int:
        return len(self.sources)

    def __iter__(self) -> Iterator[Diagram]:
        return iter(Diagram(s, "backward", width=self.width) for s in self.sources)

    def __repr__(self) -> str:
        return f"<symgrad StepFrames: {len(self)} frames>"

    def svgs(self) -> list[str]:
        """Each frame rendered as SVG (rendered once, then kept)."""
        key = (tuple(self.sources), self.backend)
        if self._svgs is None or self._svgs[0] != key:
            self._svgs = (key, [backends.pipe(s, "svg", backend=self.backend).decode("utf-8")
                                for s in self.sources])
        return list(self._svgs[1])

    def player(self, width: int | str | None = None) -> str:
        """The frames as an HTML player (a fragment: any number of them on one page).

        Parameters
        ----------
        width : int or str, optional
            Display width (pixels or a CSS length); default ``self.width``.
        """
        return player_html(self.svgs(), self.captions,
                           width=css_width(self.width if width is None else width))

    def _repr_html_(self) -> str:
        try:
            return self.player()
        except backends.RenderError as e:
            return f"<pre>{html.escape(f'{self!r}: cannot render: {e}')}</pre>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/plain": repr(self), "text/html": self._repr_html_()}


def draw_steps(t: Any, directory: str | os.PathLike | None = None, *, gradient: Any = None,
               format: str = "svg", names: Mapping[str, Any] | bool | None = None,
               theme: str = "light", rankdir: str = "auto", show_values: bool = True,
               show_local: bool = False, legend: bool = True, html_player: bool = True,
               backend: str = "auto", accumulate: bool = False,
               width: int | str | None = None) -> StepFrames:
    """Draw ``t.backward(gradient)`` one frame per step of the engine.

    Each frame highlights the node being run, says which gradient it received and what
    it sends to each input (drawn on the edges, which stay in place from frame to frame),
    and shows the leaves' ``.grad`` accumulating.  In a notebook the result shows as a
    player (Previous / Next / Play); any number of players work on one page.

    The pass runs on a copy of the graph, recomputed from the leaves' values: the
    user's tensors are not changed (no ``.grad`` accumulates, the graph is not freed),
    and a graph that ``backward()`` already ran through can still be drawn.

    Parameters
    ----------
    directory : path, optional
        Where to write ``step_00.svg``, ``step_01.svg``, ... and ``steps.html`` (all
        frames in one page with Previous/Next/Play buttons).  ``None`` writes nothing.
    format : str
        Frame file format (``svg`` works without the ``dot`` program).
    accumulate : bool
        Start from the leaves' current ``.grad`` and show this pass adding into them
        (what one more ``backward()`` would do); by default the frames start from
        ``.grad = None``, as a fresh pass.
    width : int or str, optional
        Display width of the player's frames in a notebook: pixels, or a CSS length such
        as ``"80%"``; by default their own size, shrunk to the column's width if wider
        (a width wider than the column scrolls sideways).

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> frames = torch.draw_steps(x * x)
    >>> len(frames), x.grad is None
    (3, True)
    >>> frames.captions[1]
    'Step 1 of 2: MulBackward0 runs: receives 1, sends 3 to input self, 3 to input other'
    """
    roots, given = roots_and_names(t)
    root = roots[0]
    auto = {} if names is False else caller_names(2)
    explicit = dict(given)
    if isinstance(names, Mapping):
        explicit.update(names)
    model = GraphModel([root], merge_names(explicit, auto))
    events = backward_events(model, root, gradient)
    before = {it.key: (as_array(it.variable.grad).copy()
                       if accumulate and it.variable.grad is not None else None)
              for it in model.items if it.kind == "accumulate"}
    seed = as_array(gradient) if gradient is not None else np.ones_like(as_array(root))
    edge_final: dict = {}
    for kind, key, _, sent in events:
        if kind == "node":
            for slot, g in sent.items():
                edge_final[(key, slot)] = g
    sources, captions = [], []
    state = {"running": None, "done": set(), "leaf_grads": dict(before), "sent": set(),
             "seed": seed}
    if rankdir == "auto":  # one direction for every frame: nothing moves between them
        rankdir = rankdir_of(backward_graph(model, show_values=show_values, show_grads=True,
                                            edge_grads=edge_final, show_local=show_local,
                                            legend=legend, state=state, max_nodes=None))

    def frame(caption: str, running: str | None) -> None:
        frozen = {"running": running, "done": set(state["done"]),
                  "leaf_grads": dict(state["leaf_grads"]), "sent": set(state["sent"]),
                  "seed": seed}
        sources.append(backward_graph(model, theme=theme, rankdir=rankdir,
                                      show_values=show_values, show_grads=True,
                                      edge_grads=edge_final, show_local=show_local,
                                      state=frozen, title=caption, max_nodes=None,
                                      legend=legend))
        captions.append(caption)

    n = len(events)
    frame(f"Step 0 of {n}: backward starts with gradient {format_value(seed)} "
          f"at {model.tensor_name(root) or 'the output'}", None)
    by_key = {it.key: it for it in model.items}
    for k, event in enumerate(events, 1):
        frame(f"Step {k} of {n}: " + _caption(by_key[event[1]], event, state), event[1])
        state["done"].add(event[1])
    frames = StepFrames(sources, captions, width=width, backend=backend)
    if directory is not None:
        _write_frames(frames, pathlib.Path(directory), format, html_player, backend)
    return frames


def _caption(item: Item, event: tuple, state: dict) -> str:
    """What happens in one step of ``item``; updates ``state`` (edges sent, leaves'
    gradients)."""
    kind, key, g, sent = event
    if kind == "node":
        parts = []
        for slot, v in sent.items():
            e = next((e for e in item.edges if e.slot == slot), None)
            where = (f"input {e.input_name}" if e is not None and e.input_name
                     else f"input {slot}")
            parts.append(f"{_one_line(v)} to {where}")
            state["sent"].add((key, slot))
        return f"{item.title} runs: receives {_one_line(g)}, sends " + ", ".join(parts)
    prev = state["leaf_grads"].get(key)
    state["leaf_grads"][key] = g if prev is None else prev + g
    return f"AccumulateGrad adds {_one_line(g)} into {item.name or 'the leaf'}.grad"


def _one_line(value: Any) -> str:
    return format_value(value).replace("\n", "")


def frame_files(frames: StepFrames, d: pathlib.Path, format: str = "svg",
                html_player: bool = True, backend: str = "auto") -> dict:
    """The files of ``frames`` in directory ``d`` (``step_00.<format>``, ... and, with
    ``html_player``, ``steps.html``) as ``path -> bytes``, rendered but not written."""
    width = max(2, len(str(len(frames.sources) - 1)))
    files, svgs = {}, []
    for i, src in enumerate(frames.sources):
        data = backends.pipe(src, format, backend=backend)
        files[d / f"step_{i:0{width}d}.{format}"] = data
        if format == "svg":
            svgs.append(data.decode("utf-8"))
    if html_player:
        if not svgs:
            svgs = [backends.pipe(src, "svg", backend=backend).decode("utf-8")
                    for src in frames.sources]
        files[d / "steps.html"] = player_page(svgs, frames.captions).encode("utf-8")
    return files


def _write_frames(frames: StepFrames, d: pathlib.Path, format: str, html_player: bool,
                  backend: str) -> None:
    """Write :func:`frame_files`, all of them or none."""
    frames.paths.extend(backends.write_all(frame_files(frames, d, format, html_player,
                                                       backend)))
