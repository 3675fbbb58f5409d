"""``torch.backends.cudnn``: its flags can be set (scripts set ``deterministic``), and
change nothing on the CPU."""
from __future__ import annotations

__all__ = ["is_available", "deterministic", "benchmark", "enabled"]

deterministic = False
benchmark = False
enabled = True


def is_available() -> bool:
    return False
