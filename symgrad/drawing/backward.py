"""The backward drawing: PyTorch's ``grad_fn`` nodes, their ``next_functions`` edges, the
leaves with their ``.grad``; optionally local derivatives, edge gradients, saved tensors.

Backward edges are drawn from each node to its ``next_functions`` with the arrowhead
pointing the way the gradient travels; inputs sit on one side, the output on the other
(``rankdir``), as in the forward drawing.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(4.0, requires_grad=True, name="x")
>>> f = 5 * x ** 2
>>> src = backward_graph(f, names={"f": f}, legend=False)
>>> "MulBackward0" in src and "PowBackward0" in src and "AccumulateGrad" in src
True
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from .collapse import collapse
from .direction import laid_out
from .dotwriter import DotWriter
from .inputs import adopt_torch_ops
from .labels import label_of, local_derivative, operand_text
from .model import FREED, Edge, GraphModel, Item
from .rows import leaf_grad, order_labels, tensor_rows
from .themes import theme_named
from .values import as_array, attr_text, dtype_text, format_value, shape_text

__all__ = ["backward_graph", "emit_backward"]


def _saved_rows(model: GraphModel, item: Item, dot: DotWriter, key: str, *,
                indent: str = "  ") -> list:
    """Saved tensors as their own nodes (never merged with the leaf they alias); rows
    for the node's saved numbers."""
    rows = []
    for n, v in model.saved_values(item):
        if v is FREED:
            rows.append((f"saved {n}: freed by backward", "small"))
            continue
        if hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, np.ndarray):
            skey = f"{key}_saved_{n}"
            alias = model.tensor_name(v)
            fn = getattr(v, "grad_fn", None)
            if alias is None and fn is not None and id(fn) in model.by_fn:
                alias = label_of(model, model.by_fn[id(fn)])
                alias = None if alias == "…" else alias
            title = f"saved {n}" + (f" (= {alias})" if alias else "")
            dot.node(skey, "saved",
                     [(title, "title"), (f"{shape_text(v.shape, model.sizes)}  {dtype_text(v)}", "small"),
                      (format_value(v), "body")],
                     tooltip=f"{item.title}._saved_{n}", indent=indent)
            dot.edge(skey, key, kind="saved", indent=indent)
        else:
            rows.append((f"{n} = {attr_text(v)}", "small"))
    return rows


def _leaf(model: GraphModel, dot: DotWriter, item: Item, key: str, *, order: int | None,
          show_values: bool, show_grads: bool, state: Mapping | None, indent: str) -> None:
    """An ``AccumulateGrad`` node and its leaf tensor."""
    running = state.get("running") if state else None
    faded = state is not None and item.key not in state.get("done", set()) and (
        item.key != running)
    dot.node(key, "accumulate", [("AccumulateGrad", "title")], tooltip="AccumulateGrad",
             order=order, faded=faded, highlight=item.key == running, indent=indent)
    var = item.variable
    leaf_grads = state.get("leaf_grads") if state else None
    grad = leaf_grads.get(item.key) if leaf_grads is not None else leaf_grad(var)
    rows = tensor_rows(var, item.name, as_array(var), show_values=show_values,
                       show_grads=show_grads, grad=grad, dtype=dtype_text(var), sizes=model.sizes)
    if state is not None and grad is None:
        rows.append(("grad = None", "grad"))
    dot.node(key + "_var", "leaf", rows, tooltip=f"leaf {item.name or ''}".strip(),
             order=order, indent=indent)
    dot.edge(key + "_var", key, kind="grad", back=True, indent=indent)


def _edge_text(model: GraphModel, dot: DotWriter, item: Item, e: Edge, *, show_local: bool,
               edge_grads: Mapping | None) -> str | None:
    """An edge's label: local derivative, output number, the gradient sent along it."""
    parts = []
    if show_local:
        ld = local_derivative(model, item, e)
        if ld is not None:
            who = operand_text(model, e.target, e.const)
            short = len(who) <= 10 and "…" not in who
            parts.append(f"∂/∂{who} = {ld}" if short else f"local: {ld}")
            dot.notes["∂/∂v"] = "local derivative of the node's output w.r.t. input v"
    if e.output_nr:
        parts.append(f"output {e.output_nr}")
    if edge_grads is not None and (item.key, e.slot) in edge_grads:
        parts.append("grad " + format_value(edge_grads[(item.key, e.slot)]))
        dot.notes["grad"] = "on an edge: the gradient sent along it"
    return "\n".join(parts) or None


def _outputs(model: GraphModel, dot: DotWriter, *, show_values: bool, show_grads: bool,
             edge_grads: Mapping | None, seed: Any, prefix: str, indent: str,
             higher: bool) -> list[str]:
    """The output tensors' nodes (and roots that are leaves); returns their keys."""
    outs = []
    for k, (t, item) in enumerate(zip(model.roots, model.root_items)):
        okey = f"{prefix}out{k}"
        if item is None:
            continue
        name = model.tensor_name(t)
        rows = tensor_rows(t, name or "output", as_array(t), show_values=show_values,
                           show_grads=False, dtype=dtype_text(t), sizes=model.sizes)
        dot.node(okey, "output", rows, tooltip=f"output {name or ''}".strip(),
                 order=item.order if higher else None, indent=indent)
        label = None
        if seed is not None or edge_grads is not None:
            s = seed if seed is not None else edge_grads.get(("seed", k))
            label = None if s is None else "grad " + format_value(s)
        dot.edge(prefix + item.key, okey, kind="grad", back=True, label=label, indent=indent)
        outs.append(okey)
    for t in model.leaf_only:
        okey = f"{prefix}leafroot{len(outs)}"
        rows = tensor_rows(t, model.tensor_name(t), as_array(t), show_values=show_values,
                           show_grads=show_grads, grad=leaf_grad(t), dtype=dtype_text(t), sizes=model.sizes)
        dot.node(okey, "leaf", rows, tooltip="leaf", indent=indent)
        outs.append(okey)
    return outs


def emit_backward(model: GraphModel, dot: DotWriter, *, show_values: bool, show_grads: bool,
                  edge_grads: Mapping | None, show_local: bool, show_saved: bool,
                  show_attrs: bool, show_constants: bool, state: Mapping | None,
                  prefix: str = "", indent: str = "  ", higher: bool) -> list[str]:
    """Backward nodes and edges into ``dot``; returns the keys of the output-tensor nodes.

    ``state`` (step-by-step frames): ``running`` (the key of the node running now),
    ``done``, ``leaf_grads``, ``received``, ``sent`` (edges whose gradient has been sent)
    and ``seed``.
    """
    if show_values or show_local:
        model.compute_values()
    running = state.get("running") if state else None
    done = state.get("done", set()) if state else set()
    received = state.get("received", {}) if state else {}
    sent = state.get("sent") if state else None
    if state is not None:
        dot.highlight_used = True  # every frame has the same legend: the layout stays put
    for item in model.items:
        key = prefix + item.key
        order = item.order if higher else None
        if item.kind == "accumulate":
            _leaf(model, dot, item, key, order=order, show_values=show_values,
                  show_grads=show_grads, state=state, indent=indent)
            continue
        rows = [(item.title, "title")]
        if item.summary is not None:
            rows.append((item.summary, "small"))
        elif show_local and item.op is None:  # a PyTorch node symgrad has no record of
            rows.append(("no local derivative: not in symgrad's op table", "small"))
        if show_attrs and item.op is not None:
            rows += [(f"{n} = {attr_text(v)}", "small")
                     for n, v in zip(item.op.attrs, item.attrs)]
        if item.key in received:
            rows.append(("receives " + format_value(received[item.key]), "grad"))
        if show_saved:
            shown = {r[0] for r in rows}
            rows += [r for r in _saved_rows(model, item, dot, key, indent=indent)
                     if r[0] not in shown]
        faded = state is not None and item.key not in done and item.key != running
        dot.node(key, "collapsed" if item.summary is not None else "op", rows,
                 tooltip=item.title,
                 order=order, highlight=item.key == running, faded=faded, indent=indent)
        for e in model.backward_edges(item):
            if e.target is None:
                if not show_constants:
                    continue
                ckey = f"{key}_c{e.slot}"
                text = "None"
                if item.op is not None:
                    text = f"None  ({label_of(model, None, e.const)})"
                dot.node(ckey, "const", [(text, "small")], tooltip="None", indent=indent)
                dot.edge(ckey, key, kind="const", back=False, indent=indent,
                         extra="arrowhead=none")
                continue
            label = _edge_text(model, dot, item, e, show_local=show_local,
                               edge_grads=edge_grads)
            # Step frames: the gradient's text is there (so the layout stays put) but
            # invisible until the gradient has been sent.
            hidden = (sent is not None and edge_grads is not None
                      and (item.key, e.slot) in edge_grads and (item.key, e.slot) not in sent)
            dot.edge(prefix + e.target.key, key, kind="grad", back=True, label=label,
                     indent=indent, label_color=dot.theme.bg if hidden else None,
                     color=dot.theme.muted if hidden else None)
    return _outputs(model, dot, show_values=show_values, show_grads=show_grads,
                    edge_grads=edge_grads, seed=state.get("seed") if state else None,
                    prefix=prefix, indent=indent, higher=higher)


def backward_graph(roots: Any, *, names: Mapping[str, Any] | None = None, theme: str = "light",
                   rankdir: str = "auto", show_values: bool = True, show_grads: bool = True,
                   edge_grads: Mapping | None = None, show_local: bool = False,
                   show_saved: bool = False, show_attrs: bool = False,
                   show_constants: bool = True, legend: bool = True,
                   title: str | None = None, order_names: list[str] | None = None,
                   state: Mapping | None = None, fontsize: int = 12,
                   max_nodes: int | None = 300) -> str:
    """DOT source of the backward graph (PyTorch's ``grad_fn`` nodes) of ``roots``.

    Parameters
    ----------
    roots : tensor or sequence of tensors
        Several roots mark derivative orders (``[f, df_dx]``).
    names : mapping, optional
        ``{"f": f, "x": x}``: names shown for tensors.
    edge_grads : mapping, optional
        ``{(node_key, slot): gradient}`` recorded during a backward pass; drawn on edges.
    show_local : bool
        Label each edge with the op's local derivative (from the op table).
    show_saved : bool
        Draw ``_saved_*`` tensors as separate nodes (never merged with a leaf).
    state : mapping, optional
        Step-by-step frame state (``running``, ``done``, ``leaf_grads``, ``received``).
    rankdir : {"auto", "LR", "TB", "RL", "BT"}
        Layout direction; ``auto`` is the one that fits a 16:9 slide best
        (:mod:`~symgrad.drawing.direction`).
    legend : bool
        A legend of the colours and arrows used.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor(2.0, requires_grad=True, name="x")
    >>> src = backward_graph(torch.sin(x), legend=False)
    >>> "SinBackward0" in src, src.count("->")  # x -> AccumulateGrad -> Sin -> output
    (True, 3)
    """
    model = drawing_model(roots, names, max_nodes)

    def emit(dot: DotWriter):
        outs = emit_backward(model, dot, show_values=show_values, show_grads=show_grads,
                             edge_grads=edge_grads, show_local=show_local,
                             show_saved=show_saved, show_attrs=show_attrs,
                             show_constants=show_constants, state=state,
                             higher=len(model.roots) > 1)
        return outs[-1] if outs else None
    return laid_out_source(model, emit, "backward", theme=theme, rankdir=rankdir,
                           title=title, fontsize=fontsize, legend=legend,
                           order_names=order_names)


def drawing_model(roots: Any, names: Mapping[str, Any] | None,
                  max_nodes: int | None) -> GraphModel:
    """The model of ``roots`` as the drawings show it: PyTorch's ops adopted, a graph of
    more than ``max_nodes`` nodes collapsed."""
    model = GraphModel.of(roots, names)
    adopt_torch_ops(model)
    collapse(model, max_nodes)
    return model


def laid_out_source(model: GraphModel, emit: Callable, graph: str, *, theme: str,
                    rankdir: str, title: str | None, fontsize: int, legend: bool,
                    order_names: list[str] | None) -> str:
    """DOT source of the graph ``graph`` in the direction ``rankdir`` (``auto``: the one
    that fits a slide best): ``emit(dot)`` draws ``model`` and returns the key of the output
    the legend stands by."""
    def build(direction: str) -> str:
        dot = DotWriter(theme_named(theme), direction, title, fontsize)
        anchor = emit(dot)
        if legend:
            dot.legend(anchor, order_labels(model, order_names))
        return dot.source(graph)
    return laid_out(build, rankdir)
