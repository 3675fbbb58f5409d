"""Forward and backward drawings side by side, each tensor linked to its ``grad_fn``.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(2.0, requires_grad=True, name="x")
>>> src = both_graph(torch.exp(x), legend=False)
>>> "cluster_forward" in src and "cluster_backward" in src
True
"""
from __future__ import annotations

from typing import Any, Mapping

from .backward import drawing_model, emit_backward, laid_out_source
from .dotwriter import DotWriter
from .forward import emit_forward

__all__ = ["both_graph"]


def both_graph(roots: Any, *, names: Mapping[str, Any] | None = None, theme: str = "light",
               rankdir: str = "auto", show_values: bool = True, show_grads: bool = True,
               edge_grads: Mapping | None = None, show_local: bool = False,
               show_saved: bool = False, show_attrs: bool = False, legend: bool = True,
               title: str | None = None, order_names: list[str] | None = None,
               fontsize: int = 12, max_nodes: int | None = 300) -> str:
    """DOT source of the forward and backward graphs of ``roots`` side by side.

    Parameters are those of :func:`symgrad.draw`; the forward side shows values, the
    backward side the leaves' ``.grad``.
    """
    model = drawing_model(roots, names, max_nodes)
    higher = len(model.roots) > 1

    def emit(dot: DotWriter):
        dot.cluster("forward", "Forward pass")
        keys = emit_forward(model, dot, show_values=show_values, show_grads=False,
                            indent="    ", higher=higher)
        dot.end_cluster()
        dot.cluster("backward", "Backward pass (grad_fn graph)")
        outs = emit_backward(model, dot, show_values=False, show_grads=show_grads,
                             edge_grads=edge_grads, show_local=show_local,
                             show_saved=show_saved, show_attrs=show_attrs,
                             show_constants=False, state=None, prefix="b", indent="    ",
                             higher=higher)
        dot.end_cluster()
        for item in model.items:
            # Same rank: each grad_fn sits straight across from the tensor it belongs to.
            target = f"b{item.key}"
            dot.lines.append(f"  {{rank=same; {keys[item.key]}; {target}}}")
            if item.kind != "accumulate":  # a leaf's grad_fn is None: no link to draw
                dot.edge(target, keys[item.key], kind="link", indent="  ",
                         extra="arrowhead=none")
        return outs[-1] if outs else None
    return laid_out_source(model, emit, "forward_backward", theme=theme, rankdir=rankdir,
                           title=title, fontsize=fontsize, legend=legend,
                           order_names=order_names)
