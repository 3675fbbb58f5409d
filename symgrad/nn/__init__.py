"""``symgrad.nn``: :class:`~symgrad.nn.parameter.Parameter` and ``nn.functional``.

May import: ``symgrad.ops``, ``symgrad.ir``, ``symgrad.engine``, ``symgrad.api``,
``symgrad.autograd``.
"""
from __future__ import annotations

from . import functional, parameter
from .parameter import Parameter

__all__ = ["Parameter", "functional", "parameter"]
