"""``symgrad.nn``: just :class:`~symgrad.nn.parameter.Parameter`, the leaf that modules train.

May import: ``symgrad.ops``, ``symgrad.ir``, ``symgrad.engine``, ``symgrad.api``,
``symgrad.autograd``.
"""
from __future__ import annotations

from . import parameter
from .parameter import Parameter

__all__ = ["Parameter", "parameter"]
