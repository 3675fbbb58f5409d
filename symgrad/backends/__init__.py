"""``torch.backends``: the accelerator back ends a script may ask about (``mps``, ``cudnn``);
none is available.

May import: nothing of symgrad.
"""
from __future__ import annotations

from . import cudnn, mps

__all__ = ["cudnn", "mps"]
