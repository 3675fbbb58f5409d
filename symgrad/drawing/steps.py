"""A backward pass drawn step by step: one frame per node the engine runs, and a
self-contained HTML page that plays the frames.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(3.0, requires_grad=True)
>>> frames = draw_steps(x * x)
>>> len(frames), x.grad
(3, tensor(6.))
"""
from __future__ import annotations

import html
import os
import pathlib
from typing import Any, Iterator, Mapping

import numpy as np

from . import backends
from .backward import backward_graph
from .diagram import Diagram
from .inputs import caller_names, merge_names, roots_and_names
from .model import GraphModel, Item
from .values import as_array, format_value

__all__ = ["draw_steps", "StepFrames", "frame_files"]


class StepFrames:
    """The frames of a step-by-step backward pass.

    Attributes
    ----------
    sources : list of str
        DOT text of each frame.
    captions : list of str
        What happens in each frame.
    paths : list of pathlib.Path
        Files written (one per frame, plus ``steps.html``, a self-contained player).
    """

    def __init__(self, sources: list[str], captions: list[str]) -> None:
        self.sources = sources
        self.captions = captions
        self.paths: list[pathlib.Path] = []

    def __len__(self) -> int:
        return len(self.sources)

    def __iter__(self) -> Iterator[Diagram]:
        return iter(Diagram(s, "backward") for s in self.sources)


def draw_steps(t: Any, directory: str | os.PathLike | None = None, *, gradient: Any = None,
               format: str = "svg", names: Mapping[str, Any] | bool | None = None,
               theme: str = "light", rankdir: str = "LR", show_values: bool = True,
               show_local: bool = False, html_player: bool = True,
               backend: str = "auto") -> StepFrames:
    """Run ``t.backward(gradient)`` and draw one frame per step of the engine.

    Each frame highlights the node being run, says which gradient it received and what
    it sends to each input (drawn on the edges, which stay in place from frame to frame),
    and shows the leaves' ``.grad`` accumulating.  This *is* a backward pass: afterwards
    the leaves' ``.grad`` hold the result, as after ``t.backward(retain_graph=True)``.

    Parameters
    ----------
    directory : path, optional
        Where to write ``step_00.svg``, ``step_01.svg``, ... and ``steps.html`` (all
        frames in one page with Previous/Next/Play buttons).  ``None`` writes nothing.
    format : str
        Frame file format (``svg`` works without the ``dot`` program).

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> frames = torch.draw_steps(x * x)
    >>> len(frames), x.grad
    (3, tensor(6.))
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
    events, before = _run_backward(model, root, gradient)
    seed = as_array(gradient) if gradient is not None else np.ones_like(as_array(root))
    edge_final: dict = {}
    for kind, key, _, sent in events:
        if kind == "node":
            for slot, g in sent.items():
                edge_final[(key, slot)] = g
    sources, captions = [], []
    state = {"running": None, "done": set(), "leaf_grads": dict(before), "sent": set(),
             "seed": seed}

    def frame(caption: str, running: str | None) -> None:
        frozen = {"running": running, "done": set(state["done"]),
                  "leaf_grads": dict(state["leaf_grads"]), "sent": set(state["sent"]),
                  "seed": seed}
        sources.append(backward_graph(model, theme=theme, rankdir=rankdir,
                                      show_values=show_values, show_grads=True,
                                      edge_grads=edge_final, show_local=show_local,
                                      state=frozen, title=caption, max_nodes=None))
        captions.append(caption)

    n = len(events)
    frame(f"Step 0 of {n}: backward starts with gradient {format_value(seed)} "
          f"at {model.tensor_name(root) or 'the output'}", None)
    by_key = {it.key: it for it in model.items}
    for k, event in enumerate(events, 1):
        frame(f"Step {k} of {n}: " + _caption(by_key[event[1]], event, state), event[1])
        state["done"].add(event[1])
    frames = StepFrames(sources, captions)
    if directory is not None:
        _write_frames(frames, pathlib.Path(directory), format, html_player, backend)
    return frames


def _run_backward(model: GraphModel, root: Any, gradient: Any) -> tuple[list, dict]:
    """Run the backward pass with hooks: the events in the order the engine ran them,
    ``(kind, item key, gradient received, {slot: gradient sent})``, and each leaf's
    ``.grad`` before."""
    events: list = []
    received: dict = {}
    handles = []
    before: dict = {}
    for item in model.items:
        if item.kind == "accumulate":
            var = item.variable
            g0 = getattr(var, "grad", None)
            before[item.key] = None if g0 is None else as_array(g0).copy()

            def leaf_hook(g, key=item.key):
                events.append(("leaf", key, as_array(g), None))
            handles.append(var.register_hook(leaf_hook))
            continue

        def pre(grad_outputs, key=item.key):
            g = grad_outputs[0] if grad_outputs else None
            received[key] = None if g is None else as_array(g)

        def post(grad_inputs, grad_outputs, key=item.key):
            sent = {slot: as_array(g) for slot, g in enumerate(grad_inputs) if g is not None}
            events.append(("node", key, received.get(key), sent))
        handles.append(item.fn.register_prehook(pre))
        handles.append(item.fn.register_hook(post))
    try:
        root.backward(gradient, retain_graph=True)
    finally:
        for h in handles:
            h.remove()
    return events, before


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
        files[d / "steps.html"] = _player(svgs, frames.captions).encode("utf-8")
    return files


def _write_frames(frames: StepFrames, d: pathlib.Path, format: str, html_player: bool,
                  backend: str) -> None:
    """Write :func:`frame_files`, all of them or none."""
    frames.paths.extend(backends.write_all(frame_files(frames, d, format, html_player,
                                                       backend)))


def _player(svgs: list[str], captions: list[str]) -> str:
    """One self-contained HTML page showing the frames with Previous/Next/Play."""
    frames = "\n".join(
        f'<div class="frame" style="display:{"block" if i == 0 else "none"}">'
        f'{s[s.find("<svg"):]}</div>' for i, s in enumerate(svgs))
    caps = ",".join('"' + html.escape(c).replace('"', "&quot;") + '"' for c in captions)
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>symgrad: backward, step by step</title>
<style>body{{font-family:Helvetica,Arial,sans-serif;margin:1em}}
.frame svg{{max-width:100%;height:auto}} button{{font-size:1em;margin-right:.5em}}</style>
</head><body>
<div><button onclick="go(-1)">&#9664; Previous</button><button onclick="go(1)">Next &#9654;
</button><button onclick="play()">Play</button> <span id="cap"></span></div>
{frames}
<script>
var caps=[{caps}];var k=0;var frames=document.querySelectorAll('.frame');var timer=null;
function show(){{frames.forEach(function(f,i){{f.style.display=i==k?'block':'none';}});
document.getElementById('cap').innerHTML=caps[k];}}
function go(d){{k=Math.max(0,Math.min(frames.length-1,k+d));show();}}
function play(){{if(timer){{clearInterval(timer);timer=null;return;}}k=0;show();
timer=setInterval(function(){{if(k>=frames.length-1){{clearInterval(timer);timer=null;}}
else go(1);}},1200);}}
document.addEventListener('keydown',function(e){{if(e.key=='ArrowRight')go(1);
if(e.key=='ArrowLeft')go(-1);}});show();
</script></body></html>
"""
