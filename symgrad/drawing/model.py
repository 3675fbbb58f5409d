"""The graph a drawing shows, read through the public IR.

A :class:`GraphModel` walks the ``grad_fn`` graph behind some output tensors.  It reads
only what PyTorch users can read too -- ``next_functions``, ``variable``, ``_saved_*``
attributes -- plus, for symgrad's own nodes, the IR (``inputs``, ``attrs``) and the op
record ``type(fn).op`` (``inputs``, ``attrs``, ``grads``, ``forward``, ``saves``).  Real
PyTorch graphs go through the same walk, with ``next_functions`` alone.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(2.0, requires_grad=True)
>>> model = GraphModel([torch.sin(x) * 3], {"x": x})
>>> [item.title for item in model.items]
['MulBackward0', 'SinBackward0', 'AccumulateGrad']
>>> [(e.input_name, e.const) for e in model.items[0].edges]
[('self', None), ('other', 3)]
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np

from ..ir.node import Node
from .values import as_array

__all__ = ["GraphModel", "Item", "Edge", "FREED", "as_list"]


class Item:
    """One backward node of the drawing (a ``grad_fn`` or an ``AccumulateGrad``)."""

    __slots__ = ("key", "fn", "title", "kind", "edges", "order", "name", "value",
                 "variable", "op", "attrs", "count", "tensor", "summary", "shape")

    def __init__(self, key: str, fn: Any) -> None:
        self.key = key
        self.fn = fn
        self.title = type(fn).__name__
        self.kind = "accumulate" if self.title == "AccumulateGrad" else "op"
        self.edges: list[Edge] = []
        self.order = 0
        self.name: str | None = None
        self.value = None
        self.variable = getattr(fn, "variable", None) if self.kind == "accumulate" else None
        op = getattr(type(fn), "op", None)
        self.op = op if op is not None and hasattr(op, "inputs") else None
        self.attrs = tuple(getattr(fn, "attrs", ()) or ())
        self.count = 1          # > 1 for a collapsed chain
        self.summary: str | None = None  # what a collapsed node stands for
        self.tensor = None      # the user's tensor whose grad_fn this is, if known
        self.shape = None       # a note's tensor shape (others: their value's shape)


class Edge:
    """One operand of an op: ``slot`` is its position in the op's inputs."""

    __slots__ = ("slot", "input_name", "target", "const", "differentiable", "output_nr")

    def __init__(self, slot: int, input_name: str | None, target: Item | None, const: Any,
                 differentiable: bool) -> None:
        self.output_nr = 0  # which output of ``target`` (multi-output nodes)
        self.slot = slot
        self.input_name = input_name
        self.target = target
        self.const = const
        self.differentiable = differentiable


class _Freed:
    def __repr__(self) -> str:
        return "freed"


#: The value of a saved tensor that backward has freed.
FREED = _Freed()


def as_list(roots: Any) -> list:
    """``roots`` as a list: a tensor alone is a list of one."""
    if isinstance(roots, (list, tuple)):
        return list(roots)
    return [roots]


class GraphModel:
    """The graph reachable from some output tensors, read through the public IR.

    Parameters
    ----------
    roots : sequence of tensors
        Outputs to draw; with several, node ``order`` is the index of the first root whose
        graph contains the node (derivative order for ``[f, df, d2f]``).
    names : mapping of str to tensor, optional
        Names for tensors (leaves, intermediates, outputs).  Leaves also use ``.name``.
    """

    def __init__(self, roots: Iterable, names: Mapping[str, Any] | None = None) -> None:
        self.roots = list(roots)
        self.sizes = None  # number -> the name of a symbolic size (draw's ``sizes``)
        self.items: list[Item] = []
        self.by_fn: dict[int, Item] = {}
        self.root_items: list[Item | None] = []
        self.leaf_only: list[Any] = []
        name_of_tensor: dict[int, str] = {}
        fn_tensor: dict[int, tuple[str, Any]] = {}
        for n, t in (names or {}).items():
            name_of_tensor.setdefault(id(t), n)
            fn = getattr(t, "grad_fn", None)
            if fn is not None:
                fn_tensor.setdefault(id(fn), (n, t))
        self.name_of_tensor = name_of_tensor
        for order, t in enumerate(self.roots):
            fn = getattr(t, "grad_fn", None)
            if fn is None:
                self.root_items.append(None)
                self.leaf_only.append(t)
                continue
            self.root_items.append(self._walk(fn, order))
            if id(fn) not in fn_tensor:
                fn_tensor[id(fn)] = (name_of_tensor.get(id(t)), t)
        for item in self.items:
            if item.kind == "accumulate":
                item.name = self.tensor_name(item.variable)
            elif id(item.fn) in fn_tensor:
                item.name, item.tensor = fn_tensor[id(item.fn)]
        self._values_done = False

    @classmethod
    def of(cls, roots: Any, names: Mapping[str, Any] | None = None) -> "GraphModel":
        """``roots`` itself if it is a model already, else the model of those tensors."""
        return roots if isinstance(roots, cls) else cls(as_list(roots), names)

    # -- structure ---------------------------------------------------------------------
    def _walk(self, root_fn: Any, order: int) -> Item:
        """Breadth-first from ``root_fn`` (iterative: graphs can be deep)."""
        queue = [root_fn]
        head = 0
        if id(root_fn) not in self.by_fn:
            self._add(root_fn, order)
        while head < len(queue):
            fn = queue[head]
            head += 1
            item = self.by_fn[id(fn)]
            if item.edges:
                continue
            for edge in self._operands(fn):
                item.edges.append(edge)
                child = edge.target
                if child is None:
                    continue
                if id(child) not in self.by_fn:
                    self._add(child, order)
                    queue.append(child)
                edge.target = self.by_fn[id(child)]
        return self.by_fn[id(root_fn)]

    def _add(self, fn: Any, order: int) -> Item:
        item = Item(f"n{len(self.items)}", fn)
        item.order = order
        self.items.append(item)
        self.by_fn[id(fn)] = item
        return item

    @staticmethod
    def _operands(fn: Any) -> list:
        """``Edge`` objects whose ``target`` is still the raw child ``grad_fn``."""
        out = []
        op = getattr(type(fn), "op", None)
        inputs = fn.inputs if isinstance(fn, Node) else None
        if inputs is not None and op is not None and hasattr(op, "inputs"):
            grads = op.grads or ()
            for i, x in enumerate(inputs):
                if op.variadic:
                    # next_functions lists every input of a variadic node.
                    input_name = f"tensors[{i}]"
                    rule = True
                else:
                    input_name = op.inputs[i] if i < len(op.inputs) else f"input{i}"
                    rule = grads[i] if i < len(grads) else True
                if isinstance(x, Node):
                    out.append(Edge(i, input_name, x, None, rule is not None))
                else:
                    out.append(Edge(i, input_name, None, x, rule is not None))
            # Which output of a multi-output node each edge takes: from next_functions.
            live = [e for e in out if e.differentiable]
            pairs = tuple(getattr(fn, "next_functions", ()) or ())
            if len(pairs) == len(live):
                for e, pair in zip(live, pairs):
                    e.output_nr = int(pair[1]) if len(pair) > 1 else 0
            return out
        for i, pair in enumerate(getattr(fn, "next_functions", ()) or ()):
            child = pair[0] if pair else None
            edge = Edge(i, None, child, None, True)
            edge.output_nr = int(pair[1]) if len(pair) > 1 else 0
            out.append(edge)
        return out

    def backward_edges(self, item: Item) -> list:
        """Edges as ``next_functions`` lists them (inputs without a gradient rule skipped)."""
        return [e for e in item.edges if e.differentiable]

    # -- names and values --------------------------------------------------------------
    def tensor_name(self, t: Any) -> str | None:
        """The name given to ``t`` (``names=`` first, then the leaf's ``.name``)."""
        if t is None:
            return None
        n = self.name_of_tensor.get(id(t))
        if n is None:
            n = getattr(t, "name", None)
            if not isinstance(n, str):
                n = None
        return n

    def compute_values(self) -> None:
        """Forward values of every node, recomputed from the op table (symgrad graphs)."""
        if self._values_done:
            return
        self._values_done = True
        # Children before parents: reverse of the breadth-first order is not enough for
        # DAGs, so do an explicit post-order.
        done: set[int] = set()
        for root in self.items:
            stack = [(root, False)]
            while stack:
                item, expanded = stack.pop()
                if id(item) in done:
                    continue
                if not expanded:
                    stack.append((item, True))
                    for e in item.edges:
                        if e.target is not None and id(e.target) not in done:
                            stack.append((e.target, False))
                    continue
                done.add(id(item))
                item.value = self._value(item)

    @staticmethod
    def _value(item: Item):
        if item.tensor is not None:
            return as_array(item.tensor)
        if item.kind == "accumulate":
            return as_array(item.variable)
        op = item.op
        if op is None or op.forward is None or not isinstance(item.fn, Node):
            return None
        args = []
        for e in item.edges:
            if e.target is not None:
                if e.target.value is None:
                    return None
                args.append(e.target.value)
            else:
                args.append(as_array(e.const) if not isinstance(e.const, (int, float))
                            else e.const)
        try:
            with np.errstate(all="ignore"):
                return np.asarray(op.forward(*args, *item.attrs))
        except Exception:  # noqa: BLE001 - a value we cannot recompute is not drawn
            return None

    @staticmethod
    def saved_values(item: Item) -> list:
        """``(name, value)`` for each ``_saved_*`` attribute; value ``FREED`` once freed."""
        fn = item.fn
        if item.kind == "accumulate":
            return []
        if item.op is not None and isinstance(fn, Node):
            # (hidden "_name" saves aside; constants such as AddBackward0's alpha are
            # saved attributes in PyTorch too)
            names = [s for s in item.op.saves if s not in ("ctx", "cls") and s[:1] != "_"]
            names += [c for c in item.op.consts if c not in names]
        else:
            names = [a[len("_saved_"):] for a in dir(fn) if a.startswith("_saved_")]
        out = []
        for n in names:
            try:
                out.append((n, getattr(fn, "_saved_" + n)))
            except RuntimeError:
                out.append((n, FREED))
            except AttributeError:
                continue
        return out
