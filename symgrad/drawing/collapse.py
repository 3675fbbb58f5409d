"""Large graphs made legible: long chains drawn as one node, then a cut with a note.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.drawing.model import GraphModel
>>> y = x = torch.tensor(1.0, requires_grad=True)
>>> for _ in range(50):
...     y = y * 2
>>> model = GraphModel([y])
>>> collapse(model, max_nodes=20)
>>> [item.title for item in model.items[:4]]
['MulBackward0', 'MulBackward0', 'MulBackward0', '45 nodes collapsed']
"""
from __future__ import annotations

import numpy as np

from .model import GraphModel, Item

__all__ = ["collapse"]


def collapse(model: GraphModel, max_nodes: int | None, keep: int = 2) -> None:
    """Make a graph of more than ``max_nodes`` nodes legible.

    First every long chain (nodes with one input that requires grad and one consumer) keeps
    ``keep`` nodes at each end and its middle becomes one node that says how many nodes of
    which kind it stands for (``1,995 nodes: MulBackward0 ×1,995``).  If the graph is still
    too large, the nodes farthest from the outputs are cut, behind a note saying so.
    """
    if max_nodes is None or len(model.items) <= max_nodes:
        return
    model.compute_values()  # values above a collapsed chain stay drawable
    _collapse_chains(model, keep)
    if len(model.items) > max_nodes:
        _cut(model, max_nodes)


def _collapse_chains(model: GraphModel, keep: int) -> None:
    consumers: dict[int, int] = {}
    parent: dict[int, Item] = {}
    for item in model.items:
        for e in item.edges:
            if e.target is not None:
                consumers[id(e.target)] = consumers.get(id(e.target), 0) + 1
                parent[id(e.target)] = item
    roots = {id(it) for it in model.root_items if it is not None}

    def linear(it: Item) -> bool:
        return (it.kind == "op" and id(it) not in roots and consumers.get(id(it), 0) == 1
                and sum(e.target is not None for e in it.edges) == 1)

    removed: set[int] = set()
    replacement: dict[int, Item] = {}
    for item in model.items:
        if not linear(item) or (id(item) in parent and linear(parent[id(item)])):
            continue
        chain = [item]
        while True:
            child = next(e.target for e in chain[-1].edges if e.target is not None)
            if not linear(child):
                break
            chain.append(child)
        middle = chain[keep:len(chain) - keep]
        if len(middle) < 3:
            continue
        counts: dict[str, int] = {}
        for it in middle:
            counts[it.title] = counts.get(it.title, 0) + it.count
        note = _note(f"c{len(replacement)}", len(middle),
                     f"{sum(counts.values()):,} nodes collapsed",
                     ", ".join(f"{t} ×{n:,}" for t, n in counts.items()), middle[0])
        note.count = sum(counts.values())
        note.order = middle[0].order
        note.edges = middle[-1].edges
        note.value = middle[-1].value
        for e in chain[keep - 1].edges:
            if e.target is middle[0]:
                e.target = note
        removed.update(id(it) for it in middle)
        replacement[id(middle[0])] = note
    if removed:
        items = []
        for it in model.items:
            if id(it) in replacement:
                items.append(replacement[id(it)])
            if id(it) not in removed:
                items.append(it)
        model.items = items


def _cut(model: GraphModel, max_nodes: int) -> None:
    """Keep the nodes closest to the outputs and say what was cut."""
    kept_items = model.items[:max_nodes]
    kept = {id(it) for it in kept_items}
    cut = len(model.items) - max_nodes
    first = next((e.target for it in kept_items for e in it.edges
                  if e.target is not None and id(e.target) not in kept), None)
    note = _note("cut", cut, f"… {cut:,} more nodes not drawn",
                 "draw(..., max_nodes=None) draws them all", first)
    for it in kept_items:
        for e in it.edges:
            if e.target is not None and id(e.target) not in kept:
                e.target = note
    model.items = kept_items + [note]


def _note(key: str, count: int, title: str, summary: str, first: Item | None) -> Item:
    """A node standing for ``count`` nodes; its tensor has the shape of ``first``'s."""
    note = Item(key, _Note(count))
    note.kind = "op"
    note.title = title
    note.summary = summary
    if first is not None and first.value is not None:
        note.shape = np.shape(first.value)
    return note


class _Note:
    def __init__(self, count: int) -> None:
        self.count = count
