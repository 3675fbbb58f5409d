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

from typing import Any, Mapping

from .collapse import collapse
from .direction import laid_out
from .dotwriter import DotWriter
from .inputs import adopt_torch_ops
from .labels import label_of, op_symbol
from .model import Edge, GraphModel, Item
from .rows import leaf_grad, order_labels, tensor_rows
from .themes import theme_named
from .values import as_array, dtype_text, format_value

__all__ = ["forward_graph", "emit_forward"]


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
               order: int | None, show_values: bool, indent: str) -> None:
    """The oval of ``item``'s operation, its edges in and the edge to its tensor."""
    okey = f"{tkey}_op"
    dot.node(okey, "fwd_op", [(op_symbol(item), "title")], tooltip=item.title,
             order=order, shape="ellipse", indent=indent)
    dot.edge(okey, tkey, kind="data", indent=indent)
    named = item.op is not None and not item.op.commutative and len(item.edges) > 1
    for e in item.edges:
        label = e.input_name if named else None
        if e.target is None:
            _constant(model, dot, e, okey, label=label, show_values=show_values,
                      indent=indent)
        else:
            dot.edge(f"{prefix}{e.target.key}", okey, kind="data", label=label,
                     indent=indent)


def emit_forward(model: GraphModel, dot: DotWriter, *, show_values: bool, show_grads: bool,
                 prefix: str = "f", indent: str = "  ", higher: bool) -> dict[str, str]:
    """Forward nodes and edges; returns {backward item key: forward tensor node key}."""
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
        dot.node(tkey, "output" if id(item) in root_set else "tensor", rows,
                 tooltip=f"tensor {name or ''}".strip(), order=order, indent=indent)
        _operation(model, dot, item, tkey, prefix=prefix, order=order,
                   show_values=show_values, indent=indent)
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
        anchor = None
        for item in model.root_items:
            if item is not None:
                anchor = keys[item.key]
        if legend:
            dot.legend(anchor, order_labels(model, order_names))
        return dot.source("forward")
    return laid_out(build, rankdir)
