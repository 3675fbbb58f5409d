"""``torch.accelerator``: the device-generic questions of PyTorch 2.6+ tutorials
(``torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else
"cpu"``); there is no accelerator.

>>> import symgrad as torch
>>> torch.accelerator.is_available(), torch.accelerator.current_accelerator()
(False, None)
"""
from __future__ import annotations

__all__ = ["is_available", "current_accelerator", "device_count"]


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False):
    return None


def device_count() -> int:
    return 0
