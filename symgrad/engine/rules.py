"""One node of a backward pass: its saved values, its gradient rules, its hooks.

A node's input gradients come from the op table's rules (or a custom backward), run on
the pass's backend ``m``: :data:`~symgrad.ir.backends.NUMPY` (arrays, nothing recorded) or
the recorded-tensor backend under ``create_graph`` (``INJECTED.recorded``).  Saved
values are checked against in-place changes before a rule sees them and freed after the
node has run, unless the graph is retained.  :func:`call_node` (a ``grad_fn`` called by
hand) is handed to the IR from here.
"""
from __future__ import annotations

import numpy as np

from ..ir.backends import NUMPY
from ..ir.cores import NodeCore, TensorCore
from ..ir.injected import INJECTED, inject
from ..ir.node import _META0, FREED, GRAD_MODE, AccumulateGrad, Node, Packed, _version_error
from ..ops.record import pack_order
from ..ops.tables import EVERY_OUTPUT
from .hooks import call_post_hooks, call_pre_hooks, tensor_hooks, wrap
from .recycle import LEND_BYTES, POOL, give, lend, plain

__all__ = ["FREED_MESSAGE", "input_grads", "node_grads", "release", "call_node",
           "check_nan", "SCALAR_META"]

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


def input_grads(node: Node, g, m, needed) -> list:
    """Apply the op's gradient rules: one gradient (or None) per input that needs one
    (``needed(input)``, or every input when ``needed`` is None)."""
    nd = node
    op = nd._op  # (set where apply made the node: an op's node, one output, no custom rule)
    if op is None:
        custom = node._custom_backward
        if custom is not None:
            return custom(g, m, needed)
        if node._n_outputs != 1 and isinstance(g, list) and node.op not in EVERY_OUTPUT:
            # An op with several outputs, run by the engine (one gradient per output): the
            # rules differentiate the last (the others have no gradient: a gradient
            # reaching only them reaches no input).  Callers outside the engine pass that
            # one.
            g = g[-1]
            if g is None:
                return [None] * len(node.inputs)
        op = node.op
    if nd._released:
        raise RuntimeError(FREED_MESSAGE)
    saved = nd._saved
    values = _saved_values(node, saved, m) if saved else ()
    lending = False
    if POOL and m.sums_in_place:
        # Dead arrays of the pass wait in the pool: large values are lent to the rules,
        # whose elementwise results then fill those arrays (symgrad.engine.recycle).
        lending = True
        g = lend(g)
        values = [lend(v) for v in values]
    rules = op.grads
    inputs = nd.inputs
    n = len(inputs)
    out = [None] * n
    if op.variadic:
        rule = rules[0]
        for i, x in enumerate(inputs if rule is not None else ()):
            if isinstance(x, NodeCore) and (needed is None or needed(x)):
                out[i] = rule(m, g, *values, i)
    else:
        # PyTorch's generated nodes compute their inputs' gradients from the last to the
        # first, then un-broadcast and cast them in order (validate_outputs): recorded
        # gradients get their sequence numbers, and so their order in later passes, the
        # same way.
        backwards = n > 1 and m.records
        nv = len(values)
        for k in range(n):
            i = n - 1 - k if backwards else k
            x = inputs[i]
            if isinstance(x, NodeCore) and (needed is None or needed(x)):
                rule = rules[i]
                if rule is None:
                    continue
                # (one, two values: called without building an argument tuple)
                if nv == 1:
                    out[i] = rule(m, g, values[0])
                elif nv == 2:
                    out[i] = rule(m, g, values[0], values[1])
                else:
                    out[i] = rule(m, g, *values)
    meta = nd._meta
    scalar_meta = SCALAR_META
    for i in range(n):
        gi = out[i]
        if gi is not None:
            if lending:
                gi = out[i] = plain(gi)
            mi = meta[i]
            if mi is not scalar_meta.get(type(gi)):  # not a 0-d gradient as it is
                out[i] = m.conform(gi, mi)
    return out


def _saved_values(node: Node, saved: tuple, m) -> list:
    """The saved values as the rules see them, each tensor checked against in-place
    changes since it was saved."""
    saved_value = m.saved
    nd = node
    if not nd._plain and Packed in map(type, saved):
        # saved_tensors_hooks (a node with packed values is never plain): unpacked in the
        # order they were packed, as PyTorch does
        saved = list(saved)
        for k in pack_order(node.op):
            if type(saved[k]) is Packed:
                saved[k] = saved_value(saved[k].get())
    values = []
    versions = nd._versions
    for i in range(min(len(saved), len(versions))):
        s = saved[i]
        v = versions[i]
        if v is None:  # not a tensor (or a tensor unpacked above)
            values.append(s)
        else:
            t = s
            if t._vc[0] != v:
                raise _version_error(node, i, s)
            values.append(saved_value(s))
    return values


def node_grads(node: Node, g, m, needed) -> list:
    """A node's input gradients with its hooks, in PyTorch's order: the tensors' hooks
    (and retain_grad), node pre-hooks, the rules, node hooks."""
    if node._n_outputs != 1 and g is None:
        g = [None] * node._n_outputs
    g = tensor_hooks(node, g, m)
    if node._pre_hooks:
        g = call_pre_hooks(node, g, m)
    if g is None and node._custom_backward is None:
        # An op's rule is skipped for an undefined gradient; a custom Function's backward
        # still runs (on zeros, or None), as in PyTorch.
        grads = [None] * len(node.inputs)
    else:
        grads = input_grads(node, g, m, needed)
    if node._hooks:
        grads = call_post_hooks(node, grads, g, m)
    return grads


def check_nan(node: Node, grads) -> None:
    """Anomaly mode: a node whose rules returned NaN is named."""
    for i, gi in enumerate(grads):
        if gi is not None:
            d = gi._data if isinstance(gi, INJECTED.Tensor) else gi
            if np.isnan(d).any():
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                   f"{i}th output.")


def release(node: Node) -> None:
    """Free the node's saved tensors, as PyTorch does: saved numbers and sizes stay, so a
    node that saved no tensor can run again (``(x + 1).sum()`` backpropagates twice)."""
    nd = node
    saved = nd._saved
    op = nd._op
    if op is None:
        op = node.op
    plan = op.plan if op is not None else None
    if plan is not None and len(plan) != len(saved):
        plan = None
    kept = None
    dead = None
    k = 0
    for s in saved:
        # A number operand (x * 2) is saved as a wrapped 0-d tensor in PyTorch: freed too.
        if isinstance(s, TensorCore) or type(s) is Packed or (
                plan is not None and plan[k][0] == "input" and type(s) in _NUMBERS):
            if kept is None:
                kept = list(saved)
            kept[k] = FREED
            if isinstance(s, TensorCore):
                t = s
                d = t._data
                if type(d) is _ndarray and d.nbytes >= LEND_BYTES and POOL.depth:
                    dead = dead or []
                    dead.append(d)  # (pooled below if the tensor dies with the node)
                d = None
        k += 1
    s = None
    t = None
    if kept is not None:
        saved = None
        nd._saved = tuple(kept)
        nd._released = True
        if dead is not None:
            while dead:
                give([dead.pop()])
    inner = nd._inner
    if inner is not None and inner._saved and not inner._released:
        release(inner)


_NUMBERS = (int, float, bool)
_ndarray = np.ndarray
# numpy scalar type -> the shared metadata of a 0-d input of that dtype: such a gradient
# for such an input needs no conforming.
SCALAR_META = {d.np.type: meta for d, meta in _META0.items()}


def call_node(node: Node, grads: tuple):
    """Calling a ``grad_fn`` by hand: its gradient rule, or accumulation for a leaf."""
    # As in PyTorch the rule runs under the caller's grad mode, so its results record a
    # graph whenever a gradient or a saved value requires grad (``grad * other`` for mul).
    m = INJECTED.recorded if GRAD_MODE.enabled else NUMPY
    Tensor = INJECTED.Tensor
    if len(grads) != node._n_outputs:
        raise TypeError(f"expected {node._n_outputs} arguments, got {len(grads)} instead")
    for i, x in enumerate(grads):
        if x is not None and not isinstance(x, Tensor):
            raise TypeError(f"argument {i} is not a Variable")
    if isinstance(node, AccumulateGrad):
        if grads[0] is not None:  # an undefined gradient accumulates nothing
            m.accumulate(node.variable, m.unwrap(grads[0]))
        return ()
    if node._n_outputs != 1:
        g = [m.unwrap(x) for x in grads]
    else:
        g = m.unwrap(grads[0])
    if g is None or (node._n_outputs != 1 and all(x is None for x in g)):
        out = [None] * len(node.inputs)  # undefined gradients in, undefined out
    else:
        out = input_grads(node, g, m, None)
    out = tuple(wrap(x) for x in out)
    return out[0] if len(out) == 1 else out


inject(call_node=call_node)  # what Node.__call__ runs (the IR may not import the engine)
