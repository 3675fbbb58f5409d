"""DOT in the style of torchviz's ``make_dot``: leaves light blue, outputs green, saved
tensors orange, node names with an optional table of saved values.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> src = torchviz_graph((x * x).sum(), params={"x": x})
>>> "lightblue" in src and "SumBackward0" in src
True
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .dotwriter import quoted
from .model import FREED, GraphModel, Item, as_list
from .values import attr_text

__all__ = ["torchviz_graph", "make_dot_from_trace"]


def torchviz_graph(var: Any, params: Mapping[str, Any] | None = None,
                   show_attrs: bool = False, show_saved: bool = False,
                   max_attr_chars: int = 50) -> str:
    """DOT in torchviz's ``make_dot`` style (leaves light blue, output green, saved orange).

    Unlike torchviz, a saved tensor that is also a leaf gets its own node, so the leaf's
    edges are never merged with the saved value's.
    """
    roots = as_list(var)
    # torchviz also draws the base of an output that is a view (dark green, dotted edge):
    # its graph is walked after the outputs'.
    bases = [b for b in map(_view_base, roots) if b is not None]
    model = GraphModel(roots + bases, dict(params or {}))
    lines = ["digraph {",
             '  graph [size="12,12"]',
             '  node [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 '
             'shape=box style=filled]']
    for item in model.items:
        key = item.key
        if item.kind == "accumulate":
            # torchviz: "name\n (2, 3)", name or ''
            text = f"{item.name or ''}\n " + _size(item.variable)
            lines.append(f'  {key}_var [label="{_dq(text)}" fillcolor=lightblue]')
            lines.append(f"  {key}_var -> {key}")
            lines.append(f'  {key} [label="AccumulateGrad"]')
            continue
        label = item.title
        if show_attrs or show_saved:
            attrs = _saved_attrs(model, item, lines, show_saved)
            if attrs and show_attrs:
                label += "\n" + _attrs_table(label, attrs, max_attr_chars)
        lines.append(f'  {key} [label="{_dq(label)}"]')
        for e in model.backward_edges(item):
            if e.target is not None:
                lines.append(f"  {e.target.key} -> {key}")
    # torchviz's order: each output, then the base it is a view of; a tensor drawn
    # already (a leaf, an earlier output or base) is not drawn again.
    drawn = {id(item.variable): f"{item.key}_var" for item in model.items
             if item.kind == "accumulate"}
    for k, (t, item) in enumerate(zip(roots, model.root_items)):
        _output_lines(model, lines, drawn, t, item, f"out{k}", "darkolivegreen1")
        base = _view_base(t)
        if base is not None:
            key = _output_lines(model, lines, drawn, base,
                                model.by_fn.get(id(getattr(base, "grad_fn", None))),
                                f"base{k}", "darkolivegreen3")
            lines.append(f"  {key} -> {drawn[id(t)]} [style=dotted]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def make_dot_from_trace(trace: Any) -> None:
    """torchviz's ``make_dot_from_trace``: in torchviz 0.0.3 it only raises, pointing at
    TensorBoard (drawing a ``torch.jit.trace`` moved to PyTorch core); so does this one,
    with torchviz's error.  symgrad records every graph: :func:`symgrad.make_dot` draws it.

    Examples
    --------
    >>> make_dot_from_trace(None)
    Traceback (most recent call last):
    ...
    NotImplementedError: This function has been moved to pytorch core and can be found here: ...
    """
    raise NotImplementedError("This function has been moved to pytorch core and can be found "
                              "here: https://pytorch.org/docs/stable/tensorboard.html")


def _saved_attrs(model: GraphModel, item: Item, lines: list, show_saved: bool) -> dict:
    """torchviz's text for each saved value; saved tensors as nodes with ``show_saved``."""
    attrs = {}
    # torchviz walks dir(fn): the saved names in alphabetical order
    for n, v in sorted(model.saved_values(item), key=lambda nv: nv[0]):
        if v is FREED:
            attrs[n] = "[freed]"
        elif hasattr(v, "shape") and not isinstance(v, np.ndarray):
            attrs[n] = "[saved tensor]"
            if show_saved:
                skey = f"{item.key}_saved_{n}"
                lines.append(f'  {skey} [label="{_dq(n)}\n {_size(v)}" fillcolor=orange]')
                lines.append(f"  {skey} -> {item.key} [dir=none]")
        elif isinstance(v, tuple) and any(hasattr(t, "shape") for t in v):
            attrs[n] = "[saved tensors]"
        else:
            attrs[n] = str(attr_text(v))
    return attrs


def _attrs_table(name: str, attrs: dict, max_attr_chars: int) -> str:
    """torchviz's table of saved values under a node name: a rule, then aligned rows."""
    max_attr_chars = max(max_attr_chars, 3)
    col1 = max(len(k) for k in attrs)
    col2 = min(max(len(v) for v in attrs.values()), max_attr_chars)
    rows = [f"{k:<{col1}}: {(v[:col2 - 3] + '...' if len(v) > col2 else v):>{col2}}"
            for k, v in attrs.items()]
    return "-" * max(col1 + col2 + 2, len(name)) + "\n" + "\n".join(rows)


def _output_lines(model: GraphModel, lines: list, drawn: dict, t: Any, item: Item | None,
                  key: str, colour: str) -> str:
    """An output (or the base of one) as torchviz draws it, unless drawn: its node key."""
    if id(t) in drawn:
        return drawn[id(t)]
    drawn[id(t)] = key
    text = f"{model.tensor_name(t) or ''}\n " + _size(t)
    lines.append(f'  {key} [label="{_dq(text)}" fillcolor={colour}]')
    if item is not None:
        lines.append(f"  {item.key} -> {key}")
    return key


def _view_base(t) -> Any:
    """The tensor ``t`` is a view of (torchviz asks ``_is_view()`` and ``_base``), or None."""
    is_view = getattr(t, "_is_view", None)
    return t._base if callable(is_view) and is_view() else None


def _size(t) -> str:
    return "(" + ", ".join(str(int(n)) for n in tuple(getattr(t, "shape", ()))) + ")"


def _dq(text: str) -> str:
    """``text`` inside a double-quoted DOT string (dotwriter's one escaping of it)."""
    return quoted(text)[1:-1]
