"""Reverse mode: run the recorded graph backwards, in one loop.

Generic and short: count dependencies, run ready nodes in PyTorch's order (highest
sequence number first, an AccumulateGrad as soon as it is ready), look each gradient
rule up in the op table, un-broadcast, accumulate, call hooks.  Iterative throughout, so
a 100,000-op chain is fine.

The loop takes the backend its rules run on as a parameter: numpy arrays
(:data:`~symgrad.ir.backends.NUMPY`, no graph is built) or recorded tensors
(``INJECTED.recorded``, chosen by the tensor API for ``create_graph=True``: the pass is
itself recorded and can be differentiated again).  What differs between the two is
asked of the backend, never decided here.

A plain ``backward()`` (every node runs, on numpy, no anomaly mode) runs compiled when
the C extension is built (``symgrad/_speedups.c``'s ``run_ordered``, installed by
:mod:`symgrad.api.compiled`): the same order, with this module's :func:`_run_other` and
:func:`_run_accumulators` for the nodes off its fast path.  :func:`_run_ordered` is its
Python twin, the loop below.
"""
from __future__ import annotations

import heapq
from typing import Sequence

import numpy as np

from ..ir.backends import NUMPY
from ..ir.node import AccumulateGrad, GRAD_MODE, Node
from .hooks import call_hooks, root_tensor_hooks, run_leaf, tensor_hooks
from .rules import check_nan, input_grads, node_grads, release

__all__ = ["run_backward", "ANOMALY"]

_ndarray = np.ndarray

# Anomaly detection (autograd.set_detect_anomaly): [enabled, check_nan].  When on, every
# pass takes the Python loop, which checks each node's gradients for NaN.
ANOMALY = [False, True]

_run_ordered_compiled = None  # symgrad/_speedups.c's run_ordered, set by api.compiled


def run_backward(roots: Sequence, root_grads: Sequence, retain_graph: bool, m,
                 inputs: Sequence | None = None, accumulate: bool = True,
                 allow_unused: bool = True) -> list | None:
    """Backpropagate ``root_grads`` from ``roots`` through the recorded graph, the rules
    running on the backend ``m``.

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
    if (inputs is None and m is NUMPY and not ANOMALY[0]
            and _run_ordered_compiled is not None):
        _run_ordered_compiled(root_nodes, buffers, retain_graph)
        return None
    return _run(root_nodes, buffers, retain_graph, m, inputs, accumulate)


def _run_ordered(root_nodes: list, buffers: dict, retain_graph: bool) -> None:
    """A plain ``backward()`` (every node runs, no graph recorded) from ``root_nodes``
    whose gradients wait in ``buffers``: the Python twin of the compiled ``run_ordered``."""
    _run(root_nodes, buffers, retain_graph, NUMPY, None, True)


def _run(root_nodes: list, buffers: dict, retain_graph: bool, m, inputs: Sequence | None,
         accumulate: bool) -> list | None:
    """The loop of :func:`run_backward`, from ``root_nodes`` whose gradients wait in
    ``buffers``."""
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
    wanted = None if needed is None else needed.__contains__

    # Every edge goes from a node to older ones (a higher sequence number to lower ones),
    # so this heap runs the nodes by decreasing sequence number, each AccumulateGrad
    # (number inf) as soon as its last consumer has run (by id when several are ready).
    ready = [(-n._seq, id(n), n) for n in seen if n not in deps]
    heapq.heapify(ready)
    pop, push = heapq.heappop, heapq.heappush
    owned: set = set()  # ids of gradient sums this pass allocated
    prev_mode = GRAD_MODE.enabled
    GRAD_MODE.enabled = m.records  # as PyTorch: grad mode on iff the pass is recorded
    try:
        while ready:
            node = pop(ready)[2]
            g = buffers.pop(node, None)
            g_owned = id(g) in owned
            if g_owned:
                owned.discard(id(g))  # ids are reused once an array dies
            if node.__class__ is AccumulateGrad:
                # A node reached only by undefined (None) gradients still runs its hooks.
                if needed is not None and node not in needed:
                    if node is lone_root and node._tensor_pre_hooks:
                        call_hooks(node._tensor_pre_hooks, g, m)
                elif captures is not None and node in captures:
                    # autograd.grad: the gradient after the tensor hooks, not accumulated.
                    if node._tensor_pre_hooks:
                        g = call_hooks(node._tensor_pre_hooks, g, m)
                    for k in captures[node]:
                        results[k] = g
                else:
                    run_leaf(node, g, g_owned, m)
                continue
            if needed is not None and node not in runs:
                if node not in needed:
                    if node is lone_root:
                        root_tensor_hooks(node, g, m)
                else:
                    # A captured node that need not run: its gradient after its tensor
                    # hooks, and nothing more.
                    multi = node._n_outputs != 1
                    if multi and g is None:
                        g = [None] * node._n_outputs
                    _capture(results, captures[node], tensor_hooks(node, g, m), multi,
                             target_nrs)
                for x in node.inputs:
                    if isinstance(x, Node):
                        deps[x] -= 1
                        if deps[x] == 0:
                            push(ready, (-x._seq, id(x), x))
                continue
            if captures is not None and node in captures:
                # Captured before its tensor hooks, as PyTorch does for a node that runs.
                multi = node._n_outputs != 1
                if multi and g is None:
                    g = [None] * node._n_outputs
                _capture(results, captures[node], g, multi, target_nrs)
            if node._plain and g is not None:  # no hooks, one output: the rules only
                grads = input_grads(node, g, m, wanted)
            else:
                grads = node_grads(node, g, m, wanted)
            if ANOMALY[0] and ANOMALY[1]:
                check_nan(node, grads)
            for x in _hand_on(node, grads, buffers, owned, deps, retain_graph, m):
                push(ready, (-x._seq, id(x), x))
    finally:
        GRAD_MODE.enabled = prev_mode
    if inputs is None:
        return None
    return results


def _hand_on(node: Node, grads, buffers: dict, owned: set, deps: dict, retain_graph: bool,
             m) -> list:
    """After ``node`` has run: free its saved values (unless retained), add ``grads`` to
    the gradients waiting for its inputs; returns the inputs this made ready."""
    if not retain_graph and node._saved and not node._released:
        release(node)
    made_ready = []
    nrs = node._input_nrs
    if nrs is None:
        in_place = m.sums_in_place
        for x, gi in zip(node.inputs, grads):
            if not isinstance(x, Node):
                continue
            if gi is not None:
                b = buffers.get(x)
                if b is None:
                    buffers[x] = gi
                elif id(b) in owned and b.shape == gi.shape:
                    b += gi  # a sum this pass made: nobody else holds it
                else:
                    b = buffers[x] = b + gi
                    if in_place and b.__class__ is _ndarray:
                        owned.add(id(b))
            left = deps[x] - 1
            deps[x] = left
            if not left:
                made_ready.append(x)
        return made_ready
    for x, gi, nr in zip(node.inputs, grads, nrs):  # some inputs have several outputs
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
        if not left:
            made_ready.append(x)
    return made_ready


def _run_other(node: Node, g, buffers: dict, owned: set, deps: dict,
               retain_graph: bool) -> list | None:
    """The compiled loop's node off its fast path (hooks, no gradient, several outputs, a
    custom backward): returns the AccumulateGrad nodes it makes ready (the compiled loop
    orders the other nodes itself)."""
    ready = _hand_on(node, node_grads(node, g, NUMPY, None), buffers, owned, deps,
                     retain_graph, NUMPY)
    accs = [x for x in ready if x.__class__ is AccumulateGrad]
    return accs or None


def _run_accumulators(nodes: list, buffers: dict, owned: set) -> None:
    """The compiled loop's AccumulateGrad nodes that became ready together, in the heap's
    order (by id)."""
    if len(nodes) > 1:
        nodes.sort(key=id)
    for node in nodes:
        g = buffers.pop(node, None)
        g_owned = id(g) in owned
        if g_owned:
            owned.discard(id(g))
        run_leaf(node, g, g_owned, NUMPY)


def _capture(results: list, ks: list, g, multi: bool, nrs: dict) -> None:
    for k in ks:
        results[k] = g[nrs.get(k, 0)] if multi else g


def _add_to_output(buffers: dict, node: Node, nr: int, g) -> None:
    """Add ``g`` to the gradient of output ``nr`` of a multi-output node."""
    b = buffers.get(node)
    if b is None:
        b = buffers[node] = [None] * node._n_outputs
    b[nr] = g if b[nr] is None else b[nr] + g


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
