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
import itertools
import os
import sys
import threading

from ..api import compiled
from ..api.core import VMAP, Tensor

__all__ = ["depth", "transform", "vmap_randomness", "vmapping", "mark_sample", "mark_wrapped",
           "RANDOM_ERROR", "WRAPPED_ERROR",
           "ITEM_ERROR",
           "CONTROL_FLOW_ERROR", "DATA_ERROR"]

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please "
                "either use the 'same' or 'different' randomness flags on vmap or perform "
                "the randomness operation out of vmap")


ITEM_ERROR = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
              "over calling .item() on a Tensor, please try to rewrite what you're doing with "
              "other operations. If error is occurring somewhere inside PyTorch internals, "
              "please file a bug report.")
CONTROL_FLOW_ERROR = ("vmap: It looks like you're attempting to use a Tensor in some "
                      "data-dependent control flow. We don't support that yet, please file an "
                      "issue at https://github.com/pytorch/pytorch/issues .")
WRAPPED_ERROR = (
    "vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to "
    "use a Tensor in some data-dependent control flow or (3) encountering this error in "
    "PyTorch internals. For (1): we don't support vmap over calling .item() on a Tensor, "
    "please try to rewrite what you're doing with other operations. For (2): we don't "
    "support data-dependent control flow in vmap yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues . For (3): please file an issue.")
DATA_ERROR = "Cannot access data pointer of Tensor that doesn't have storage"
_REFUSALS = {"item": ITEM_ERROR, "bool": CONTROL_FLOW_ERROR, "data": DATA_ERROR}
_TOKENS = itertools.count(1)


class _State(threading.local):
    def __init__(self) -> None:
        self.depth = 0
        self.randomness: list = []
        self.running: set = set()  # the tokens of the vmaps running in this thread


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
    token = next(_TOKENS)
    _STATE.randomness.append(randomness)
    _STATE.running.add(token)
    VMAP.running += 1
    compiled.set_packing(VMAP.running, "vmap")  # every op takes apply's Python path
    try:
        yield token
    finally:
        _STATE.randomness.pop()
        _STATE.running.discard(token)
        VMAP.running -= 1
        compiled.set_packing(VMAP.running, "vmap")


def mark_sample(t, token: int):
    """``t`` (a sample given to the function) marked as depending on the vmap ``token``:
    results computed from it inherit the mark, and while that vmap runs they refuse
    ``.item()``, ``bool()`` and the like as PyTorch's BatchedTensor does."""
    if isinstance(t, Tensor):
        t._vmap = (t._vmap or frozenset()) | {token}
    return t


def mark_wrapped(source, t):
    """``t``, which a transform (``grad``, ``jvp``, ...) gives the function in place of
    ``source``, with ``source``'s marks and the note that a transform inside those vmaps
    wraps it (PyTorch's error then names both ``.item()`` and control flow)."""
    marks = getattr(source, "_vmap", None)
    if marks is not None and isinstance(t, Tensor):
        t._vmap = marks | {-m for m in marks if m in _STATE.running}
    return t


def _propagate(args, out) -> None:
    marks = None
    for a in args:
        if isinstance(a, Tensor) and a._vmap is not None:
            marks = a._vmap if marks is None else marks | a._vmap
    if marks is not None:
        out._vmap = marks


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_CORE = sys.modules[Tensor.__module__].__file__


def _refuse(t, what: str) -> None:
    """PyTorch's error if ``t`` derives from a sample of a running vmap and the caller is
    the user's code (symgrad's own code reads values where PyTorch's kernels would)."""
    if t._vmap.isdisjoint(_STATE.running):
        return
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == _CORE:
        frame = frame.f_back
    if frame is None or not frame.f_code.co_filename.startswith(_PACKAGE):
        wrapped = what != "data" and any(-m in t._vmap for m in _STATE.running)
        raise RuntimeError(WRAPPED_ERROR if wrapped else _REFUSALS[what])


VMAP.propagate = _propagate
VMAP.refuse = _refuse


def vmap_randomness() -> str | None:
    """The randomness rule of the innermost running ``vmap`` (``None`` outside one)."""
    return _STATE.randomness[-1] if _STATE.randomness else None


def check_random() -> None:
    """PyTorch's error for a random operation inside ``vmap(..., randomness='error')``."""
    if "error" in _STATE.randomness:
        raise RuntimeError(RANDOM_ERROR)
