"""Walking a recorded graph: its nodes in topological order and its leaves, without
recursion (graphs thousands of nodes deep are walked like small ones)."""
from __future__ import annotations

from .node import AccumulateGrad, Node

__all__ = ["topological", "leaves_of", "input_gradients"]


def topological(root: Node) -> list:
    """Nodes reachable from ``root``, each after all of its inputs (iterative DFS)."""
    order: list = []
    state: dict = {}
    stack = [(root, False)]
    while stack:
        n, done = stack.pop()
        if done:
            if state.get(n) != 2:
                state[n] = 2
                order.append(n)
            continue
        if n in state:
            continue
        state[n] = 1
        stack.append((n, True))
        for x in reversed(n.inputs):
            if isinstance(x, Node) and x not in state:
                stack.append((x, False))
    return order


def leaves_of(order: list) -> list:
    accs = [n for n in order if isinstance(n, AccumulateGrad)]
    accs.sort(key=lambda a: a._seq)
    return accs


def input_gradients(node: Node, backend, grad, saved: list, wanted):
    """``(index, input node, its gradient)`` by the op's rules run on ``backend``, for
    each input of ``node`` in ``wanted`` that has a rule."""
    op = node.op
    for i, x in enumerate(node.inputs):
        if not isinstance(x, Node) or x not in wanted:
            continue
        rule = op.grads[0] if op.variadic else op.grads[i]
        if rule is None:
            continue
        yield i, x, (rule(backend, grad, *saved, i) if op.variadic
                     else rule(backend, grad, *saved))
