"""A backward pass run for a drawing, leaving the user's tensors as they were.

Edge gradients (``draw(..., show_edge_grads=True)``) and the frames of ``draw_steps`` are
what a backward pass sends along each edge, seen through hooks.  The pass never runs on
the user's graph if it can be avoided: a symgrad graph is *replayed* -- its forward run
again from copies of the leaves through the same op records (the public IR: ``op``,
``inputs``, ``attrs``), in the order the nodes were made, so the engine runs the copy in
the same order -- and the copy is differentiated.  Nothing of the user's changes: no
``.grad`` accumulates, no saved value is freed, no user hook runs, and a graph that
``backward()`` has already freed can still be drawn.

Where a graph cannot be replayed (PyTorch's graphs, custom ``autograd.Function`` nodes,
in-place writes into slices, nodes with several outputs, leaves changed since the
forward), the pass runs on the user's graph with ``autograd.grad`` and
``retain_graph=True`` (leaves' ``.grad`` untouched; retained gradients of non-leaf
tensors put back), which needs the values the graph saved.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.drawing.model import GraphModel
>>> x = torch.tensor(3.0, requires_grad=True)
>>> f = x * x
>>> f.backward()
>>> model = GraphModel([f], {"x": x})
>>> [(kind, key) for kind, key, _, _ in backward_events(model, f)]
[('node', 'n0'), ('leaf', 'n1')]
>>> x.grad
tensor(6.)
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from ..api.apply import apply
from ..api.tensor import Tensor
from ..api.tensor import tensor as new_tensor
from ..autograd import forward_ad
from ..autograd import grad as autograd_grad
from ..autograd.grad_mode import enable_grad
from ..ir.node import AccumulateGrad, Node
from ..ir.walk import topological
from .backends import RenderError
from .model import GraphModel
from .values import as_array

__all__ = ["backward_events", "edge_gradients", "tangent_values", "local_numbers"]


def backward_events(model: GraphModel, root: Any, gradient: Any = None) -> list:
    """The steps of a backward pass of ``root``, in the order the engine runs them.

    Each step is ``("node", key, gradient received, {slot: gradient sent})`` for an
    operation or ``("leaf", key, gradient, None)`` for an ``AccumulateGrad``, ``key``
    being the node's key in ``model``; gradients are numpy arrays.  The user's tensors
    and graph are left as they were.

    Raises
    ------
    RenderError
        When the graph was freed by ``backward()`` and cannot be replayed; the message
        says to call ``backward(retain_graph=True)`` first.
    """
    copy, why = _replay(model, root)
    if copy is not None:
        new_root, nodes, leaves = copy
        return _hooked(nodes, leaves, lambda: new_root.backward(gradient))
    nodes = [(it.fn, it.key) for it in model.items
             if it.kind == "op" and hasattr(it.fn, "register_hook")]
    leaves = [(it.variable, it.key) for it in model.items
              if it.kind == "accumulate" and getattr(it.variable, "requires_grad", False)]
    if not leaves:
        return []
    tensors = [t for t, _ in leaves]

    def run() -> None:
        _grad_function(root)(root, tensors, grad_outputs=gradient, retain_graph=True,
                             allow_unused=True)
    kept = _retained_grads(model)
    try:
        return _hooked(nodes, leaves, run)
    except RuntimeError as e:
        if "second time" in str(e):
            name = model.tensor_name(root) or "the output"
            how = (f"call {name}.backward(retain_graph=True) instead of {name}.backward(), "
                   f"or draw before calling backward()")
            raise RenderError(f"drawing the gradients of a backward pass needs the values "
                              f"the graph saved, which backward() freed, and {why}: {how}"
                              ) from None
        if "inplace operation" in str(e):
            raise RenderError(f"the gradients of the backward pass cannot be drawn: {why}, "
                              f"and the graph's saved values were changed in place too: "
                              f"draw before changing the tensors") from None
        raise
    finally:
        for t, g, data in kept:
            t.grad = g
            if g is not None and not np.array_equal(as_array(g), data, equal_nan=True):
                g.detach().copy_(g.new_tensor(data))


def edge_gradients(model: GraphModel, root: Any) -> dict:
    """``{(node key, slot): gradient}`` along every backward edge from ``root``, and
    ``("seed", 0)``: the gradient ``root.backward()`` starts with (ones)."""
    grads: dict = {}
    for kind, key, _, sent in backward_events(model, root):
        if kind == "node":
            for slot, g in sent.items():
                grads[(key, slot)] = g
    grads[("seed", 0)] = np.ones_like(as_array(root))
    return grads


def local_numbers(model: GraphModel, root: Any) -> dict:
    """``{(item key, slot): number}``: each scalar operation's local derivative with
    respect to each scalar input, at the graph's values -- the op's own JVP with that
    input's tangent 1 and the others 0 (:mod:`symgrad.autograd.forward_ad`), on a replay
    of the graph.  Operations on vectors or matrices are left out (their local
    derivative is a Jacobian, not a number)."""
    outputs: dict = {}
    copy, _ = _replay(model, root, outputs=outputs)
    if copy is None:
        return {}
    values = {k: t.detach() for k, t in outputs.items() if k is not None}
    out: dict = {}
    with forward_ad.dual_level():
        for item in model.items:
            fn = item.fn
            op = getattr(type(fn), "op", None) if item.kind == "op" else None
            if op is None or item.key not in values or values[item.key].numel() != 1:
                continue
            args = []
            for x in fn.inputs:
                key = _key(model, x) if isinstance(x, Node) else None
                args.append(values.get(key) if isinstance(x, Node) else x)
            for slot, a in enumerate(args):
                if not isinstance(a, Tensor) or a.numel() != 1 or not isinstance(
                        fn.inputs[slot], Node):
                    continue
                duals = list(args)
                duals[slot] = forward_ad.make_dual(a, new_tensor(1.0, dtype=a.dtype))
                try:
                    with np.errstate(all="ignore"):
                        t = forward_ad.unpack_dual(apply(op, duals, fn.attrs)).tangent
                except Exception:  # noqa: BLE001 - then that edge shows no number
                    continue
                if t is not None:
                    out[(item.key, slot)] = float(as_array(t))
    return out


def tangent_values(model: GraphModel, root: Any, direction: Mapping) -> dict:
    """Forward mode for a drawing: ``{key: tangent}`` (numpy arrays) of every leaf and
    node of ``root``'s graph, in evaluation order, for the leaves' tangents
    ``direction`` (leaf key -> value; missing leaves 0).  The graph is replayed with
    dual leaves (:mod:`symgrad.autograd.forward_ad`): each op's tangent is its own JVP;
    the user's tensors are left as they were.

    Raises
    ------
    RenderError
        When the graph cannot be replayed (a PyTorch graph, a custom Function).
    """
    outputs: dict = {}

    def dual(copy, key):
        t = np.broadcast_to(np.asarray(direction.get(key, 0.0), dtype=np.float64),
                            copy.shape)
        return forward_ad.make_dual(copy, new_tensor(t.copy(), dtype=copy.dtype))
    with forward_ad.dual_level():
        copy, why = _replay(model, root, leaf=dual, outputs=outputs)
        if copy is None:
            raise RenderError(f"forward mode cannot be drawn: {why}")
        out = {}
        for key, t in outputs.items():
            if key is None:
                continue
            tangent = forward_ad.unpack_dual(t).tangent
            out[key] = (np.zeros(np.shape(as_array(t))) if tangent is None
                        else as_array(tangent).astype(np.float64))
    return out


def _hooked(nodes: list, leaves: list, run: Callable[[], Any]) -> list:
    """Run ``run()`` with hooks on ``nodes`` and ``leaves`` (``(object, key)`` pairs)
    recording the steps; the hooks are removed afterwards, whatever happens."""
    events: list = []
    received: dict = {}
    handles = []
    try:
        for var, key in leaves:
            def leaf_hook(g, key=key) -> None:
                events.append(("leaf", key, as_array(g), None))
            handles.append(var.register_hook(leaf_hook))
        for fn, key in nodes:
            def pre(grad_outputs, key=key) -> None:
                g = grad_outputs[0] if grad_outputs else None
                received[key] = None if g is None else as_array(g)

            def post(grad_inputs, grad_outputs, key=key) -> None:
                sent = {slot: as_array(g) for slot, g in enumerate(grad_inputs)
                        if g is not None}
                events.append(("node", key, received.get(key), sent))
            handles.append(fn.register_prehook(pre))
            handles.append(fn.register_hook(post))
        run()
    finally:
        for h in handles:
            h.remove()
    return events


def _replay(model: GraphModel, root: Any, leaf: Callable | None = None,
            outputs: dict | None = None) -> tuple[tuple | None, str]:
    """A copy of ``root``'s graph made by running its forward again from copies of the
    leaves: ``((new root, [(new node, key)], [(new leaf, key)]), "")``, or ``(None, why
    not)``.  ``leaf(copy, key)`` may replace each leaf's copy (a dual tensor, for
    forward mode); ``outputs`` receives ``key -> tensor`` in evaluation order."""
    if not isinstance(root, Tensor) or not isinstance(root.grad_fn, Node):
        return None, "a PyTorch graph cannot be recomputed from its nodes"
    order = topological(root.grad_fn)
    new: dict[int, Tensor] = {}
    nodes, leaves = [], []
    with enable_grad():
        for n in order:
            if isinstance(n, AccumulateGrad):
                var = n.variable
                copy = new_tensor(as_array(var).copy(), dtype=var.dtype, requires_grad=True)
                if leaf is not None:
                    copy = leaf(copy, _key(model, n))
                new[id(n)] = copy
                leaves.append((copy, _key(model, n)))
                if outputs is not None:
                    outputs[_key(model, n)] = copy
        for n in sorted((n for n in order if not isinstance(n, AccumulateGrad)),
                        key=lambda n: n._seq):
            why = _unreplayable(n)
            if why:
                return None, why
            args = [new[id(x)] if isinstance(x, Node) else x for x in n.inputs]
            try:
                with np.errstate(all="ignore"):
                    out = apply(type(n).op, args, n.attrs)
            except Exception:  # noqa: BLE001 - then the user's own graph is used
                return None, f"{type(n).__name__} could not be run again"
            if type(out.grad_fn) is not type(n):
                return None, f"{type(n).__name__} could not be run again"
            new[id(n)] = out
            nodes.append((out.grad_fn, _key(model, n)))
            if outputs is not None:
                outputs[_key(model, n)] = out
    copy = new[id(root.grad_fn)]
    same = (copy.shape == root.shape and copy.dtype == root.dtype
            and np.array_equal(as_array(copy), as_array(root), equal_nan=True))
    if not same:
        return None, "the leaves (or constants) were changed since the forward pass"
    return (copy, [(fn, k) for fn, k in nodes if k is not None],
            [(t, k) for t, k in leaves if k is not None]), ""


def _unreplayable(n: Node) -> str:
    """Why node ``n`` cannot be run again through the op table ("" if it can)."""
    op = getattr(type(n), "op", None)
    if op is None or getattr(op, "node_class", None) is not type(n):
        return f"{type(n).__name__} (a custom autograd.Function) cannot be run again"
    if (type(n)._custom_backward is not None or n._inner is not None or op.outputs
            or n._input_nrs is not None):
        return f"{type(n).__name__} cannot be run again from its inputs"
    return ""


def _key(model: GraphModel, n: Any) -> str | None:
    item = model.by_fn.get(id(n))
    return None if item is None else item.key


def _retained_grads(model: GraphModel) -> list:
    """``(tensor, .grad, its values)`` of the non-leaf tensors whose ``.grad`` a pass
    would change (``retain_grad()``): named ones, and symgrad's retained ones."""
    out, seen = [], set()
    candidates = [it.tensor for it in model.items if it.tensor is not None]
    for it in model.items:
        ref = getattr(it.fn, "_retain", None) if isinstance(it.fn, Node) else None
        t = ref() if callable(ref) else None
        if t is not None:
            candidates.append(t)
    for t in candidates:
        if id(t) in seen or not getattr(t, "retains_grad", False):
            continue
        seen.add(id(t))
        g = t.grad
        out.append((t, g, None if g is None else as_array(g).copy()))
    return out


def _grad_function(t: Any) -> Callable:
    """``autograd.grad`` of the library ``t`` belongs to."""
    if isinstance(t, Tensor):
        return autograd_grad
    import torch  # why: only a real torch tensor gets here, so torch is installed
    return torch.autograd.grad
