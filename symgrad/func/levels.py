"""The transforms' shared state, per thread: how deeply transforms are nested, and the
randomness rule of the innermost ``vmap``.

A derivative transform (``grad``, ``vjp``, ``jvp``, ...) taken inside another one must
keep its result differentiable (``create_graph=True``) so the outer one can differentiate
it; at the outermost level the results are plain tensors, as PyTorch's are.

Examples
--------
>>> depth()
0
>>> with transform():
...     depth()
1
"""
from __future__ import annotations

import contextlib
import threading

__all__ = ["depth", "transform", "vmap_randomness", "vmapping", "RANDOM_ERROR"]

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please "
                "either use the 'same' or 'different' randomness flags on vmap or perform "
                "the randomness operation out of vmap")


class _State(threading.local):
    def __init__(self) -> None:
        self.depth = 0
        self.randomness: list = []


_STATE = _State()


def depth() -> int:
    """How many transforms are running around the caller."""
    return _STATE.depth


@contextlib.contextmanager
def transform():
    """One more level of transform while the block runs."""
    _STATE.depth += 1
    try:
        yield
    finally:
        _STATE.depth -= 1


@contextlib.contextmanager
def vmapping(randomness: str):
    """A ``vmap`` with this randomness rule while the block runs."""
    _STATE.randomness.append(randomness)
    try:
        yield
    finally:
        _STATE.randomness.pop()


def vmap_randomness() -> str | None:
    """The randomness rule of the innermost running ``vmap`` (``None`` outside one)."""
    return _STATE.randomness[-1] if _STATE.randomness else None


def check_random() -> None:
    """PyTorch's error for a random operation inside ``vmap(..., randomness='error')``."""
    if "error" in _STATE.randomness:
        raise RuntimeError(RANDOM_ERROR)
