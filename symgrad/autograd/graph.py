"""``symgrad.autograd.graph``: the graph-node base class under PyTorch's name.

Every ``grad_fn`` (op nodes, ``AccumulateGrad``, custom Functions' nodes) is a
:class:`Node`, so ``isinstance(t.grad_fn, torch.autograd.graph.Node)`` holds as in PyTorch.

Examples
--------
>>> import symgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> isinstance((x * 2).grad_fn, torch.autograd.graph.Node)
True
"""
from __future__ import annotations

from ..ir.node import Node

__all__ = ["Node"]
