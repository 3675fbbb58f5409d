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
import time
from typing import Any, Mapping, Sequence

import numpy as np

from ..api.tensor import Tensor
from ..autograd import grad as autograd_grad
from . import backends
from .backends import SUFFIXES, RenderError, format_for
from .backward import backward_graph
from .both import both_graph
from .forward import forward_graph
from .inputs import caller_names, merge_names, roots_and_names
from .model import GraphModel
from .torchviz import torchviz_graph
from .values import as_array

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
        out = backends.pipe(self.source, format, self.engine, backend)
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


def _record_edge_grads(model: GraphModel) -> dict:
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
                    grads[(key, slot)] = as_array(g)
        handles.append(item.fn.register_hook(hook))
    try:
        _grad_function(root)(root, leaves, retain_graph=True, allow_unused=True)
    except RuntimeError as e:
        if "second time" in str(e):
            raise RenderError(
                "show_edge_grads needs the graph's saved values, which backward() freed: "
                "call backward(retain_graph=True), or draw before calling backward()") from None
        raise
    finally:
        for h in handles:
            h.remove()
    grads[("seed", 0)] = np.ones_like(as_array(root))
    return grads


def _grad_function(t: Any):
    """``autograd.grad`` of the library ``t`` belongs to."""
    if isinstance(t, Tensor):
        return autograd_grad
    import torch  # why: only a real torch tensor gets here, so torch is installed
    return torch.autograd.grad


def draw(t: Any, kind: str = "backward", *, names: Mapping[str, Any] | bool | None = None,
         theme: str = "light", rankdir: str = "LR", show_values: bool = True,
         show_grads: bool = True, show_edge_grads: bool = False, show_local: bool = False,
         show_saved: bool = False, show_attrs: bool = False, show_constants: bool = True,
         legend: bool = True, title: str | None = None,
         order_names: Sequence[str] | None = None, fontsize: int = 12,
         max_nodes: int | None = 300, sizes: Mapping[int, str] | None = None) -> Diagram:
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
    sizes : dict, optional
        Names for sizes (``{2: "n", 3: "m"}``): shapes are shown as ``n×m``, for an
        expression drawn without values whose sizes are symbolic.

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
    for v in var if isinstance(var, tuple) else (var,):
        hash(v)  # (torchviz keeps the outputs in a set: a list is unhashable there too)
        if not hasattr(v, "grad_fn") or not callable(getattr(v, "size", None)):
            # torchviz's own failure: it asks every output for its size
            raise AttributeError(f"'{type(v).__name__}' object has no attribute 'size'")
    src = torchviz_graph(var, params=params, show_attrs=show_attrs, show_saved=show_saved,
                         max_attr_chars=max_attr_chars)
    return Diagram(src, "torchviz", src.count("label="))
