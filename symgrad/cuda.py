"""``torch.cuda`` on a machine without CUDA, which is every machine symgrad runs on.

Course code asks ``torch.cuda.is_available()`` before choosing a device; the answer is
``False``, and what would need a GPU raises PyTorch's error.

>>> import symgrad as torch
>>> torch.cuda.is_available(), torch.cuda.device_count()
(False, 0)
"""
from __future__ import annotations

from .api.device import NO_CUDA

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
           "empty_cache", "current_device", "synchronize", "get_device_name"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def manual_seed(seed: int) -> None:
    """Seeds nothing: there is no CUDA generator (PyTorch ignores it silently too)."""


manual_seed_all = manual_seed


def empty_cache() -> None:
    """Frees nothing: there is no CUDA memory."""


def _no_cuda(*args, **kwargs):
    raise AssertionError(NO_CUDA)


current_device = synchronize = get_device_name = _no_cuda
