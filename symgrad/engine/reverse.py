"""Reverse mode: run the recorded graph backwards.

Generic and short: count dependencies, run ready nodes in PyTorch's order (highest
sequence number first), look each gradient rule up in the op table, un-broadcast,
accumulate, call hooks.  Iterative throughout, so a 100,000-op chain is fine.

Without ``create_graph`` the rules run on numpy arrays (no graph is built); with it they
run on tensors, so the backward pass is itself recorded and can be differentiated again.
The tensor class and that recording backend come from the tensor API above, handed down
through :data:`symgrad.ir.injected.INJECTED`; this module provides ``call_node`` there.

A plain ``backward()`` (every node runs, no graph recorded) takes ``_run_ordered``: the
same order without a heap, and a fast path for nodes without hooks (``Node._plain``).
``inputs=``, ``autograd.grad`` and ``create_graph`` take the general heap loop.
"""
from __future__ import annotations

import heapq
import operator
from typing import Sequence

import numpy as np

from ..ops.dtypes import from_numpy
from ..ir.backends import NUMPY
from ..ir.injected import INJECTED, inject
from ..ir.node import _META0, FREED, GRAD_MODE, AccumulateGrad, Node, _version_error

__all__ = ["run_backward", "call_node", "ANOMALY"]

_ndarray = np.ndarray

# Anomaly detection (autograd.set_detect_anomaly): [enabled, check_nan].  When on, every
# pass takes the general loop, which checks each node's gradients for NaN.
ANOMALY = [False, True]


def _wrap(g):
    """A gradient as users see it in hooks: a tensor."""
    if g is None or isinstance(g, INJECTED.Tensor):
        return g
    g = np.asarray(g)
    return INJECTED.make(g, from_numpy(g.dtype))


def _unwrap(g, create_graph):
    if create_graph or g is None:
        return g
    return g._data if isinstance(g, INJECTED.Tensor) else g


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")


def _unpack(node: Node, create_graph: bool) -> list:
    """The node's saved values, checked against in-place changes since they were saved."""
    if node._released:
        raise RuntimeError(_FREED)
    Tensor = INJECTED.Tensor
    values = []
    versions = node._versions
    for i, s in enumerate(node._saved):
        if isinstance(s, Tensor):
            if s._vc[0] != versions[i]:
                raise _version_error(node, i, s)
            if create_graph:
                values.append(s)
            else:
                d = s._data
                values.append(d[()] if not d.ndim else d)  # 0-d: cheap numpy scalars
        else:
            values.append(s)
    return values


def _input_grads(node: Node, g, create_graph: bool, needed) -> list:
    """Apply the op's gradient rules: one gradient (or None) per input that needs one."""
    custom = node._custom_backward
    if custom is not None:
        return custom(g, create_graph, needed)
    op = node.op
    m = INJECTED.recorded if create_graph else NUMPY
    values = _unpack(node, create_graph) if node._saved or node._released else ()
    grads = op.grads
    variadic = op.variadic
    meta = node._meta
    n = len(node.inputs)
    out = [None] * n
    # PyTorch's generated nodes compute their inputs' gradients from the last to the first,
    # then un-broadcast and cast them in order (validate_outputs): recorded gradients get
    # their sequence numbers, and so their order in later passes, the same way.
    for i in range(n - 1, -1, -1) if create_graph and not variadic else range(n):
        x = node.inputs[i]
        if not isinstance(x, Node) or (needed is not None and not needed(x)):
            continue
        rule = grads[0] if variadic else grads[i]
        if rule is not None:
            out[i] = rule(m, g, *values, i) if variadic else rule(m, g, *values)
    for i, gi in enumerate(out):
        if gi is not None:
            shape, dt = meta[i]
            if gi.shape != shape:
                gi = m.sum_to(gi, shape)
            if create_graph:
                if gi.dtype is not dt:
                    gi = gi.to(dt)
            elif gi.dtype is not dt.np and gi.dtype != dt.np:
                gi = np.asarray(gi).astype(dt.np)
            out[i] = gi
    return out


def call_node(node: Node, grads: tuple):
    """Calling a ``grad_fn`` by hand: its gradient rule, or accumulation for a leaf."""
    # As in PyTorch the rule runs under the caller's grad mode, so its results record a
    # graph whenever a gradient or a saved value requires grad (``grad * other`` for mul).
    create = GRAD_MODE.enabled
    Tensor = INJECTED.Tensor
    if len(grads) != node._n_outputs:
        raise TypeError(f"expected {node._n_outputs} arguments, got {len(grads)} instead")
    for i, x in enumerate(grads):
        if x is not None and not isinstance(x, Tensor):
            raise TypeError(f"argument {i} is not a Variable")
    if isinstance(node, AccumulateGrad):
        if grads[0] is not None:  # an undefined gradient accumulates nothing
            _accumulate(node.variable, _unwrap(grads[0], create), create)
        return ()
    if node._n_outputs != 1:
        g = [_unwrap(x, create) for x in grads]
    else:
        g = _unwrap(grads[0], create)
    if g is None or (node._n_outputs != 1 and all(x is None for x in g)):
        out = [None] * len(node.inputs)  # undefined gradients in, undefined out
    else:
        out = _input_grads(node, g, create, None)
    out = tuple(_wrap(x) for x in out)
    return out[0] if len(out) == 1 else out


def _accumulate(var, g, create_graph: bool, owned: bool = False) -> None:
    Tensor, make = INJECTED.Tensor, INJECTED.make
    if create_graph:
        # Grad mode is on (create_graph=True, or a node called by hand): like PyTorch's
        # AccumulateGrad, copy the first gradient into a new tensor (a CopyBackwards node
        # when it requires grad) and add later ones out of place.
        g = g if isinstance(g, Tensor) else _wrap(g)
        if var._grad is None:
            var._grad = make(np.empty(g.shape, var.dtype.np), var.dtype).copy_(g)
        else:
            var._grad = var._grad + g
        return
    if isinstance(g, Tensor):
        g = g._data
    if var._grad is None:
        # A sum made by this pass can become .grad as it is; anything else may be shared.
        if not (owned and g.dtype == var.dtype.np):
            g = np.array(g, dtype=var.dtype.np)
        var._grad = make(g, var.dtype)
    else:
        # In place, as PyTorch does with grad mode off: .grad keeps its identity and its
        # grad_fn, if a create_graph pass gave it one.
        target = var._grad
        if target._data.__class__ is not _ndarray:
            target._data = np.array(target._data)  # a 0-d result held as a numpy scalar
        np.add(target._data, g, out=target._data, casting="unsafe")
        target._vc[0] += 1


def _retain_grad(var, g, create_graph: bool) -> None:
    """retain_grad's hook, as PyTorch's: the first gradient is cloned, later ones are
    added out of place (a new .grad each time, unlike a leaf's, which grows in place)."""
    Tensor, make = INJECTED.Tensor, INJECTED.make
    if create_graph:
        g = _wrap(g)
        var._grad = g.clone() if var._grad is None else var._grad + g
        return
    if isinstance(g, Tensor):
        g = g._data
    old = var._grad
    if old is None:
        var._grad = make(np.array(g, dtype=var.dtype.np), var.dtype)
    else:
        var._grad = make(np.asarray(old._data + g).astype(old.dtype.np, copy=False),
                         old.dtype)


def _hook_name(h) -> str:
    return getattr(h, "__name__", type(h).__name__)


def _call_hooks(hooks, g, create_graph):
    """Tensor hooks: ``hook(grad)``; a returned tensor replaces the gradient."""
    for h in list(hooks):
        old = _wrap(g)
        r = h(old)
        if r is not None:
            _check_replacement(old, r)
            if old is not None:
                if r.shape != old.shape:
                    raise RuntimeError(f"hook '{_hook_name(h)}' has changed the size of "
                                       "value")
                if r.dtype is not old.dtype:
                    names = INJECTED.legacy_names
                    raise RuntimeError(
                        f"hook '{_hook_name(h)}' has changed the type of value (was "
                        f"torch.{names[old.dtype.name]} got torch.{names[r.dtype.name]})")
            g = _unwrap(r, create_graph)
    return g


def _check_replacement(old, new) -> None:
    if new is not None and not isinstance(new, INJECTED.Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if old is None and new is not None:
        raise RuntimeError("can't replace a None gradient with a non-None value")


def _hook_result(h, r, expected: int) -> tuple:
    if not isinstance(r, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    if len(r) != expected:
        raise RuntimeError(f"hook '{_hook_name(h)}' has returned an incorrect number of "
                           f"values (got {len(r)}, but expected {expected})")
    return r


def _call_pre_hooks(node: Node, g, create_graph):
    """Node pre-hooks: ``hook(grad_outputs)``; a returned tuple replaces them."""
    multi = node._n_outputs != 1
    gs = list(g) if multi else [g]
    for h in list(node._pre_hooks):
        r = h(tuple(_wrap(x) for x in gs))
        if r is not None:
            r = _hook_result(h, r, len(gs))
            for old, new in zip(gs, r):
                _check_replacement(old, new)
            gs = [_unwrap(x, create_graph) for x in r]
    return gs if multi else gs[0]


def _call_post_hooks(node: Node, grads, g, create_graph):
    """Node hooks: ``hook(grad_inputs, grad_outputs)``; a returned tuple replaces inputs."""
    for h in list(node._hooks):
        outs = g if node._n_outputs != 1 else (g,)
        r = h(tuple(_wrap(x) for x in grads), tuple(_wrap(x) for x in outs))
        if r is not None:
            r = _hook_result(h, r, len(grads))
            for old, new in zip(grads, r):
                _check_replacement(old, new)
            grads = [_unwrap(x, create_graph) for x in r]
    return grads


def run_backward(roots: Sequence, root_grads: Sequence, retain_graph: bool,
                 create_graph: bool, inputs: Sequence | None = None,
                 accumulate: bool = True, allow_unused: bool = True) -> list | None:
    """Backpropagate ``root_grads`` from ``roots`` through the recorded graph.

    With ``accumulate`` the leaves' ``.grad`` grow (``backward``); otherwise the
    gradients of ``inputs`` are returned (``autograd.grad``).  ``inputs`` restricts the
    work to what reaches them (``backward(inputs=...)`` accumulates into them only).
    """
    root_nodes = []
    buffers: dict = {}
    for t, g in zip(roots, root_grads):
        node = t.grad_fn if t.grad_fn is not None else t._accumulator()
        root_nodes.append(node)
        if node._n_outputs != 1:
            _add_to_output(buffers, node, t._output_nr, g)
        else:
            buffers[node] = g if node not in buffers else buffers[node] + g
    if inputs is None and not create_graph and not ANOMALY[0]:
        (_run_ordered_compiled or _run_ordered)(root_nodes, buffers, retain_graph)
        return None

    # Dependency counts over everything reachable from the roots.
    deps: dict = {}
    seen = set(root_nodes)
    stack = list(seen)
    parents: dict | None = {} if inputs is not None else None
    while stack:
        n = stack.pop()
        for x in n.inputs:
            if isinstance(x, Node):
                if x in deps:
                    deps[x] += 1
                else:
                    deps[x] = 1
                if parents is not None:
                    parents.setdefault(x, []).append(n)
                if x not in seen:
                    seen.add(x)
                    stack.append(x)

    captures = None
    lone_root = None
    target_nrs: dict = {}  # input k -> output number, for outputs k > 0 of custom Functions
    needed = None  # the nodes whose incoming gradient is wanted
    runs = None  # the nodes that run their rule and hooks (PyTorch's ``needed_``)
    if inputs is not None:
        targets: dict = {}
        for k, t in enumerate(inputs):
            node = t.grad_fn if t.grad_fn is not None else t._accumulator()
            targets.setdefault(node, []).append(k)
            if t._output_nr:
                target_nrs[k] = t._output_nr
        runs = _needed(parents, targets)
        if accumulate:
            runs.update(targets)
        else:
            captures = targets
        if len(root_nodes) == 1:
            # A single root is PyTorch's graph root: it is queued even when no input is
            # reached through it, and then runs its tensor hooks only.
            lone_root = root_nodes[0]
        needed = runs | targets.keys()
    results: list = [None] * (len(inputs) if inputs is not None else 0)

    ready: list = []
    for n in seen:
        if n not in deps:
            heapq.heappush(ready, (-n._seq, id(n), n))
    owned: set = set()  # ids of gradient sums this pass allocated
    prev_mode = GRAD_MODE.enabled
    GRAD_MODE.enabled = create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            g = buffers.pop(node, None)
            g_owned = id(g) in owned
            if g_owned:
                owned.discard(id(g))  # ids are reused once an array dies
            if isinstance(node, AccumulateGrad):
                # As PyTorch: tensor hooks, (autograd.grad: capture and stop), node
                # pre-hooks, accumulation, post-accumulate hooks, node hooks.  A node
                # reached only by undefined (None) gradients still runs its hooks.
                if needed is not None and node not in needed:
                    if node is lone_root and node._tensor_pre_hooks:
                        _call_hooks(node._tensor_pre_hooks, g, create_graph)
                    continue
                if node._tensor_pre_hooks:
                    g = _call_hooks(node._tensor_pre_hooks, g, create_graph)
                    g_owned = False  # a hook may keep the gradient it was given
                if captures is not None and node in captures:
                    for k in captures[node]:
                        results[k] = g
                    continue
                _accumulate_leaf(node, g, g_owned, create_graph)
                continue
            if needed is not None and node not in needed:
                if node is lone_root:
                    _root_tensor_hooks(node, g, create_graph)
                for x in node.inputs:
                    if isinstance(x, Node):
                        deps[x] -= 1
                        if deps[x] == 0:
                            heapq.heappush(ready, (-x._seq, id(x), x))
                continue
            captured = captures is not None and node in captures
            multi = node._n_outputs != 1
            if multi and g is None:
                g = [None] * node._n_outputs
            if captured and node in runs:
                # PyTorch captures the gradient of a node that must also run before its
                # tensor hooks; one that need not run, after them (and then stops there).
                _capture(results, captures[node], g, multi, target_nrs)
            g = _tensor_hooks(node, g, create_graph)
            if captured and node not in runs:
                _capture(results, captures[node], g, multi, target_nrs)
                for x in node.inputs:
                    if isinstance(x, Node):
                        deps[x] -= 1
                        if deps[x] == 0:
                            heapq.heappush(ready, (-x._seq, id(x), x))
                continue
            if node._pre_hooks:
                g = _call_pre_hooks(node, g, create_graph)
            if g is None and node._custom_backward is None:
                # An op's rule is skipped for an undefined gradient; a custom Function's
                # backward still runs (on zeros, or None), as in PyTorch.
                grads = [None] * len(node.inputs)
            else:
                grads = _input_grads(node, g, create_graph,
                                     None if needed is None else needed.__contains__)
            if node._hooks:
                grads = _call_post_hooks(node, grads, g, create_graph)
            if ANOMALY[0] and ANOMALY[1]:
                _check_nan(node, grads)
            if not retain_graph and node._saved and not node._released:
                _release(node)
            if node._input_nrs is not None:
                _propagate_by_output(node, grads, buffers, deps, ready)
                continue
            for x, gi in zip(node.inputs, grads):
                if not isinstance(x, Node):
                    continue
                if gi is not None:
                    _add_grad(buffers, owned, x, gi, not create_graph)
                left = deps[x] - 1
                deps[x] = left
                if left == 0:
                    heapq.heappush(ready, (-x._seq, id(x), x))
    finally:
        GRAD_MODE.enabled = prev_mode
    if inputs is None:
        return None
    return results


def _check_nan(node: Node, grads) -> None:
    for i, gi in enumerate(grads):
        if gi is not None:
            d = gi._data if isinstance(gi, INJECTED.Tensor) else gi
            if np.isnan(d).any():
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                   f"{i}th output.")


def _root_tensor_hooks(node: Node, g, create_graph: bool) -> None:
    """Tensor hooks and retain_grad of a root that leads to no input (PyTorch runs them)."""
    if node._n_outputs != 1:
        node._output_tensor_hooks([None] * node._n_outputs if g is None else g, create_graph)
        return
    if node._tensor_pre_hooks:
        g = _call_hooks(node._tensor_pre_hooks, g, create_graph)
    if node._retain is not None:
        t = node._retain()
        if t is not None and g is not None:
            _retain_grad(t, g, create_graph)


def _run_ordered(root_nodes: list, buffers: dict, retain_graph: bool) -> None:
    """``run_backward`` when every node runs and no graph is recorded (``backward()``).

    Every edge goes from a node to older ones (higher sequence numbers to lower), and
    AccumulateGrad nodes have the highest priority.  So the order of PyTorch's ready
    queue (the highest sequence number first) is simply all the nodes by decreasing
    sequence number, each AccumulateGrad run as soon as its last consumer has run (in
    the heap's order when several are ready at once): a sort instead of a heap, and
    dependencies counted for the AccumulateGrad nodes only.
    """
    deps: dict = {}
    deps_get = deps.get
    seen = set(root_nodes)
    stack = list(seen)
    order = []
    while stack:
        n = stack.pop()
        order.append(n)
        for x in n.inputs:
            if isinstance(x, Node):
                d = deps_get(x)
                if d is None:
                    deps[x] = 1
                    if x not in seen:  # met for the first time (roots are on the stack)
                        stack.append(x)
                else:
                    deps[x] = d + 1
    order.sort(key=_SEQ, reverse=True)
    first = 0  # the AccumulateGrad nodes (sequence number inf) come first: not in order
    while first < len(order) and order[first].__class__ is AccumulateGrad:
        first += 1
    ready_roots = [n for n in order[:first] if n not in deps]
    del order[:first]
    owned: set = set()  # ids of gradient sums this pass allocated
    prev_mode = GRAD_MODE.enabled
    GRAD_MODE.enabled = False
    buffers_pop, buffers_get = buffers.pop, buffers.get
    meta0 = _SCALAR_META.get
    try:
        if ready_roots:
            _run_accumulators(ready_roots, buffers, owned)
        for node in order:
            g = buffers_pop(node, None)
            if owned and id(g) in owned:
                owned.discard(id(g))  # ids are reused once an array dies
            accs = None  # the AccumulateGrad nodes this node makes ready
            if node._plain and g is not None:
                saved = node._saved
                if saved:
                    if node._released:
                        raise RuntimeError(_FREED)
                    values = []
                    tensors_only = True
                    for s, v in zip(saved, node._versions):
                        if v is None:  # not a tensor
                            values.append(s)
                            tensors_only = False
                        elif s._vc[0] != v:
                            raise _version_error(node, len(values), s)
                        else:
                            d = s._data
                            values.append(d[()] if d.__class__ is _ndarray and not d.ndim
                                          else d)
                else:
                    values = ()
                rules = node.op.grads
                meta = node._meta
                for i, x in enumerate(node.inputs):
                    if not isinstance(x, Node):
                        continue
                    rule = rules[i]
                    if rule is not None:
                        gi = rule(NUMPY, g, *values)
                        if gi is not None:
                            mi = meta[i]
                            if mi is not meta0(gi.__class__):  # not a 0-d gradient as is
                                gi = _conform(gi, mi)
                            # _add_grad, inlined on the hottest loop
                            b = buffers_get(x)
                            if b is None:
                                buffers[x] = gi
                            elif owned and id(b) in owned and b.shape == gi.shape:
                                b += gi  # a sum this pass made: nobody else holds it
                            else:
                                b = buffers[x] = b + gi
                                if b.__class__ is _ndarray:
                                    owned.add(id(b))
                    if x.__class__ is AccumulateGrad:
                        left = deps[x] - 1
                        deps[x] = left
                        if not left:
                            if accs is None:
                                accs = [x]
                            else:
                                accs.append(x)
                if saved and not retain_graph:
                    if tensors_only and len(saved) < len(_ALL_FREED):
                        node._saved = _ALL_FREED[len(saved)]  # what _release makes of it
                        node._released = True
                    else:
                        _release(node)
            else:
                accs = _run_other(node, g, buffers, owned, deps, retain_graph)
            if accs is not None:
                _run_accumulators(accs, buffers, owned)
    finally:
        GRAD_MODE.enabled = prev_mode


def _conform(gi, meta: tuple):
    """A gradient un-broadcast to its input's shape and converted to its dtype."""
    shape, dt = meta
    if gi.shape != shape:
        gi = NUMPY.sum_to(gi, shape)
    if gi.dtype is not dt.np and gi.dtype != dt.np:
        gi = np.asarray(gi).astype(dt.np)
    return gi


def _run_other(node: Node, g, buffers: dict, owned: set, deps: dict,
               retain_graph: bool) -> list | None:
    """``_run_ordered`` for a node off its fast path (hooks, no gradient, several
    outputs, a custom backward): returns the AccumulateGrad nodes it makes ready."""
    grads = _node_grads(node, g)
    if not retain_graph and node._saved and not node._released:
        _release(node)
    nrs = node._input_nrs
    accs = None
    for i, x in enumerate(node.inputs):
        if not isinstance(x, Node):
            continue
        gi = grads[i] if i < len(grads) else None
        if gi is not None:
            if nrs is None:
                _add_grad(buffers, owned, x, gi, True)
            elif x._n_outputs != 1:
                _add_to_output(buffers, x, nrs[i], gi)
            else:  # never in place: the buffer may be shared
                b = buffers.get(x)
                buffers[x] = gi if b is None else b + gi
        if x.__class__ is AccumulateGrad:
            left = deps[x] - 1
            deps[x] = left
            if not left:
                if accs is None:
                    accs = [x]
                else:
                    accs.append(x)
    return accs


# numpy scalar type -> the shared metadata of a 0-d input of that dtype.
_SCALAR_META = {d.np.type: m for d, m in _META0.items()}
_SEQ = operator.attrgetter("_seq")
_run_ordered_compiled = None  # symgrad/_speedups.c's version, set by api.compiled


def _tensor_hooks(node: Node, g, create_graph: bool):
    """The gradient of a node's output(s) after the tensors' hooks, retained if asked."""
    if node._n_outputs != 1:
        return node._output_tensor_hooks(g, create_graph)
    if node._tensor_pre_hooks:
        g = _call_hooks(node._tensor_pre_hooks, g, create_graph)
    if node._retain is not None:
        t = node._retain()
        if t is not None and g is not None:
            _retain_grad(t, g, create_graph)
    return g


def _node_grads(node: Node, g) -> list:
    """A node's input gradients with its hooks, as the heap loop of ``run_backward``
    computes them (no captures, no graph recorded)."""
    multi = node._n_outputs != 1
    if multi and g is None:
        g = [None] * node._n_outputs
    g = _tensor_hooks(node, g, False)
    if node._pre_hooks:
        g = _call_pre_hooks(node, g, False)
    if g is None and node._custom_backward is None:
        grads = [None] * len(node.inputs)
    else:
        grads = _input_grads(node, g, False, None)
    if node._hooks:
        grads = _call_post_hooks(node, grads, g, False)
    return grads


def _run_accumulators(nodes: list, buffers: dict, owned: set) -> None:
    """Run AccumulateGrad nodes that became ready together, in the heap's order."""
    if len(nodes) > 1:
        nodes.sort(key=id)
    for node in nodes:
        g = buffers.pop(node, None)
        g_owned = id(g) in owned
        if g_owned:
            owned.discard(id(g))
        # As PyTorch: tensor hooks, node pre-hooks, accumulation, post-accumulate hooks,
        # node hooks (as the heap loop of run_backward).
        if node._tensor_pre_hooks:
            g = _call_hooks(node._tensor_pre_hooks, g, False)
            g_owned = False  # a hook may keep the gradient it was given
        _accumulate_leaf(node, g, g_owned, False)


def _accumulate_leaf(node: AccumulateGrad, g, g_owned: bool, create_graph: bool) -> None:
    """An AccumulateGrad node after its tensor hooks: node pre-hooks, accumulation,
    post-accumulate hooks, node hooks (PyTorch's order)."""
    if node._pre_hooks:
        g = _call_pre_hooks(node, g, create_graph)
        g_owned = False  # a hook may keep the gradient it was given
    if g is not None:
        _accumulate(node.variable, g, create_graph, g_owned)
        post = node.variable._post_accumulate_hooks
        if post:
            for h in list(post):
                r = h(node.variable)
                if r is not None:
                    raise TypeError("expected Variable, but hook returned "
                                    f"'{type(r).__name__}'")
    if node._hooks:
        _call_post_hooks(node, (), g, create_graph)


def _capture(results: list, ks: list, g, multi: bool, nrs: dict) -> None:
    for k in ks:
        results[k] = g[nrs.get(k, 0)] if multi else g


def _add_to_output(buffers: dict, node: Node, nr: int, g) -> None:
    """Add ``g`` to the gradient of output ``nr`` of a multi-output node."""
    b = buffers.get(node)
    if b is None:
        b = buffers[node] = [None] * node._n_outputs
    b[nr] = g if b[nr] is None else b[nr] + g


def _propagate_by_output(node: Node, grads, buffers: dict, deps: dict, ready: list) -> None:
    """Hand ``grads`` to the inputs of ``node``, some of which are multi-output nodes."""
    for x, gi, nr in zip(node.inputs, grads, node._input_nrs):
        if not isinstance(x, Node):
            continue
        if gi is not None:
            if x._n_outputs != 1:
                _add_to_output(buffers, x, nr, gi)
            else:
                b = buffers.get(x)
                buffers[x] = gi if b is None else b + gi  # never in place: b may be shared
        left = deps[x] - 1
        deps[x] = left
        if left == 0:
            heapq.heappush(ready, (-x._seq, id(x), x))


def _add_grad(buffers: dict, owned: set, x: Node, gi, track: bool) -> None:
    """Add ``gi`` to the gradient waiting for ``x``: in place into a sum this pass made
    (nobody else holds it), otherwise into a new array that ``track`` marks as such."""
    b = buffers.get(x)
    if b is None:
        buffers[x] = gi
    elif id(b) in owned and b.shape == gi.shape:
        b += gi
    else:
        b = buffers[x] = b + gi
        if track and b.__class__ is _ndarray:
            owned.add(id(b))


def _release(node: Node) -> None:
    """Free the node's saved tensors, as PyTorch does: saved numbers and sizes stay, so a
    node that saved no tensor can run again (``(x + 1).sum()`` backpropagates twice)."""
    Tensor = INJECTED.Tensor
    saved = node._saved
    plan = node.op.plan if node.op is not None else None
    if plan is not None and len(plan) != len(saved):
        plan = None
    kept = None
    for k, s in enumerate(saved):
        # A number operand (x * 2) is saved as a wrapped 0-d tensor in PyTorch: freed too.
        if isinstance(s, Tensor) or (plan is not None and plan[k][0] == "input"
                                     and s.__class__ in _NUMBERS):
            if kept is None:
                kept = list(saved)
            kept[k] = FREED
    if kept is not None:
        node._saved = tuple(kept)
        node._released = True
    inner = node._inner
    if inner is not None and inner._saved and not inner._released:
        _release(inner)


_NUMBERS = (int, float, bool)
_ALL_FREED = tuple((FREED,) * n for n in range(6))


def _needed(parents: dict, captures: dict) -> set:
    """Nodes from which some captured node can be reached through at least one edge."""
    needed: set = set()
    stack = list(captures)
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed


inject(call_node=call_node)  # what Node.__call__ runs (the IR may not import the engine)
