"""What ``draw`` and ``draw_steps`` are given: tensors (symgrad's or PyTorch's), lists
or name->tensor dicts, and the names of the caller's variables; and what symgrad's op
table says about the nodes of a real PyTorch graph (:func:`adopt_torch_ops`)."""
from __future__ import annotations

import sys
from typing import Any, Mapping

from ..api.tensor import Tensor
from ..ir.node import Node
from ..ops import OPS
from .model import Edge, GraphModel

__all__ = ["is_tensor", "roots_and_names", "caller_names", "merge_names", "adopt_torch_ops"]


def is_tensor(obj: Any) -> bool:
    """True for a symgrad tensor or a PyTorch tensor (recognised without importing torch)."""
    if isinstance(obj, Tensor):
        return True
    return type(obj).__module__.startswith("torch") and hasattr(obj, "grad_fn") and hasattr(
        obj, "requires_grad")


def roots_and_names(t: Any) -> tuple[list, dict]:
    """Root tensors and names from ``t``: a tensor, a sequence, or a name->tensor dict."""
    if isinstance(t, Mapping):
        return list(t.values()), dict(t)
    if isinstance(t, (list, tuple)):
        return list(t), {}
    if not is_tensor(t):
        raise TypeError(f"draw() expects a symgrad or torch tensor (or a list/dict of them), "
                        f"got {type(t).__name__}")
    return [t], {}


def caller_names(depth: int) -> dict:
    """Variable names of tensors in the calling frame (``f = ...; draw(f)`` shows "f").

    ``depth`` counts frames as ``sys._getframe`` does from here: 2 is the caller of the
    function that calls this one.
    """
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
            if name.startswith("_") or id(obj) in seen or not is_tensor(obj):
                continue
            seen.add(id(obj))
            out[name] = obj
    return out


def merge_names(explicit: Mapping | None, auto: Mapping) -> dict:
    """``explicit`` names, then ``auto`` names of tensors not named yet."""
    names: dict = {}
    for source in (explicit or {}, auto):
        for n, t in source.items():
            if not any(t is u for u in names.values()):
                names[n] = t
    return names


def _saved(fn: Any, name: str, default: Any = None) -> Any:
    """``fn._saved_<name>``, or ``default`` when the node has none (or backward freed it)."""
    try:
        return getattr(fn, "_saved_" + name)
    except (AttributeError, RuntimeError):
        return default


def _ops_by_node() -> dict:
    table: dict = {}
    for op in OPS.values():
        if getattr(op, "inputs", None) is not None and not op.composite:
            table.setdefault(op.node_name, []).append(op)
    return table


def adopt_torch_ops(model: GraphModel) -> None:
    """Read the nodes of a real PyTorch graph through symgrad's op table, as symgrad's own.

    A node whose type is in the table (``MulBackward0``, ``AddmmBackward0``...) and whose
    ``next_functions`` are the op's differentiable inputs, in order, gets the op record,
    its attributes (``_saved_exponent``), input names, and the values of its constant
    inputs (``_saved_other`` = 5, ``_saved_mat1`` = the input data ``x``, so named by the
    caller's variable).  An intermediate tensor a node saved (its ``_saved_result``, or an
    input its parent saved) gives that node's value.  Drawings then label edges with
    local derivatives and unnamed results with their expression (``5·x²``), as for
    symgrad's tensors.  Nodes of symgrad's own graphs are left as they are.
    """
    if getattr(model, "torch_ops_adopted", False):
        return
    model.torch_ops_adopted = True
    table = None
    for item in model.items:
        if item.kind != "op" or item.op is not None or isinstance(item.fn, Node):
            continue
        table = _ops_by_node() if table is None else table
        for op in table.get(item.title, ()):
            grads = tuple(op.grads or ())
            live = [i for i in range(len(op.inputs))
                    if i >= len(grads) or grads[i] is not None]
            if op.variadic or live != list(range(len(item.edges))):
                continue
            attrs = tuple(_saved(item.fn, a, a) for a in op.attrs)
            for e in item.edges:
                e.input_name = op.inputs[e.slot]
                if e.target is None:
                    e.const = _saved(item.fn, e.input_name)
            item.edges += [Edge(i, op.inputs[i], None, _saved(item.fn, op.inputs[i]), False)
                           for i in range(len(item.edges), len(op.inputs))]
            item.op, item.attrs = op, attrs
            break
    if table is None:
        return  # no PyTorch node in this graph
    for item in model.items:
        if item.op is None or isinstance(item.fn, Node):
            continue
        result = _saved(item.fn, "result")
        if item.tensor is None and hasattr(result, "shape"):
            item.tensor = result
        for e in item.edges:
            child = e.target
            if child is None or child.kind != "op" or child.tensor is not None or e.output_nr:
                continue
            value = _saved(item.fn, e.input_name or "")
            if hasattr(value, "shape"):
                child.tensor = value
