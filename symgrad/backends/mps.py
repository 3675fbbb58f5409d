"""``torch.backends.mps``: Apple's Metal back end, neither built nor available here.

>>> import symgrad as torch
>>> torch.backends.mps.is_available()
False
"""
from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
