"""Walking a recorded graph: its nodes in topological order and its leaves, without
recursion (graphs thousands of nodes deep are walked like small ones)."""
from __future__ import annotations

from .node import AccumulateGrad, Node

__all__ = ["topological", "leaves_of"]


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
