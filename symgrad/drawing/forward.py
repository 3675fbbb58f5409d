"""The forward drawing: leaves, constants, operations (ovals) and the tensors they make.

An operation shows its op's ``symbol``; an unnamed tensor is labelled with its expression
(the op's ``infix``, see :mod:`symgrad.drawing.labels`); the inputs of an op that is not
commutative are named on its edges.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(2.0, requires_grad=True, name="x")
>>> src = forward_graph(3 * x, legend=False)
>>> "×" in src and "fn0_op" in src
True
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any, Mapping

from .collapse import collapse
from .direction import laid_out
from .dotwriter import DotWriter
from .inputs import adopt_torch_ops
from .labels import label_of, local_derivative, op_symbol, operand_text
from .model import Edge, GraphModel, Item
from .rows import leaf_grad, order_labels, output_key, tensor_rows
from .themes import theme_named
from .values import as_array, dtype_text, format_value

__all__ = ["forward_graph", "emit_forward", "tangent_name", "tangent_row"]


def _constant(model: GraphModel, dot: DotWriter, e: Edge, okey: str, *, label: str | None,
              show_values: bool, indent: str) -> None:
    """A constant operand: its name or value, and its edge into the operation."""
    ckey = f"{okey}_c{e.slot}"
    cname = label_of(model, None, e.const)
    rows = [(cname, "title")]
    a = as_array(e.const)
    if a is not None and a.ndim > 0 and show_values and cname != format_value(a):
        rows.append((format_value(a), "body"))
    dot.node(ckey, "const", rows, tooltip="constant", indent=indent)
    dot.edge(ckey, okey, kind="data", label=label, indent=indent)


def _operation(model: GraphModel, dot: DotWriter, item: Item, tkey: str, *, prefix: str,
               order: int | None, show_values: bool, indent: str, show_local: bool = False,
               highlight: bool = False, faded: bool = False) -> None:
    """The oval of ``item``'s operation, its edges in and the edge to its tensor; with
    ``show_local``, each edge in is labelled with the local derivative of the result
    with respect to that input (forward mode's factor on the input's tangent)."""
    okey = f"{tkey}_op"
    dot.node(okey, "fwd_op", [(op_symbol(item), "title")], tooltip=item.title,
             order=order, shape="ellipse", indent=indent, highlight=highlight, faded=faded)
    dot.edge(okey, tkey, kind="data", indent=indent)
    named = item.op is not None and not item.op.commutative and len(item.edges) > 1
    for e in item.edges:
        label = e.input_name if named else None
        colour = None
        if show_local and e.target is not None:
            ld = local_derivative(model, item, e)
            if ld is not None:
                who = operand_text(model, e.target, e.const)
                if re.search("[⁰¹²³⁴⁵⁶⁷⁸⁹]", who) and not who.startswith("("):
                    who = f"({who})"  # (∂/∂x² would read as a second derivative)
                short = len(who) <= 10 and "…" not in who
                label = f"∂/∂{who} = {ld}" if short else f"local: {ld}"
                colour = dot.theme.tangent
                dot.tangent_notes["∂/∂v"] = ("on an edge: the local derivative of the "
                                             "operation's result w.r.t. input v")
        if e.target is None:
            _constant(model, dot, e, okey, label=label, show_values=show_values,
                      indent=indent)
        else:
            dot.edge(f"{prefix}{e.target.key}", okey, kind="data", label=label,
                     indent=indent, label_color=colour)


def tangent_name(name: str | None) -> str:
    """A tensor's tangent as a drawing writes it: ``ẋ`` for a name, ``(x·y)˙`` for an
    expression.

    Examples
    --------
    >>> tangent_name("x"), tangent_name("f"), tangent_name("x·y"), tangent_name("w1")
    ('ẋ', 'ḟ', '(x·y)˙', 'ẇ1')
    """
    if not name:
        return "tangent"
    if re.fullmatch(r"[^\W\d]\w*", name) and name.isidentifier():  # (ḟ precomposed)
        return unicodedata.normalize("NFC", name[:1] + "\u0307" + name[1:])
    return f"({name})\u02d9"


def tangent_row(name: str | None, value: Any, known: bool = True) -> tuple:
    """The tangent's row of a tensor node: ``tangent ẋ = 1``; ``= ?`` before it is
    known.  (The word is there because at 12 points a dot over a tall letter, ``ḃ``,
    ``ḟ``, is hardly seen: the row must not read as the value.)"""
    text = format_value(value) if value is not None else "?"
    if not known:  # (as wide as the value: frames keep their layout)
        text = "?".ljust(max(1, len(text.split("\n")[0])), "\u2007")
    return (f"tangent {tangent_name(name)} = {text}", "tangent" if known else "body")


def emit_forward(model: GraphModel, dot: DotWriter, *, show_values: bool, show_grads: bool,
                 prefix: str = "f", indent: str = "  ", higher: bool,
                 tangents: Mapping | None = None, show_local: bool = False,
                 state: Mapping | None = None) -> dict[str, str]:
    """Forward nodes and edges; returns {backward item key: forward tensor node key}.

    Forward mode (:mod:`.tangents`): ``tangents`` (item key -> tangent) adds each
    tensor's tangent row, ``show_local`` the local derivative on each edge into an
    operation, and ``state`` (step frames: ``running``, the key computed now, and
    ``done``) fades what is not computed yet."""
    model.compute_values()  # the tensors' shapes, even when their values are not shown
    tensor_key: dict[str, str] = {}
    root_set = {id(it) for it in model.root_items if it is not None}
    for item in model.items:
        order = item.order if higher else None
        tkey = f"{prefix}{item.key}"
        tensor_key[item.key] = tkey
        if item.kind == "accumulate":
            var = item.variable
            rows = tensor_rows(var, item.name, as_array(var), show_values=show_values,
                               show_grads=show_grads, grad=leaf_grad(var),
                               dtype=dtype_text(var), sizes=model.sizes)
            if tangents is not None:
                rows.append(tangent_row(item.name, tangents.get(item.key), True))
            dot.node(tkey, "leaf", rows, tooltip=f"leaf {item.name or ''}".strip(),
                     order=order, indent=indent)
            continue
        t = item.tensor
        name = item.name or label_of(model, item)
        if name == "…":
            name = None
        grad = leaf_grad(t) if t is not None and getattr(t, "retains_grad", False) else None
        rows = tensor_rows(t, name, item.value, show_values=show_values,
                           show_grads=show_grads, grad=grad, shape=item.shape,
                           dtype=dtype_text(t) if t is not None else "", sizes=model.sizes)
        known, running = True, False
        if state is not None:
            running = item.key == state.get("running")
            known = running or item.key in state.get("done", ())
        if tangents is not None:
            rows.append(tangent_row(name or label_of(model, item), tangents.get(item.key),
                                    known))
        dot.node(tkey, "output" if id(item) in root_set else "tensor", rows,
                 tooltip=f"tensor {name or ''}".strip(), order=order, indent=indent,
                 highlight=running, faded=not known)
        _operation(model, dot, item, tkey, prefix=prefix, order=order,
                   show_values=show_values, indent=indent, show_local=show_local,
                   highlight=running, faded=not known)
    for k, t in enumerate(model.leaf_only):
        key = f"{prefix}leafroot{k}"
        rows = tensor_rows(t, model.tensor_name(t), as_array(t), show_values=show_values,
                           show_grads=show_grads, grad=leaf_grad(t), dtype=dtype_text(t), sizes=model.sizes)
        dot.node(key, "leaf", rows, tooltip="leaf", indent=indent)
        tensor_key[f"leafroot{k}"] = key
    return tensor_key


def forward_graph(roots: Any, *, names: Mapping[str, Any] | None = None, theme: str = "light",
                  rankdir: str = "auto", show_values: bool = True, show_grads: bool = True,
                  legend: bool = True, title: str | None = None,
                  order_names: list[str] | None = None, fontsize: int = 12,
                  max_nodes: int | None = 300) -> str:
    """DOT source of the forward graph: leaves, constants, operations and tensors.

    Parameters are those of :func:`symgrad.draw` (``roots``: a tensor, a list of tensors
    or a :class:`~symgrad.drawing.model.GraphModel`).
    """
    model = GraphModel.of(roots, names)
    adopt_torch_ops(model)
    collapse(model, max_nodes)

    def build(direction: str) -> str:
        dot = DotWriter(theme_named(theme), direction, title, fontsize)
        keys = emit_forward(model, dot, show_values=show_values, show_grads=show_grads,
                            higher=len(model.roots) > 1)
        if legend:
            dot.legend(output_key(model, keys), order_labels(model, order_names))
        return dot.source("forward")
    return laid_out(build, rankdir)
