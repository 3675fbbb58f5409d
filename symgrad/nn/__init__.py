"""``symgrad.nn``: :class:`Module` and its layers, :class:`Parameter`, ``nn.init`` and
``nn.functional``, as PyTorch has them.

May import: ``symgrad.ops``, ``symgrad.ir``, ``symgrad.engine``, ``symgrad.api``,
``symgrad.autograd``.
"""
from __future__ import annotations

from . import functional, init, parameter
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Parameter

__all__ = ["Parameter", "functional", "init", "parameter"] + _modules_all
