"""Nested containers of tensors ("pytrees"), flattened and rebuilt as ``torch.utils._pytree``.

Tuples, lists, dicts (``OrderedDict`` included) and named tuples are containers; anything
else is a leaf.  A :class:`TreeSpec` prints as PyTorch's does, since its text appears in
the error messages of :mod:`symgrad.func`.

Examples
--------
>>> leaves, spec = tree_flatten((1, {"a": 2, "b": [3, 4]}))
>>> leaves
[1, 2, 3, 4]
>>> tree_unflatten([5, 6, 7, 8], spec)
(5, {'a': 6, 'b': [7, 8]})
>>> print(spec)
TreeSpec(tuple, None, [*,
  TreeSpec(dict, ['a', 'b'], [*,
    TreeSpec(list, None, [*,
      *])])])
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

__all__ = ["TreeSpec", "LEAF", "tree_flatten", "tree_unflatten", "tree_map",
           "broadcast_prefix", "pprint"]


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


class TreeSpec:
    """The shape of a pytree: its container type, context (keys) and children's specs."""

    __slots__ = ("type", "context", "children")

    def __init__(self, type_: type | None, context: Any, children: list) -> None:
        self.type = type_
        self.context = context
        self.children = children

    def is_leaf(self) -> bool:
        return self.type is None

    @property
    def num_leaves(self) -> int:
        return 1 if self.is_leaf() else sum(c.num_leaves for c in self.children)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and self.type == other.type
                and self.context == other.context and self.children == other.children)

    def __hash__(self) -> int:
        return hash((self.type, repr(self.context), len(self.children)))

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf():
            return "*"
        name = "namedtuple" if self.context is not None and self.type is not dict \
            and issubclass(self.type, tuple) else self.type.__name__
        context = self.context
        if issubclass(self.type, tuple) and context is not None:
            context = self.type
        indent += 2
        parts = [c.__repr__(indent) for c in self.children]
        body = ("," + "".join(",\n" + " " * indent + p for p in parts[1:])[1:]
                if len(parts) > 1 else "")
        return f"TreeSpec({name}, {context}, [{parts[0] if parts else ''}{body}])"


LEAF = TreeSpec(None, None, [])


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` in order, and its spec."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves: list) -> TreeSpec:
    if isinstance(tree, dict):
        keys = list(tree)
        kind = OrderedDict if isinstance(tree, OrderedDict) else dict
        return TreeSpec(kind, keys, [_flatten(tree[k], leaves) for k in keys])
    if _is_namedtuple(tree):
        return TreeSpec(type(tree), type(tree)._fields, [_flatten(v, leaves) for v in tree])
    if type(tree) in (tuple, list):
        return TreeSpec(type(tree), None, [_flatten(v, leaves) for v in tree])
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec: TreeSpec):
    """The pytree of shape ``spec`` holding ``leaves``."""
    it = iter(leaves)
    return _build(spec, it)


def _build(spec: TreeSpec, it):
    if spec.is_leaf():
        return next(it)
    values = [_build(c, it) for c in spec.children]
    if spec.type in (dict, OrderedDict):
        return spec.type(zip(spec.context, values))
    if spec.type in (tuple, list):
        return spec.type(values)
    return spec.type(*values)  # a named tuple


def tree_map(fn: Callable, tree):
    """``tree`` with ``fn`` applied to every leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, spec: TreeSpec) -> list | None:
    """The leaves of ``prefix`` repeated over the subtrees of ``spec`` it stands for
    (``None`` when ``prefix`` is not a prefix of ``spec``), as PyTorch's
    ``_broadcast_to_and_flatten``."""
    out: list = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(prefix, spec: TreeSpec, out: list) -> bool:
    p_spec = tree_flatten(prefix)[1] if isinstance(prefix, (tuple, list, dict)) else LEAF
    if p_spec.is_leaf():
        out.extend([prefix] * spec.num_leaves)
        return True
    if spec.is_leaf() or p_spec.type != spec.type or p_spec.context != spec.context \
            or len(p_spec.children) != len(spec.children):
        if not (spec.type is not None and issubclass(spec.type, tuple)
                and p_spec.type is tuple and len(prefix) == len(spec.children)):
            return False
    items = prefix.values() if isinstance(prefix, dict) else prefix
    return all(_broadcast(p, c, out) for p, c in zip(items, spec.children))


class _Star:
    def __repr__(self) -> str:
        return "*"


def pprint(spec: TreeSpec) -> str:
    """``spec`` as the pytree it describes with ``*`` for leaves (``(*, {'a': *})``), as
    PyTorch's ``treespec_pprint``."""
    return repr(tree_unflatten([_Star()] * spec.num_leaves, spec))
