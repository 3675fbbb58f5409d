"""Reverse mode: a plan made first, then one loop that carries it out.

Generic and short.  :func:`plan` walks the recorded graph from the roots once and decides
everything a pass needs to know before any rule runs: the order of the nodes (PyTorch's:
highest sequence number first, each AccumulateGrad as soon as its last consumer has run,
by id when several are ready together) and, for every node, its *step*: run its rules
and hooks, accumulate into a leaf, capture a gradient for ``autograd.grad(inputs=...)``,
run a lone root's tensor hooks, or nothing.  The loop (:func:`_run`) is then one body for
every node: take its gradient, do its step, hand what the step returns to its inputs.
Iterative throughout, so a 100,000-op chain is fine.

The loop takes the backend its rules run on as a parameter: numpy arrays
(:data:`~symgrad.ir.backends.NUMPY`, no graph is built) or recorded tensors
(``INJECTED.recorded``, chosen by the tensor API for ``create_graph=True``: the pass is
itself recorded and can be differentiated again).  What differs between the two is
asked of the backend, never decided here.

This module is plain Python; ``pip install`` compiles it with Cython where a C compiler
is available (see :mod:`symgrad.api.compiled`): the same source either way.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..ir.cores import NodeCore
from ..ir.node import AccumulateGrad, GRAD_MODE, Node
from . import recycle
from .hooks import call_hooks, root_tensor_hooks, run_leaf, tensor_hooks
from .recycle import LEND_BYTES, give, sole
from .rules import check_nan, input_grads, node_grads, release

__all__ = ["run_backward", "plan", "Pass", "ANOMALY"]

_ndarray = np.ndarray

# Anomaly detection (autograd.set_detect_anomaly): [enabled, check_nan].  When on, each
# node's gradients are checked for NaN.
ANOMALY = [False, True]


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
    ps = plan(root_nodes, m, inputs, accumulate)
    _run(ps, buffers, retain_graph)
    return ps.results if inputs is not None else None


class Pass:
    """A backward pass as :func:`plan` decided it.

    Attributes
    ----------
    order : list
        ``(node, step)`` for every node reachable from the roots, in the order they run.
        ``step(pass, node, g, g_owned)`` does the node's work with its incoming gradient
        ``g`` and returns its inputs' gradients (``None``: nothing to hand on).
    m : Backend
        What the rules run on.
    wanted : callable or None
        Whether a rule's input needs a gradient (``None``: every input does).
    results : list
        ``autograd.grad``'s gradients of its inputs, in order.
    captures : dict
        Captured node -> the positions in ``results`` it fills.
    output_nrs : dict
        Position in ``results`` -> output number, for outputs k > 0 of custom Functions.
    """

    __slots__ = ("order", "m", "wanted", "results", "captures", "output_nrs")

    def __init__(self, order: list, m, wanted: Callable | None, results: list,
                 captures: dict, output_nrs: dict) -> None:
        self.order = order
        self.m = m
        self.wanted = wanted
        self.results = results
        self.captures = captures
        self.output_nrs = output_nrs


def _run(ps: Pass, buffers: dict, retain_graph: bool) -> None:
    """The loop: every node of ``ps.order`` takes its gradient from ``buffers``, does its
    step, and hands the step's gradients on to its inputs.

    On numpy arrays (``m.sums_in_place``) the pass owns the arrays that nobody else
    references (:mod:`.recycle`): a gradient it alone holds is handed to a leaf's
    ``.grad`` as it is, and a large one that died with its node is pooled for reuse."""
    m = ps.m
    reuse = m.sums_in_place
    prev_mode = GRAD_MODE.enabled
    GRAD_MODE.enabled = m.records  # as PyTorch: grad mode on iff the pass is recorded
    if reuse:
        recycle.start()
    try:
        for node, step in ps.order:
            g = buffers.pop(node, None)
            g_owned = False
            if reuse and type(g) is _ndarray:
                box = [g]
                g = None
                g_owned = sole(box)  # (a gradient the pass made, and nobody else holds)
                g = box[0]
                box = None
            if step is _run_node:  # (the common step, called directly where compiled)
                grads = _run_node(ps, node, g, g_owned)
            else:
                grads = step(ps, node, g, g_owned)
            if grads is not None:
                _hand_on(node, grads, buffers, retain_graph, m)
                grads = None
            if reuse and type(g) is _ndarray and g.nbytes >= LEND_BYTES:
                box = [g]
                g = None
                give(box)  # (pooled if the node's rules were its last readers)
    finally:
        GRAD_MODE.enabled = prev_mode
        if reuse:
            recycle.stop()


# --------------------------------------------------------------------------- the steps
def _run_node(ps: Pass, node: Node, g, g_owned: bool):
    """A node's rules, with its hooks if it has any."""
    nd = node
    if nd._plain and g is not None:  # no hooks, one output: the rules only
        grads = input_grads(node, g, ps.m, ps.wanted)
    else:
        grads = node_grads(node, g, ps.m, ps.wanted)
    if ANOMALY[0] and ANOMALY[1]:
        check_nan(node, grads)
    return grads


def _accumulate(ps: Pass, node: AccumulateGrad, g, g_owned: bool) -> None:
    """A leaf's AccumulateGrad: ``.grad`` grows (with the leaf's hooks)."""
    run_leaf(node, g, g_owned, ps.m)


def _capture_and_run(ps: Pass, node: Node, g, g_owned: bool):
    """``autograd.grad``: a captured node that also leads to another input is captured
    before its tensor hooks, as PyTorch does for a node that runs, then runs."""
    _capture(ps, node, g)
    return _run_node(ps, node, g, g_owned)


def _capture_only(ps: Pass, node: Node, g, g_owned: bool) -> None:
    """``autograd.grad``: a captured node that need not run: its gradient after its
    tensor hooks, and nothing more."""
    if node._n_outputs != 1 and g is None:
        g = [None] * node._n_outputs
    _capture(ps, node, tensor_hooks(node, g, ps.m))


def _capture_leaf(ps: Pass, node: AccumulateGrad, g, g_owned: bool) -> None:
    """``autograd.grad``: a leaf's gradient after its tensor hooks, not accumulated."""
    if node._tensor_pre_hooks:
        g = call_hooks(node._tensor_pre_hooks, g, ps.m)
    _capture(ps, node, g)


def _root_hooks(ps: Pass, node: Node, g, g_owned: bool) -> None:
    """A single root that leads to no input is PyTorch's graph root all the same: its
    tensor hooks (and retain_grad) run, and nothing else."""
    if type(node) is AccumulateGrad:
        if node._tensor_pre_hooks:
            call_hooks(node._tensor_pre_hooks, g, ps.m)
    else:
        root_tensor_hooks(node, g, ps.m)


def _skip(ps: Pass, node: Node, g, g_owned: bool) -> None:
    """A node that leads to no input the pass wants."""


def _capture(ps: Pass, node: Node, g) -> None:
    multi = node._n_outputs != 1
    if multi and g is None:
        g = [None] * node._n_outputs
    nrs = ps.output_nrs
    for k in ps.captures[node]:
        ps.results[k] = g[nrs.get(k, 0)] if multi else g


# --------------------------------------------------------------------------- the plan
def plan(root_nodes: list, m, inputs: Sequence | None = None,
         accumulate: bool = True) -> Pass:
    """The pass from ``root_nodes``: which nodes run, in which order, each with its step.

    ``inputs`` (``autograd.grad``, ``backward(inputs=...)``): only the nodes through
    which one of them is reached run; with ``accumulate`` false their gradients are
    captured into ``Pass.results`` instead of accumulated.
    """
    nodes, after, parents = _walk(root_nodes, inputs is not None)
    captures: dict = {}
    output_nrs: dict = {}
    steps: dict = {}
    wanted = None
    if inputs is not None:
        targets: dict = {}
        for k, t in enumerate(inputs):
            node = t.grad_fn if t.grad_fn is not None else t._accumulator()
            targets.setdefault(node, []).append(k)
            if t._output_nr:
                output_nrs[k] = t._output_nr
        runs = _needed(parents, targets)
        if accumulate:
            runs.update(targets)
        else:
            captures = targets
        needed = runs | targets.keys()
        wanted = needed.__contains__
        lone_root = root_nodes[0] if len(root_nodes) == 1 else None
        for node in nodes + [x for xs in after.values() for x in xs]:
            steps[node] = _step_for(node, node in runs, node in captures, node in needed,
                                    node is lone_root)
    # Every edge goes from a node to older ones (a higher sequence number to lower ones):
    # by decreasing sequence number each node comes after all of its consumers.  A leaf's
    # AccumulateGrad runs as soon as its last consumer has (a root leaf at once).
    # (a chain is found in that order already: checked first, not sorted then; else
    # sorted on (sequence number, -position) pairs, no key function called per node, equal
    # numbers keeping their order as a stable sort by key does)
    last_seq = nodes[0]._seq if nodes else None
    for i in range(1, len(nodes)):
        n = nodes[i]
        if n._seq > last_seq:
            keyed = []
            for i in range(len(nodes)):
                n = nodes[i]
                keyed.append((n._seq, -i))
            keyed.sort(reverse=True)
            nodes = [nodes[-pair[1]] for pair in keyed]
            break
        last_seq = n._seq
    order = [(x, steps.get(x, _accumulate)) for x in _by_id(after.pop(None, ()))]
    for node in nodes:
        order.append((node, steps.get(node, _run_node) if steps else _run_node))
        leaves = after.get(node)
        if leaves is not None:
            for x in _by_id(leaves):
                order.append((x, steps.get(x, _accumulate)))
    results = [None] * (len(inputs) if inputs is not None else 0)
    return Pass(order, m, wanted, results, captures, output_nrs)


def _step_for(node: Node, runs: bool, captured: bool, needed: bool, lone_root: bool):
    """The step of ``node`` in a pass restricted to some inputs."""
    if type(node) is AccumulateGrad:
        if not needed:
            return _root_hooks if lone_root else _skip
        return _capture_leaf if captured else _accumulate
    if runs:
        return _capture_and_run if captured else _run_node
    if needed:
        return _capture_only
    return _root_hooks if lone_root else _skip


def _by_id(leaves) -> list:
    return sorted(leaves, key=id) if len(leaves) > 1 else list(leaves)


def _walk(root_nodes: list, with_parents: bool) -> tuple:
    """Everything reachable from the roots: the nodes other than AccumulateGrad, and each
    AccumulateGrad filed under its consumer with the lowest sequence number (under
    ``None`` for a root nobody consumes); with ``with_parents``, each node's consumers."""
    seen = set(root_nodes)
    stack = [n for n in seen if type(n) is not AccumulateGrad]
    nodes = list(stack)
    last: dict = {}  # AccumulateGrad -> its consumer with the lowest sequence number
    parents: dict | None = {} if with_parents else None
    while stack:
        n = stack.pop()
        for x in n.inputs:
            if type(x) is AccumulateGrad:
                c = last.get(x)
                if c is None or n._seq < c._seq:
                    last[x] = n
            elif isinstance(x, NodeCore):
                if x not in seen:
                    seen.add(x)
                    stack.append(x)
                    nodes.append(x)
            else:
                continue
            if parents is not None:
                parents.setdefault(x, []).append(n)
    after: dict = {}
    for x, c in last.items():
        after.setdefault(c, []).append(x)
    loose = [n for n in seen if type(n) is AccumulateGrad and n not in last]
    if loose:
        after[None] = loose
    return nodes, after, parents


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


# --------------------------------------------------------------------------- handing on
def _hand_on(node: Node, grads, buffers: dict, retain_graph: bool, m) -> None:
    """After ``node`` has run: free its saved values (unless retained) and add ``grads``
    to the gradients waiting for its inputs (in place into an array the pass alone
    holds, on numpy arrays)."""
    nd = node
    if not retain_graph and nd._saved and not nd._released:
        release(node)
    nrs = nd._input_nrs
    inputs = nd.inputs
    if nrs is None:
        reuse = -1  # (whether sums may grow in place: asked when a sum is first made)
        for i in range(min(len(inputs), len(grads))):
            gi = grads[i]
            x = inputs[i]
            if gi is None or not isinstance(x, NodeCore):
                continue
            b = buffers.get(x)
            if b is None:
                buffers[x] = gi
                continue
            if reuse < 0:
                reuse = m.sums_in_place and type(grads) is list
            if reuse and type(b) is _ndarray and type(gi) is _ndarray \
                    and b.shape == gi.shape and b.dtype == gi.dtype:
                # One of the two that nobody else holds takes the sum in place (addition
                # commutes); the other is pooled if it died.
                del buffers[x]
                box = [b]
                b = None
                if sole(box):
                    b = box.pop()
                    b += gi
                else:
                    b = box.pop()
                    grads[i] = None
                    box.append(gi)
                    gi = None
                    if sole(box):
                        gi = box.pop()
                        gi += b
                        b, gi = gi, b  # (b: the sum; gi: the other, held elsewhere)
                    else:
                        gi = box.pop()
                        b = b + gi
                buffers[x] = b
                b = None
                grads[i] = None
                box = [gi]
                gi = None
                give(box)
                continue
            buffers[x] = b + gi
        return
    for x, gi, nr in zip(node.inputs, grads, nrs):  # some inputs have several outputs
        if gi is None or not isinstance(x, NodeCore):
            continue
        if x._n_outputs != 1:
            _add_to_output(buffers, x, nr, gi)
        else:
            b = buffers.get(x)
            buffers[x] = gi if b is None else b + gi  # never in place: b may be shared


def _add_to_output(buffers: dict, node: Node, nr: int, g) -> None:
    """Add ``g`` to the gradient of output ``nr`` of a multi-output node."""
    b = buffers.get(node)
    if b is None:
        b = buffers[node] = [None] * node._n_outputs
    b[nr] = g if b[nr] is None else b[nr] + g
