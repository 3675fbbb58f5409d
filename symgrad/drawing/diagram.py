"""Drawings of forward and backward graphs: ``symgrad.draw`` and ``symgrad.make_dot``.

The emitters (:mod:`~symgrad.drawing.backward`, :mod:`~symgrad.drawing.forward`,
:mod:`~symgrad.drawing.both`, :mod:`~symgrad.drawing.torchviz`) write DOT text; this module
names things, records gradients during a backward pass when asked, and returns a
:class:`Diagram`, which turns DOT into files (:mod:`~symgrad.drawing.backends`).

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

import os
import pathlib
import re
import time
from typing import Any, Mapping, Sequence

from . import backends
from .backends import SUFFIXES, RenderError, format_for
from .backward import backward_graph
from .both import both_graph
from .forward import forward_graph
from .inputs import caller_names, merge_names, roots_and_names
from .model import GraphModel
from .passes import edge_gradients
from .player import css_width, diagram_html
from .torchviz import torchviz_graph

__all__ = ["draw", "make_dot", "Diagram", "RenderError"]


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
    size : str or None
        Graphviz's ``size`` attribute (inches, ``"10,5.6"``), applied when rendering:
        the largest the drawing is laid out (see :func:`draw`).
    width : int, str or None
        Display width in a notebook: pixels or a CSS length (``"80%"``).  By default
        the drawing shows at its own size, shrunk to the column's width if wider; a
        width wider than the column scrolls sideways.

    In Jupyter a drawing displays inline (``_repr_mimebundle_``): HTML whose SVG has ids
    of its own and scales to the column, the SVG itself, and the repr.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> d = torch.draw((x * x).sum(), kind="forward")
    >>> d.source.startswith("digraph forward")
    True
    """

    def __init__(self, source: str, kind: str, node_count: int = 0, *,
                 size: str | float | tuple | None = None,
                 width: int | str | None = None) -> None:
        self.source = source
        self.kind = kind
        self.format = "svg"
        self.engine = "dot"
        self.layout_seconds: float | None = None
        self.node_count = node_count
        self.size = graphviz_size(size)
        css_width(width)
        self.width = width
        self._svg: tuple | None = None

    def _layout_source(self) -> str:
        """The DOT text Graphviz is given: ``source`` with ``size`` applied."""
        return self.source if self.size is None else _with_size(self.source, self.size)

    def pipe(self, format: str = "svg", backend: str = "auto") -> bytes:
        """The rendered bytes in ``format`` (``"svg"``, ``"png"``, ``"pdf"``, ``"dot"``...)."""
        start = time.perf_counter()
        out = backends.pipe(self._layout_source(), format, self.engine, backend)
        self.layout_seconds = time.perf_counter() - start
        return out

    def svg(self) -> str:
        """The drawing as SVG text (rendered once, then kept while nothing changes)."""
        key = (self.source, getattr(self.source, "plain", None), self.size, self.engine)
        if self._svg is None or self._svg[0] != key:
            self._svg = (key, self.pipe("svg").decode("utf-8"))
        return self._svg[1]

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
            if p.suffix.lower() != "." + fmt and format_for(p) != fmt:
                p = p.with_name(p.name + "." + fmt)
        else:
            fmt = format_for(p)
            if fmt is None:
                if p.suffix:
                    raise RenderError(
                        f"cannot tell the format from the suffix {p.suffix!r}; use one of "
                        f"{', '.join(sorted(SUFFIXES))} or pass format=...")
                fmt = self.format
                p = p.with_name(p.name + "." + fmt)
        data = self.pipe(fmt, backend=backend)
        backends.write_atomic(p, data)
        return p

    save = render

    def _repr_svg_(self) -> str | None:
        try:
            return self.svg()
        except RenderError:
            return None

    def _repr_html_(self) -> str | None:
        """The SVG in a ``<div>``, with ids of its own, scaled to the column's width (or
        ``width`` wide, never wider than the column)."""
        try:
            return diagram_html(self.svg(), css_width(self.width))
        except RenderError:
            return None

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """What Jupyter shows: HTML (scaled to the column), the SVG itself (for exports
        that take no HTML), and the repr; only the repr and the reason if nothing can
        render here."""
        try:
            svg = self.svg()
        except RenderError as e:
            return {"text/plain": f"{self!r}\n(not drawn: {e})"}
        return {"text/plain": repr(self), "text/html": diagram_html(svg, css_width(self.width)),
                "image/svg+xml": svg}

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        timing = "" if self.layout_seconds is None else f" layout={self.layout_seconds:.2f}s"
        return f"<symgrad Diagram kind={self.kind!r} nodes={self.node_count}{timing}>"


def _record_edge_grads(model: GraphModel) -> dict:
    """Gradients along every backward edge, from a backward pass that changes none of the
    user's tensors (:func:`~symgrad.drawing.passes.edge_gradients`)."""
    root = next((t for t, it in zip(model.roots, model.root_items) if it is not None), None)
    if root is None or not any(it.kind == "accumulate" for it in model.items):
        return {}
    return edge_gradients(model, root)


def graphviz_size(size: str | float | tuple | None) -> str | None:
    """Graphviz's ``size`` attribute (inches) from a number, a ``(width, height)`` pair or
    Graphviz's own text (``"7,5"``, ``"7,5!"``).

    Examples
    --------
    >>> graphviz_size(7), graphviz_size((10, 5.6)), graphviz_size("10,5.6!")
    ('7', '10,5.6', '10,5.6!')
    """
    if size is None:
        return None
    bad = ValueError(f"size must be inches as Graphviz takes them: a number (7), a pair "
                     f"(10, 5.6) or text such as '10,5.6' or '10,5.6!', got {size!r}")
    if isinstance(size, bool):
        raise bad
    if isinstance(size, (int, float)):
        size = (size,)
    if isinstance(size, (tuple, list)):
        if not 1 <= len(size) <= 2 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1e4
                for v in size):
            raise bad
        return ",".join(f"{v:g}" for v in size)
    if not isinstance(size, str):
        raise bad
    text = size.replace(" ", "")
    m = re.fullmatch(r"(\d+(?:\.\d*)?)(?:,(\d+(?:\.\d*)?))?(!?)", text)
    if m is None or any(v is not None and float(v) <= 0 for v in m.groups()[:2]):
        raise bad
    return text


def _with_size(source: str, size: str) -> str:
    """``source`` with ``graph [size=...]`` after its first line (in its plain-label form
    too, if it carries one)."""
    def put(text: str) -> str:
        end = text.find("\n") + 1
        return text[:end] + f'  graph [size="{size}"]\n' + text[end:]
    plain = getattr(source, "plain", None)
    if plain is not None:
        try:
            return type(source)(put(str(source)), put(plain))
        except TypeError:
            pass
    return put(str(source))


def draw(t: Any, kind: str = "backward", *, names: Mapping[str, Any] | bool | None = None,
         theme: str = "light", rankdir: str = "auto", show_values: bool = True,
         show_grads: bool = True, show_edge_grads: bool = False, show_local: bool = False,
         show_saved: bool = False, show_attrs: bool = False, show_constants: bool = True,
         legend: bool = True, title: str | None = None,
         order_names: Sequence[str] | None = None, fontsize: int = 12,
         max_nodes: int | None = 300, sizes: Mapping[int, str] | None = None,
         size: str | float | tuple | None = None, width: int | str | None = None) -> Diagram:
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
    rankdir : {"auto", "LR", "RL", "TB", "BT"}
        Layout direction: inputs on the first side, output on the other; ``auto`` (the
        default) is the one in which the drawing fits a 16:9 slide best.
    show_values, show_grads : bool
        Tensor values; leaves' accumulated ``.grad``.
    show_edge_grads : bool
        The gradient flowing along each backward edge.  Computed by a backward pass on a
        copy of the graph recomputed from the leaves' values, so the user's tensors are
        untouched and it works after a plain ``loss.backward()`` too.  Graphs that cannot
        be recomputed (PyTorch's, custom ``autograd.Function``) need the values they
        saved: draw before ``backward()`` or call ``backward(retain_graph=True)``.
    show_local : bool
        Each edge's local derivative, from the op table, with the actual input names.
    show_saved, show_attrs : bool
        Saved tensors as separate nodes (never merged with the leaf they alias); saved
        numbers and attributes inside the node.
    legend : bool
        A legend explaining every colour used.
    max_nodes : int or None
        Larger graphs collapse repeated chains, then are cut with a visible note.
    sizes : dict, optional
        Names for sizes (``{2: "n", 3: "m"}``): shapes are shown as ``n×m``, for an
        expression drawn without values whose sizes are symbolic.
    size : number, (width, height) or str, optional
        Graphviz's ``size`` attribute, in inches: the largest the drawing may be laid
        out; it keeps its proportions (``7``, ``(10, 5.6)`` for a 16:9 slide, or
        ``"10,5.6!"`` to scale a small drawing up to that size too).  Applies to every
        format rendered (PNG, PDF, SVG).
    width : int or str, optional
        The display width in a notebook: pixels (``600``) or a CSS length (``"80%"``,
        ``"40em"``).  By default a drawing is shown at its own size, shrunk to the
        column's width when it is wider (never cut off).  A width wider than the column
        (``width=2000``, ``"200%"``) keeps the text large and scrolls sideways.

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
    roots, given = roots_and_names(t)
    auto = {} if names is False else caller_names(2)
    explicit = dict(names) if isinstance(names, Mapping) else {}
    explicit.update({n: t for n, t in given.items()
                     if not any(t is u for u in explicit.values())})
    model = GraphModel(roots, merge_names(explicit, auto))
    model.sizes = dict(sizes) if sizes else None
    edge_grads = _record_edge_grads(model) if show_edge_grads else None
    if order_names is None and len(roots) > 1 and given:
        order_names = [n if "order" in n else f"order {k}: {n}" for k, n in enumerate(given)]
    common = dict(theme=theme, rankdir=rankdir, show_values=show_values,
                  show_grads=show_grads, legend=legend, title=title,
                  order_names=list(order_names) if order_names else None,
                  fontsize=fontsize, max_nodes=max_nodes)
    if kind == "backward":
        src = backward_graph(model, edge_grads=edge_grads, show_local=show_local,
                             show_saved=show_saved, show_attrs=show_attrs,
                             show_constants=show_constants, **common)
    elif kind == "forward":
        src = forward_graph(model, **common)
    elif kind == "both":
        src = both_graph(model, edge_grads=edge_grads, show_local=show_local,
                         show_saved=show_saved, show_attrs=show_attrs, **common)
    else:
        raise ValueError(f"kind must be 'backward', 'forward' or 'both', got {kind!r}")
    return Diagram(src, kind, len(model.items), size=size, width=width)


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
    for v in var if isinstance(var, tuple) else (var,):
        hash(v)  # (torchviz keeps the outputs in a set: a list is unhashable there too)
        if not hasattr(v, "grad_fn") or not callable(getattr(v, "size", None)):
            # torchviz's own failure: it asks every output for its size
            raise AttributeError(f"'{type(v).__name__}' object has no attribute 'size'")
    src = torchviz_graph(var, params=params, show_attrs=show_attrs, show_saved=show_saved,
                         max_attr_chars=max_attr_chars)
    return Diagram(src, "torchviz", src.count("label="))
